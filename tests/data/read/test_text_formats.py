"""Midnight written as the date alone among timed rows (``1/2/2024``, ``1/2/2024 0:05``: what
Excel writes when it saves a sheet of times as CSV): read as that day's 00:00, the date order
told by the bars' span as for any other file (``foxhunt.data.read.text_formats``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.text_formats import timed_sample

START = datetime(2024, 1, 2)


def _us(t: datetime) -> str:
    return f"{t.month}/{t.day}/{t.year}"  # Excel's US short date, no zero padding


def _bars(tmp_path: Path, name: str, date: object, step: timedelta, n: int) -> Path:
    """``n`` bars from 2 January 2024, ``step`` apart, their midnights written as the date
    alone (``date(t)``) and every other time as the date and ``H:MM``; each bar's close is its
    number over ten plus 1,000, so a bar read at the wrong time is seen."""
    lines = ["Date,Open,High,Low,Close,Volume"]
    for i in range(n):
        t = START + i * step
        clock = "" if (t.hour, t.minute) == (0, 0) else f" {t.hour}:{t.minute:02d}"
        price = 1000 + i / 10
        lines.append(f"{date(t)}{clock},{price},{price + 1},{price - 1},{price},{100 + i}")  # type: ignore[operator]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("name", "date"),
    [
        # read on its first value, the date alone, polars' parser took these day-first:
        # 2, 3 and 4 January became 1 February, 1 March and 1 April
        ("BTCUSD_5m.csv", _us),
        ("ETHUSD_5m.csv", lambda t: t.strftime("%d/%m/%Y")),  # the same, day-first
        ("SOLUSD_5m.csv", lambda t: t.strftime("%d.%m.%Y")),  # a German Excel's
        ("XRPUSD_5m.csv", lambda t: t.strftime("%Y-%m-%d")),  # ISO: read as before
    ],
)
def test_every_bar_is_read_at_its_time_and_midnight_is_not_lost(
    tmp_path: Path, name: str, date: object
) -> None:
    n = 900  # three days and 36 bars of 5 minutes: three midnights written as the date alone
    df = read_bars(_bars(tmp_path, name, date, timedelta(minutes=5), n))
    assert df.height == n
    want = [(START + i * timedelta(minutes=5)).replace(tzinfo=UTC) for i in range(n)]
    assert df["ts"].to_list() == want
    assert df["close"].to_list() == [1000 + i / 10 for i in range(n)]


def test_hourly_bars_with_midnight_as_the_date_alone(tmp_path: Path) -> None:
    n = 24 * 12  # twelve days: month-first 1/2 .. 1/13; 1/13 reads only month-first
    df = read_bars(_bars(tmp_path, "BTCUSD_1h.csv", _us, timedelta(hours=1), n))
    midnights = df.filter(pl.col("ts").dt.hour() == 0)
    assert midnights["close"].to_list() == [1000 + i / 10 for i in range(0, n, 24)]
    assert df["ts"].max() == (START + (n - 1) * timedelta(hours=1)).replace(tzinfo=UTC)


def test_naive_times_with_midnight_alone_take_the_zone_given(tmp_path: Path) -> None:
    """The column has times of day: its midnights are wall-clock times of ``tz`` like the
    rest (read on the date alone, the whole column was taken as dates, not naive times)."""
    path = _bars(tmp_path, "BTCUSD_5m.csv", _us, timedelta(minutes=5), 600)
    df = read_bars(path, tz="America/New_York")
    assert df["ts"][0] == datetime(2024, 1, 2, 5, tzinfo=UTC)  # 00:00 EST
    assert df["ts"][288] == datetime(2024, 1, 3, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    ("values", "want"),
    [
        (["1/2/2024", "1/2/2024 0:05", "1/2/2024 0:10"], "1/2/2024 0:05"),
        (["1/2/2024", "1/3/2024", "1/4/2024"], None),  # daily bars: dates alone
        (["1/2/2024", "1/3/2024", "1/4/2024 16:00"], None),  # dates with one odd row
        (["1/2/2024", "1/3/2024 0:00"], "1/3/2024 0:00"),  # half timed is enough
        (["1/2/2024 0:00", "1/2/2024 0:05"], None),  # the first value has its time
        (["20240102", "20240102 000500"], "20240102 000500"),
    ],
)
def test_the_sample_is_a_timed_value_where_most_have_a_time(
    values: list[str], want: str | None
) -> None:
    assert timed_sample(values, values[0]) == want


def test_no_sample_no_timed_value() -> None:
    assert timed_sample([], None) is None


def _lines(times: list[datetime], spell: object) -> str:
    """Bars at ``times``, each midnight written as the date alone (``spell(t)``), the rest as
    the date and ``%H:%M``."""
    rows = ["Date,Open,High,Low,Close,Volume"]
    for i, t in enumerate(times):
        clock = "" if (t.hour, t.minute) == (0, 0) else f" {t:%H:%M}"
        price = 1000 + i / 10
        rows.append(f"{spell(t)}{clock},{price},{price + 1},{price - 1},{price},1")  # type: ignore[operator]
    return "\n".join(rows) + "\n"


@pytest.mark.parametrize(
    ("times", "spell"),
    [
        # 12-hour bars, day-first: only the midnights carry a second bar a day; judged on the
        # 12:00 rows alone the dates were daily-or-monthly and refused (review of session 61)
        ([datetime(2024, 3, 1) + i * timedelta(hours=12) for i in range(20)], "%d/%m/%Y"),
        ([datetime(2024, 3, 1) + i * timedelta(hours=12) for i in range(20)], "%m/%d/%Y"),
        # the only change of day a midnight written alone: was read 3 May .. 3 June
        ([datetime(2024, 3, 5) + i * timedelta(minutes=30) for i in range(49)], "%d/%m/%Y"),
        # a two-digit year first, the same: was read 24 March 2005 .. 2006
        ([datetime(2024, 3, 5) + i * timedelta(minutes=30) for i in range(49)], "%y/%m/%d"),
        # Excel's file starting at 05:00 and at noon: no midnight in the first 200 values
        ([datetime(2024, 1, 2, 5) + i * timedelta(minutes=5) for i in range(864)], "%m/%d/%Y"),
        ([datetime(2024, 3, 5, 12) + i * timedelta(minutes=1) for i in range(1440)], "%d/%m/%Y"),
    ],
)
def test_dates_alone_among_times_count_wherever_they_come(
    tmp_path: Path, times: list[datetime], spell: str
) -> None:
    path = tmp_path / "BTCUSD.csv"
    path.write_text(_lines(times, lambda t: t.strftime(spell)))
    df = read_bars(path)
    assert df["ts"].to_list() == [t.replace(tzinfo=UTC) for t in times]
