"""Daily bars stamped at their day's last minute (``2024-01-03 23:59``,
``2024-01-03T23:59:59-05:00``) are read as their dates (session 57).

Read as times, 23:59 UTC is 18:59 New York, after the NYSE's 17:00 trading-day roll: each bar
was judged as the next day's (a Friday's on Saturday: 22 % of a stock's bars on closed days) and
a run's forecasts targeted Sundays and New Year's Day. The NYSE's days are written by hand here
(weekdays without its 2024 January holidays), not taken from the calendars."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.inspection import inspect_report
from foxhunt.data.read.options import ReadOptions

NYSE_CLOSED = (date(2024, 1, 1), date(2024, 1, 15))  # New Year's Day, Martin Luther King Day


def _days(n: int) -> list[date]:
    out, d = [], date(2024, 1, 2)
    while len(out) < n:
        if d.weekday() < 5 and d not in NYSE_CLOSED:
            out.append(d)
        d += timedelta(days=1)
    return out


def _write(path: Path, stamps: list[str]) -> Path:
    rows = "".join(f"{s},100,101,99,100.5,1000\n" for s in stamps)
    path.write_text("Date,Open,High,Low,Close,Volume\n" + rows)
    return path


@pytest.mark.parametrize(
    "clock", [" 23:59", " 23:59:00", "T23:59:59", "T23:59:59-05:00", " 23:59:59.999Z"]
)
def test_a_days_last_minute_is_its_date(tmp_path: Path, clock: str) -> None:
    days = _days(30)
    path = _write(tmp_path / "SPY.csv", [f"{d:%Y-%m-%d}{clock}" for d in days])
    bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == [datetime(d.year, d.month, d.day, tzinfo=UTC) for d in days]
    r = inspect_report(path)
    assert (r["verdict"], r["symbols"][0]["closed_time_bars"]) == ("valid", 0)
    assert "'Date' read as ISO 8601 dates (23:59 read past); --ts-format to change" in r["guesses"]


def test_day_first_dates_at_their_last_minute(tmp_path: Path) -> None:
    days = _days(30)
    path = _write(tmp_path / "SPY.csv", [f"{d:%d/%m/%Y} 23:59" for d in days])
    bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == [datetime(d.year, d.month, d.day, tzinfo=UTC) for d in days]


def test_one_bar_at_another_time_keeps_every_time(tmp_path: Path) -> None:
    """A 16:00 bar among the 23:59 ones: no convention, times read as written."""
    days = _days(30)
    stamps = [f"{d:%Y-%m-%d} 23:59" for d in days]
    stamps[20] = stamps[20].replace("23:59", "16:00")
    odd = ReadOptions(allow_odd_times=True)
    bars = read_bars(_write(tmp_path / "SPY.csv", stamps), min_bars=1, options=odd)
    assert bars["ts"][0] == datetime(2024, 1, 2, 23, 59, tzinfo=UTC)


def test_intraday_bars_through_midnight_are_times(tmp_path: Path) -> None:
    start = datetime(2024, 1, 2, 23, 50)
    stamps = [f"{start + timedelta(minutes=i):%Y-%m-%d %H:%M}" for i in range(200)]
    bars = read_bars(_write(tmp_path / "BTCUSD.csv", stamps), min_bars=1)
    assert bars["ts"][9] == datetime(2024, 1, 2, 23, 59, tzinfo=UTC)
    assert bars.height == 200
