"""CSV dialects, planted bug of issue 28: a dotted DATE does not turn the decimal-comma guess
off; only a dotted NUMBER does (``02.01.2024;09:00;16800,5`` is a German-style export)."""

from __future__ import annotations

from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.csv_dialect import sniff_csv

ROWS = [
    "02.01.2024;09:00;16800,5;16801,25;16799,75;16800,25;12",
    "02.01.2024;09:01;16800,25;16802;16800;16801,5;7",
    "02.01.2024;09:02;16801,5;16801,5;16800,75;16801;9",
]


@pytest.mark.parametrize("header", ["", "Date;Time;Open;High;Low;Close;Volume\n"])
def test_a_dotted_date_keeps_the_decimal_comma(tmp_path: Path, header: str) -> None:
    p = tmp_path / "FDAX.csv"
    p.write_text(header + "".join(r + "\n" for r in ROWS))
    d = sniff_csv(p)
    assert d.delimiter == ";" and d.has_header == bool(header)
    assert d.decimal_comma
    df = read_bars(p)
    assert df["open"].to_list() == [16800.5, 16800.25, 16801.5]
    assert df["high"].to_list() == [16801.25, 16802.0, 16801.5]
    assert [(t.day, t.month, t.minute) for t in df["ts"]] == [(2, 1, 0), (2, 1, 1), (2, 1, 2)]


def test_a_dotted_number_still_turns_the_decimal_comma_off(tmp_path: Path) -> None:
    """The guard itself: dotted prices beside one comma-looking field are not decimal comma."""
    p = tmp_path / "EURUSD.csv"
    p.write_text(
        "".join(f"02.01.2024;09:0{i};1.10410;1.10420;1.10400;1.10415;0,5\n" for i in range(3))
    )
    assert not sniff_csv(p).decimal_comma
