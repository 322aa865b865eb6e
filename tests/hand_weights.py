"""Weights set by hand where a test checks a mechanism, not training.

A few training steps may serve the scale-only start, whose zero quantile head ignores every
input (and on a CPU with native bf16 the tiny runs do serve it): every such run's forecast is
the same constant, whatever its seed or inputs. Tests that need forecasts that depend on the
inputs, or members that differ, give the served head random weights instead of hoping a
two-step run moved it.
"""

from __future__ import annotations

from pathlib import Path

import torch

from foxhunt.artifacts.checkpoints import load_weights, save_weights
from foxhunt.artifacts.rundir import RunDir, model_weights


def input_dependent_head(run_dir: Path, seed: int = 0, std: float = 0.5) -> None:
    """Give the run's served weights a quantile head of N(0, std) weights (seeded)."""
    path = model_weights(RunDir(run_dir))
    tensors, meta = load_weights(path)
    gen = torch.Generator().manual_seed(seed)
    w = tensors["output.weight"]
    tensors["output.weight"] = torch.randn(w.shape, generator=gen, dtype=w.dtype) * std
    save_weights(path, tensors, {k: v for k, v in meta.items() if k != "weights_sha256"})
