"""``infer/closed_bars.py``: a live update's bars where their calendar is shut are said, not
refused (``foxhunt serve`` answers them under ``warnings``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from demo_run import DemoRun
from foxhunt.data.sources.demo import demo_bars
from foxhunt.infer.closed_bars import closed_bar_lines
from foxhunt.infer.forecaster import Forecaster

FIVE = timedelta(minutes=5)


def _frame(rows: list[tuple[str, datetime]]) -> pl.DataFrame:
    return pl.DataFrame(
        {"symbol": [s for s, _ in rows], "ts": [t for _, t in rows]},
        schema={"symbol": pl.String, "ts": pl.Datetime("us", "UTC")},
    )


def test_intraday_bars_in_closed_hours_are_named_per_symbol() -> None:
    # Saturday 6 January 2024 is shut for both; 15:30 UTC on Friday 5 January is open for ES
    # (Globex) and the NYSE; 22:10 UTC (17:10 New York) is ES's daily halt, not the NYSE's
    # session either.
    sat = datetime(2024, 1, 6, 15, 30, tzinfo=UTC)
    fri = datetime(2024, 1, 5, 15, 30, tzinfo=UTC)
    halt = datetime(2024, 1, 5, 22, 10, tzinfo=UTC)
    frame = _frame([("BTC", sat), ("ES", fri), ("ES", halt), ("ES", sat), ("SPY", fri)])
    got = closed_bar_lines(frame, {"ES": "cme_equity", "SPY": "xnys", "BTC": "24x7"}, FIVE)
    assert got == [
        "ES: 2 bars in hours calendar cme_equity does not trade (first "
        "2024-01-05T22:10:00+00:00); taken as sent"
    ]
    # a symbol of no calendar (a run from before calendars): Globex's weekly rule
    (line,) = closed_bar_lines(frame.filter(pl.col("symbol") == "ES"), {}, FIVE)
    assert line.startswith("ES: 2 bars in hours calendar globex does not trade")


def test_daily_bars_are_judged_by_their_trading_day() -> None:
    xmas = datetime(2023, 12, 25, tzinfo=UTC)
    eve = datetime(2023, 12, 22, tzinfo=UTC)
    got = closed_bar_lines(_frame([("SPY", eve), ("SPY", xmas)]), {"SPY": "xnys"}, timedelta(1))
    assert got == [
        "SPY: 1 bar on days calendar xnys does not trade (first 2023-12-25T00:00:00+00:00); "
        "taken as sent"
    ]


@pytest.mark.parametrize("interval", [None, timedelta(days=7)])
def test_weekly_bars_and_runs_without_an_interval_are_not_judged(interval) -> None:
    sat = datetime(2024, 1, 6, tzinfo=UTC)
    assert closed_bar_lines(_frame([("SPY", sat)]), {"SPY": "xnys"}, interval) == []


def test_naive_times_are_utc_and_other_zones_are_converted() -> None:
    # 14:30 UTC Friday is the NYSE's open; written as 09:30 New York it is the same instant,
    # naive 14:30 is UTC: all open. 05:00 New York is shut.
    zoned = pl.DataFrame(
        {"symbol": ["SPY", "SPY"], "ts": ["2024-01-05T09:30:00", "2024-01-05T05:00:00"]}
    ).with_columns(pl.col("ts").str.to_datetime().dt.replace_time_zone("America/New_York"))
    got = closed_bar_lines(zoned, {"SPY": "xnys"}, FIVE)
    assert got == [
        "SPY: 1 bar in hours calendar xnys does not trade (first 2024-01-05T10:00:00+00:00); "
        "taken as sent"
    ]
    naive = pl.DataFrame({"symbol": ["SPY"], "ts": [datetime(2024, 1, 5, 14, 30)]})
    assert closed_bar_lines(naive, {"SPY": "xnys"}, FIVE) == []
    assert closed_bar_lines(naive.with_columns(ts=pl.lit(5)), {"SPY": "xnys"}, FIVE) == []


def test_the_forecaster_says_a_saturday_bar_of_its_symbol(demo_run: DemoRun) -> None:
    fc = Forecaster.load(demo_run.run)
    bars = demo_bars(5, seed=3)
    assert fc.closed_bars(bars) == []
    sat = bars.tail(1).with_columns(ts=pl.lit(datetime(2024, 1, 6, 15, 0, tzinfo=UTC)))
    (line,) = fc.closed_bars(sat)
    assert line.startswith("ES: 1 bar in hours calendar ") and "2024-01-06T15:00:00" in line
