"""The TFT recipe (docs/recipe.md) against the empirical-quantile and EWMA-normal baselines.

One command trains one variant of a preset on one bars file with one seed (``foxhunt train``'s
own code: :func:`foxhunt.train.run.run_training`) and scores it on the pipeline's validation
or test split, appending one JSON line per (variant, seed, split) to ``--results``:

* ``tft``: the run as it serves (``infer/quantiles.py``: calibration when the run has it);
* ``tft_raw``: the same network without ``calibration.json`` (the calibration's own effect;
  on the validation split the calibrated scores are in-sample, so tuning reads ``tft_raw``);
* ``empirical``: ``foxhunt evaluate``'s baseline (per-symbol quantiles of training returns);
* ``ewma``: zero-mean normal quantiles with sigma_h = sqrt(h) x the causal RiskMetrics
  volatility at the origin (:func:`foxhunt.data.scale.volatility.ewma_variance` over the symbol's
  whole close series up to the origin), decay chosen on the validation split from
  :data:`EWMA_DECAYS` (the decay is reported).

Scores: :class:`foxhunt.infer.evaluate.QuantileScores` on unscaled log returns (mean pinball,
coverage of 10-90 and 2-98).

Usage (tuning reads ``--split val``; the test split is read once, for the chosen recipe):

    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/experiments/recipe_bench.py \\
        --bars BARS --preset demo --seed 0 --max-steps 300 --split val \\
        --variant window --set data.target_scale=window --results benchmarks/results/recipe.jsonl
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import torch
from scipy.stats import norm

from foxhunt.artifacts.rundir import load_model_dir
from foxhunt.baselines.empirical import load_empirical
from foxhunt.config import preset
from foxhunt.data.pipeline import prepare_training_data
from foxhunt.data.scale.scaler import unscale_targets
from foxhunt.data.scale.volatility import ewma_variance, log_returns
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.infer.evaluate import QuantileScores
from foxhunt.infer.quantiles import QuantileMap, quantile_map, tft_quantiles
from foxhunt.train.run import run_training

EWMA_DECAYS = (0.9, 0.94, 0.97, 0.99, 0.995)
CPU = torch.device("cpu")


def parse_value(text: str) -> Any:
    """``--set`` values: JSON when it parses (numbers, true/false, null), else the string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def overrides(pairs: list[str]) -> dict[str, dict[str, Any]]:
    """``section.field=value`` pairs -> ``RunConfig.replace`` sections."""
    out: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        section, _, name = key.partition(".")
        out.setdefault(section, {})[name] = parse_value(value)
    return out


def ewma_sigma_at_origins(closes: pl.DataFrame, windows: WindowDataset, decay: float) -> np.ndarray:
    """(N,) causal EWMA one-bar volatility at each window's origin bar."""
    origins = windows.origins().with_row_index("w")
    parts = []
    for (sym,), group in closes.sort(["symbol", "ts"]).group_by("symbol", maintain_order=True):
        var = ewma_variance(log_returns(group["close"].to_numpy()), decay)
        parts.append(pl.DataFrame({"symbol": [sym] * group.height, "ts": group["ts"], "var": var}))
    table = pl.concat(parts)
    joined = origins.join(table, on=["symbol", "ts"], how="left").sort("w")
    var = joined["var"].to_numpy()
    if np.isnan(var).any():
        raise ValueError("a window origin is missing from the closes")
    return np.sqrt(var)


def score_windows(
    windows: WindowDataset,
    closes: pl.DataFrame,
    run: Path,
    decays: tuple[float, ...],
    batch_size: int = 512,
) -> dict[str, Any]:
    """Scores of the TFT (calibrated and raw), the empirical and EWMA baselines on ``windows``."""
    loaded = load_model_dir(run)
    m = loaded.config.model
    qmap = quantile_map(loaded)
    raw_map = QuantileMap(qmap.scale, None)
    empirical = load_empirical(loaded.run.baselines, m.quantiles, m.horizon)
    z = torch.tensor(norm.ppf(m.quantiles), dtype=torch.float64)  # (Q,)
    sqrt_h = torch.arange(1, m.horizon + 1, dtype=torch.float64).sqrt()  # (H,)
    sigmas = {d: torch.from_numpy(ewma_sigma_at_origins(closes, windows, d)) for d in decays}
    names = ["tft", "tft_raw", "empirical", *[f"ewma_{d:g}" for d in decays]]
    scores = {n: QuantileScores(m.quantiles, m.horizon) for n in names}
    symbols = windows.origins()["symbol"].to_list()
    for a in range(0, len(windows), batch_size):
        b = min(a + batch_size, len(windows))
        batch = windows.batch(range(a, b))
        assert batch.target is not None
        y = unscale_targets(batch.target.double(), loaded.scaler)  # (B, H)
        scores["tft"].update(tft_quantiles(loaded.model, batch, qmap, device=CPU), y)
        scores["tft_raw"].update(tft_quantiles(loaded.model, batch, raw_map, device=CPU), y)
        scores["empirical"].update(empirical.predict(symbols[a:b]), y)
        for d, s in sigmas.items():
            q = s[a:b, None, None] * sqrt_h[None, :, None] * z[None, None, :]  # (B, H, Q)
            scores[f"ewma_{d:g}"].update(q, y)
    return {n: _summary(s.result()) for n, s in scores.items()}


def _summary(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "mean_pinball": r["mean_pinball"],
        "coverage": r["coverage"],
        "pinball_per_horizon": r["pinball_per_horizon"],
        "n_windows": r["n_windows"],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bars", type=Path, required=True)
    p.add_argument("--preset", default="demo")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument("--split", choices=("val", "test", "both"), default="val")
    p.add_argument("--variant", default="preset", help="name recorded with the result")
    p.add_argument("--set", action="append", default=[], help="section.field=value override")
    p.add_argument("--ewma-decay", type=float, default=None, help="fixed EWMA decay (test)")
    p.add_argument("--results", type=Path, required=True, help="JSON lines appended here")
    p.add_argument("--keep", type=Path, default=None, help="keep the run directory here")
    a = p.parse_args()
    logging.basicConfig(level=logging.WARNING)

    sections = overrides(a.set)
    sections.setdefault("train", {})["seed"] = a.seed
    if a.max_steps is not None:
        sections["train"]["max_steps"] = a.max_steps
    cfg = preset(a.preset).replace(**sections)
    tmp = Path(tempfile.mkdtemp(prefix="recipe-"))
    run = a.keep or tmp / "run"
    started = time.perf_counter()
    run_training(
        cfg,
        bars=a.bars,
        out=run,
        resume=None,
        memory_budget=None,
        allow_precision_change=False,
        overwrite=True,
    )
    train_s = time.perf_counter() - started
    data = prepare_training_data(a.bars, cfg)
    decays = (a.ewma_decay,) if a.ewma_decay else EWMA_DECAYS
    splits = ("val", "test") if a.split == "both" else (a.split,)
    for split in splits:
        windows = data.val if split == "val" else data.test
        scores = score_windows(windows, data.closes, run, decays)
        record = {
            "bars": str(a.bars),
            "preset": a.preset,
            "variant": a.variant,
            "overrides": sections,
            "seed": a.seed,
            "split": split,
            "train_seconds": round(train_s, 1),
            "scores": scores,
        }
        a.results.parent.mkdir(parents=True, exist_ok=True)
        with open(a.results, "a") as f:
            f.write(json.dumps(record) + "\n")
        ewmas = [k for k in scores if k.startswith("ewma")]
        for k in ("tft", "tft_raw", "empirical", *ewmas):
            s = scores[k]
            cov = s["coverage"]
            print(
                f"{a.variant} seed {a.seed} {split} {k:>12}: pinball {s['mean_pinball']:.4e} "
                f"cov10-90 {cov.get('10-90', math.nan):.3f} cov2-98 {cov.get('2-98', math.nan):.3f}"
            )
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
