"""Choose the target scale (and its EWMA decay) without training: the scale-only forecaster.

For each candidate scale (``global``; ``window`` with each decay of ``--decays``), the
forecast is ``Q_z[h, q] x scale[b, h]`` where ``Q_z`` are the empirical quantiles of the
*standardised* training targets ``y / scale``. With the global scale this is exactly
``foxhunt evaluate``'s empirical-quantile baseline (per horizon); with a window scale it is
what a TFT with that target scale predicts when its network outputs a constant — the floor the
network starts from. The EWMA-normal baseline (sigma x sqrt(h) x Normal quantiles) is scored
alongside for the same decays. Scores on the pipeline's validation split (tuning) or test
split (``--split test``), unscaled log returns, :class:`foxhunt.infer.evaluate.QuantileScores`.

    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/experiments/recipe_scale_only.py \\
        --bars BARS --preset demo --split val
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

import torch
from scipy.stats import norm

from foxhunt.config import preset
from foxhunt.data.pipeline import prepare_training_data
from foxhunt.data.scale.target import TargetScale
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.infer.evaluate import QuantileScores

DECAYS = (0.8, 0.9, 0.94, 0.97, 0.99)


def targets_and_scales(windows: WindowDataset, scale: TargetScale) -> tuple[torch.Tensor, ...]:
    """(N, H) log returns and (N, H) scales of every window."""
    batch = windows.batch(range(len(windows)))
    assert batch.target is not None
    std = torch.tensor(scale.target_std, dtype=torch.float64)
    return batch.target.double() * std, scale.scale(batch.historical, batch.known)


def score(
    train: WindowDataset, split: WindowDataset, scale: TargetScale, levels: tuple[float, ...]
) -> dict[str, Any]:
    """Scale-only and (for a window scale) EWMA-normal scores on ``split``."""
    y_tr, s_tr = targets_and_scales(train, scale)
    qz = torch.quantile(y_tr / s_tr, torch.tensor(levels, dtype=torch.float64), dim=0).T  # (H, Q)
    y, s = targets_and_scales(split, scale)
    out = {}
    scale_only = QuantileScores(levels, y.shape[1])
    scale_only.update(qz[None] * s[:, :, None], y)
    out["scale_only"] = scale_only.result()
    if scale.mode == "window":
        normal = QuantileScores(levels, y.shape[1])
        z = torch.tensor(norm.ppf(levels), dtype=torch.float64)
        normal.update(z[None, None, :] * s[:, :, None], y)
        out["ewma_normal"] = normal.result()
    return {
        k: {"mean_pinball": r["mean_pinball"], "coverage": r["coverage"], "n": r["n_windows"]}
        for k, r in out.items()
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bars", type=Path, required=True)
    p.add_argument("--preset", default="demo")
    p.add_argument("--split", choices=("val", "test"), default="val")
    p.add_argument("--decays", type=float, nargs="+", default=list(DECAYS))
    p.add_argument("--results", type=Path, default=None, help="append one JSON line here")
    a = p.parse_args()
    cfg = preset(a.preset)
    data = prepare_training_data(a.bars, cfg)
    split = data.val if a.split == "val" else data.test
    levels = cfg.model.quantiles
    rows: dict[str, Any] = {}
    candidates = [("global", 0.94)] + [("window", d) for d in a.decays]
    for mode, decay in candidates:
        run_data = dataclasses.replace(cfg.data, target_scale=mode, target_scale_decay=decay)
        scale = TargetScale.of(run_data, data.spec, data.scaler)
        name = "global" if mode == "global" else f"window_{decay:g}"
        rows[name] = score(data.train, split, scale, levels)
        for k, r in rows[name].items():
            cov = r["coverage"]
            print(
                f"{a.bars.name} {a.split} {name:>12} {k:>11}: pinball {r['mean_pinball']:.4e} "
                f"cov10-90 {cov['10-90']:.3f} cov2-98 {cov['2-98']:.3f} (n={r['n']})"
            )
    if a.results:
        a.results.parent.mkdir(parents=True, exist_ok=True)
        with open(a.results, "a") as f:
            f.write(json.dumps({"bars": str(a.bars), "split": a.split, "scores": rows}) + "\n")


if __name__ == "__main__":
    main()
