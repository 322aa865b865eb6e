from __future__ import annotations

import datetime as dt

import polars as pl

from foxhunt.infer.targets import forecast_targets

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


def test_realised_close_is_the_bar_at_the_target_time_in_origin_order() -> None:
    start = dt.datetime(2024, 1, 3, 15, 0, tzinfo=UTC)
    es = _bars(start, 10, "ES")
    nq = _bars(start, 10, "NQ").with_columns(pl.col("close") * 10)
    bars = pl.concat([es, nq.filter(pl.col("ts") != start + dt.timedelta(minutes=35))])  # a gap
    origins = pl.concat([nq.slice(5, 1), es.slice(8, 1)]).select("symbol", "ts")
    got = forecast_targets(bars, origins, 2, {"ES": "cme_equity", "NQ": "globex"})
    assert got["target_ts"].to_list() == [
        start + dt.timedelta(minutes=30),
        start + dt.timedelta(minutes=35),
        start + dt.timedelta(minutes=45),
        start + dt.timedelta(minutes=50),
    ]
    # NQ at 30 min is bar 6 (close 1060); 35 min is missing; ES bar 9 is the last.
    assert got["realised_close"].to_list() == [1060.0, None, 109.0, None]


def test_no_origins_gives_an_empty_table() -> None:
    bars = _bars(dt.datetime(2024, 1, 3, 15, 0, tzinfo=UTC), 5, "ES")
    got = forecast_targets(bars, bars.select("symbol", "ts").head(0), 3)
    assert got.height == 0 and got.columns == ["target_ts", "realised_close"]


def test_each_symbol_follows_its_own_calendar_and_unnamed_ones_globex() -> None:
    """Origins at 20:55 and 21:00 UTC on a January Wednesday (5-minute bars stamped at their
    open): XNYS's last bar opens at 20:55 (16:00 New York close), so both origins' next bars
    are Thursday's 14:30 UTC open and the one after it; a symbol not in the mapping (or no
    mapping at all) follows globex, open through the evening."""
    start = dt.datetime(2024, 1, 3, 20, 50, tzinfo=UTC)
    bars = pl.concat([_bars(start, 3, "AAPL"), _bars(start, 3, "ES")])
    origins = bars.filter(pl.col("ts") >= start + dt.timedelta(minutes=5)).select("symbol", "ts")
    got = forecast_targets(bars, origins, 2, {"AAPL": "xnys"})
    five = dt.timedelta(minutes=5)
    open_ = dt.datetime(2024, 1, 4, 14, 30, tzinfo=UTC)
    evening = [start + 2 * five, start + 3 * five, start + 4 * five]  # 21:00, 21:05, 21:10
    assert got["target_ts"].to_list() == [
        open_, open_ + five,  # AAPL at 20:55
        open_, open_ + five,  # AAPL at 21:00
        evening[0], evening[1],  # ES at 20:55, on globex
        evening[1], evening[2],  # ES at 21:00
    ]  # fmt: skip
    assert got["realised_close"].to_list() == [None, None, None, None, 102.0, None, None, None]
    for unmapped in (None, {"NQ": "xnys"}):
        assert forecast_targets(bars, origins, 2, unmapped)["target_ts"].to_list()[:4] == [
            evening[0], evening[1], evening[1], evening[2]
        ]  # fmt: skip
