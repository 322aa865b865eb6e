"""``foxhunt backtest``: rolling-origin evaluation of the TFT against every baseline."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from foxhunt.commands.options import (
    add_config_args,
    add_read_args,
    refuse_out_over_inputs,
    run_config,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    b = sub.add_parser(
        "backtest",
        help="rolling-origin evaluation with embargo: per-fold and pooled scores of the TFT "
        "and every baseline",
        description="Train on an expanding window before each of K test folds (the first 50% "
        "of the bar times before fold 1, an embargo of encoder + horizon bars before each "
        "fold), score the TFT and every baseline on the fold, and test the pooled difference "
        "(Diebold-Mariano). Writes OUT/backtest.json, OUT/backtest.png and the fold runs "
        "OUT/fold-K/run (with --ensemble N: a seed ensemble, members in OUT/fold-K/run/members/K). "
        "docs/evaluation.md.",
    )
    b.add_argument("--bars", type=Path, required=True, help="bars file, directory or glob")
    add_config_args(b)
    b.add_argument("--folds", type=int, default=3, help="test folds K (default 3)")
    b.add_argument(
        "--refit",
        choices=["every", "once"],
        default="every",
        help="every: train a model (and fit the baselines) before each fold; once: train one "
        "before fold 1 and score it on every fold (default every)",
    )
    b.add_argument(
        "--ensemble",
        type=int,
        default=1,
        metavar="N",
        help="train each fold's model as a seed ensemble of N members, as foxhunt train "
        "--ensemble N does (seeds seed..seed+N-1, calibrated quantiles averaged), score it as the "
        "TFT and member 0 alone as tft_member0 (default 1: one run)",
    )
    b.add_argument("--epochs", type=int, help="passes over the training windows, per fold")
    b.add_argument("--max-steps", type=int, help="stop each fold's training after this many steps")
    b.add_argument("--seed", type=int, help="random seed")
    b.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N (training and scoring)")
    b.add_argument(
        "--num-threads",
        type=int,
        help="torch CPU threads of each fold's training (default: torch's own)",
    )
    add_read_args(b)
    b.add_argument(
        "--out",
        type=Path,
        help="directory for the results and fold runs (default runs/backtest-<bars>)",
    )
    b.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a backtest already in --out (its backtest.json, backtest.png and fold-K/ "
        "are deleted once the folds are planned); without it such an --out is refused",
    )
    b.add_argument("--json", action="store_true", help="machine-readable output")
    b.set_defaults(func=run)


def run(a: argparse.Namespace) -> None:
    from foxhunt.commands.progress import TrainProgress
    from foxhunt.infer.backtest import backtest

    cfg = run_config(a).replace(train={"device": a.device})
    out = a.out or Path("runs") / f"backtest-{Path(a.bars).stem}"
    refuse_out_over_inputs(out, bars=a.bars, out_is_dir=True)
    result = backtest(
        a.bars,
        cfg,
        folds=a.folds,
        refit=a.refit,
        out=out,
        device=a.device,
        progress=None if a.json else (lambda e, f: TrainProgress(e, first_epoch=f)),
        ensemble=a.ensemble,
        overwrite=a.overwrite,
    )
    if a.json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        print_backtest(result, Console())
        Console().print(f"written: {out / 'backtest.json'}, {out / 'backtest.png'}")


def print_backtest(result: dict[str, Any], console: Console) -> None:
    """Mean pinball per fold and pooled, the pooled coverage and verdict, per model; for an
    ensemble, each training's time and peak RSS."""
    from foxhunt.infer.backtest_plot import model_label
    from foxhunt.memory.units import format_bytes
    from foxhunt.train.reporting.evaluation import cell

    folds, pooled = result["folds"], result["pooled"]
    t = Table(
        title=f"backtest of {result['bars']}: {len(folds)} folds ({result['refit']} refit, "
        f"embargo {result['embargo']} bars), {pooled['n_windows']:,} windows — mean pinball (bp)"
    )
    t.add_column("model")
    for f in folds:
        t.add_column(f"fold {f['fold']} ({f['n_windows']:,})", justify="right")
    for col in ("pooled", "10–90 cover", "TFT − model", "p", "verdict"):
        t.add_column(col, justify="left" if col == "verdict" else "right")
    for key, s in pooled["scores"].items():
        c = pooled["comparisons"].get(key, {}).get("pooled")
        cov = s["coverage"].get("10-90")
        t.add_row(
            model_label(key, result),
            *[f"{f['scores'][key]['mean_pinball'] * 1e4:.3f}" for f in folds],
            f"{s['mean_pinball'] * 1e4:.3f}",
            "—" if cov is None else f"{cov * 100:.1f} %",
            cell(c["relative"], "+.2f", 100, " %") if c else "",
            cell(c["p_value"], ".3g") if c else "",
            c["verdict"] if c else "",
        )
    console.print(t)
    ens = result.get("ensemble")
    for tr in ens["trainings"] if ens else []:
        console.print(
            f"fold {tr['fold']}: {ens['members']} members trained one after another in "
            f"{tr['seconds']:.1f} s, peak RSS {format_bytes(tr['peak_rss_bytes'])} (the largest "
            f"member's); {tr['run']}"
        )
