"""The ablation benchmark's own pieces (benchmarks/ablation.py): causal HAR inputs, forward
targets, the quantile models' shapes. Not the numbers it measures (docs/evaluation.md)."""

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


def _bars(n: int = 400, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    t0 = dt.datetime(2018, 1, 2, tzinfo=dt.UTC)
    parts = []
    for sym in ("AAA", "BBB"):
        close = 100 * np.exp(np.cumsum(rng.standard_normal(n) * 1e-3))
        ts = [t0 + dt.timedelta(minutes=i) for i in range(n)]
        parts.append(pl.DataFrame({"symbol": sym, "ts": ts, "close": close}))
    return pl.concat(parts)


def test_har_inputs_are_causal_and_targets_are_forward_returns() -> None:
    bars = _bars()
    full = ablation.har_inputs(bars, 3, targets=True)
    cut = ablation.har_inputs(
        bars.filter(pl.col("ts") < pl.col("ts").min() + dt.timedelta(minutes=100)), 3, True
    )
    cols = [f"rv{k}" for k in ablation.RV_LAGS]
    head = full.filter(pl.col("ts").is_in(cut["ts"].implode()))
    assert head.select(cols).equals(cut.select(cols))  # later bars never change earlier inputs
    a = full.filter(pl.col("symbol") == "AAA")
    c = bars.filter(pl.col("symbol") == "AAA")["close"].to_numpy()
    assert a["y2"][10] == pytest.approx(np.log(c[12] / c[10]))
    assert a["y3"].tail(3).null_count() == 3  # no future at the end
    assert a["rv1"][5] == pytest.approx(abs(np.log(c[5] / c[4])))


def test_quantile_models_give_sorted_quantiles_for_every_horizon_and_level() -> None:
    fit = ablation.har_inputs(_bars(800), 2, targets=True).drop_nulls()
    test_x = fit.select([f"rv{k}" for k in ablation.RV_LAGS]).to_numpy()[:50]
    out = ablation.fit_quantile_models(fit, test_x, (0.1, 0.5, 0.9), 2)
    for q in out.values():
        assert q.shape == (50, 2, 3) and bool((q.diff(dim=2) >= 0).all())
        assert bool(q.isfinite().all())


def test_spread_is_even_and_bounded() -> None:
    assert ablation.spread(10, 100).tolist() == list(range(10))
    got = ablation.spread(1000, 10)
    assert len(got) == 10 and got[0] == 0 and got[-1] == 999
