"""data/read/csv_dialect.py, third pass of `make mutate csv_dialect`: the refusal of pandas'
columns in levels says what it found, the decimal-point rules for three decimals (a comma file
is never asked; ``0.`` and ``-0.`` are decimals), lines ending in CR alone told from CRLF, the
dialect kept by every way a file is read in memory, and a headerless comma file whose quoted
numbers have decimal commas."""

from __future__ import annotations

import bz2
import lzma
from datetime import UTC, datetime
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.csv_dialect import _cr_lines, sniff_csv
from foxhunt.errors import DataError

MINUTES = range(30, 36)
"""15:30 .. 15:35 UTC on 2 January 2024 (New York's morning: every calendar is open)."""


def _utc(minute: int) -> list[datetime]:
    return [datetime(2024, 1, 2, 15, m, tzinfo=UTC) for m in MINUTES][:minute]


def _write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, newline="")
    return path


def _levels(tickers: list[str], level: str = "Ticker") -> str:
    fields = len(tickers)
    return (
        f"Price,{','.join(['Close'] * fields)}\n{level},{','.join(tickers)}\n"
        f"Datetime{',' * fields}\n2024-01-02 15:30:00+00:00,{','.join(['1'] * fields)}\n"
    )


@pytest.mark.parametrize(
    ("tickers", "named"),
    [
        (["A", "B", "C", "D"], "A, B, C, D"),
        (["A", "B", "C", "D", "E"], "A, B, C, D, ..."),
        (["E", "D", "C", "B", "A", "F"], "A, B, C, D, ..."),
    ],
    ids=["four", "five", "six-unsorted"],
)
def test_several_tickers_in_levels_are_named_four_at_most(
    tmp_path: Path, tickers: list[str], named: str
) -> None:
    path = _write(tmp_path, "AAPL.csv", _levels(tickers))
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value) == (
        f"{path}: columns in levels hold several Ticker ({named}): save one per file "
        "(pandas: df.xs(NAME, axis=1, level=1).to_csv(...))"
    )


def test_levels_without_names_are_called_labels(tmp_path: Path) -> None:
    """``df.columns.names`` unset: the levels' first cells are empty."""
    path = _write(tmp_path, "AAPL.csv", _levels(["AAPL", "MSFT", "NVDA"], level=""))
    with pytest.raises(DataError, match=r"hold several labels \(AAPL, MSFT, NVDA\): save one"):
        read_bars(path, min_bars=1)


def test_levels_of_four_fields_are_read_as_levels(tmp_path: Path) -> None:
    """The narrowest table in levels (the index and three columns) still has its names taken
    from the fields' level, so what it lacks is named in the file's own words."""
    text = "Price,Close,Open,Volume\nTicker,AAPL,AAPL,AAPL\nDatetime,,,\n" + "".join(
        f"2024-01-02 15:{m}:00+00:00,185.{m},185.0,{m}\n" for m in MINUTES
    )
    path = _write(tmp_path, "AAPL.csv", text)
    assert sniff_csv(path).names == ("Datetime", "Close", "Open", "Volume")
    with pytest.raises(DataError, match=r"missing column 'high' \(columns: Datetime, Close, Open"):
        read_bars(path, min_bars=1)


def test_a_comma_file_of_three_decimals_is_read_with_points(tmp_path: Path) -> None:
    """USDJPY's ``151.234`` in a comma file: a comma file never has points between thousands
    (its thousands would be commas), so nothing is asked; only other delimiters are ambiguous."""
    text = "Date,Open,High,Low,Close,Volume\n" + "".join(
        f"2024-01-02 15:{m}:00,151.234,151.240,151.230,151.235,{m}\n" for m in MINUTES
    )
    bars = read_bars(_write(tmp_path, "USDJPY.csv", text), min_bars=1)
    assert bars["open"].to_list() == [151.234] * 6
    assert bars["high"].to_list() == [151.24] * 6


@pytest.mark.parametrize(
    ("prices", "extra", "expected"),
    [
        ("0.652;0.653;0.651;0.652", "", 0.652),
        ("+0.652;0.653;0.651;0.652", "", 0.652),
        ("4.700;4.701;4.699;4.700", ";-0.125", 4.7),
        ("4.700;4.701;4.699;4.700", ";+0.125", 4.7),
    ],
    ids=["below-one", "signed-below-one", "negative-change", "signed-change"],
)
def test_a_number_starting_0_point_makes_the_points_decimals(
    tmp_path: Path, prices: str, extra: str, expected: float
) -> None:
    """No thousands group starts ``0.``: a semicolon file of AUDUSD (``0.652``), or one whose
    change column holds ``-0.125``, is read with decimal points, not refused as ambiguous."""
    head = "Date;Open;High;Low;Close;" + ("Change;" if extra else "") + "Volume\n"
    text = head + "".join(f"2024-01-02 15:{m}:00;{prices}{extra};{m}\n" for m in MINUTES)
    bars = read_bars(_write(tmp_path, "FX.csv", text), min_bars=1)
    assert bars["open"].to_list() == [expected] * 6


def test_cr_lines_are_told_from_crlf_and_lf(tmp_path: Path) -> None:
    """Only a file whose lines end in CR alone is rewritten in memory; CRLF and LF files are
    scanned from disk as they are."""
    rows = ["ts,open,high,low,close", "2024-01-02T15:30:00Z,1,1,1,1"]
    assert _cr_lines(_write(tmp_path, "cr.csv", "\r".join(rows) + "\r"))
    assert not _cr_lines(_write(tmp_path, "crlf.csv", "\r\n".join(rows) + "\r\n"))
    assert not _cr_lines(_write(tmp_path, "lf.csv", "\n".join(rows) + "\n"))


GERMAN = "Date;Time;Open;High;Low;Close;Volume\n" + "".join(
    f"02.01.2024;15:{m};4.700,5;4.701,25;4.699,75;4.700,5;{m}\n" for m in MINUTES
)


def test_a_semicolon_file_with_cr_lines_keeps_its_dialect(tmp_path: Path) -> None:
    """Excel for Mac's "CSV (Macintosh)" from a German locale: semicolons, decimal commas and
    lines ending in CR, read in memory with the guessed dialect."""
    path = _write(tmp_path, "FDAX.csv", GERMAN.replace("\n", "\r").encode())
    bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == _utc(6)
    assert bars["open"].to_list() == [4700.5] * 6
    assert bars["volume"].to_list() == [float(m) for m in MINUTES]


@pytest.mark.parametrize("end", [".csv.bz2", ".csv.xz"])
def test_a_compressed_headerless_semicolon_file_keeps_its_dialect(tmp_path: Path, end: str) -> None:
    """bzip2 and xz text is decompressed in memory, then read with the guessed dialect
    (headerless, semicolons, decimal commas), as the plain file is."""
    text = "".join(f"2024-01-02 15:{m}:00;4700,5;4701;4699,5;4700;{m}\n" for m in MINUTES)
    packed = (bz2.compress if end == ".csv.bz2" else lzma.compress)(text.encode())
    bars = read_bars(_write(tmp_path, f"ES{end}", packed), min_bars=1)
    assert bars["ts"].to_list() == _utc(6)
    assert bars["open"].to_list() == [4700.5] * 6
    assert bars["low"].to_list() == [4699.5] * 6


def test_a_headerless_comma_file_of_quoted_decimal_commas_is_headerless(tmp_path: Path) -> None:
    """A localized export without its header: ``"16.751,64"`` is a number, so the first line is
    a bar (it was taken for the header, and the file refused as missing 'open')."""
    text = "".join(
        f'"2024-01-02 15:{m}:00","16.751,{m}","16.760,00","16.740,50","16.750,25","{m}"\n'
        for m in MINUTES
    )
    path = _write(tmp_path, "DAX.csv", text)
    dialect = sniff_csv(path)
    assert (dialect.has_header, dialect.decimal_comma) == (False, True)
    bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == _utc(6)
    assert bars["open"].to_list() == [16751 + m / 100 for m in MINUTES]
