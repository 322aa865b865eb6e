"""Two or more runs on the same later windows: each against the first, paired (Diebold-Mariano).

``foxhunt evaluate`` compares one run with the baselines; this compares runs with each other on
the windows ``evaluate`` scores on ``--bars`` (the runs must share the encoder length and
horizon, so the windows are the same), pooled and per horizon, plus GARCH(1,1) as the first
run's baseline for reference. Used for docs/recipe.md, *Daily futures: the bars' range and a
fixed median* (a conditional and a fixed median trained with the same seed and steps).

    PYTHONPATH=src .venv/bin/python benchmarks/experiments/paired_runs.py \\
        --runs RUN_A RUN_B [RUN_C ...] --bars LATER_BARS
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from location import forecasts  # noqa: E402

from foxhunt.infer.significance import compare  # noqa: E402
from foxhunt.model.quantile import pinball  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=Path, nargs="+", required=True, help="run directories")
    p.add_argument("--bars", type=Path, required=True, help="the later bars (file or folder)")
    a = p.parse_args()
    if len(a.runs) < 2:
        p.error("--runs needs two runs or more")
    losses = []
    for i, run in enumerate(a.runs):
        tft, garch, y, levels = forecasts(run, a.bars, "new")
        q = torch.tensor(levels, dtype=torch.float64)
        losses.append(pinball(tft, y, q).mean(-1).numpy())  # (N, H)
        if i == 0:
            base, garch_loss = y, pinball(garch, y, q).mean(-1).numpy()
        elif y.shape != base.shape or not torch.equal(y, base):
            sys.exit(f"{run}: its windows differ from {a.runs[0]}'s (encoder length, horizon?)")
    print(f"{len(base)} windows; mean pinball (bp)")
    print(f"{'GARCH(1,1)':40s} {garch_loss.mean() * 1e4:9.3f}")
    for run, loss in zip(a.runs, losses, strict=True):
        vs_garch = compare(loss, garch_loss)["pooled"]
        line = (
            f"{str(run):40s} {loss.mean() * 1e4:9.3f}  vs GARCH {vs_garch['relative'] * 100:+.2f} %"
        )
        line += f" p {vs_garch['p_value']:.2g}"
        if run != a.runs[0]:
            c = compare(loss, losses[0])
            signs = "".join(
                "W" if h["verdict"] == "win" else "L" if h["verdict"] == "lose" else "."
                for h in c["per_horizon"]
            )
            pooled = c["pooled"]
            line += (
                f"  vs {a.runs[0].name} {pooled['relative'] * 100:+.2f} % p {pooled['p_value']:.2g}"
                f" ({pooled['verdict']}; per horizon {signs})"
            )
        print(line)


if __name__ == "__main__":
    main()
