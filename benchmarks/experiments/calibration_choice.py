"""Score trained runs' test splits with the calibration refitted three ways, without retraining.

For each ``--run DIR --bars FILE`` pair (the bars the run was trained on): the run's network is
put through :func:`foxhunt.train.calibration.calibrate.fit_calibration` on its own validation windows (what
``foxhunt train`` now does at the end of training: the conformal offsets on all validation
windows and the shrinkage chosen by cross-fitting, docs/recipe.md), then the test split is scored
as ``foxhunt evaluate`` scores it (:class:`foxhunt.infer.scores.QuantileScores`, the baselines
the run fitted, Diebold–Mariano with HAC variance from :func:`foxhunt.infer.significance.compare`)
with three calibrations:

* ``none``: the network's quantiles x the target scale (shrinkage 0);
* ``full``: the conformal offsets in full (shrinkage 1: what runs served before the choice);
* ``chosen``: the offsets times the shrinkage chosen on validation (what runs now serve).

Also recorded, as a diagnostic that chooses nothing: the test pinball of every candidate
shrinkage (how far the validation choice is from the best one in hindsight). One JSON line per
run goes to ``--results``; a summary line per run is printed.

    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/experiments/calibration_choice.py \\
        --run RUN --bars BARS [--run RUN2 --bars BARS2 ...] \\
        --results benchmarks/results/calib6_choice.jsonl
    .venv/bin/python benchmarks/experiments/calibration_choice.py --table benchmarks/results/calib6_choice.jsonl
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

import torch

from foxhunt.artifacts.calibration import Calibration, QuantileMap
from foxhunt.baselines.empirical import load_baselines
from foxhunt.data.pipeline import prepare_training_data
from foxhunt.data.scale.scaler import unscale_targets
from foxhunt.infer.evaluate import baseline_forecasts
from foxhunt.infer.quantiles import quantile_map
from foxhunt.infer.scores import QuantileScores
from foxhunt.infer.significance import compare
from foxhunt.quantize.model import load_inference_model
from foxhunt.train.calibration.calibrate import fit_calibration
from foxhunt.train.calibration.choice import SHRINKAGES

CPU = torch.device("cpu")
BATCH = 512
AGAINST = ("empirical", "ewma", "garch", "tow_ewma")


def _pooled(tft: torch.Tensor, other: torch.Tensor) -> dict[str, Any]:
    p = compare(tft.numpy(), other.numpy())["pooled"]
    return {k: p[k] for k in ("tft", "baseline", "relative", "p_value", "verdict")}


@torch.inference_mode()
def score_run(run: Path, bars: Path) -> dict[str, Any]:
    """Refit the calibration on ``run``'s validation windows and score its test split."""
    loaded = load_inference_model(run, CPU)
    m = loaded.config.model
    data = prepare_training_data(bars, loaded.config)
    scale = quantile_map(loaded).scale
    cal = fit_calibration(loaded.model, data.val.with_target_scale(scale), m.quantiles,
                          batch_size=BATCH, device=CPU)  # fmt: skip
    assert cal is not None and cal.fitted_offsets is not None
    fitted, n_val = cal.fitted_offsets, cal.windows
    maps = {"none": QuantileMap(scale, None),
            "full": QuantileMap(scale, Calibration.shrunk(m.quantiles, fitted, n_val, 1.0)),
            "chosen": QuantileMap(scale, cal)}  # fmt: skip
    grid = {lam: QuantileMap(scale, Calibration.shrunk(m.quantiles, fitted, n_val, lam))
            for lam in SHRINKAGES}  # fmt: skip
    empirical, classical = load_baselines(loaded.run.baselines, m.quantiles, m.horizon)
    test = data.test
    baselines = baseline_forecasts(empirical, classical, data.closes, test)
    scores = {k: QuantileScores(m.quantiles, m.horizon) for k in (*maps, *baselines)}
    grid_scores = {lam: QuantileScores(m.quantiles, m.horizon) for lam in grid}
    loaded.model.eval()
    for a in range(0, len(test), BATCH):
        b = min(a + BATCH, len(test))
        batch = test.batch(range(a, b))
        y = unscale_targets(batch.target.double(), loaded.scaler)  # (B, H) log returns
        z = loaded.model(batch).quantiles  # (B, H, Q) standardised, fp32 on the CPU
        for k, qmap in maps.items():
            scores[k].update(qmap.to_returns(z, batch.historical, batch.known), y)
        for lam, qmap in grid.items():
            grid_scores[lam].update(qmap.to_returns(z, batch.historical, batch.known), y)
        for k, forecast in baselines.items():
            scores[k].update(forecast.predict(a, b), y)
    res = {k: s.result() for k, s in scores.items()}
    loss = {k: s.window_losses() for k, s in scores.items()}
    best = run / "checkpoints" / "best.json"
    best_epoch = json.loads(best.read_text())["epoch"] if best.is_file() else None
    return {
        "run": str(run), "bars": str(bars), "seed": loaded.config.train.seed,
        "max_steps": loaded.config.train.max_steps, "best_epoch": best_epoch,
        "n_val": n_val, "n_test": len(test), "shrinkage": cal.shrinkage,
        "crossfit": None if cal.choice is None else cal.choice.to_dict(),
        "pinball": {k: r["mean_pinball"] for k, r in res.items()},
        "coverage": {k: res[k]["coverage"] for k in maps},
        "test_pinball_by_shrinkage": {str(lam): s.result()["mean_pinball"]
                                      for lam, s in grid_scores.items()},
        "vs_full": {k: _pooled(loss[k], loss["full"]) for k in ("none", "chosen")},
        "chosen_vs_none": _pooled(loss["chosen"], loss["none"]),
        "vs_baselines": {k: {b: _pooled(loss[k], loss[b]) for b in AGAINST if b in loss}
                         for k in maps},
    }  # fmt: skip


def _verdict(v: dict[str, Any]) -> str:
    word = {"win": "win", "lose": "**lose**"}.get(v["verdict"], "n.s.")
    return f"{v['relative'] * 100:+.2f} %, p {v['p_value']:.2g}, {word}"


def table(results: Path) -> str:
    """The results file as a markdown table (pinball in bp)."""
    head = ("| run | seed | steps (best epoch) | lambda | none | full | chosen | chosen vs full "
            "| chosen vs none | chosen vs EWMA | chosen vs GARCH | best lambda on test |")  # fmt: skip
    lines = [head, "|" + "---|" * 12]
    for line in results.read_text().splitlines():
        r = json.loads(line)
        pin, cov = r["pinball"], r["coverage"]
        cell = {k: f"{pin[k] * 1e4:.4f} ({cov[k]['10-90']:.3f}/{cov[k]['2-98']:.3f})"
                for k in ("none", "full", "chosen")}  # fmt: skip
        grid = r["test_pinball_by_shrinkage"]
        vs = r["vs_baselines"]["chosen"]
        lines.append(
            f"| {Path(r['run']).name} | {r['seed']} | {r['max_steps'] or 'preset'} "
            f"({r['best_epoch']}) | {r['shrinkage']} | {cell['none']} | {cell['full']} | "
            f"{cell['chosen']} | {_verdict(r['vs_full']['chosen'])} | "
            f"{_verdict(r['chosen_vs_none']) if 'chosen_vs_none' in r else '—'} | "
            f"{_verdict(vs['ewma'])} | "
            f"{_verdict(vs['garch'])} | {min(grid, key=grid.__getitem__)} |"
        )
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", type=Path, action="append", default=[], help="run directory")
    p.add_argument("--bars", type=Path, action="append", default=[], help="its bars")
    p.add_argument("--results", type=Path, help="JSON lines appended here")
    p.add_argument("--table", type=Path, help="print a results file as a markdown table")
    a = p.parse_args()
    if a.table is not None:
        print(table(a.table))
        return
    if not a.run or len(a.run) != len(a.bars) or a.results is None:
        p.error("give --results and one --bars per --run")
    logging.basicConfig(level=logging.WARNING)
    for run, bars in zip(a.run, a.bars, strict=True):
        rec = score_run(run, bars)
        a.results.parent.mkdir(parents=True, exist_ok=True)
        with open(a.results, "a") as f:
            f.write(json.dumps(rec) + "\n")
        pin, cov = rec["pinball"], rec["coverage"]
        print(
            f"{run.name}: shrinkage {rec['shrinkage']} (val {rec['n_val']}, test {rec['n_test']})"
        )
        for k in ("none", "full", "chosen"):
            vs = rec["vs_baselines"][k]
            print(
                f"  {k:>6} {pin[k] * 1e4:.4f} bp  cov {cov[k]['10-90']:.3f}/{cov[k]['2-98']:.3f}  "
                + "  ".join(
                    f"{b} {v['relative'] * 100:+.2f}% p {v['p_value']:.2g}" for b, v in vs.items()
                )  # fmt: skip
            )
        for k, v in rec["vs_full"].items():
            print(
                f"  {k} vs full: {v['relative'] * 100:+.3f} %  p {v['p_value']:.2g}  {v['verdict']}"
            )


if __name__ == "__main__":
    main()
