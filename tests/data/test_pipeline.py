"""prepare_training_data / prepare_inference_data on demo bars."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from foxhunt.config import DataConfig, RunConfig, TFTConfig
from foxhunt.data.features.table import feature_spec
from foxhunt.data.market.calendar import future_timestamps, known_features
from foxhunt.data.pipeline import bars_fingerprint, prepare_inference_data, prepare_training_data
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError

L, H = 16, 5


@pytest.fixture(scope="module")
def bars_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bars") / "ES_FUT_small.parquet"
    demo_bars(700, seed=11).write_parquet(path)
    return path


def _cfg(**data: object) -> RunConfig:
    model = TFTConfig(hidden=8, n_heads=2, encoder_length=L, horizon=H)
    return RunConfig(model=model, data=DataConfig(**data), preset="test")  # type: ignore[arg-type]


def test_training_data(bars_file: Path) -> None:
    p = prepare_training_data(bars_file, _cfg(stride=2))
    rows = 700 - 200 - H  # after warm-up and target drop
    usable = rows - 2 * (L + H)
    n_val = n_test = int(usable * 0.15)
    n_train = usable - n_val - n_test
    assert len(p.val) == n_val - L - H + 1 and len(p.test) == n_test - L - H + 1
    assert len(p.train) == len(range(0, n_train - L - H + 1, 2))
    assert p.spec == feature_spec(H)
    # Scaled on train: mean 0 over the training rows; embargo keeps splits apart in time.
    x = p.train.historical.numpy().astype(np.float64)
    np.testing.assert_allclose(x.mean(axis=0), 0.0, atol=1e-4)
    assert p.train.origins()["ts"].max() < p.val.origins()["ts"].min()
    assert p.val.origins()["ts"].max() < p.test.origins()["ts"].min()
    assert p.fingerprint == bars_fingerprint(
        pl.read_parquet(bars_file).with_columns(pl.col("volume").cast(pl.Float64))
    )
    assert len(p.fingerprint) == 64


def test_fingerprint_changes_with_content(bars_file: Path, tmp_path: Path) -> None:
    b = pl.read_parquet(bars_file)
    other = tmp_path / "other.parquet"
    b.with_columns(
        pl.when(pl.int_range(pl.len()) == 500)
        .then(pl.col("volume") + 1)
        .otherwise(pl.col("volume"))
        .alias("volume")
    ).write_parquet(other)
    p = prepare_training_data(bars_file, _cfg())
    assert prepare_training_data(other, _cfg()).fingerprint != p.fingerprint


def test_too_few_bars(tmp_path: Path) -> None:
    path = tmp_path / "short.parquet"
    demo_bars(220, seed=0).write_parquet(path)
    with pytest.raises(DataError, match="has 220 bars; need at least 221"):
        prepare_training_data(path, _cfg())
    demo_bars(300, seed=0).write_parquet(path)
    with pytest.raises(DataError, match="for validation"):
        prepare_training_data(path, _cfg())


def test_inference_forecast_origins_reach_last_bar(bars_file: Path) -> None:
    p = prepare_training_data(bars_file, _cfg())
    ds = prepare_inference_data(bars_file, p.spec, p.scaler, L, H, with_target=False)
    bars = pl.read_parquet(bars_file)
    assert len(ds) == 700 - 200 - L + 1
    assert ds.origins()["ts"][-1] == bars["ts"][-1]
    last = ds.batch([len(ds) - 1])
    assert last.target is None and last.known.shape == (1, L + H, 10)
    # The decoder's known inputs are the scaled calendar features of the next H bar times.
    from datetime import timedelta

    fut = future_timestamps(bars["ts"][-1], H, timedelta(minutes=5))
    kf = (
        pl.DataFrame({"ts": fut})
        .with_columns(pl.col("ts").dt.cast_time_unit("us"))
        .select(known_features(pl.col("ts")))
    )
    idx = [p.scaler.columns.index(c) for c in p.spec.known]
    want = (kf.to_numpy() - np.array(p.scaler.mean)[idx]) / np.array(p.scaler.std)[idx]
    np.testing.assert_allclose(last.known[0, L:].numpy(), want, rtol=1e-5, atol=1e-5)


def test_inference_with_targets(bars_file: Path) -> None:
    p = prepare_training_data(bars_file, _cfg())
    ds = prepare_inference_data(bars_file, p.spec, p.scaler, L, H, with_target=True)
    assert len(ds) == 700 - 200 - H - L - H + 1
    origins = ds.origins()
    close = pl.read_parquet(bars_file)["close"].to_numpy()
    t = 200 + L - 1  # first origin's bar index
    want = np.log(close[t + 1 : t + H + 1] / close[t]) / np.array(p.scaler.target_std)
    np.testing.assert_allclose(ds[0].target[0].numpy(), want, rtol=1e-5)
    assert origins["ts"][0] == pl.read_parquet(bars_file)["ts"][t]


def test_inference_rejects_foreign_spec(bars_file: Path) -> None:
    p = prepare_training_data(bars_file, _cfg())
    spec = type(p.spec)(
        historical=(*p.spec.historical[:-1], "obs__something_else"),
        known=p.spec.known,
        static=p.spec.static,
        targets=p.spec.targets,
        warmup=p.spec.warmup,
    )
    with pytest.raises(DataError, match="obs__something_else"):
        prepare_inference_data(bars_file, spec, p.scaler, L, H, with_target=False)


def test_inference_too_few_bars(bars_file: Path, tmp_path: Path) -> None:
    p = prepare_training_data(bars_file, _cfg())
    short = tmp_path / "short.parquet"
    demo_bars(200 + L - 1, seed=0).write_parquet(short)
    with pytest.raises(DataError, match=r"need at least 216 \(warm-up 200 \+ encoder 16\)"):
        prepare_inference_data(short, p.spec, p.scaler, L, H, with_target=False)
    demo_bars(200 + L, seed=0).write_parquet(short)
    assert len(prepare_inference_data(short, p.spec, p.scaler, L, H, with_target=False)) == 1
    with pytest.raises(DataError, match=r"\+ 2 x horizon 5"):
        prepare_inference_data(short, p.spec, p.scaler, L, H, with_target=True)


def test_the_test_split_from_files_equals_the_whole_table(
    panel_bars: pl.DataFrame, tmp_path: Path
) -> None:
    import torch

    from foxhunt.data.market.bars_market import resolve_bars
    from foxhunt.data.pipeline import windows_of_test_split
    from foxhunt.data.windows.row_files import host_tag

    cfg = _cfg(stride=3)
    inst = resolve_bars(panel_bars, None)
    want, want_scaler = windows_of_test_split(panel_bars, cfg, inst)
    (tmp_path / f".rows.{host_tag()}.{_dead_pid()}").mkdir()  # a killed evaluation's
    got, got_scaler = windows_of_test_split(panel_bars, cfg, inst, spill=tmp_path)
    assert got_scaler == want_scaler
    assert got.mapped_arrays == ("historical", "known", "static", "target")
    assert not list(tmp_path.iterdir())  # the files are open, their names gone
    assert (got.symbols, len(got)) == (want.symbols, len(want)) and len(got) > 0
    rows = list(range(0, len(got), 11))
    a, b = got.batch(rows), want.batch(rows)
    for name in ("static", "historical", "known", "target"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    assert got.origins().equals(want.origins())


def _dead_pid() -> int:
    import subprocess

    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid
