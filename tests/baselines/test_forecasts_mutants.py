"""Baseline forecasts pinned where mutation testing found them loose: the exact shapes and
dtypes of ``WindowForecast`` (also with no windows), the parameters each symbol uses, the
messages of a malformed record, and which origins are refused."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.baselines.classical import symbol_series, variance_path
from foxhunt.baselines.empirical import EmpiricalQuantiles
from foxhunt.baselines.forecasts import classical_forecasts, simple_forecasts
from foxhunt.baselines.vol_paths import WEEK_MINUTES
from foxhunt.errors import DataError, ModelDirError

sys.path.insert(0, str(Path(__file__).parent))
from test_forecasts import RECORD, H, Q, Z, _closes  # noqa: E402

# not exact in float32: a z stored at single precision would differ
Z_NQ = [[-1.1, 0.1, 1.3], [-1.7, 0.2, 1.9]]
EWMA_NQ = {"decay": 0.7, "initial": 4e-6, "z": Z_NQ}


def _empirical() -> EmpiricalQuantiles:
    return EmpiricalQuantiles(
        (0.1, 0.5, 0.9),
        {"ES": torch.ones(H, Q, dtype=torch.float64)},
        torch.full((H, Q), 2.0, dtype=torch.float64),
        10,
    )


def _origins(closes: pl.DataFrame, hour: int = 10) -> pl.DataFrame:
    return closes.filter(pl.col("ts").dt.hour() == hour).select("symbol", "ts")


def _one_origin(symbol: str, ts: dt.datetime) -> pl.DataFrame:
    origins = pl.DataFrame({"symbol": [symbol], "ts": [ts]})
    return origins.with_columns(pl.col("ts").dt.cast_time_unit("us"))


def test_simple_forecasts_with_no_windows_are_empty_with_horizon_and_quantiles() -> None:
    out = simple_forecasts(_empirical(), [], H)
    assert list(out) == ["zero", "empirical"]
    assert out["empirical"].z.shape == (0, H, Q)
    assert out["empirical"].z.dtype == torch.float64
    assert out["zero"].z.shape == (1, H, Q)
    for fc in out.values():
        assert fc.scale.shape == (0, H) and fc.scale.dtype == torch.float64
        assert fc.symbol.shape == (0,) and fc.symbol.dtype == torch.long
        pred = fc.predict(0, 0)
        assert pred.shape == (0, H, Q) and pred.dtype == torch.float64


def test_simple_forecasts_scale_is_one_per_window_and_horizon_in_float64() -> None:
    out = simple_forecasts(_empirical(), ["ES", "NQ", "ES"], H)
    for fc in out.values():
        assert fc.scale.shape == (3, H) and fc.scale.dtype == torch.float64
        assert fc.scale.tolist() == [[1.0] * H] * 3
        assert fc.symbol.dtype == torch.long and fc.symbol.tolist() == [0, 1, 0]
    assert out["zero"].z.shape == (2, H, Q)
    assert out["empirical"].z.shape == (2, H, Q)


def test_simple_zero_forecast_holds_one_row_per_symbol() -> None:
    out = simple_forecasts(_empirical(), ["ES", "ES"], H)
    assert out["zero"].z.shape == (1, H, Q) and out["zero"].z.dtype == torch.float64
    assert out["zero"].predict(0, 2).shape == (2, H, Q)
    assert out["empirical"].z.shape == (1, H, Q)


def test_a_fitted_symbol_uses_its_own_parameters_not_the_fallbacks() -> None:
    closes = _closes()
    origins = _origins(closes)  # 3 ES then 3 NQ
    per_symbol = {"ES": RECORD["ewma"]["per_symbol"]["ES"], "NQ": EWMA_NQ}
    record = {"ewma": {"per_symbol": per_symbol, "fallback": "ES"}}
    fc = classical_forecasts(record, closes, origins, H, Q)["ewma"]
    assert fc.z.dtype == torch.float64
    assert fc.z.tolist() == [Z, Z_NQ]
    pred = fc.predict(0, len(origins))
    for i, (sym, ts) in enumerate(origins.iter_rows()):
        t, c = symbol_series(closes, sym)
        row = int(np.searchsorted(t, int(ts.timestamp() * 1e6)))
        v = variance_path("ewma", per_symbol[sym], t, c, H)[row]
        want = np.sqrt(v)[:, None] * np.asarray(Z if sym == "ES" else Z_NQ)
        np.testing.assert_allclose(pred[i].numpy(), want, rtol=1e-12, err_msg=sym)


def test_classical_quantiles_are_kept_in_float64_exactly() -> None:
    closes = _closes()
    origins = _origins(closes).filter(pl.col("symbol") == "NQ")
    record = {"ewma": {"per_symbol": {"NQ": EWMA_NQ}, "fallback": "NQ"}}
    fc = classical_forecasts(record, closes, origins, H, Q)["ewma"]
    assert fc.z.shape == (1, H, Q) and fc.z.dtype == torch.float64
    assert fc.z[0].tolist() == Z_NQ
    pred = fc.predict(0, 3)
    assert pred.dtype == torch.float64
    want = fc.scale[:, :, None] * torch.tensor(Z_NQ, dtype=torch.float64)
    assert torch.equal(pred, want)


def test_an_unreadable_classical_record_names_the_model_and_the_missing_key() -> None:
    closes = _closes()
    record = {"ewma": {"per_symbol": RECORD["ewma"]["per_symbol"]}}  # no "fallback"
    with pytest.raises(
        ModelDirError, match=r"^baselines\.json: unreadable ewma baseline \('fallback'\)$"
    ):
        classical_forecasts(record, closes, _origins(closes), H, Q)


def test_quantiles_of_the_wrong_shape_are_refused_with_their_shape() -> None:
    closes = _closes()
    origins = _origins(closes).filter(pl.col("symbol") == "ES")
    with pytest.raises(
        ModelDirError, match=r"^baselines\.json: garch quantiles have shape \(1, 2, 3\)$"
    ):
        classical_forecasts({"garch": RECORD["garch"]}, closes, origins, 3, Q)


def test_an_origin_between_two_bars_is_refused() -> None:
    closes = _closes()
    origins = _one_origin("ES", dt.datetime(2024, 1, 1, 10, 30, tzinfo=dt.UTC))
    with pytest.raises(DataError, match=r"^ES: a window's origin is not one of its bars$"):
        classical_forecasts(RECORD, closes, origins, H, Q)


def test_an_origin_after_the_last_bar_is_refused() -> None:
    closes = _closes()
    origins = _one_origin("NQ", dt.datetime(2024, 1, 3, 12, tzinfo=dt.UTC))  # last bar: 11:00
    with pytest.raises(DataError, match=r"^NQ: a window's origin is not one of its bars$"):
        classical_forecasts(RECORD, closes, origins, H, Q)


def test_an_origin_of_a_symbol_without_bars_is_refused() -> None:
    closes = _closes()
    origins = _one_origin("CL", dt.datetime(2024, 1, 1, 10, tzinfo=dt.UTC))
    with pytest.raises(DataError, match=r"^CL: a window's origin is not one of its bars$"):
        classical_forecasts(RECORD, closes, origins, H, Q)


def test_time_of_week_forecast_uses_the_bar_times() -> None:
    closes = _closes()
    origins = _origins(closes, hour=7)
    slots = WEEK_MINUTES // 60
    params = {
        "decay": 0.8,
        "initial": 1e-6,
        "slot_minutes": 60,
        "interval_s": 3600.0,
        "calendar": "24x7",
        "profile": (0.5 + np.arange(slots) % 24 / 8).tolist(),
        "z": Z,
    }
    record = {"tow_ewma": {"per_symbol": {"ES": params}, "fallback": "ES"}}
    fc = classical_forecasts(record, closes, origins, H, Q)["tow_ewma"]
    pred = fc.predict(0, len(origins))
    assert pred.shape == (len(origins), H, Q)
    for i, (sym, ts) in enumerate(origins.iter_rows()):
        t, c = symbol_series(closes, sym)
        row = int(np.searchsorted(t, int(ts.timestamp() * 1e6)))
        v = variance_path("tow_ewma", params, t, c, H)[row]
        np.testing.assert_allclose(pred[i].numpy(), np.sqrt(v)[:, None] * np.asarray(Z), rtol=1e-12)


def test_classical_forecasts_with_no_windows_are_empty_with_horizon_and_quantiles() -> None:
    closes = _closes()
    out = classical_forecasts(RECORD, closes, _origins(closes).head(0), H, Q)
    assert list(out) == ["ewma", "garch"]
    for fc in out.values():
        assert fc.z.shape == (0, H, Q) and fc.z.dtype == torch.float64
        assert fc.scale.shape == (0, H) and fc.scale.dtype == torch.float64
        assert fc.symbol.shape == (0,) and fc.symbol.dtype == torch.long
        assert fc.predict(0, 0).shape == (0, H, Q)
