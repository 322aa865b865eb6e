"""A UTC offset of whole hours after a clock (``2024-01-03 10:30:00-05``: PostgreSQL's and
TimescaleDB's ``timestamptz`` text) reads as that offset, as ``-05:00`` does; and an offset polars'
own parser finds where the reader's spellings do not is read, or refused by its row, never in
polars' words."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.errors import DataError

HEADER = "time,open,high,low,close,volume\n"


def _bars(path: Path, stamps: list[str]) -> Path:
    rows = "".join(f"{s},185.5,186,185,185.75,{100 + i}\n" for i, s in enumerate(stamps))
    path.write_text(HEADER + rows)
    return path


def _utc(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=dt.UTC)


def test_postgres_timestamptz_in_utc_reads(tmp_path: Path) -> None:
    """``psql``/``COPY`` of a ``timestamptz`` column in a UTC session: ``+00``."""
    stamps = [f"2024-01-06 10:0{m}:00+00" for m in range(3)]
    got = read_bars(_bars(tmp_path / "BTCUSD.csv", stamps), min_bars=1)
    assert got["ts"].to_list() == [_utc(2024, 1, 6, 10, m) for m in range(3)]


def test_postgres_timestamptz_of_new_york_reads_each_rows_offset(tmp_path: Path) -> None:
    """A New York session: ``-05`` in winter, ``-04`` in summer, each row its own."""
    stamps = ["2024-03-08 10:30:00-05", "2024-03-11 10:30:00-04", "2024-03-12 10:30:00.5-04"]
    got = read_bars(_bars(tmp_path / "AAPL.csv", stamps), min_bars=1)
    assert got["ts"].to_list() == [
        _utc(2024, 3, 8, 15, 30),
        _utc(2024, 3, 11, 14, 30),
        _utc(2024, 3, 12, 14, 30, 0, 500_000),
    ]


@pytest.mark.parametrize(
    ("stamp", "want"),
    [
        ("2024-01-03 10:30:00-05", _utc(2024, 1, 3, 15, 30)),
        ("2024-01-03T10:30:00.250+00", _utc(2024, 1, 3, 10, 30, 0, 250_000)),
        ("2024-01-03 10:30 -05", _utc(2024, 1, 3, 15, 30)),  # a space before it
        ("2024-01-03 16:00:00+05:30", _utc(2024, 1, 3, 10, 30)),  # minutes: as before
        ("2024-01-02 24:00:00-05", _utc(2024, 1, 3, 5, 0)),  # a day's end, 24:00
        ("01/03/2024 10:30:00 -05", _utc(2024, 1, 3, 15, 30)),  # after a vendor's spelling
        ("2024-01-03T103000-05", _utc(2024, 1, 3, 15, 30)),  # ISO's basic clock: polars reads it
    ],
)
def test_an_offset_of_hours_reads_as_that_offset(tmp_path: Path, stamp: str, want: object) -> None:
    got = read_bars(_bars(tmp_path / "AAPL.csv", [stamp]), min_bars=1)
    assert got["ts"].to_list() == [want]


def test_dates_are_not_taken_for_an_offset(tmp_path: Path) -> None:
    """``2024-01-03``'s ``-03`` follows no clock: a day, read as the date it is."""
    got = read_bars(_bars(tmp_path / "AAPL.csv", ["2024-01-02", "2024-01-03"]), min_bars=1)
    assert got["ts"].to_list() == [_utc(2024, 1, 2), _utc(2024, 1, 3)]


@pytest.mark.parametrize("stamp", ["2024-01-03 10:30:00z", "2024-01-03T10:30:00UTC"])
def test_an_offset_polars_finds_and_cannot_read_is_named_by_its_row(
    tmp_path: Path, stamp: str
) -> None:
    """polars' parser sees a zone in these and refused the whole file in its own words
    (``to_datetime was called with no format and no time zone``), naming no row or flag."""
    path = _bars(tmp_path / "AAPL.csv", [stamp])
    with pytest.raises(DataError) as got:
        read_bars(path, min_bars=1)
    message = str(got.value)
    assert f"{path}: column 'time', row 0: unparsable timestamp {stamp!r}" in message
    assert "to_datetime" not in message and "\n" not in message


def test_rows_with_an_hours_offset_after_a_naive_first_row_are_named(tmp_path: Path) -> None:
    """A naive first row, then ``-05`` rows: the first ``-05`` row is named as having an offset
    the others lack (it was said to lack one, its ``-05`` not taken for an offset)."""
    stamps = ["2024-01-03 10:30:00", *(f"2024-01-03 10:3{m}:00-05" for m in range(1, 6))]
    path = _bars(tmp_path / "AAPL.csv", stamps)
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value) == (
        f"{path}: column 'time', row 1: timestamp '2024-01-03 10:31:00-05' has a UTC offset "
        "while the column's other timestamps do not: write them all one way"
    )


def test_a_us_zones_abbreviation_after_the_time_places_each_row(tmp_path: Path) -> None:
    """``2024-03-08 09:30:00 EST`` then ``2024-03-11 09:30:00 EDT`` across the change to summer
    time: until session 53 an unparsable timestamp (``--ts-format '... EST'`` reads one of
    them only)."""
    path = tmp_path / "SPY.csv"
    path.write_text(
        "Date,Open,High,Low,Close,Volume\n"
        "2024-03-08 09:30:00 EST,182.25,182.26,182.18,182.21,1120\n"
        "2024-03-08 10:30:00 EST,182.21,182.32,182.17,182.28,1667\n"
        "2024-03-11 09:30:00 EDT,182.25,182.28,182.23,182.24,1738\n"
        "2024-03-11 10:30:00 EDT,182.24,182.32,182.22,182.28,1092\n"
    )
    df = read_bars(path, min_bars=1)
    assert [t.strftime("%m-%d %H:%M") for t in df["ts"]] == [
        "03-08 14:30", "03-08 15:30", "03-11 13:30", "03-11 14:30"
    ]  # fmt: skip


def test_one_abbreviation_alone_is_not_guessed(tmp_path: Path) -> None:
    """``CST`` alone may be China's, and ``EST`` alone is New York's clock all year to many
    vendors: refused by row (``test_vendor_exports.py::test_a_zone_abbreviation_is_not_guessed``)."""
    path = tmp_path / "BTCUSDT.csv"
    path.write_text(
        "Date,Open,High,Low,Close,Volume\n"
        "2024-03-08 09:30:00 CST,182.25,182.26,182.18,182.21,1120\n"
        "2024-03-08 10:30:00 CST,182.21,182.32,182.17,182.28,1667\n"
    )
    with pytest.raises(DataError, match=r"unparsable timestamp '2024-03-08 09:30:00 CST'"):
        read_bars(path, min_bars=1)


@pytest.mark.parametrize("offset", ["+09:00", "+11:00", "+01:00"])
def test_daily_bars_at_local_midnight_east_of_utc_keep_their_date(
    tmp_path: Path, offset: str
) -> None:
    """``yf.Ticker("7203.T").history().to_csv()``: ``2024-01-10 00:00:00+09:00``, Tokyo's 10
    January, was read as the instant 9 January 15:00 UTC: every bar a day early until
    session 53. (Days Tokyo trades: since session 54 ``7203.T`` is judged on its calendar.)"""
    path = tmp_path / "7203.T.csv"
    path.write_text(
        "Date,Open,High,Low,Close,Volume,Dividends,Stock Splits\n"
        + "".join(
            f"2024-01-{d} 00:00:00{offset},2750.0,2750.5,2746.5,2748.0,1120000,0.0,0.0\n"
            for d in (10, 11, 12)
        )
    )
    days = read_bars(path, min_bars=1)["ts"].dt.strftime("%Y-%m-%d %H:%M").to_list()
    assert days == ["2024-01-10 00:00", "2024-01-11 00:00", "2024-01-12 00:00"]


def test_a_zoned_column_of_local_midnights_east_of_utc_keeps_its_dates(tmp_path: Path) -> None:
    import polars as pl

    days = [dt.datetime(2024, 1, d) for d in (10, 11, 12)]  # days Tokyo trades
    frame = pl.DataFrame({"Date": days, "Open": [1.0] * 3, "High": [1.0] * 3, "Low": [1.0] * 3,
                          "Close": [1.0] * 3})  # fmt: skip
    frame = frame.with_columns(pl.col("Date").dt.replace_time_zone("Asia/Tokyo"))
    path = tmp_path / "7203.T.parquet"
    frame.write_parquet(path)
    got = read_bars(path, min_bars=1)["ts"].dt.strftime("%Y-%m-%d %H:%M").to_list()
    assert got == ["2024-01-10 00:00", "2024-01-11 00:00", "2024-01-12 00:00"]
    # west of UTC the instant keeps the date and is kept (New York's midnight: 05:00 UTC)
    west = frame.with_columns(
        pl.col("Date").dt.replace_time_zone(None).dt.replace_time_zone("America/New_York")
    )
    west.write_parquet(path)
    assert read_bars(path, min_bars=1)["ts"].dt.hour().to_list() == [5, 5, 5]
