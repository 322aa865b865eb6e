"""``foxhunt evaluate``: pinball loss, q-risk and coverage against the baselines."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from foxhunt.commands.options import refuse_out_over_inputs


def add_parser(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser("evaluate", help="pinball loss, P50/P90 risk, coverage vs baselines")
    e.add_argument("--model", type=Path, required=True, help="run directory")
    e.add_argument("--bars", type=Path, required=True, help="bars file, directory or glob")
    e.add_argument("--batch-size", type=int, default=256, help="windows per forward pass")
    e.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N")
    e.add_argument(
        "--instruments",
        type=Path,
        help="instrument table (TOML or CSV) for symbols the run did not store; the run's own "
        "instruments.json always wins",
    )
    e.add_argument(
        "--out",
        type=Path,
        help="write the evaluation (JSON) here; default: into the run directory, as "
        "evaluation.json or, when that exists, evaluation-N.json beside it",
    )
    e.add_argument(
        "--strict",
        action="store_true",
        help="refuse bars of symbols the model was not trained on (default: one warning)",
    )
    e.add_argument(
        "--allow-outliers",
        action="store_true",
        help="keep bars that fail the plausibility checks (interleaved price levels, prices off "
        "by orders of magnitude, implausible one-bar moves; docs/data.md), counted in one warning (always, if the run was trained with it)",
    )
    e.add_argument("--json", action="store_true", help="machine-readable output")
    e.set_defaults(func=run)


def run(a: argparse.Namespace) -> None:
    from foxhunt.infer.evaluate import evaluate_model

    if a.out is not None:
        refuse_out_over_inputs(a.out, bars=a.bars, model=a.model)
    with Progress(console=Console(stderr=True), transient=True, disable=a.json) as progress:
        result = evaluate_model(
            a.model,
            a.bars,
            batch_size=a.batch_size,
            device=a.device,
            progress=progress,
            instruments=a.instruments,
            out=a.out,
            strict=a.strict,
            allow_outliers=a.allow_outliers,
        )
    if a.json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        print_tables(result, Console())


def print_tables(result: dict[str, Any], console: Console) -> None:
    s = result["scores"]
    names = {"tft": "TFT", "empirical": "empirical quantiles", "zero": "zero return"}
    t = Table(
        title=f"{result['model']} on {result['bars']} — {result['split']}, {result['n_windows']:,} windows"
    )
    for col in (
        "model",
        "mean pinball (bp)",
        "P50 q-risk",
        "P90 q-risk",
        "10–90 cover",
        "2–98 cover",
    ):
        t.add_column(col, justify="left" if col == "model" else "right")
    for key, label in names.items():
        r = s[key]
        cov = r["coverage"]
        t.add_row(
            label,
            f"{r['mean_pinball'] * 1e4:.3f}",
            f"{r['q_risk'].get('P50', math.nan):.4f}",
            f"{r['q_risk'].get('P90', math.nan):.4f}",
            f"{cov['10-90'] * 100:.1f} %" if "10-90" in cov else "—",
            f"{cov['2-98'] * 100:.1f} %" if "2-98" in cov else "—",
        )
    console.print(t)
    h = Table(title="mean pinball loss per horizon (bp)")
    h.add_column("h", justify="right")
    for label in names.values():
        h.add_column(label, justify="right")
    for i in range(result["horizon"]):
        h.add_row(str(i + 1), *[f"{s[k]['pinball_per_horizon'][i] * 1e4:.3f}" for k in names])
    console.print(h)
    beats = result["tft_beats"]
    verdict = " and ".join(names[k] for k, v in beats.items() if v) or "neither baseline"
    console.print(f"TFT beats {verdict} on mean pinball loss.")
