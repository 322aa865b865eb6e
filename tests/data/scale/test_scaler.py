"""Scaler: fit on train only, JSON round trip, z-scored inputs, uncentred targets."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from foxhunt.data.features.table import feature_spec
from foxhunt.data.scale.scaler import ScalerParams, apply_scaler, fit_scaler, unscale_targets
from foxhunt.data.windows.splits import split_by_time

SPEC = feature_spec(10)


def _splits(features: pl.DataFrame):
    return split_by_time(features, val_fraction=0.15, test_fraction=0.15, embargo=42)


def test_fit_ignores_val_and_test(es_features: pl.DataFrame) -> None:
    train = _splits(es_features).train
    base = fit_scaler(train, SPEC)
    tail = pl.int_range(pl.len()) >= train.height  # every row after train changes
    changed = es_features.with_columns(
        pl.when(tail).then(pl.col(c) * 3.0 + 1.0).otherwise(pl.col(c)).alias(c)
        for c in (*SPEC.inputs, *SPEC.targets)
    )
    s2 = _splits(changed)
    assert not s2.test.equals(_splits(es_features).test)
    assert fit_scaler(s2.train, SPEC) == base


def test_apply_and_roundtrip(es_features: pl.DataFrame) -> None:
    train = _splits(es_features).train
    p = fit_scaler(train, SPEC)
    assert ScalerParams.from_dict(json.loads(json.dumps(p.to_dict()))) == p
    out = apply_scaler(train, p)
    x = out.select(SPEC.inputs).to_numpy().astype(np.float64)
    varying = np.array(p.std) != 1.0
    np.testing.assert_allclose(x.mean(axis=0), 0.0, atol=1e-4)
    np.testing.assert_allclose(x[:, varying].std(axis=0), 1.0, rtol=1e-3)
    # Constant inputs (static features of one symbol) get std 1 and scale to 0.
    assert p.std[p.columns.index("static__log10_tick_size")] == 1.0
    assert (out["static__log10_tick_size"] == 0.0).all()
    # Targets: divided, not centred.
    t = out.select(SPEC.targets).to_numpy()
    raw = train.select(SPEC.targets).to_numpy()
    np.testing.assert_allclose(t, raw / np.array(p.target_std), rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(t.std(axis=0), 1.0, rtol=1e-3)
    assert raw.mean() != 0.0 and np.sign(t).tolist() == np.sign(raw).tolist()
    q = np.ones((2, 10, 3))
    np.testing.assert_allclose(unscale_targets(q, p, horizon_axis=1)[0, :, 0], p.target_std)


def test_bad_params() -> None:
    with pytest.raises(Exception, match="invalid scaler params"):
        ScalerParams.from_dict({"columns": ["a"], "mean": [], "std": [1.0], "target_std": []})
