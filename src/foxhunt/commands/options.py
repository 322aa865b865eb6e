"""Arguments several commands share: the config source (preset or file) and its flags."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from foxhunt.config import RunConfig, preset

_TRAIN_FLAGS = (
    "cpu_allocator",
    "batch_size",
    "micro_batch_size",
    "validation_batch_size",
    "epochs",
    "max_steps",
    "lr",
    "precision",
    "seed",
    "device",
    "num_threads",
)


def add_config_args(p: argparse.ArgumentParser, with_batch: bool = True) -> None:
    """``--preset`` or ``--config``, and (``with_batch``) batch size, precision, checkpointing."""
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--preset", default="tft-225", help="named configuration: demo or tft-225 (default)"
    )
    g.add_argument("--config", type=Path, help="a config.json (as written in a run directory)")
    if with_batch:
        p.add_argument("--batch-size", type=int, help="samples per optimizer step")
        p.add_argument("--precision", choices=["fp32", "bf16", "fp16"], help="numeric precision")
        p.add_argument(
            "--checkpointing", action="store_true", help="recompute activations in backward"
        )


def run_config(a: argparse.Namespace) -> RunConfig:
    """Start from ``--config FILE`` or ``--preset``, then apply the flags that were given."""
    cfg = RunConfig.load(a.config) if getattr(a, "config", None) else preset(a.preset)
    train: dict[str, Any] = {
        k: getattr(a, k) for k in _TRAIN_FLAGS if getattr(a, k, None) is not None
    }
    if getattr(a, "checkpointing", False):
        train["checkpointing"] = True
    return cfg.replace(train=train) if train else cfg
