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


@pytest.mark.parametrize(
    ("n", "binary", "text"),
    [
        (0, False, "0 B"),
        (999, False, "999 B"),
        (1_000, False, "1.00 kB"),
        (9_999, False, "10.00 kB"),  # below 10 before rounding: two digits
        (10_000, False, "10.0 kB"),
        (99_900, False, "99.9 kB"),
        (100_000, False, "100 kB"),
        (100_500, False, "100 kB"),
        (2_500_000, False, "2.50 MB"),
        (3 * 10**9, False, "3.00 GB"),
        (4 * 10**12, False, "4.00 TB"),
        (5 * 10**15, False, "5000 TB"),  # nothing above TB
        (-1_500_000, False, "-1.50 MB"),
        (1023, True, "1023 B"),
        (1024, True, "1.00 KiB"),
        (10 * 1024**2, True, "10.0 MiB"),
        (3 * 1024**3, True, "3.00 GiB"),
        (2 * 1024**4, True, "2.00 TiB"),
        (2048 * 1024**4, True, "2048 TiB"),
    ],
)
def test_format_bytes_names_each_unit_and_its_digits(n: int, binary: bool, text: str) -> None:
    assert format_bytes(n, binary=binary) == text
