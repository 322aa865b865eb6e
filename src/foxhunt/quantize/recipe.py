"""``foxhunt quantize``: post-training INT8 (or bf16) model directories, and what they cost.

INT8 (default): every matmul weight is stored as int8 codes with float32 scales — linear
layers (one scale per output row), LSTM weights (per gate row) and the variable selection
networks' per-variable weight stacks (per variable). Linear layers also quantise their inputs
at run time on CPU (``--mode dynamic``: per-row scales computed per call; ``--mode static``:
one scale per layer calibrated on ``--calibration-bars``) and multiply int8 x int8; the LSTM
and the per-variable stacks dequantise their weights for each call (weight-only). Biases,
layer norms and the per-variable embeddings stay float32. ``--precision bf16`` stores the same
weights as bfloat16 instead (half the bytes, compute in float32).

Why not torchao or ``torch.ao.quantization``: see ``docs/inference.md`` (measured on torch 2.13:
``torch.ao.quantization`` is deprecated; torchao 0.18 quantises ``nn.Linear`` only, stores tensor
subclasses that safetensors cannot hold, gave no CPU speed-up over fp32 here, and its import
alone adds ~84 MB RSS).

The command writes the model directory (see :mod:`foxhunt.quantize.model`), then prints a
table comparing it with the fp32 source: size on disk, parameter bytes, inference peak memory
and latency per forecast (each model in a fresh process), and the mean pinball loss on test
windows.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import torch
from torch import nn

from foxhunt import runtime
from foxhunt.artifacts.calibration import quantile_map
from foxhunt.artifacts.rundir import LoadedModel, load_model_dir
from foxhunt.data.scale.scaler import unscale_targets
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.errors import DataError, InputError, ModelDirError
from foxhunt.model.quantile import quantile_loss_table
from foxhunt.quantize.model import (
    MARKER,
    Mode,
    WeightFormat,
    check_finite_weights,
    held_bytes,
    is_quantized_dir,
    load_inference_model,
    quantizable_tensors,
    quantize_tensors,
    write_quantized_dir,
)

log = logging.getLogger(__name__)

CALIBRATION_WINDOWS = 512
"""Windows used to calibrate static activation scales (spread evenly over the bars)."""


def _spread(n: int, k: int) -> list[int]:
    """``k`` indices spread evenly over ``range(n)`` (all of them when ``n <= k``)."""
    if n <= k:
        return list(range(n))
    return torch.linspace(0, n - 1, k).round().long().unique().tolist()


def _batches(windows: WindowDataset, indices: list[int], batch_size: int) -> Iterator[Any]:
    for a in range(0, len(indices), batch_size):
        yield windows.batch(indices[a : a + batch_size])


@torch.inference_mode()
def calibrate_activations(
    model: nn.Module,
    windows: WindowDataset,
    *,
    n_windows: int = CALIBRATION_WINDOWS,
    batch_size: int = 128,
) -> dict[str, float]:
    """Static activation scales: the largest input magnitude each linear layer sees / 127.

    Args:
        model: The fp32 TFT.
        windows: Calibration windows (any; targets unused).
        n_windows: How many windows, spread evenly over ``windows``.
        batch_size: Windows per forward pass.

    Returns:
        Linear module name -> scale.
    """
    amax: dict[str, float] = {}
    hooks = []

    def record(name: str):  # noqa: ANN202 - a forward pre-hook
        def hook(_module: nn.Module, args: tuple[Any, ...]) -> None:
            amax[name] = max(amax.get(name, 0.0), float(args[0].detach().abs().max()))

        return hook

    linears = {
        k.removesuffix(".weight") for k, v in quantizable_tensors(model).items() if v == "linear"
    }
    for name, module in model.named_modules():
        if name in linears:
            hooks.append(module.register_forward_pre_hook(record(name)))
    model.eval()
    try:
        for batch in _batches(windows, _spread(len(windows), n_windows), batch_size):
            model(batch)
    finally:
        for h in hooks:
            h.remove()
    return {name: max(v, 1e-30) / 127.0 for name, v in amax.items()}


@torch.inference_mode()
def mean_quantile_loss(
    loaded: LoadedModel, windows: WindowDataset, *, batch_size: int = 256
) -> float:
    """Mean pinball loss (log-return units) of the model's quantiles on ``windows``, as served
    (target scale and calibration: :meth:`~foxhunt.artifacts.calibration.QuantileMap.to_returns`)."""
    levels = torch.tensor(loaded.config.model.quantiles, dtype=torch.float32)
    qmap = quantile_map(loaded)
    pinball_sum, n = torch.zeros((), dtype=torch.float64), 0
    loaded.model.eval()
    for batch in _batches(windows, list(range(len(windows))), batch_size):
        assert batch.target is not None
        y = unscale_targets(batch.target.double().cpu(), loaded.scaler)  # (B, H)
        pred = qmap.to_returns(
            loaded.model(batch).quantiles, batch.historical, batch.known
        )  # (B, H, Q)
        per = quantile_loss_table(pred, y, levels).double()  # (H, Q) batch means
        pinball_sum = pinball_sum + per * y.shape[0]
        n += y.shape[0]
    return float((pinball_sum / max(n, 1)).mean())


def _test_windows(loaded: LoadedModel, bars: Path | None) -> tuple[WindowDataset | None, str]:
    """Windows to compare the models on: ``bars`` (test split if it is the training data), else
    the run's own training bars' test split if they are still where run.json says."""
    from foxhunt.artifacts.data_end import read_data_end
    from foxhunt.data.pipeline import evaluation_windows

    if bars is None:
        info = (
            runtime.read_json(loaded.run.run_info, "run.json")
            if loaded.run.run_info.is_file()
            else {}
        )
        recorded = info.get("bars") if isinstance(info, dict) else None
        if not recorded or not Path(recorded).exists():
            return None, "no bars (pass --bars)"
        bars = Path(recorded)
    try:
        windows, split = evaluation_windows(
            bars,
            loaded.config,
            loaded.spec,
            loaded.scaler,
            loaded.fingerprint,
            loaded.instruments,
            ends=read_data_end(loaded.run),  # other bars: the windows after the training bars
        )
    except DataError as e:  # evaluate's remedy names --windows, which quantize has not
        text = str(e).replace(
            "--windows all scores them",
            "quantize scores bars after the training end, or the run's own bars (their test "
            "split): pass such --bars",
        )
        raise DataError(text) from e
    return windows, f"{split} of {bars}"


def _calibration_windows(loaded: LoadedModel, calibration_bars: Path | None) -> WindowDataset:
    from foxhunt.data.pipeline import prepare_inference_data, prepare_training_data

    if calibration_bars is not None:
        m = loaded.config.model
        return prepare_inference_data(
            calibration_bars,
            loaded.spec,
            loaded.scaler,
            m.encoder_length,
            m.horizon,
            with_target=False,
            instruments=loaded.instruments,
            inputs=loaded.config.data,
        )
    info = (
        runtime.read_json(loaded.run.run_info, "run.json") if loaded.run.run_info.is_file() else {}
    )
    recorded = info.get("bars") if isinstance(info, dict) else None
    if not recorded or not Path(recorded).exists():
        raise InputError(
            "--mode static needs --calibration-bars (the run's training bars are not available)"
        )
    log.info("calibrating on the validation split of %s", recorded)
    return prepare_training_data(Path(recorded), loaded.config).val


def quantize_run(
    model_dir: Path,
    out: Path,
    *,
    mode: Mode = "dynamic",
    precision: WeightFormat = "int8",
    calibration_bars: Path | None = None,
    bars: Path | None = None,
    measure: bool = True,
    repeats: int = 10,
) -> dict[str, Any]:
    """Write a quantised copy of a model directory and compare the two (``foxhunt quantize``).

    Args:
        model_dir: The fp32 run directory.
        out: The new model directory (must not exist).
        mode: ``dynamic`` or ``static`` activation quantisation of linear layers (int8 only).
        precision: ``int8`` or ``bf16``.
        calibration_bars: Bars to calibrate static scales on (default: the validation split
            of the run's training bars).
        bars: Bars to compare pinball loss on: their test split if they are the run's
            training bars, else their windows after the training bars (default: the test split
            of the run's training bars, when still present).
        measure: Also measure peak memory and latency in fresh processes.
        repeats: Timed forward passes per batch size when measuring.

    Returns:
        The comparison (also stored in ``<out>/quantization.json``).

    Raises:
        InputError: Bad arguments; ModelDirError/DataError for bad directories or bars.
    """
    if precision not in ("int8", "bf16"):
        raise InputError(f"--precision must be int8 or bf16, got {precision!r}")
    if mode not in ("dynamic", "static"):
        raise InputError(f"--mode must be dynamic or static, got {mode!r}")
    if precision == "bf16" and (mode == "static" or calibration_bars is not None):
        raise InputError("--mode static and --calibration-bars apply to --precision int8 only")
    if is_quantized_dir(Path(model_dir)):
        raise InputError(f"--model {model_dir}: already quantised; quantise the fp32 run directory")
    source = load_model_dir(Path(model_dir), "cpu")
    try:  # a broken weight is refused before any calibration, naming the directory
        check_finite_weights(source.model)
    except ModelDirError as e:
        raise ModelDirError(f"--model {model_dir}: {e}") from None
    act_scales = None
    if precision == "int8" and mode == "static":
        act_scales = calibrate_activations(
            source.model, _calibration_windows(source, calibration_bars)
        )
    tensors, recipe = quantize_tensors(source.model, precision, mode, act_scales)
    # the comparison's bars are read before the directory is written: bars that hold nothing
    # to score refused the command after it, and left it behind (until session 54)
    windows, where = _test_windows(source, bars)
    weights = write_quantized_dir(source, Path(out), tensors, recipe)
    try:
        return _compare(source, model_dir, out, weights, recipe, windows, where,
                        measure=measure, repeats=repeats)  # fmt: skip
    except BaseException:  # a failed comparison leaves no directory behind
        shutil.rmtree(out, ignore_errors=True)
        raise


def _compare(
    source: LoadedModel,
    model_dir: Path,
    out: Path,
    weights: Path,
    recipe: Mapping[str, Any],
    windows: WindowDataset | None,
    where: str,
    *,
    measure: bool,
    repeats: int,
) -> dict[str, Any]:
    """The fp32 and quantised models side by side, stored in ``<out>/quantization.json``."""
    quantized = load_inference_model(Path(out), "cpu")

    result: dict[str, Any] = {
        "source": str(model_dir),
        "out": str(out),
        "precision": recipe["precision"],
        "mode": recipe["mode"],
        "disk_bytes": {"fp32": source.weights.stat().st_size, "quantized": weights.stat().st_size},
        "param_bytes": {
            "fp32": held_bytes(source.model),
            "quantized": held_bytes(quantized.model),
        },
    }
    result["pinball_on"] = where
    if windows is not None and len(windows):
        result["pinball"] = {
            "fp32": mean_quantile_loss(source, windows),
            "quantized": mean_quantile_loss(quantized, windows),
        }
    if measure:
        from foxhunt.quantize.bench import measure_in_subprocess

        result["inference"] = {
            name: measure_in_subprocess(path, (1, 32), repeats=repeats)
            for name, path in (("fp32", Path(model_dir)), ("quantized", Path(out)))
        }
    marker = runtime.read_json(Path(out) / MARKER, MARKER)
    marker["comparison"] = result
    runtime.atomic_write_json(Path(out) / MARKER, marker)
    return result
