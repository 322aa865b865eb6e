"""``foxhunt evaluate``: pinball loss, q-risk and coverage against the baselines."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from foxhunt.commands.options import add_read_args, read_flags, refuse_out_over_inputs


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
    e.add_argument(
        "--windows",
        choices=("new", "test", "all"),
        help="which windows to score: new = forecast origin at or after the training bars' "
        "end (one warning counts those left out); test = the test split of the training bars "
        "themselves; all = every window, training windows included (one warning). Default: "
        "test for the training file itself, new for any other bars",
    )
    add_read_args(e, stored=False, over_run=True)
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
            scope=a.windows,
            read=read_flags(a),
        )
    if a.json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        print_tables(result, Console())


def _names(result: dict[str, Any]) -> dict[str, str]:
    from foxhunt.baselines.forecasts import LABELS

    return {"tft": "TFT"} | {k: LABELS.get(k, k) for k in result["scores"] if k != "tft"}


def print_tables(result: dict[str, Any], console: Console) -> None:
    from foxhunt.train.reporting.evaluation import cell

    if "training" in result:  # first: whether the TFT rows below are a trained network at all
        from foxhunt.artifacts.served import served_line

        console.print(served_line(result["training"]))
    s = result["scores"]
    names = _names(result)
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
            cell(r["q_risk"].get("P50"), ".4f"),
            cell(r["q_risk"].get("P90"), ".4f"),
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
    comparisons = result.get("comparisons", {})
    if comparisons:
        console.print(verdict_table(comparisons, names, result["horizon"]))
    if len(result.get("per_symbol", {})) > 1:
        console.print(symbol_table(result["per_symbol"], names))
    console.print(verdict_sentence(result))


def verdict_table(comparisons: dict[str, Any], names: dict[str, str], horizon: int) -> Table:
    """TFT vs each baseline: relative difference, Diebold–Mariano statistic, p, verdict, and
    the verdict per horizon (W win, L lose, · no significant difference)."""
    from foxhunt.train.reporting.evaluation import cell

    v = Table(title="TFT vs baseline: Diebold–Mariano test (HAC variance), 5 % level")
    for col in ("baseline", "TFT − baseline", "DM", "p", "verdict", "per horizon"):
        v.add_column(col, justify="left" if col in ("baseline", "verdict") else "right")
    marks = {"win": "W", "lose": "L"}
    for key, c in comparisons.items():
        p = c["pooled"]
        per_h = "".join(marks.get(x["verdict"], "·") for x in c["per_horizon"][:horizon])
        v.add_row(
            names.get(key, key),
            cell(p["relative"], "+.2f", 100, " %"),
            cell(p["dm_statistic"], "+.2f"),
            cell(p["p_value"], ".3g"),
            p["verdict"],
            per_h,
        )
    return v


def symbol_table(per_symbol: dict[str, Any], names: dict[str, str]) -> Table:
    """Each symbol on its own: windows, the TFT's pinball loss and 10–90 coverage, and TFT vs
    each baseline (relative difference; W significant win, L significant loss, · neither);
    the last row counts the symbols won."""
    from foxhunt.train.reporting.evaluation import cell

    t = Table(title="per symbol: TFT − baseline, Diebold–Mariano at 5 % (W win, L lose)")
    t.add_column("symbol")
    for col in ("windows", "TFT (bp)", "10–90 cover"):
        t.add_column(col, justify="right")
    bases = list(next(iter(per_symbol.values()))["comparisons"])
    for key in bases:
        t.add_column(names.get(key, key), justify="right")
    marks = {"win": "W", "lose": "L"}
    wins = dict.fromkeys(bases, 0)
    for sym, e in per_symbol.items():
        cov = e["coverage"].get("10-90")
        cells = []
        for key in bases:
            c = e["comparisons"][key]
            wins[key] += c["verdict"] == "win"
            cells.append(f"{cell(c['relative'], '+.2f', 100, ' %')} {marks.get(c['verdict'], '·')}")
        t.add_row(
            sym,
            f"{e['n_windows']:,}",
            f"{e['tft'] * 1e4:.3f}",
            "—" if cov is None else f"{cov * 100:.1f} %",
            *cells,
        )
    t.add_row("wins", "", "", "", *[f"{wins[k]} of {len(per_symbol)}" for k in bases])
    return t


def verdict_sentence(result: dict[str, Any]) -> str:
    """One line: which baselines the TFT significantly beats, loses to, or cannot tell apart."""
    from foxhunt.infer.significance import TOO_FEW

    names = _names(result)
    comparisons = result.get("comparisons")
    if comparisons is None:  # an evaluation from before the significance test
        beats = [names.get(k, k) for k, v in result.get("tft_beats", {}).items() if v]
        return f"TFT beats {' and '.join(beats) or 'no baseline'} on mean pinball loss."
    groups: dict[str, list[str]] = {}
    for key, c in comparisons.items():
        groups.setdefault(c["pooled"]["verdict"], []).append(names.get(key, key))
    parts = []
    if "win" in groups:
        parts.append("significantly beats " + ", ".join(groups["win"]))
    if "lose" in groups:
        parts.append("significantly loses to " + ", ".join(groups["lose"]))
    others = [k for k in groups if k not in ("win", "lose")]
    for k in others:
        against = "against" if k == TOO_FEW else "from"  # "too few windows for a test against"
        parts.append(f"{k} {against} " + ", ".join(groups[k]))
    return "TFT (mean pinball loss, 5 % level): " + "; ".join(parts) + "."
