"""The ablation benchmark's own pieces (benchmarks/ablation.py): causal HAR inputs, forward
targets, HAR lags from the bar interval, the quantile models' shapes. Not the numbers it
measures (docs/evaluation.md)."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import ablation  # noqa: E402

LAGS = (1, 5, 15, 60, 240, 1440)


def _bars(
    n: int = 400, seed: int = 0, step: dt.timedelta = dt.timedelta(minutes=1)
) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    t0 = dt.datetime(2018, 1, 2, tzinfo=dt.UTC)
    parts = []
    for sym in ("AAA", "BBB"):
        close = 100 * np.exp(np.cumsum(rng.standard_normal(n) * 1e-3))
        ts = [t0 + i * step for i in range(n)]
        parts.append(pl.DataFrame({"symbol": sym, "ts": ts, "close": close}))
    return pl.concat(parts)


def test_har_inputs_are_causal_and_targets_are_forward_returns() -> None:
    bars = _bars()
    full = ablation.har_inputs(bars, 3, targets=True, lags=LAGS)
    cut = ablation.har_inputs(
        bars.filter(pl.col("ts") < pl.col("ts").min() + dt.timedelta(minutes=100)), 3, True, LAGS
    )
    cols = ablation.rv_columns(LAGS)
    head = full.filter(pl.col("ts").is_in(cut["ts"].implode()))
    assert head.select(cols).equals(cut.select(cols))  # later bars never change earlier inputs
    a = full.filter(pl.col("symbol") == "AAA")
    c = bars.filter(pl.col("symbol") == "AAA")["close"].to_numpy()
    assert a["y2"][10] == pytest.approx(np.log(c[12] / c[10]))
    assert a["y3"].tail(3).null_count() == 3  # no future at the end
    assert a["rv1"][5] == pytest.approx(abs(np.log(c[5] / c[4])))
    r = np.diff(np.log(c))
    assert a["rv5"][20] == pytest.approx(np.sqrt(np.mean(r[15:20] ** 2)))
    # a lag longer than the history averages the bars there are
    assert a["rv1440"][20] == pytest.approx(np.sqrt(np.sum(r[:20] ** 2) / 21))


def test_rv_lags_follow_the_bar_interval() -> None:
    minute, day = dt.timedelta(minutes=1), dt.timedelta(days=1)
    assert ablation.rv_lags(minute) == LAGS
    assert ablation.rv_lags(5 * minute) == (1, 3, 12, 48, 288)
    assert ablation.rv_lags(dt.timedelta(hours=1)) == (1, 4, 24)
    assert ablation.rv_lags(day) == ablation.DAILY_LAGS == (1, 5, 22, 66)
    assert ablation.rv_lags(dt.timedelta(hours=23)) == ablation.DAILY_LAGS  # a session apart
    assert ablation.rv_lags(7 * day) == ablation.DAILY_LAGS


def test_bar_interval_is_the_median_gap_per_symbol() -> None:
    assert ablation.bar_interval(_bars(50)) == dt.timedelta(minutes=1)
    daily = _bars(30, step=dt.timedelta(days=1))
    weekdays = daily.filter(pl.col("ts").dt.weekday() <= 5)  # weekend gaps of 3 days
    assert ablation.bar_interval(weekdays) == dt.timedelta(days=1)
    with pytest.raises(ValueError, match="one bar per symbol"):
        ablation.bar_interval(_bars(1))


@pytest.mark.slow  # 12 statsmodels and LightGBM fits: seconds on a busy machine
def test_quantile_models_give_sorted_quantiles_for_every_horizon_and_level() -> None:
    lags = ablation.DAILY_LAGS
    fit = ablation.har_inputs(_bars(800), 2, targets=True, lags=lags).drop_nulls()
    test_x = fit.select(ablation.rv_columns(lags)).to_numpy()[:50]
    out = ablation.fit_quantile_models(fit, test_x, (0.1, 0.5, 0.9), 2, lags)
    for q in out.values():
        assert q.shape == (50, 2, 3) and bool((q.diff(dim=2) >= 0).all())
        assert bool(q.isfinite().all())


def test_spread_is_even_and_bounded() -> None:
    assert ablation.spread(10, 100).tolist() == list(range(10))
    got = ablation.spread(1000, 10)
    assert len(got) == 10 and got[0] == 0 and got[-1] == 999
