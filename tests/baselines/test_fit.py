"""Fitting a run's baselines: the empirical quantiles of recent training returns."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

from foxhunt.baselines import fit
from foxhunt.baselines.fit import recent_return_quantiles
from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.windows.dataset import WindowDataset

SPEC = FeatureSpec(("obs__a",), ("known__b",), ("static__c",), ("target__h1", "target__h2"), 0)


def _frame() -> pl.DataFrame:
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
    return pl.concat(frames).with_columns(pl.col("ts").dt.cast_time_unit("us"))


SCALER = ScalerParams(SPEC.inputs, (0.0,) * 3, (1.0,) * 3, (0.5, 2.0))


def test_recent_return_quantiles_per_symbol_and_pooled() -> None:
    frame = _frame()
    ds = WindowDataset(frame, SPEC, 3, 2)
    levels = (0.1, 0.5, 0.9)
    rec = recent_return_quantiles(ds, SCALER, levels, recent=20)
    assert rec["format"] == 2 and rec["horizon"] == 2 and rec["recent_windows"] == 20
    assert rec["quantiles"] == [0.1, 0.5, 0.9]
    es = frame.filter(pl.col("symbol") == "ES")
    targets = frame.select("target__h1", "target__h2").to_numpy().astype(np.float64) * [0.5, 2.0]
    es_rows = np.arange(2, 60 - 2)[-20:]  # ES origins (L-1 .. n-H-1), the latest 20
    nq_rows = 60 + np.arange(2, 40 - 2)[-20:]
    es = np.quantile(targets[es_rows], levels, axis=0).T
    np.testing.assert_allclose(rec["per_symbol"]["ES"], es, rtol=1e-12)  # float64 levels
    assert set(rec["per_symbol"]) == {"ES", "NQ"}
    pooled = np.quantile(targets[np.concatenate([es_rows, nq_rows])], levels, axis=0).T
    np.testing.assert_allclose(rec["pooled"], pooled, rtol=1e-12)


def test_the_classical_models_are_fitted_up_to_each_symbols_last_training_origin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """fit_baselines hands the classical models each symbol's last training origin, the
    validation origins (where their EWMA decays are chosen), the levels, the horizon and the
    calendars; without ``classical`` the record has the empirical quantiles only."""
    frame = _frame()
    train = WindowDataset(
        frame.filter(pl.col("ts") < frame["ts"].min() + dt.timedelta(hours=2)), SPEC, 3, 2
    )
    val = WindowDataset(
        frame.filter(pl.col("ts") >= frame["ts"].min() + dt.timedelta(hours=2)), SPEC, 3, 2
    )
    closes = frame.select("symbol", "ts", close=pl.lit(100.0))
    seen = {}

    def fake(closes_, train_end, val_origins, quantiles, horizon, calendars):  # noqa: ANN001, ANN202
        seen.update(
            closes=closes_,
            train_end=train_end,
            val=val_origins,
            q=quantiles,
            h=horizon,
            cal=calendars,
        )
        return {"fitted": True}

    monkeypatch.setattr(fit, "fit_classical", fake)
    levels = (0.1, 0.5, 0.9)
    record = fit.fit_baselines(train, val, closes, SCALER, levels, {"ES": "cme_equity"})
    assert record["classical"] == {"fitted": True}
    assert record["per_symbol"] == recent_return_quantiles(train, SCALER, levels)["per_symbol"]
    last = train.origins().group_by("symbol").agg(pl.col("ts").max())
    assert seen["train_end"] == dict(zip(last["symbol"], last["ts"], strict=True))
    assert seen["train_end"]["ES"] < val.origins().filter(pl.col("symbol") == "ES")["ts"].min()
    assert seen["val"].equals(val.origins()) and seen["closes"] is closes
    assert (seen["q"], seen["h"], seen["cal"]) == (levels, 2, {"ES": "cme_equity"})
    seen.clear()
    only = fit.fit_baselines(train, val, closes, SCALER, levels, classical=False)
    assert "classical" not in only and seen == {}
