"""Baseline forecasts for evaluation windows: the stored parameters applied to the bars up to
each window's origin."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.baselines.classical import symbol_series, variance_path
from foxhunt.baselines.empirical import EmpiricalQuantiles
from foxhunt.baselines.forecasts import classical_forecasts, simple_forecasts
from foxhunt.errors import DataError

H, Q = 2, 3
Z = [[-1.0, 0.0, 1.0], [-1.5, 0.0, 1.5]]
RECORD = {
    "ewma": {
        "per_symbol": {"ES": {"decay": 0.9, "initial": 1e-6, "z": Z}},
        "fallback": "ES",
    },
    "garch": {
        "per_symbol": {"ES": {"omega": 1e-8, "alpha": 0.1, "beta": 0.85, "initial": 1e-6, "z": Z}},
        "fallback": "ES",
    },
}


def _closes() -> pl.DataFrame:
    g = np.random.default_rng(0)
    start = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    frames = []
    for sym in ("ES", "NQ"):
        ts = pl.datetime_range(start, start + dt.timedelta(hours=59), "1h", eager=True)
        close = 100 * np.exp(np.cumsum(g.normal(0, 1e-3, 60)))
        frames.append(pl.DataFrame({"symbol": [sym] * 60, "ts": ts, "close": close}))
    return pl.concat(frames).with_columns(pl.col("ts").dt.cast_time_unit("us"))


def test_forecast_is_scale_at_the_origin_times_stored_quantiles() -> None:
    closes = _closes()
    origins = closes.filter(pl.col("ts").dt.hour() == 10).select("symbol", "ts")  # 3 each
    out = classical_forecasts(RECORD, closes, origins, H, Q)
    assert list(out) == ["ewma", "garch"]
    for model, fc in out.items():
        pred = fc.predict(0, len(origins))
        assert pred.shape == (6, H, Q)
        for i, (sym, ts) in enumerate(origins.iter_rows()):
            t, c = symbol_series(closes, sym)
            row = int(np.searchsorted(t, int(ts.timestamp() * 1e6)))
            # NQ was not fitted: it uses the fallback symbol's (ES's) parameters on its own bars
            v = variance_path(model, RECORD[model]["per_symbol"]["ES"], t, c, H)[row]
            want = np.sqrt(v)[:, None] * np.asarray(Z)
            np.testing.assert_allclose(pred[i].numpy(), want, rtol=1e-12, err_msg=model)


def test_forecast_uses_no_bar_after_the_origin() -> None:
    closes = _closes()
    at = dt.datetime(2024, 1, 1, 20, tzinfo=dt.UTC)
    origins = closes.filter(pl.col("ts") == at).select("symbol", "ts")  # one per symbol
    full = classical_forecasts(RECORD, closes, origins, H, Q)
    cut = classical_forecasts(RECORD, closes.filter(pl.col("ts") <= at), origins, H, Q)
    for model in full:
        torch.testing.assert_close(full[model].predict(0, 2), cut[model].predict(0, 2))


def test_an_origin_that_is_not_a_bar_is_refused() -> None:
    closes = _closes()
    origins = pl.DataFrame({"symbol": ["ES"], "ts": [dt.datetime(2030, 1, 1, tzinfo=dt.UTC)]})
    with pytest.raises(DataError, match="ES"):
        classical_forecasts(
            RECORD, closes, origins.with_columns(pl.col("ts").dt.cast_time_unit("us")), H, Q
        )


def test_an_old_run_has_no_classical_baselines() -> None:
    closes = _closes()
    assert classical_forecasts({}, closes, closes.select("symbol", "ts"), H, Q) == {}


def test_simple_forecasts_follow_each_windows_symbol() -> None:
    emp = EmpiricalQuantiles(
        (0.1, 0.5, 0.9),
        {"ES": torch.ones(H, Q, dtype=torch.float64)},
        torch.full((H, Q), 2.0, dtype=torch.float64),
        10,
    )
    out = simple_forecasts(emp, ["ES", "NQ", "ES"], H)
    assert out["zero"].predict(0, 3).abs().sum() == 0
    np.testing.assert_array_equal(out["empirical"].predict(0, 3)[:, 0, 0].numpy(), [1, 2, 1])
