"""Inference memory and latency of a model directory, measured in a fresh process.

How we quote memory on CPU (DESIGN.md §5): peak RSS minus RSS after imports and data loading,
in a fresh process. Here "data" is one random batch of the largest size measured; the model
directory is loaded *after* the baseline, so its weights count. The peak is Linux's ``VmHWM``,
reset at the baseline (``ru_maxrss`` would include the parent's memory from before ``exec``). Latency is the median wall time
of ``repeats`` forward passes (after two warm-up passes) under ``torch.inference_mode``; it is
a process number on a possibly shared CPU, not a deterministic one. Run by hand::

    python -m foxhunt.commands.qbench --model runs/demo_int8 --batch-size 1 --batch-size 32
    python -m foxhunt.commands.qbench --preset tft-225 --precision int8

The first measures one model directory; the second writes a random-init fp32 model directory
of the preset and its quantised copy to a temporary folder and measures both, each in its own
fresh process. Each prints one JSON object.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from foxhunt.config import RunConfig
from foxhunt.memory.counters import peak_rss_bytes, reset_peak_rss


def measure_here(
    model_dir: Path, batch_sizes: Sequence[int], *, repeats: int = 10, seed: int = 0
) -> dict[str, Any]:
    """Measure in this process (call it in a fresh one: see :func:`measure_in_subprocess`).

    Args:
        model_dir: Any model directory (fp32 or quantised).
        batch_sizes: Batch sizes to time; the peak is taken at the largest one.
        repeats: Timed forward passes per batch size.
        seed: Seed of the random batch.

    Returns:
        ``baseline_rss_bytes``, ``peak_rss_bytes``, ``peak_delta_bytes`` (at the largest batch),
        ``held_bytes`` (model parameters and buffers), ``latency_ms`` {batch: median ms per
        batch}, ``threads``.
    """
    # Everything loading imports is imported before the baseline: imports are not inference.
    import foxhunt.data.features.table  # noqa: F401 - read_features imports it (polars, TA-Lib)
    import foxhunt.data.scale.scaler  # noqa: F401
    from foxhunt.artifacts.rundir import RunDir, read_config
    from foxhunt.memory.counters import rss_bytes
    from foxhunt.model.batch import random_batch
    from foxhunt.quantize.model import held_bytes, load_inference_model

    cfg = read_config(RunDir(Path(model_dir)))
    largest = max(batch_sizes)
    full = random_batch(cfg.model, largest, seed=seed)
    reset_peak_rss()
    baseline = rss_bytes()
    loaded = load_inference_model(model_dir, "cpu")
    model = loaded.model
    with torch.inference_mode():
        model(full)
        peak = peak_rss_bytes()
        latency: dict[str, float] = {}
        for b in sorted(batch_sizes):
            batch = full.slice(0, b)
            for _ in range(2):
                model(batch)
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                model(batch)
                times.append(time.perf_counter() - t0)
            latency[str(b)] = statistics.median(times) * 1e3
    return {
        "model": str(model_dir),
        "baseline_rss_bytes": baseline,
        "peak_rss_bytes": peak,
        "peak_delta_bytes": peak - baseline,
        "peak_batch_size": largest,
        "held_bytes": held_bytes(model),
        "latency_ms": latency,
        "repeats": repeats,
        "threads": torch.get_num_threads(),
    }


def measure_in_subprocess(
    model_dir: Path,
    batch_sizes: Sequence[int] = (1, 32),
    *,
    repeats: int = 10,
    num_threads: int = 1,
    timeout_s: float = 600.0,
) -> dict[str, Any]:
    """Run :func:`measure_here` in a fresh ``python -m foxhunt.commands.qbench`` process.

    Args:
        model_dir: The model directory.
        batch_sizes: Batch sizes to time (peak at the largest).
        repeats: Timed passes per batch size.
        num_threads: torch CPU threads in the child (1 by default: comparable numbers on a
            shared machine, where more threads than free cores make latency erratic).
        timeout_s: Give up after this long.

    Returns:
        The child's JSON result.

    Raises:
        RuntimeError: The child failed (its stderr is in the message).
    """
    cmd = [sys.executable, "-m", "foxhunt.commands.qbench", "--model", str(model_dir)]
    for b in batch_sizes:
        cmd += ["--batch-size", str(b)]
    cmd += ["--repeats", str(repeats), "--num-threads", str(num_threads)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"inference measurement failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def write_random_run(cfg: RunConfig, out: Path, *, seed: int = 0) -> Path:
    """A model directory with random-init weights (for memory and latency, not forecasts).

    Args:
        cfg: The run config (its model must use the standard feature set).
        out: Directory to create.
        seed: Parameter seed.

    Returns:
        ``out``.
    """
    from foxhunt import runtime
    from foxhunt.artifacts import checkpoints as ckpt
    from foxhunt.artifacts.rundir import RunDir, features_record
    from foxhunt.data.features.table import feature_spec
    from foxhunt.data.scale.scaler import ScalerParams
    from foxhunt.model.tft import TFT

    spec = feature_spec(cfg.model.horizon)
    n = len(spec.inputs)
    scaler = ScalerParams(spec.inputs, (0.0,) * n, (1.0,) * n, (1.0,) * cfg.model.horizon)
    run = RunDir(Path(out))
    run.create()
    cfg.save(run.config)
    runtime.atomic_write_json(run.features, features_record(spec, scaler, "random"))
    torch.manual_seed(seed)
    model = TFT(cfg.model)
    ckpt.save_weights(ckpt.final_weights_path(run.checkpoints, 0), model.state_dict(), {"epoch": 0})
    return run.root


def compare_preset(
    preset_name: str, precision: str, mode: str, *, repeats: int = 10, num_threads: int = 1
) -> dict[str, Any]:
    """fp32 vs quantised random-init models of a preset, each measured in a fresh process."""
    import tempfile

    from foxhunt.artifacts.rundir import load_model_dir
    from foxhunt.config import preset
    from foxhunt.quantize.model import quantize_tensors, write_quantized_dir

    with tempfile.TemporaryDirectory() as tmp:
        fp32 = write_random_run(preset(preset_name), Path(tmp) / "fp32")
        source = load_model_dir(fp32)
        tensors, recipe = quantize_tensors(source.model, precision, mode)  # type: ignore[arg-type]
        quantized = Path(tmp) / precision
        write_quantized_dir(source, quantized, tensors, recipe)
        del source, tensors
        return {
            "preset": preset_name,
            "precision": precision,
            "mode": recipe["mode"],
            "fp32": measure_in_subprocess(fp32, repeats=repeats, num_threads=num_threads),
            precision: measure_in_subprocess(quantized, repeats=repeats, num_threads=num_threads),
        }
