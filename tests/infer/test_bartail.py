"""BarTail and smoother_memory: the bounded raw-bar tail of a streaming forecaster, how much of
it is kept (the smoothers' memory, the first encoder bar's whole session) and its frame."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import polars as pl
import pytest

from foxhunt.data.features import observed as o
from foxhunt.infer.bartail import ROW_BYTES, VALUE_COLUMNS, BarTail, smoother_memory


def test_smoother_memory_is_the_slowest_smoothers_forgetting_time() -> None:
    periods = [*o.EMA_SPANS, *(p for params in o.MACD_PARAMS for p in params)]
    slowest = min([2.0 / (n + 1.0) for n in periods] + [1.0 / p for p in o.ATR_PERIODS])
    slowest = min([slowest] + [1.0 / p for p in (*o.RSI_PERIODS, *o.ADX_PERIODS)])
    assert smoother_memory() == math.ceil(math.log(1e-13) / math.log(1.0 - slowest)) == 1198
    assert slowest == pytest.approx(2.0 / 81.0)  # EMA span 80
    assert smoother_memory(1e-6) == math.ceil(math.log(1e-6) / math.log(1.0 - 2.0 / 81.0))


def test_an_empty_tail() -> None:
    tail = BarTail()
    assert len(tail) == 0 and tail.last_ts is None and tail.nbytes == 0
    assert tail.ts.dtype == np.int64 and tail.session.dtype == np.int32
    assert tail.values.dtype == np.float64 and tail.values.shape == (0, len(VALUE_COLUMNS))


def _bars(n: int, sessions: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ts = np.arange(n, dtype=np.int64) * 60_000_000
    values = np.arange(n * 5, dtype=np.float64).reshape(n, 5)
    return ts, values, np.array(sessions, dtype=np.int32)


@pytest.mark.parametrize(
    ("keep", "encoder_length", "first"),
    [
        (3, 2, 7),  # the first encoder bar's session (3) starts at bar 7: keep the last 3
        (3, 5, 3),  # the first encoder bar (5) is in session 2, which starts at bar 3
        (20, 2, 0),  # fewer bars than keep: all of them
        (10, 2, 0),  # exactly keep
        (9, 8, 0),  # one bar beyond keep, but the encoder's first bar is in session 1
    ],
)
def test_extended_keeps_the_last_bars_back_to_the_encoder_session(
    keep: int, encoder_length: int, first: int
) -> None:
    ts, values, session = _bars(10, [1, 1, 1, 2, 2, 2, 2, 3, 3, 3])
    old = BarTail(ts[:4], values[:4], session[:4])
    new = old.extended(ts[4:], values[4:], session[4:], keep=keep, encoder_length=encoder_length)
    assert np.array_equal(new.ts, ts[first:]) and np.array_equal(new.values, values[first:])
    assert np.array_equal(new.session, session[first:])
    assert len(old) == 4 and new.last_ts == int(ts[-1])  # the old tail is unchanged
    assert new.nbytes == ROW_BYTES * (10 - first)
    for a, b in ((new.ts, ts), (new.values, values), (new.session, session)):
        assert not np.shares_memory(a, b)  # copies: the caller's arrays can be released


def test_frame_is_a_bars_frame_in_utc() -> None:
    ts, values, session = _bars(2, [1, 1])
    frame = BarTail(ts, values, session).frame("ES")
    want = pl.DataFrame(
        {
            "ts": [datetime(1970, 1, 1, 0, 0, tzinfo=UTC), datetime(1970, 1, 1, 0, 1, tzinfo=UTC)],
            "symbol": ["ES", "ES"],
            "open": [0.0, 5.0],
            "high": [1.0, 6.0],
            "low": [2.0, 7.0],
            "close": [3.0, 8.0],
            "volume": [4.0, 9.0],
        },
        schema_overrides={"ts": pl.Datetime("us", "UTC")},
    )
    assert frame.equals(want) and frame.schema == want.schema
    empty = BarTail().frame("ES")
    assert empty.schema == want.schema and empty.height == 0


def test_an_encoder_reaching_the_first_bar_keeps_its_session_from_there() -> None:
    ts, values, _ = _bars(4, [1, 1, 1, 1])
    session = np.array([0, 1, 1, 1], dtype=np.int32)  # bar 0 alone in its session
    new = BarTail().extended(ts, values, session, keep=2, encoder_length=4)
    assert np.array_equal(new.ts, ts)  # the first encoder bar is bar 0: all kept


@pytest.mark.parametrize(
    ("table", "periods", "alpha"),
    [
        ("MACD_PARAMS", ((12, 300, 9),), 2.0 / 301.0),
        ("RSI_PERIODS", (200,), 1.0 / 200.0),
        ("ATR_PERIODS", (150,), 1.0 / 150.0),
        ("ADX_PERIODS", (120,), 1.0 / 120.0),
    ],
)
def test_a_slower_smoother_lengthens_the_memory(
    monkeypatch: pytest.MonkeyPatch, table: str, periods: tuple, alpha: float
) -> None:
    """The docstring's promise: a slower smoother in observed.py lengthens the tail."""
    monkeypatch.setattr(o, table, periods)
    want = math.ceil(math.log(1e-13) / math.log(1.0 - alpha))
    assert smoother_memory() == want > 1198
