from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors import safe_open

from demo_run import QUANTILES, DemoRun
from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.rundir import RunDir, load_model_dir, model_weights
from foxhunt.cli import main
from foxhunt.errors import InputError, ModelDirError
from foxhunt.quantize.layers import QuantLinear
from foxhunt.quantize.model import MARKER, held_bytes, load_inference_model
from foxhunt.quantize.recipe import quantize_run
from foxhunt.quantize.tensors import quantize_int8, quantize_rows


@pytest.fixture(scope="module")
def int8_run(demo_run: DemoRun, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("q") / "int8"
    result = quantize_run(demo_run.run, out, measure=False)
    return out, result


# --- the scheme --------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    rows=st.integers(1, 6),
    cols=st.integers(1, 40),
    seed=st.integers(0, 9999),
    scale=st.floats(1e-6, 1e3),
)
def test_int8_codes_and_error_bound(rows: int, cols: int, seed: int, scale: float) -> None:
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(rows, cols, generator=g) * scale
    codes, s = quantize_int8(w, (1,))
    assert codes.dtype == torch.int8 and s.shape == (rows, 1)
    assert int(codes.abs().max()) <= 127
    # Round-to-nearest: every weight within half a step; each row's largest weight is exact.
    err = (codes.float() * s - w).abs()
    assert bool((err <= s / 2 * (1 + 1e-5) + 1e-30).all())
    assert bool((codes.abs().amax(dim=1) == 127).all())


def test_quant_linear_is_exact_integer_arithmetic() -> None:
    g = torch.Generator().manual_seed(0)
    w, b, x = (
        torch.randn(7, 12, generator=g),
        torch.randn(7, generator=g),
        torch.randn(2, 5, 12, generator=g),
    )
    codes, s = quantize_int8(w, (1,))
    layer = QuantLinear(codes, s, b, "dynamic")
    xq, sx = quantize_rows(x.reshape(-1, 12))
    # Reference in float64: the int8 x int8 products summed exactly, then scaled.
    ref = (xq.double() @ codes.double().t()) * sx.double() * s.double().t() + b.double()
    torch.testing.assert_close(layer(x).double(), ref.view(2, 5, 7), rtol=1e-6, atol=1e-6)
    # ... and close to the float layer.
    assert float((layer(x) - F.linear(x, w, b)).abs().max()) < 0.05 * float(
        F.linear(x, w, b).abs().max()
    )
    weight_only = QuantLinear(codes, s, b, "none")
    torch.testing.assert_close(weight_only(x), F.linear(x, codes.float() * s, b))


# --- the model directory -----------------------------------------------------------------------


@pytest.mark.slow
def test_int8_pinball_within_2_percent_and_parameter_bytes_60_percent_lower(
    int8_run: tuple[Path, dict],
) -> None:
    _, r = int8_run
    fp32, q = r["pinball"]["fp32"], r["pinball"]["quantized"]
    assert np.isfinite(q) and abs(q - fp32) / fp32 < 0.02
    assert r["param_bytes"]["quantized"] <= 0.4 * r["param_bytes"]["fp32"]
    assert r["disk_bytes"]["quantized"] <= 0.45 * r["disk_bytes"]["fp32"]
    assert "test split" in r["pinball_on"]


@pytest.mark.slow
def test_int8_directory_is_plain_safetensors_and_json(
    int8_run: tuple[Path, dict], demo_run: DemoRun
) -> None:
    out, _ = int8_run
    marker = json.loads((out / MARKER).read_text())
    weights = out / marker["weights"]
    sidecar = ckpt.load_sidecar(weights)
    recipe = sidecar["quantization"]
    assert recipe["precision"] == "int8" and recipe["mode"] == "dynamic"
    assert {"linear", "lstm", "per_variable"} == set(recipe["tensors"].values())
    with safe_open(str(weights), "pt") as f:
        dtypes = {k: f.get_slice(k).get_dtype() for k in f.keys()}  # noqa: SIM118
    for name in recipe["tensors"]:
        assert dtypes[name] == "I8" and dtypes[f"{name}.__scale"] == "F32"
    for name in ("config.json", "features.json", "baselines.json"):
        assert (out / name).read_text() == (demo_run.run / name).read_text()


@pytest.mark.slow
def test_int8_outputs_finite_and_close_to_fp32(
    int8_run: tuple[Path, dict], demo_run: DemoRun
) -> None:
    out, _ = int8_run
    fp32 = load_model_dir(demo_run.run)
    q = load_inference_model(out)
    assert held_bytes(q.model) < 0.4 * held_bytes(fp32.model)
    from foxhunt.model.batch import random_batch

    batch = random_batch(fp32.config.model, 8)
    with torch.inference_mode():
        a, b = fp32.model(batch).quantiles, q.model(batch).quantiles
    assert bool(torch.isfinite(b).all())
    assert float((a - b).norm() / a.norm()) < 0.05


@pytest.mark.slow
def test_predict_and_evaluate_load_the_int8_directory(
    int8_run: tuple[Path, dict],
    demo_run: DemoRun,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, _ = int8_run
    pred = tmp_path / "f.parquet"
    assert (
        main(["predict", "--model", str(out), "--bars", str(demo_run.bars), "--out", str(pred)])
        == 0
    )
    fc = pl.read_parquet(pred)
    ret = fc.select([f"return_q{q:g}" for q in QUANTILES]).to_numpy()
    assert np.isfinite(ret).all() and (np.diff(ret, axis=1) >= 0).all()
    assert main(["evaluate", "--model", str(out), "--bars", str(demo_run.bars), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["split"] == "test split of the training bars"
    assert np.isfinite(result["scores"]["tft"]["mean_pinball"])
    # which weights the source run served, as the source run's own evaluation says (it was
    # "epoch N of 0 (the start's loss was not recorded)": no epoch sidecars are copied)
    from foxhunt.artifacts.rundir import RunDir, model_weights
    from foxhunt.artifacts.served import served_weights

    source = RunDir(demo_run.run)
    assert result["training"] == served_weights(source.checkpoints, model_weights(source))


@pytest.mark.slow
def test_static_mode_and_bf16(demo_run: DemoRun, tmp_path: Path) -> None:
    static = quantize_run(demo_run.run, tmp_path / "static", mode="static", measure=False)
    fp32 = static["pinball"]["fp32"]
    assert abs(static["pinball"]["quantized"] - fp32) / fp32 < 0.05
    weights = load_inference_model(tmp_path / "static").weights
    with safe_open(str(weights), "pt") as f:
        act = [k for k in f.keys() if k.endswith(".__act_scale")]  # noqa: SIM118
    assert act and "output.__act_scale" not in act  # the quantile head keeps float inputs
    bf16 = quantize_run(demo_run.run, tmp_path / "bf16", precision="bf16", measure=False)
    assert abs(bf16["pinball"]["quantized"] - fp32) / fp32 < 0.005
    assert 0.45 < bf16["param_bytes"]["quantized"] / bf16["param_bytes"]["fp32"] < 0.6


@pytest.mark.slow
def test_bad_arguments_and_directories(
    int8_run: tuple[Path, dict], demo_run: DemoRun, tmp_path: Path
) -> None:
    out, _ = int8_run
    with pytest.raises(InputError, match="already quantised"):
        quantize_run(out, tmp_path / "again", measure=False)
    with pytest.raises(InputError, match="already exists"):
        quantize_run(demo_run.run, out, measure=False)
    with pytest.raises(InputError, match="int8 only"):
        quantize_run(demo_run.run, tmp_path / "x", precision="bf16", mode="static", measure=False)
    assert not (tmp_path / "x").exists() and not (tmp_path / "x.tmp").exists()
    # A weights file that lost a tensor is refused with a message naming it.
    broken = tmp_path / "broken"
    import shutil

    shutil.copytree(out, broken)
    weights = json.loads((broken / MARKER).read_text())["weights"]
    tensors, sidecar = ckpt.load_weights(broken / weights)
    del tensors["output.weight.__scale"]
    sidecar = {k: v for k, v in sidecar.items() if k not in ("format", "weights_sha256")}
    ckpt.save_weights(broken / weights, tensors, sidecar)
    with pytest.raises(ModelDirError, match="output.weight"):
        load_inference_model(broken)
    # A run whose served weights hold a NaN is refused before anything is written.
    diverged = _diverged(demo_run.run, tmp_path / "diverged", 3, float("nan"))
    refused = rf"^--model {diverged}: cannot quantise output.weight: it holds non-finite values"
    with pytest.raises(ModelDirError, match=refused):
        quantize_run(diverged, tmp_path / "q", measure=False)
    assert not (tmp_path / "q").exists() and not (tmp_path / "q.tmp").exists()


@pytest.mark.slow
def test_cli_prints_the_comparison_table(
    demo_run: DemoRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "int8"
    assert main(["quantize", "--model", str(demo_run.run), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    for row in (
        "size on disk",
        "parameter bytes",
        "inference peak RSS",
        "latency per forecast (batch 1)",
        "latency per forecast (batch 32)",
        "mean pinball loss",
    ):
        assert row in text
    comparison = json.loads((out / MARKER).read_text())["comparison"]
    for name in ("fp32", "quantized"):
        inf = comparison["inference"][name]
        assert inf["peak_delta_bytes"] > 0 and set(inf["latency_ms"]) == {"1", "32"}
    assert (
        comparison["inference"]["quantized"]["held_bytes"]
        < 0.4 * comparison["inference"]["fp32"]["held_bytes"]
    )
    assert main(["quantize", "--model", str(demo_run.run), "--out", str(out)]) == 2  # exists


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_int8_directory_runs_on_cuda(int8_run: tuple[Path, dict]) -> None:
    """On CUDA the int8 layers dequantise (weight-only); the forecast matches the CPU one."""
    from foxhunt.model.batch import random_batch

    out, _ = int8_run
    cpu, gpu = load_inference_model(out, "cpu"), load_inference_model(out, "cuda")
    batch = random_batch(cpu.config.model, 4)
    with torch.inference_mode():
        a = cpu.model(batch).quantiles
        b = gpu.model(batch.to("cuda")).quantiles.cpu()
    assert bool(torch.isfinite(b).all())
    assert float((a - b).norm() / a.norm()) < 0.02  # CPU also rounds activations to int8


@pytest.mark.slow
def test_a_broken_weight_is_refused_before_static_calibration(
    demo_run: DemoRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Calibrating static scales runs the model over windows (seconds on a real run): a NaN
    weight that the quantiser would refuse anyway is refused before it."""
    import foxhunt.quantize.recipe as recipe

    diverged = _diverged(demo_run.run, tmp_path / "diverged", 0, float("inf"))

    def calibrate(*_args: object) -> None:
        raise AssertionError("calibrated a model whose weights are refused")

    monkeypatch.setattr(recipe, "calibrate_activations", calibrate)
    refused = rf"^--model {diverged}: cannot quantise output.weight: it holds non-finite values"
    with pytest.raises(ModelDirError, match=refused):
        quantize_run(diverged, tmp_path / "q", mode="static", measure=False)
    assert not (tmp_path / "q").exists()


def _diverged(run: Path, to: Path, index: int, value: float) -> Path:
    """A copy of ``run`` whose served ``output.weight`` holds ``value`` at ``index``."""
    import shutil

    shutil.copytree(run, to)
    path = model_weights(RunDir(to))
    tensors, sidecar = ckpt.load_weights(path)
    tensors["output.weight"].view(-1)[index] = value
    sidecar = {k: v for k, v in sidecar.items() if k not in ("format", "weights_sha256")}
    ckpt.save_weights(path, tensors, sidecar)
    return to


def test_a_failed_comparison_leaves_no_directory(
    demo_run: DemoRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bars with nothing after the training bars refused the command once the directory was
    written, and left it behind (a rerun was then refused as 'already exists'), until session
    54: they are read first now, and any later failure removes the directory."""
    import polars as pl

    from foxhunt.errors import DataError
    from foxhunt.quantize import recipe

    early = tmp_path / "ES_early.parquet"
    pl.read_parquet(demo_run.bars).head(600).write_parquet(early)
    with pytest.raises(DataError, match="nothing new to score"):
        quantize_run(demo_run.run, tmp_path / "q", bars=early, measure=False)
    assert not (tmp_path / "q").exists()

    def broken(*args: object) -> float:
        raise RuntimeError("the comparison failed")

    monkeypatch.setattr(recipe, "mean_quantile_loss", broken)
    with pytest.raises(RuntimeError, match="the comparison failed"):
        quantize_run(demo_run.run, tmp_path / "q", measure=False)
    assert not (tmp_path / "q").exists()
