"""US stocks' extended hours (``xnys_ext``: 04:00-20:00 New York on the NYSE's trading days):
bars that keep them are read on them, not refused as 59 % closed (``bars_market``)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl
import pytest

from foxhunt.data.market.bars_market import resolve_bars
from foxhunt.data.market.calendar import project_bar_times_us
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError

NY = ZoneInfo("America/New_York")
FIVE = timedelta(minutes=5)
HOLIDAYS = {date(2024, 1, 1), date(2024, 1, 15)}  # New Year's Day, Martin Luther King Day


def _file(path: Path, start: tuple[int, int], end: tuple[int, int]) -> Path:
    """5-minute bars from ``start`` to before ``end`` (New York wall clock) on the NYSE's days
    of 2-19 January 2024, written with their offset."""
    rows, d = [], date(2024, 1, 2)
    while d <= date(2024, 1, 19):
        if d.weekday() < 5 and d not in HOLIDAYS:
            t = datetime(d.year, d.month, d.day, *start, tzinfo=NY)
            while t < datetime(d.year, d.month, d.day, *end, tzinfo=NY):
                rows.append(t.isoformat())
                t += FIVE
        d += timedelta(days=1)
    n = len(rows)
    pl.DataFrame(
        {"timestamp": rows, "open": [185.0] * n, "high": [186.0] * n, "low": [184.0] * n,
         "close": [185.0 + (i % 9) / 10 for i in range(n)], "volume": [10 + i % 7 for i in range(n)]}
    ).write_csv(path)  # fmt: skip
    return path


@pytest.mark.parametrize("name", ["AAPL", "SPY", "AAPL.US", "PRICES"])
def test_bars_of_the_extended_hours_are_read_on_them(tmp_path: Path, name: str) -> None:
    """A bare ticker (a guess), a listed ETF, a US listing and a nameless file alike."""
    bars = read_bars(_file(tmp_path / f"{name}.csv", (4, 0), (20, 0)))
    (inst,) = resolve_bars(bars).values()
    assert inst.calendar == "xnys_ext"


def test_session_bars_stay_on_the_nyse(tmp_path: Path) -> None:
    for name in ("AAPL", "SPY"):
        bars = read_bars(_file(tmp_path / f"{name}.csv", (9, 30), (16, 0)))
        assert resolve_bars(bars)[name].calendar == "xnys"


def test_session_bars_read_hours_off_are_still_refused(tmp_path: Path) -> None:
    """09:30-16:00 New York written as naive times and read with --tz UTC: 04:30-11:00 New York,
    inside the extended hours but a third of their day: the zone is wrong, not the session."""
    path = _file(tmp_path / "SPY.csv", (9, 30), (16, 0))
    naive = pl.read_csv(path).with_columns(pl.col("timestamp").str.slice(0, 19))
    naive.write_csv(path)
    with pytest.raises(DataError, match="of the bars fall in the closed hours of calendar xnys"):
        read_bars(path, options=ReadOptions(tz="UTC"))


def test_a_forecast_from_friday_evening_targets_monday_four_oclock() -> None:
    """On the session's calendar 19:55 Friday was followed by 09:30 Monday."""
    friday = int(datetime(2024, 1, 19, 19, 55, tzinfo=NY).timestamp() * 1_000_000)
    got = project_bar_times_us(np.array([friday]), 2, int(FIVE.total_seconds() * 1e6), "xnys_ext")
    want = [datetime(2024, 1, 22, 4, 0, tzinfo=NY), datetime(2024, 1, 22, 4, 5, tzinfo=NY)]
    assert [datetime.fromtimestamp(int(t) / 1e6, UTC) for t in got[0]] == want


def test_a_users_table_keeps_its_calendar_whatever_the_extended_bars(tmp_path: Path) -> None:
    """SPY in the user's table on ``xnys``: its 04:00-20:00 bars are refused as closed hours
    (the message names the extended hours), never moved to ``xnys_ext``."""
    from foxhunt.data.market.instrument import Instrument

    table = {"SPY": Instrument("SPY", 0.01, 1.0, "USD", "etf", "xnys")}
    path = _file(tmp_path / "SPY.csv", (4, 0), (20, 0))
    with pytest.raises(DataError, match="a file with extended-hours bars"):
        read_bars(path, instruments=table)
    bars = read_bars(path, options=ReadOptions(allow_odd_times=True), instruments=table)
    assert resolve_bars(bars, table)["SPY"].calendar == "xnys"
