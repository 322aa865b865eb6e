"""``--bar-minutes K`` (:func:`foxhunt.data.read.resample.aggregate_bars`) on hand-made bars:
exact K-minute frames computed by hand, the interval check's exact messages, the calendar of
each symbol (built-in or from the user's table) and the empty frame.

Frames are built inside the tests (never at import: mutation testing forks its workers).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from foxhunt.data.market.instrument import Instrument
from foxhunt.data.read.resample import aggregate_bars
from foxhunt.errors import DataError

NEEDS = "needs bars that divide K minutes (a multiple of the bars' interval)"


def _t(day: int, hour: int, minute: int = 0) -> datetime:
    """A UTC time in January 2024 (no DST: Chicago is UTC-6, New York UTC-5)."""
    return datetime(2024, 1, day, hour, minute, tzinfo=UTC)


def _frame(rows: list[tuple], extra: dict[str, pl.DataType] | None = None) -> pl.DataFrame:
    """Validated-bars dtypes: ``(ts, symbol, open, high, low, close, volume, *extra)`` rows."""
    schema: dict[str, pl.DataType] = {
        "ts": pl.Datetime("us", "UTC"),
        "symbol": pl.String(),
        "open": pl.Float64(),
        "high": pl.Float64(),
        "low": pl.Float64(),
        "close": pl.Float64(),
        "volume": pl.Float64(),
        **(extra or {}),
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def _numbered(symbol: str, times: list[datetime]) -> pl.DataFrame:
    """Bars at ``times`` (any spacing): the i-th opens at 100 + i, high + 0.5, low - 0.5,
    close + 0.25, volume i + 1 (each value tells which bar it came from)."""
    return _frame(
        [
            (t, symbol, 100.0 + i, 100.5 + i, 99.5 + i, 100.25 + i, i + 1.0)
            for i, t in enumerate(times)
        ]
    )


def _merged(symbol: str, ts: datetime, first: int, last: int) -> tuple:
    """The K-minute row of :func:`_numbered`'s bars ``first..last`` (inclusive)."""
    n = range(first, last + 1)
    return (
        ts,
        symbol,
        100.0 + first,
        100.5 + last,
        99.5 + first,
        100.25 + last,
        sum(i + 1.0 for i in n),
    )


def test_ohlcv_per_bucket_and_kept_columns_from_the_last_bar() -> None:
    extra = {"contract": pl.String(), "oi": pl.Float64()}
    # ES 5-minute bars, 08:30-08:55 CT (14:30-14:55 UTC); the contract rolls inside a bucket.
    bars = _frame(
        [
            (_t(10, 14, 30), "ES", 10.0, 12.0, 9.0, 11.0, 1.0, "ESH4", 500.0),
            (_t(10, 14, 35), "ES", 11.0, 15.0, 10.5, 14.0, 2.0, "ESH4", 501.0),
            (_t(10, 14, 40), "ES", 14.0, 14.5, 8.0, 9.5, 4.0, "ESM4", 7.0),
            (_t(10, 14, 45), "ES", 9.5, 9.75, 9.0, 9.25, 8.0, "ESM4", 8.0),
            (_t(10, 14, 50), "ES", 9.25, 20.0, 9.25, 19.0, 16.0, "ESM4", 9.0),
            (_t(10, 14, 55), "ES", 19.0, 19.5, 1.0, 2.0, 32.0, "ESM4", 10.0),
        ],
        extra,
    )
    want = _frame(
        [
            (_t(10, 14, 30), "ES", 10.0, 15.0, 8.0, 9.5, 7.0, "ESM4", 7.0),
            (_t(10, 14, 45), "ES", 9.5, 20.0, 1.0, 2.0, 56.0, "ESM4", 10.0),
        ],
        extra,
    )
    assert_frame_equal(aggregate_bars(bars, 15, "ES.csv"), want)


def test_k_equal_to_the_bars_interval_keeps_them() -> None:
    bars = _numbered("ES", [_t(10, 15, m) for m in (0, 5, 10)])
    assert_frame_equal(aggregate_bars(bars, 5), bars)


@pytest.mark.parametrize(
    ("gap", "minutes"),
    [(10, 5), (2, 5), (60, 30)],
    ids=["coarser", "not-dividing", "two-bars-coarser"],
)
def test_bars_that_do_not_divide_k_are_refused_naming_path_and_symbol(
    gap: int, minutes: int
) -> None:
    bars = _numbered("ES", [_t(10, 15), _t(10, 15) + timedelta(minutes=gap)])  # two bars only
    want = (
        f"/data/ES.csv: symbol 'ES' has bars {timedelta(minutes=gap)} apart; "
        f"--bar-minutes {minutes} {NEEDS}"
    )
    with pytest.raises(DataError) as e:
        aggregate_bars(bars, minutes, "/data/ES.csv")
    assert str(e.value) == want


def test_the_message_says_bars_without_a_path() -> None:
    bars = _numbered("ES", [_t(10, 15), _t(10, 15, 10)])
    with pytest.raises(
        DataError,
        match=re.escape(f"bars: symbol 'ES' has bars 0:10:00 apart; --bar-minutes 5 {NEEDS}"),
    ):
        aggregate_bars(bars, 5)


def test_a_one_bar_symbol_does_not_end_the_check_of_the_next() -> None:
    bars = pl.concat([_numbered("AAA", [_t(10, 15)]), _numbered("BBB", [_t(10, 15), _t(10, 16)])])
    with pytest.raises(
        DataError, match=re.escape("x.csv: symbol 'BBB' has bars 1:00:00 apart; --bar-minutes 5")
    ):
        aggregate_bars(bars, 5, "x.csv")


def test_each_symbol_is_checked_on_its_own_bars() -> None:
    # AAA's many 1-minute bars must not hide BBB's 10-minute ones.
    fine = _numbered("AAA", [_t(10, 15, m) for m in range(20)])
    coarse = _numbered("BBB", [_t(10, 15, m) for m in (0, 10, 20)])
    with pytest.raises(
        DataError, match=re.escape("x.csv: symbol 'BBB' has bars 0:10:00 apart; --bar-minutes 5")
    ):
        aggregate_bars(pl.concat([fine, coarse]), 5, "x.csv")


def test_symbols_are_kept_apart_and_sorted_by_symbol_then_ts() -> None:
    times = [_t(10, 15, m) for m in (0, 5, 10, 15)]
    es = _numbered("ES", times)
    nq = _numbered("NQ", times).with_columns(
        pl.col(c) * 2 for c in ("open", "high", "low", "close", "volume")
    )
    want = _frame(
        [
            _merged("ES", _t(10, 15, 0), 0, 1),
            _merged("ES", _t(10, 15, 10), 2, 3),
            (_t(10, 15, 0), "NQ", 200.0, 203.0, 199.0, 202.5, 6.0),
            (_t(10, 15, 10), "NQ", 204.0, 207.0, 203.0, 206.5, 14.0),
        ]
    )
    assert_frame_equal(aggregate_bars(pl.concat([es, nq]), 10), want)


def test_a_24_7_symbol_trading_day_starts_at_midnight_utc() -> None:
    # BTCUSD: built-in 24x7 calendar. 3-hour buckets from midnight: 21:00 holds 21-23, the
    # next day opens a new grid at 00:00 (not at 17:00 New York / Chicago).
    bars = _numbered("BTCUSD", [_t(10, 21), _t(10, 22), _t(10, 23), _t(11, 0), _t(11, 1)])
    want = _frame([_merged("BTCUSD", _t(10, 21), 0, 2), _merged("BTCUSD", _t(11, 0), 3, 4)])
    assert_frame_equal(aggregate_bars(bars, 180), want)


def test_the_user_table_calendar_is_respected() -> None:
    # The user's BTCUSD is CME's bitcoin future: its day opens at 17:00 Chicago (23:00 UTC),
    # after the 16:00-17:00 break; 3-hour steps from the open put 20:00 on the grid.
    table = {"BTCUSD": Instrument("BTCUSD", 5.0, 5.0, "USD", "crypto_future", "cme_crypto")}
    bars = _numbered("BTCUSD", [_t(10, 20), _t(10, 21), _t(10, 23), _t(11, 0), _t(11, 1)])
    want = _frame([_merged("BTCUSD", _t(10, 20), 0, 1), _merged("BTCUSD", _t(10, 23), 2, 4)])
    # (Its built-in 24x7 calendar would have started a new day, and grid, at midnight.)
    assert_frame_equal(aggregate_bars(bars, 180, "btc.csv", table), want)


def test_a_bucket_cut_by_the_session_end_is_shorter_not_merged() -> None:
    # GBPUSD (FX, day opens 17:00 New York = 22:00 UTC), K = 7 hours: 22:00, 05:00, 12:00,
    # 19:00; the 19:00 bucket ends at the next day's open, 22:00, three hours on.
    bars = _numbered(
        "GBPUSD", [_t(10, 19), _t(10, 20), _t(10, 21), _t(10, 22), _t(10, 23), _t(11, 0)]
    )
    want = _frame([_merged("GBPUSD", _t(10, 19), 0, 2), _merged("GBPUSD", _t(10, 22), 3, 5)])
    assert_frame_equal(aggregate_bars(bars, 420), want)


def test_no_bars_give_no_k_minute_bars_with_the_same_columns() -> None:
    bars = _frame([], {"contract": pl.String(), "oi": pl.Float64()})
    assert_frame_equal(aggregate_bars(bars, 5, "empty.csv"), bars)


@pytest.mark.parametrize(
    ("symbol", "hours", "starts"),
    [
        # 24/7, data beginning at 13:00: 2-hour buckets stay 12:00, 14:00 (from midnight).
        ("BTCUSD", [(10, 13), (10, 14), (10, 15)], [(10, 12), (10, 14)]),
        # FX day opening 22:00 UTC with a quiet first hour: buckets stay 22:00, 00:00.
        ("GBPUSD", [(10, 23), (11, 0), (11, 1)], [(10, 22), (11, 0)]),
    ],
    ids=["24x7-mid-day", "fx-quiet-first-hour"],
)
def test_the_grid_is_from_the_trading_day_start_not_the_first_bar(
    symbol: str, hours: list[tuple[int, int]], starts: list[tuple[int, int]]
) -> None:
    bars = _numbered(symbol, [_t(*h) for h in hours])
    want = _frame([_merged(symbol, _t(*starts[0]), 0, 0), _merged(symbol, _t(*starts[1]), 1, 2)])
    assert_frame_equal(aggregate_bars(bars, 120), want)


def test_an_equity_grid_runs_from_the_opening_bell_and_days_never_share_a_stamp() -> None:
    # An NYSE stock (xnys: opens 09:30 New York = 14:30 UTC in January; its trading day
    # begins at 17:00 New York the evening before). Hourly buckets run 14:30, 15:30, ...; a
    # pre-market bar falls on the same grid (12:30); 16:45 New York is the 21:30 bucket of
    # Jan 10, and 17:00 New York starts Jan 11's day, whose first bucket is cut at 22:00 UTC
    # rather than sharing the 21:30 stamp.
    table = {"ACME": Instrument("ACME", 0.01, 1.0, "USD", "stock", "xnys")}
    times = [
        _t(10, 13),
        _t(10, 14, 30),
        _t(10, 14, 45),
        _t(10, 15),
        _t(10, 15, 30),
        _t(10, 21, 45),
        _t(10, 22),
        _t(10, 22, 15),
    ]
    want = _frame(
        [
            _merged("ACME", _t(10, 12, 30), 0, 0),
            _merged("ACME", _t(10, 14, 30), 1, 3),
            _merged("ACME", _t(10, 15, 30), 4, 4),
            _merged("ACME", _t(10, 21, 30), 5, 5),
            _merged("ACME", _t(10, 22), 6, 7),
        ]
    )
    assert_frame_equal(aggregate_bars(_numbered("ACME", times), 60, "acme.csv", table), want)


def test_a_day_the_calendar_does_not_trade_is_gridded_from_its_start() -> None:
    # 25 Dec 2023 on CME equity (a holiday): bars there still aggregate, from the day's
    # start (17:00 Chicago the evening before = 23:00 UTC on the 24th): 2-hour steps.
    table = {"ES": Instrument("ES", 0.25, 50.0, "USD", "equity_index", "cme_equity")}
    times = [datetime(2023, 12, 25, h, tzinfo=UTC) for h in (0, 1, 2)]
    bars = _numbered("ES", times)
    want = _frame(
        [
            _merged("ES", datetime(2023, 12, 24, 23, tzinfo=UTC), 0, 0),
            _merged("ES", datetime(2023, 12, 25, 1, tzinfo=UTC), 1, 2),
        ]
    )
    assert_frame_equal(aggregate_bars(bars, 120, "es.csv", table), want)


def test_bars_in_another_zone_and_unit_keep_their_dtype() -> None:
    # the reader gives UTC microseconds; a caller's New York nanoseconds are bucketed alike
    bars = _numbered("BTCUSD", [_t(10, 13), _t(10, 14), _t(10, 15)])
    dtype = pl.Datetime("ns", "America/New_York")
    got = aggregate_bars(bars.with_columns(pl.col("ts").cast(dtype)), 120)
    assert got.schema["ts"] == dtype
    assert_frame_equal(
        got.with_columns(pl.col("ts").cast(pl.Datetime("us", "UTC"))), aggregate_bars(bars, 120)
    )
    assert got["ts"].dt.convert_time_zone("UTC").to_list() == [_t(10, 12), _t(10, 14)]
