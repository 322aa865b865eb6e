"""A tiny trained demo-style run directory, shared by the inference tests (quantize, forecaster,
export): same feature pipeline as the demo preset, hidden 16, encoder 16, horizon 4, two LSTM
layers, trained for two short epochs on 1,200 synthetic ES bars (~10 s on 2 cores)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from foxhunt.config import demo
from foxhunt.data.sources.demo import write_demo_bars
from foxhunt.train.run import run_training

QUANTILES = (0.02, 0.1, 0.5, 0.9, 0.98)


@dataclass(frozen=True)
class DemoRun:
    """Paths of the shared run."""

    root: Path
    bars: Path
    run: Path


def make_demo_run(root: Path) -> DemoRun:
    """Train the tiny run into ``root`` (the session fixture ``demo_run`` in conftest.py)."""
    bars = root / "ES_train.parquet"
    write_demo_bars(bars, n_bars=1200, seed=3)
    cfg = demo().replace(
        model={
            "hidden": 16,
            "n_heads": 2,
            "lstm_layers": 2,
            "encoder_length": 16,
            "horizon": 4,
            "quantiles": QUANTILES,
            "variable_width": 4,
        },
        train={
            "batch_size": 64,
            "validation_batch_size": 128,
            "epochs": 2,
            "warmup_steps": 2,
            "log_every": 5,
            "num_threads": 1,
        },
        data={"stride": 2},
    )
    run = root / "run"
    run_training(
        cfg,
        bars=bars,
        out=run,
        resume=None,
        memory_budget=None,
        allow_precision_change=False,
    )
    return DemoRun(root, bars, run)
