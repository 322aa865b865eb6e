from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from foxhunt.errors import InputError
from foxhunt.memory.units import format_bytes, parse_bytes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1GB", 10**9),
        ("1gb", 10**9),
        ("512MiB", 512 * 2**20),
        ("1.5 GB", 1_500_000_000),
        ("4096", 4096),
        ("64kB", 64_000),
        ("2KiB", 2048),
        ("750M", 750_000_000),
        ("1GiB", 2**30),
    ],
)
def test_parse_bytes(text: str, expected: int) -> None:
    assert parse_bytes(text) == expected


@pytest.mark.parametrize("text", ["", "GB", "1 XB", "-1GB", "one gig", "1e9"])
def test_parse_bytes_rejects(text: str) -> None:
    with pytest.raises(InputError, match="not a byte size"):
        parse_bytes(text)


def test_format_bytes() -> None:
    assert format_bytes(512) == "512 B"
    assert format_bytes(1_234_567) == "1.23 MB"
    assert format_bytes(45_600_000) == "45.6 MB"
    assert format_bytes(2**30, binary=True) == "1.00 GiB"
    assert format_bytes(-3_000_000) == "-3.00 MB"


@given(st.integers(min_value=0, max_value=10**13))
def test_format_parse_roundtrip_within_one_percent(n: int) -> None:
    back = parse_bytes(format_bytes(n).replace(" ", ""))
    assert abs(back - n) <= max(1, n) * 0.01
