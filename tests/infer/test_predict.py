from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
import torch

from foxhunt.artifacts.rundir import LoadedModel, RunDir
from foxhunt.config import RunConfig, TFTConfig
from foxhunt.data.features import FeatureSpec
from foxhunt.data.scaling import ScalerParams
from foxhunt.data.windows import WindowDataset
from foxhunt.infer.predict import write_forecasts
from foxhunt.model.tft import TFT

SPEC = FeatureSpec(
    ("obs__a", "obs__b"),
    ("known__c",),
    ("static__d",),
    ("target__h1", "target__h2", "target__h3"),
    0,
)
QUANTILES = (0.1, 0.5, 0.9)


def _windows(rows_per_symbol: int = 20) -> WindowDataset:
    g = np.random.default_rng(0)
    frames = []
    for sym in ("ES", "NQ"):
        ts = [
            dt.datetime(2024, 1, 2, tzinfo=dt.UTC) + dt.timedelta(minutes=5 * i)
            for i in range(rows_per_symbol)
        ]
        frames.append(
            pl.DataFrame(
                {
                    "ts": ts,
                    "symbol": [sym] * rows_per_symbol,
                    **{c: g.normal(size=rows_per_symbol).astype(np.float32) for c in SPEC.inputs},
                }
            )
        )
    frame = pl.concat(frames).with_columns(pl.col("ts").dt.cast_time_unit("us"))
    return WindowDataset(frame, SPEC, 4, 3, with_target=False)


def _loaded() -> LoadedModel:
    model_cfg = TFTConfig(
        n_static=1,
        n_historical=2,
        n_known=1,
        hidden=8,
        n_heads=2,
        lstm_layers=1,
        encoder_length=4,
        horizon=3,
        quantiles=QUANTILES,
        variable_width=2,
    )
    torch.manual_seed(0)
    scaler = ScalerParams(SPEC.inputs, (0.0,) * 4, (1.0,) * 4, (1e-3, 2e-3, 3e-3))
    return LoadedModel(
        RunDir(Path(".")),
        RunConfig(model=model_cfg),
        SPEC,
        scaler,
        "",
        TFT(model_cfg).eval(),
        Path("w"),
        {},
    )


def test_streams_sorted_quantiles_in_row_groups(tmp_path: Path) -> None:
    windows, loaded = _windows(), _loaded()
    n = len(windows)
    closes = np.linspace(100.0, 200.0, n)
    out = tmp_path / "f.parquet"
    rows = write_forecasts(loaded, windows, closes, out, batch_size=5, device=torch.device("cpu"))
    assert rows == n * 3
    assert pq.ParquetFile(out).num_row_groups == -(-n // 5)  # one row group per batch
    fc = pl.read_parquet(out)
    ret = fc.select([f"return_q{q:g}" for q in QUANTILES]).to_numpy()
    assert (np.diff(ret, axis=1) >= 0).all()
    np.testing.assert_allclose(
        fc.select([f"price_q{q:g}" for q in QUANTILES]).to_numpy(),
        fc["close"].to_numpy()[:, None] * np.exp(ret),
    )
    origins = windows.origins()
    assert fc["symbol"].to_list() == np.repeat(origins["symbol"].to_numpy(), 3).tolist()
    assert fc["origin_ts"].to_list() == [t for t in origins["ts"].to_list() for _ in range(3)]
    assert fc["horizon"].to_list() == [1, 2, 3] * n
    # Batching does not change the numbers.
    one = tmp_path / "one.parquet"
    write_forecasts(loaded, windows, closes, one, batch_size=1000, device=torch.device("cpu"))
    np.testing.assert_allclose(
        pl.read_parquet(one).select(pl.exclude("symbol", "origin_ts")).to_numpy(),
        fc.select(pl.exclude("symbol", "origin_ts")).to_numpy(),
        rtol=1e-6,
    )
    # Unscaled: the median return is the model's output times target_std of its horizon.
    with torch.inference_mode():
        raw = loaded.model(windows.batch([0])).quantiles[0].double()  # (H, Q)
    expected = torch.sort(
        raw * torch.tensor([1e-3, 2e-3, 3e-3], dtype=torch.float64)[:, None], dim=-1
    ).values
    np.testing.assert_allclose(ret[:3], expected.numpy(), rtol=1e-5)


def test_failure_mid_write_leaves_the_old_file_and_no_tmp(tmp_path: Path) -> None:
    windows, loaded = _windows(), _loaded()
    out = tmp_path / "f.parquet"
    out.write_bytes(b"previous forecast")
    calls = {"n": 0}
    real = loaded.model.forward

    def dies_on_second_batch(batch, return_attention=False):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("killed")
        return real(batch, return_attention)

    loaded.model.forward = dies_on_second_batch  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="killed"):
        write_forecasts(
            loaded, windows, np.ones(len(windows)), out, batch_size=4, device=torch.device("cpu")
        )
    assert out.read_bytes() == b"previous forecast" and not list(tmp_path.glob("*.tmp"))
