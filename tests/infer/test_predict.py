from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
import torch

from demo_run import DemoRun
from foxhunt.artifacts.rundir import LoadedModel, RunDir
from foxhunt.config import RunConfig
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.infer.predict import write_forecasts
from foxhunt.model.tft import TFT

from .forward_fakes import SPEC, tiny_config
from .forward_fakes import windows as fake_windows

QUANTILES = (0.1, 0.5, 0.9)


def _windows() -> WindowDataset:
    return fake_windows(20, with_target=False)


def _loaded() -> LoadedModel:
    model_cfg = tiny_config(QUANTILES)
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


def _targets(windows: WindowDataset, closes: np.ndarray) -> pl.DataFrame:
    """Targets 5 minutes apart; every other one realised at 1 % over the origin's close."""
    origins = windows.origins()
    ts = [t + dt.timedelta(minutes=5 * h) for t in origins["ts"] for h in range(1, 4)]
    seen = [c * 1.01 if i % 2 else None for i, c in enumerate(np.repeat(closes, 3))]
    return pl.DataFrame(
        {"target_ts": ts, "realised_close": seen},
        schema={"target_ts": pl.Datetime("us", "UTC"), "realised_close": pl.Float64},
    )


def test_streams_sorted_quantiles_in_row_groups(tmp_path: Path) -> None:
    windows, loaded = _windows(), _loaded()
    n = len(windows)
    closes = np.linspace(100.0, 200.0, n)
    targets = _targets(windows, closes)
    out = tmp_path / "f.parquet"
    rows = write_forecasts(
        loaded, windows, closes, targets, out, batch_size=5, device=torch.device("cpu")
    )
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
    write_forecasts(
        loaded, windows, closes, targets, one, batch_size=1000, device=torch.device("cpu")
    )
    numbers = pl.exclude("symbol", "origin_ts", "target_ts", "realised_close", "realised_return")
    np.testing.assert_allclose(
        pl.read_parquet(one).select(numbers).to_numpy(),
        fc.select(numbers).to_numpy(),
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
        closes = np.ones(len(windows))
        write_forecasts(
            loaded,
            windows,
            closes,
            _targets(windows, closes),
            out,
            batch_size=4,
            device=torch.device("cpu"),
        )
    assert out.read_bytes() == b"previous forecast" and not list(tmp_path.glob("*.tmp"))


def test_rows_carry_target_times_and_realised_values(tmp_path: Path) -> None:
    windows, loaded = _windows(), _loaded()
    closes = np.linspace(100.0, 200.0, len(windows))
    targets = _targets(windows, closes)
    out = tmp_path / "f.parquet"
    write_forecasts(loaded, windows, closes, targets, out, batch_size=5, device=torch.device("cpu"))
    fc = pl.read_parquet(out)
    assert fc.columns[:5] == ["symbol", "origin_ts", "horizon", "target_ts", "close"]
    assert fc.columns[-2:] == ["realised_close", "realised_return"]
    assert fc["target_ts"].to_list() == targets["target_ts"].to_list()
    assert fc["realised_close"].to_list() == targets["realised_close"].to_list()
    realised = fc.filter(pl.col("realised_close").is_not_null())
    np.testing.assert_allclose(realised["realised_return"].to_numpy(), np.log(1.01), rtol=1e-12)
    assert fc["realised_return"].null_count() == fc["realised_close"].null_count() > 0


def test_long_form_holds_the_wide_numbers_one_row_per_level(tmp_path: Path) -> None:
    windows, loaded = _windows(), _loaded()
    closes = np.linspace(100.0, 200.0, len(windows))
    targets = _targets(windows, closes)
    wide, long = tmp_path / "w.parquet", tmp_path / "l.parquet"
    cpu = torch.device("cpu")
    write_forecasts(loaded, windows, closes, targets, wide, batch_size=5, device=cpu)
    rows = write_forecasts(
        loaded, windows, closes, targets, long, batch_size=5, device=cpu, long=True
    )
    w, lg = pl.read_parquet(wide), pl.read_parquet(long)
    assert rows == lg.height == w.height * len(QUANTILES)
    assert lg["quantile"].to_list() == list(QUANTILES) * w.height
    back = lg.pivot(on="quantile", index=["symbol", "origin_ts", "horizon"], values="return").sort(
        ["symbol", "origin_ts", "horizon"]
    )
    expected = w.sort(["symbol", "origin_ts", "horizon"])
    np.testing.assert_array_equal(
        back.select(pl.exclude("symbol", "origin_ts", "horizon")).to_numpy(),
        expected.select([f"return_q{q:g}" for q in QUANTILES]).to_numpy(),
    )
    firsts = lg.filter(pl.col("quantile") == QUANTILES[0])
    for col in ("target_ts", "close", "realised_close", "realised_return"):
        assert firsts[col].to_list() == w[col].to_list()


def test_forecast_frame_lays_out_each_symbol_horizon_and_level() -> None:
    """The streaming table: one row per symbol x horizon in that order, the schema of
    ``forecast_schema``, each level's return as given and its price ``close * exp(return)``."""
    from foxhunt.infer.predict import forecast_frame, forecast_schema

    q = np.arange(2 * 3 * 3, dtype=np.float64).reshape(2, 3, 3) / 100.0  # (B, H, Q)
    origins = np.array([1_704_200_000_000_000, 1_704_200_300_000_000], np.int64)
    got = forecast_frame(["ES", "NQ"], origins, np.array([4000.0, 17000.0]), q, QUANTILES)
    assert got.schema == pl.Schema(forecast_schema(QUANTILES))
    assert got["symbol"].to_list() == ["ES"] * 3 + ["NQ"] * 3
    assert got["horizon"].to_list() == [1, 2, 3, 1, 2, 3]
    assert got["origin_ts"].dt.epoch("us").to_list() == [origins[0]] * 3 + [origins[1]] * 3
    assert got["close"].to_list() == [4000.0] * 3 + [17000.0] * 3
    ret = got.select(pl.col("^return_q.*$")).to_numpy()
    price = got.select(pl.col("^price_q.*$")).to_numpy()
    np.testing.assert_array_equal(ret, q.reshape(6, 3))
    np.testing.assert_array_equal(price, got["close"].to_numpy()[:, None] * np.exp(q.reshape(6, 3)))


def test_origins_inside_the_training_bars_are_said_to_be_in_sample(
    demo_run: DemoRun, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """predict on the training bars forecast them without a word: their realised_* are bars
    the model was fitted on."""
    import logging

    from foxhunt.infer.predict import predict_to_file

    with caplog.at_level(logging.WARNING, logger="foxhunt.infer.predict"):
        rows, origins, _ = predict_to_file(
            demo_run.run, demo_run.bars, tmp_path / "f.parquet", batch_size=512, device="cpu"
        )
    (line,) = [m for m in caplog.messages if "before the training bars end" in m]
    # every origin but the last bar's, which is the training end itself
    assert line.startswith(f"{origins - 1} of {origins} forecast origins are before the training")
    assert line.endswith(
        "lie in the training period (in-sample for the symbols the model was trained on), "
        "or before it"
    )
