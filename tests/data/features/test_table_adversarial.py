"""Features stay finite on adversarial but valid bars (issue 12): flat runs, zero volume,
one-tick moves, limit-locked days, gaps of hours, prices from 1e-4 to 1e6."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foxhunt.data.features.table import compute_features
from foxhunt.data.market.instrument import Instrument

N = 330  # warm-up 200 + horizon 2 + enough rows to see runs


@st.composite
def valid_bars(draw: st.DrawFn) -> pl.DataFrame:
    """Bars on a tick grid that validation accepts: high >= max(open, close), low <= min,
    prices > 0, volume >= 0 — built from runs of adversarial regimes."""
    level = draw(st.sampled_from([1e-4, 0.0123, 1.2345, 97.5, 4750.0, 61234.5, 1e6]))
    tick = level * draw(st.sampled_from([1e-4, 1e-3, 1e-2]))
    ticks = np.empty(N, dtype=np.int64)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    base = int(round(level / tick))
    i = 0
    regimes = []
    while i < N:
        regime = draw(st.sampled_from(["flat", "one_tick", "walk", "locked", "jump"]))
        n = min(N - i, draw(st.integers(1, 150)))
        if regime == "flat" or regime == "locked":
            steps = np.zeros(n, dtype=np.int64)
        elif regime == "one_tick":
            steps = rng.choice([-1, 0, 1], size=n)
        elif regime == "walk":
            steps = rng.integers(-5, 6, size=n)
        else:
            steps = np.zeros(n, dtype=np.int64)
            steps[0] = rng.integers(-base // 4, base // 4 + 1)
        ticks[i : i + n] = steps
        regimes += [regime] * n
        i += n
    close_t = np.maximum(base + np.cumsum(ticks), 1)
    open_t = np.concatenate([[close_t[0]], close_t[:-1]])
    wide = np.array([r in ("walk", "one_tick") for r in regimes])
    spread = np.where(wide, rng.integers(0, 3, size=N), 0)
    high_t = np.maximum(open_t, close_t) + spread
    low_t = np.maximum(np.minimum(open_t, close_t) - spread, 1)
    flat = np.array([r in ("flat", "locked") for r in regimes])
    open_t = np.where(flat, close_t, open_t)
    high_t = np.where(flat, close_t, high_t)
    low_t = np.where(flat, close_t, low_t)
    zero_volume = draw(st.booleans())
    volume = np.zeros(N) if zero_volume else rng.integers(0, 50, size=N).astype(float)
    gaps = rng.random(N) < 0.05
    step = np.where(gaps, draw(st.sampled_from([60, 240, 3 * 24 * 60])), 1)
    start = datetime(2024, 1, 8, 14, 0, tzinfo=UTC)
    ts = [start + timedelta(minutes=int(m)) for m in np.cumsum(step)]
    return pl.DataFrame(
        {
            "ts": pl.Series(ts).dt.cast_time_unit("us"),
            "symbol": "XYZ",
            "open": open_t * tick,
            "high": high_t * tick,
            "low": low_t * tick,
            "close": close_t * tick,
            "volume": volume,
        }
    )


TABLE = {"XYZ": Instrument("XYZ", 0.01, 1.0, "USD", "unknown", "24x7")}


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bars=valid_bars())
def test_every_feature_is_finite_on_valid_bars(bars: pl.DataFrame) -> None:
    assert (bars["high"] >= bars["low"]).all() and (bars["low"] > 0).all()
    out = compute_features(bars, 2, instruments=TABLE)  # raises DataError on a non-finite one
    values = out.select(pl.exclude("ts", "symbol")).to_numpy()
    assert np.isfinite(values).all()


def test_instrument_calendars_drive_known_features() -> None:
    # Saturday crypto bars: 24/7 calendar when instruments are given, inside the trading day.
    ts = pl.datetime_range(
        datetime(2024, 1, 5, tzinfo=UTC), datetime(2024, 1, 5, 5, 59, tzinfo=UTC), "1m", eager=True
    )
    rng = np.random.default_rng(0)
    close = 40000.0 + np.cumsum(rng.integers(-3, 4, size=len(ts))) * 0.5
    bars = pl.DataFrame(
        {
            "ts": ts.dt.cast_time_unit("us"),
            "symbol": "BTC-PERP",
            "open": close,
            "high": close + 0.5,
            "low": close - 0.5,
            "close": close,
            "volume": 1.0,
        }
    )
    crypto = compute_features(bars, 2, instruments={})
    globex = compute_features(bars, 2)
    assert crypto["static__asset_class"][0] == 11.0  # crypto, not a future
    # 24x7: the trading day is the UTC day, progress = share of it elapsed.
    hours = crypto["ts"].dt.hour().cast(pl.Float64) + crypto["ts"].dt.minute() / 60.0
    assert np.allclose(crypto["known__session_progress"], hours / 24.0, atol=1e-6)
    assert not np.allclose(globex["known__session_progress"], crypto["known__session_progress"])
