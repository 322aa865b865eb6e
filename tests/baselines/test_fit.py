"""Fitting a run's baselines: the empirical quantiles of recent training returns."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl

from foxhunt.baselines.fit import recent_return_quantiles
from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.windows.dataset import WindowDataset

SPEC = FeatureSpec(("obs__a",), ("known__b",), ("static__c",), ("target__h1", "target__h2"), 0)


def test_recent_return_quantiles_per_symbol_and_pooled() -> None:
    g = np.random.default_rng(0)
    frames = []
    for sym, n in (("ES", 60), ("NQ", 40)):
        frames.append(
            pl.DataFrame(
                {
                    "ts": [
                        dt.datetime(2024, 1, 2, tzinfo=dt.UTC) + dt.timedelta(minutes=5 * i)
                        for i in range(n)
                    ],
                    "symbol": [sym] * n,
                    "obs__a": g.normal(size=n).astype(np.float32),
                    "known__b": np.zeros(n, np.float32),
                    "static__c": np.zeros(n, np.float32),
                    "target__h1": g.normal(size=n).astype(np.float32),
                    "target__h2": g.normal(size=n).astype(np.float32),
                }
            )
        )
    frame = pl.concat(frames).with_columns(pl.col("ts").dt.cast_time_unit("us"))
    ds = WindowDataset(frame, SPEC, 3, 2)
    scaler = ScalerParams(SPEC.inputs, (0.0,) * 3, (1.0,) * 3, (0.5, 2.0))
    levels = (0.1, 0.5, 0.9)
    rec = recent_return_quantiles(ds, scaler, levels, recent=20)
    assert rec["format"] == 2 and rec["horizon"] == 2 and rec["recent_windows"] == 20
    es = frame.filter(pl.col("symbol") == "ES")
    targets = frame.select("target__h1", "target__h2").to_numpy().astype(np.float64) * [0.5, 2.0]
    es_rows = np.arange(2, 60 - 2)[-20:]  # ES origins (L-1 .. n-H-1), the latest 20
    nq_rows = 60 + np.arange(2, 40 - 2)[-20:]
    es = np.quantile(targets[es_rows], levels, axis=0).T
    np.testing.assert_allclose(rec["per_symbol"]["ES"], es, rtol=1e-6)
    assert set(rec["per_symbol"]) == {"ES", "NQ"}
    pooled = np.quantile(targets[np.concatenate([es_rows, nq_rows])], levels, axis=0).T
    np.testing.assert_allclose(rec["pooled"], pooled, rtol=1e-6)
