from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl
import pytest

from foxhunt.infer.targets import forecast_targets, on_grid

UTC = dt.UTC


def _bars(start: dt.datetime, n: int, symbol: str, minutes: int = 5) -> pl.DataFrame:
    ts = [start + dt.timedelta(minutes=minutes * i) for i in range(n)]
    return pl.DataFrame(
        {"ts": ts, "symbol": [symbol] * n, "close": [100.0 + i for i in range(n)]},
        schema={"ts": pl.Datetime("us", "UTC"), "symbol": pl.String, "close": pl.Float64},
    )


def test_targets_follow_the_calendar_across_the_weekend_not_origin_plus_h_bars() -> None:
    # Globex closes Friday 16:00 CT (22:00 UTC in January) and reopens Sunday 17:00 CT.
    bars = _bars(dt.datetime(2024, 1, 5, 21, 40, tzinfo=UTC), 4, "ES")  # 21:40 .. 21:55
    origins = bars.select("symbol", "ts").tail(1)  # Friday 21:55 UTC, the last bar
    got = forecast_targets(bars, origins, 3, {"ES": "globex"})
    sunday = dt.datetime(2024, 1, 7, 23, 0, tzinfo=UTC)  # 17:00 CT
    assert got["target_ts"].to_list() == [
        sunday,
        sunday + dt.timedelta(minutes=5),
        sunday + dt.timedelta(minutes=10),
    ]
    assert got["realised_close"].null_count() == 3  # the future: not in the bars


def test_targets_are_the_next_bars_in_the_file_across_a_gap_in_origin_order() -> None:
    """The model's target is the h-th bar after the origin in the bars (``shift(-h)``): across
    a gap in the data it is the bar after the gap, with its close; past the last bar, the
    calendar's next bars, unrealised."""
    start = dt.datetime(2024, 1, 3, 15, 0, tzinfo=UTC)
    es = _bars(start, 10, "ES")
    nq = _bars(start, 10, "NQ").with_columns(pl.col("close") * 10)
    bars = pl.concat([es, nq.filter(pl.col("ts") != start + dt.timedelta(minutes=35))])  # a gap
    origins = pl.concat([nq.slice(5, 1), es.slice(8, 1)]).select("symbol", "ts")
    got = forecast_targets(bars, origins, 2, {"ES": "cme_equity", "NQ": "globex"})
    assert got["target_ts"].to_list() == [
        start + dt.timedelta(minutes=30),
        start + dt.timedelta(minutes=40),  # 35 is missing: NQ's second bar after 25 is 40
        start + dt.timedelta(minutes=45),
        start + dt.timedelta(minutes=50),  # past ES's last bar: the calendar's next
    ]
    assert got["realised_close"].to_list() == [1060.0, 1080.0, 109.0, None]


def test_bars_off_the_calendars_grid_are_their_own_targets() -> None:
    """4-hour FX bars on a UTC grid (00:00, 04:00, ...) across a weekend: the vendor's week
    starts with a Sunday 20:00 bar, the calendar's at 22:00 (17:00 New York). The targets are
    the file's bars; the calendar's schedule (Sunday 22:00, Monday 02:00) was off the grid, and
    left those rows unrealised."""
    friday = dt.datetime(2024, 1, 5, 8, 0, tzinfo=UTC)
    four = dt.timedelta(hours=4)
    ts = [friday + k * four for k in range(4)]  # 08:00 .. 20:00
    sunday = dt.datetime(2024, 1, 7, 20, 0, tzinfo=UTC)
    ts += [sunday + k * four for k in range(3)]  # Sunday 20:00, Monday 00:00, 04:00
    bars = pl.DataFrame(
        {"ts": ts, "symbol": ["EURUSD"] * 7, "close": [1.0 + k / 100 for k in range(7)]},
        schema={"ts": pl.Datetime("us", "UTC"), "symbol": pl.String, "close": pl.Float64},
    )
    origins = bars.select("symbol", "ts").slice(2, 1)  # Friday 16:00
    got = forecast_targets(bars, origins, 3, {"EURUSD": "fx_24x5"})
    assert got["target_ts"].to_list() == ts[3:6]
    assert got["realised_close"].to_list() == [1.03, 1.04, 1.05]


def test_no_origins_gives_an_empty_table() -> None:
    bars = _bars(dt.datetime(2024, 1, 3, 15, 0, tzinfo=UTC), 5, "ES")
    got = forecast_targets(bars, bars.select("symbol", "ts").head(0), 3)
    assert got.height == 0 and got.schema == pl.Schema(
        {"target_ts": pl.Datetime("us", "UTC"), "realised_close": pl.Float64}
    )


def test_past_the_last_bar_each_symbol_follows_its_own_calendar_and_unnamed_ones_globex() -> None:
    """Bars at 20:50, 20:55 and 21:00 UTC on a January Wednesday (5-minute bars stamped at
    their open). Origin 20:55: its first target is the file's 21:00 bar, for either symbol.
    Past the last bar, XNYS's next bar is Thursday's 14:30 UTC open (its 16:00 New York close
    has passed), while ES, or a symbol not in the mapping (or no mapping at all), follows
    globex, open through the evening."""
    start = dt.datetime(2024, 1, 3, 20, 50, tzinfo=UTC)
    bars = pl.concat([_bars(start, 3, "AAPL"), _bars(start, 3, "ES")])
    origins = bars.filter(pl.col("ts") >= start + dt.timedelta(minutes=5)).select("symbol", "ts")
    got = forecast_targets(bars, origins, 2, {"AAPL": "xnys"})
    five = dt.timedelta(minutes=5)
    open_ = dt.datetime(2024, 1, 4, 14, 30, tzinfo=UTC)
    evening = [start + 2 * five, start + 3 * five, start + 4 * five]  # 21:00, 21:05, 21:10
    assert got["target_ts"].to_list() == [
        evening[0], open_,  # AAPL at 20:55: its 21:00 bar, then the calendar's next
        open_, open_ + five,  # AAPL at 21:00, its last bar
        evening[0], evening[1],  # ES at 20:55, on globex
        evening[1], evening[2],  # ES at 21:00
    ]  # fmt: skip
    assert got["realised_close"].to_list() == [102.0, None, None, None, 102.0, None, None, None]
    for unmapped in (None, {"NQ": "xnys"}):
        assert forecast_targets(bars, origins, 2, unmapped)["target_ts"].to_list()[:4] == [
            evening[0], evening[1], evening[1], evening[2]
        ]  # fmt: skip


def test_an_origin_that_is_no_bar_is_a_fault() -> None:
    bars = _bars(dt.datetime(2024, 1, 3, 15, 0, tzinfo=UTC), 5, "ES")
    off = bars.select("symbol", (pl.col("ts") + dt.timedelta(minutes=1)).alias("ts")).head(1)
    with pytest.raises(ValueError, match="forecast origins of 'ES' that are not bars of it"):
        forecast_targets(bars, off, 2)


def test_past_the_last_bar_the_calendars_times_go_on_the_files_grid() -> None:
    """4-hour FX bars on a UTC grid, the last on Friday 20:00: the FX week opens on Sunday at
    22:00 UTC, inside the grid's 20:00-24:00 bar, so the targets are Sunday 20:00, Monday 00:00
    and 04:00, the bars the file will have (they were 22:00, 02:00, 06:00 until session 45)."""
    four = dt.timedelta(hours=4)
    last = dt.datetime(2024, 1, 5, 20, 0, tzinfo=UTC)
    ts = [last - k * four for k in range(11, -1, -1)]  # 12 bars, Wednesday 00:00 .. Friday 20:00
    bars = pl.DataFrame(
        {"ts": ts, "symbol": ["EURUSD"] * 12, "close": [1.0] * 12},
        schema={"ts": pl.Datetime("us", "UTC"), "symbol": pl.String, "close": pl.Float64},
    )
    got = forecast_targets(bars, bars.select("symbol", "ts").tail(1), 3, {"EURUSD": "fx_24x5"})
    sunday = dt.datetime(2024, 1, 7, 20, 0, tzinfo=UTC)
    assert got["target_ts"].to_list() == [sunday, sunday + four, sunday + 2 * four]
    # bars of two phases (each day an hourly 14:30 first bar, then on the hour) keep the
    # calendar's times: Friday's open at 14:30, not the 14:00 bar of an hourly grid
    hour = dt.timedelta(hours=1)
    wednesday = dt.datetime(2024, 1, 3, 15, 0, tzinfo=UTC)
    mixed = [wednesday + k * hour for k in range(6)]  # 15:00 .. 20:00
    thursday = dt.datetime(2024, 1, 4, 14, 30, tzinfo=UTC)
    mixed += [thursday] + [thursday + dt.timedelta(minutes=30) + k * hour for k in range(6)]
    stock = pl.DataFrame(
        {"ts": mixed, "symbol": ["AAPL"] * 13, "close": [100.0] * 13},
        schema={"ts": pl.Datetime("us", "UTC"), "symbol": pl.String, "close": pl.Float64},
    )
    got = forecast_targets(stock, stock.select("symbol", "ts").tail(1), 2, {"AAPL": "xnys"})
    friday = dt.datetime(2024, 1, 5, 14, 30, tzinfo=UTC)  # XNYS's open, off the hour
    assert got["target_ts"].to_list() == [friday, friday + hour]


def test_on_grid_keeps_the_calendar_where_it_cannot_tell_a_grid() -> None:
    hour = 3_600_000_000
    ts = np.arange(8, dtype=np.int64) * 4 * hour  # 00:00, 04:00 ... of 1 January 1970
    future = np.array([ts[-1] + 6 * hour, ts[-1] + 10 * hour], np.int64)  # 02:00, 06:00
    assert on_grid(future, ts, 4 * hour).tolist() == [ts[-1] + 4 * hour, ts[-1] + 8 * hour]
    assert on_grid(future, ts[1:], 4 * hour).tolist() == future.tolist()  # 7 bars: too few
    day = 24 * hour
    daily = np.arange(10, dtype=np.int64) * day
    later = np.array([daily[-1] + day + hour], np.int64)
    assert on_grid(later, daily, day).tolist() == later.tolist()  # daily bars keep their clock
    # a calendar time within a bar of the last bar: one interval after it at least, in order
    near = np.array([ts[-1] + hour, ts[-1] + 3 * hour], np.int64)
    assert on_grid(near, ts, 4 * hour).tolist() == [ts[-1] + 4 * hour, ts[-1] + 8 * hour]


def test_a_grid_on_the_calendars_clock_holds_across_daylight_saving() -> None:
    """ES 4-hour bars from 17:00 Chicago, the last on Friday 8 March 2024: the calendar's
    Sunday 17:00 CDT open is on that grid on Chicago's clock, though an hour off it in UTC
    (the bars before were CST): kept, with 21:00, 01:00, 05:00 CDT after it. Taking the grid
    in UTC alone gave 14:00 Sunday, before the open."""
    chicago = ZoneInfo("America/Chicago")
    ts, day = [], dt.date(2024, 2, 26)
    while day <= dt.date(2024, 3, 8):
        if day.weekday() < 5:
            start = dt.datetime.combine(day - dt.timedelta(days=1), dt.time(17), chicago)
            ts += [(start + dt.timedelta(hours=4 * k)).astimezone(UTC) for k in range(6)]
        day += dt.timedelta(days=1)
    bars = pl.DataFrame(
        {"ts": ts, "symbol": ["ES"] * len(ts), "close": [1.0] * len(ts)},
        schema={"ts": pl.Datetime("us", "UTC"), "symbol": pl.String, "close": pl.Float64},
    )
    got = forecast_targets(bars, bars.select("symbol", "ts").tail(1), 4, {"ES": "globex"})
    assert [t.astimezone(chicago).strftime("%a %H:%M") for t in got["target_ts"]] == [
        "Sun 17:00", "Sun 21:00", "Mon 01:00", "Mon 05:00"
    ]  # fmt: skip
    # FX 4-hour bars on a UTC grid across the same change: the open (21:00 UTC in summer time)
    # is off the grid in both frames, which put it apart (20:00 UTC, or 15:00 New York = 19:00).
    # Twelve bars, all in winter time, cannot tell the two grids apart: the calendar's time
    # stays; bars since November (a change among them) keep one phase in UTC alone: 20:00.
    four = dt.timedelta(hours=4)
    last = dt.datetime(2024, 3, 8, 20, 0, tzinfo=UTC)
    sunday = dt.datetime(2024, 3, 10, 20, 0, tzinfo=UTC)
    for bars, first in ((12, sunday + dt.timedelta(hours=1)), (800, sunday)):
        fx = pl.DataFrame(
            {"ts": [last - k * four for k in range(bars - 1, -1, -1)], "symbol": ["EURUSD"] * bars},
            schema={"ts": pl.Datetime("us", "UTC"), "symbol": pl.String},
        ).with_columns(close=pl.lit(1.0))
        got = forecast_targets(fx, fx.select("symbol", "ts").tail(1), 2, {"EURUSD": "fx_24x5"})
        assert got["target_ts"].to_list()[0] == first


def test_on_grid_snaps_to_a_phase_off_the_hour_of_the_interval() -> None:
    """4-hour bars at 01:00, 05:00 ... UTC (a broker's server midnight): a calendar time of
    +6 hours after the last bar is in the bar that starts 4 hours after it."""
    hour = 3_600_000_000
    ts = np.arange(8, dtype=np.int64) * 4 * hour + hour
    future = np.array([ts[-1] + 6 * hour, ts[-1] + 9 * hour], np.int64)
    assert on_grid(future, ts, 4 * hour).tolist() == [ts[-1] + 4 * hour, ts[-1] + 8 * hour]
    assert on_grid(future, ts, 4 * hour, "America/Chicago").tolist() == [
        ts[-1] + 4 * hour,
        ts[-1] + 8 * hour,
    ]  # Chicago's clock is off the grid too: the UTC grid decides


def test_every_future_time_is_judged_past_one_on_the_grid_and_on_the_clocks_grid_alone() -> None:
    """FX 4-hour bars on a UTC grid, the last on Friday 16:00: Friday 20:00 is on the grid,
    the week's open after it (Sunday 22:00) is not and goes to 20:00. And CME bars on a grid
    from Chicago's midnight across daylight saving (no one phase in UTC): the calendar's
    17:00 open after Tuesday's 16:00-17:00 halt goes to the grid's 16:00 bar, which holds it."""
    four = dt.timedelta(hours=4)
    last = dt.datetime(2024, 1, 5, 16, 0, tzinfo=UTC)
    fx = pl.DataFrame(
        {"ts": [last - k * four for k in range(11, -1, -1)], "symbol": ["EURUSD"] * 12},
        schema={"ts": pl.Datetime("us", "UTC"), "symbol": pl.String},
    ).with_columns(close=pl.lit(1.0))
    got = forecast_targets(fx, fx.select("symbol", "ts").tail(1), 3, {"EURUSD": "fx_24x5"})
    sunday = dt.datetime(2024, 1, 7, 20, 0, tzinfo=UTC)
    assert got["target_ts"].to_list() == [last + four, sunday, sunday + four]
    chicago = ZoneInfo("America/Chicago")
    ts, day = [], dt.date(2024, 3, 6)
    while day <= dt.date(2024, 3, 12):
        if day.weekday() < 5:
            midnight = dt.datetime.combine(day, dt.time(0), chicago)
            ts += [(midnight + k * four).astimezone(UTC) for k in range(4)]  # 00:00 .. 12:00
        day += dt.timedelta(days=1)
    es = pl.DataFrame(
        {"ts": ts, "symbol": ["ES"] * len(ts), "close": [1.0] * len(ts)},
        schema={"ts": pl.Datetime("us", "UTC"), "symbol": pl.String, "close": pl.Float64},
    )
    got = forecast_targets(es, es.select("symbol", "ts").tail(1), 2, {"ES": "cme_equity"})
    assert [t.astimezone(chicago).strftime("%a %H:%M") for t in got["target_ts"]] == [
        "Tue 16:00", "Tue 20:00"
    ]  # fmt: skip


def test_a_live_forecasts_targets_are_predicts(demo_run) -> None:  # noqa: ANN001
    """A served forecast carries the target time ``predict`` gives the same origin (none until
    session 54), and the service's records put it after ``horizon``."""
    from foxhunt.data.pipeline import calendars_of
    from foxhunt.data.sources.demo import demo_bars
    from foxhunt.infer.forecaster import Forecaster
    from foxhunt.infer.service import _records

    bars = demo_bars(240, seed=5, symbol="ES")
    fc = Forecaster.load(demo_run.run, symbols=["ES"])
    out = fc.update(bars)
    assert out is not None and out.height == fc.horizon
    served = fc.target_times(out)
    origins = pl.DataFrame({"symbol": ["ES"], "ts": [bars["ts"][-1]]})
    calendars = calendars_of(fc.loaded.instruments)
    want = forecast_targets(bars, origins, fc.horizon, calendars)["target_ts"]
    assert served is not None and served.to_list() == want.to_list()
    assert served.to_list() == sorted(served.to_list()) and served[0] > bars["ts"][-1]
    record = _records(out, fc)[0]
    assert list(record)[:4] == ["symbol", "origin_ts", "horizon", "target_ts"]
    assert record["target_ts"] == want[0].isoformat()
