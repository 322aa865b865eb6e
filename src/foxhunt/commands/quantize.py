"""``foxhunt quantize``: an INT8 (or bf16) copy of a model directory, with a comparison table."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Literal

from rich.console import Console
from rich.table import Table

from foxhunt.commands.options import refuse_out_over_inputs


def add_parser(sub: argparse._SubParsersAction) -> None:
    q = sub.add_parser(
        "quantize", help="INT8 (or bf16) model directory, with a size/speed/loss table"
    )
    q.add_argument("--model", type=Path, required=True, help="fp32 run directory")
    q.add_argument("--out", type=Path, required=True, help="new model directory")
    q.add_argument(
        "--mode",
        choices=["dynamic", "static"],
        default="dynamic",
        help="int8 activations of linear layers: per-row at run time (default) or calibrated",
    )
    q.add_argument("--calibration-bars", type=Path, help="bars to calibrate --mode static on")
    q.add_argument("--precision", choices=["int8", "bf16"], default="int8", help="weight format")
    q.add_argument(
        "--bars",
        type=Path,
        help="bars to compare pinball loss on: their test split if they are the training bars, "
        "else their windows after the training bars (default: the training bars' test split)",
    )
    q.set_defaults(func=run)


def run(a: argparse.Namespace) -> None:
    from foxhunt.quantize.recipe import quantize_run

    refuse_out_over_inputs(a.out, bars=a.bars, model=a.model, out_is_dir=True)
    if a.calibration_bars is not None:
        refuse_out_over_inputs(
            a.out, bars=a.calibration_bars, out_is_dir=True, bars_flag="--calibration-bars"
        )
    result = quantize_run(
        a.model,
        a.out,
        mode=a.mode,
        precision=a.precision,
        calibration_bars=a.calibration_bars,
        bars=a.bars,
    )
    _print_table(result, Console())


def _change(a: float, b: float) -> str:
    return f"{(b - a) / a * 100:+.1f} %" if a else "—"


def _print_table(r: dict[str, Any], console: Console) -> None:
    from foxhunt.memory.units import format_bytes

    label = f"{r['precision']}" + (f" ({r['mode']})" if r["mode"] else "")
    t = Table(title=f"{r['source']} -> {r['out']}: {label}")
    for col in ("", "fp32", label, "change"):
        t.add_column(col, justify="left" if not col else "right")

    def row(name: str, a: float, b: float, fmt: Literal["bytes", "ms", "bp"]) -> None:
        show = {
            "bytes": lambda v: format_bytes(v),
            "ms": lambda v: f"{v:.2f} ms",
            "bp": lambda v: f"{v * 1e4:.4f} bp",
        }[fmt]
        t.add_row(name, show(a), show(b), _change(a, b))

    row(
        "size on disk (weights file)",
        r["disk_bytes"]["fp32"],
        r["disk_bytes"]["quantized"],
        "bytes",
    )
    row(
        "parameter bytes (in memory)",
        r["param_bytes"]["fp32"],
        r["param_bytes"]["quantized"],
        "bytes",
    )
    inf = r.get("inference")
    if inf:
        a, b = inf["fp32"], inf["quantized"]
        row(
            "inference peak RSS delta (batch 32)",
            a["peak_delta_bytes"],
            b["peak_delta_bytes"],
            "bytes",
        )
        for bs in ("1", "32"):
            row(
                f"latency per forecast (batch {bs})",
                a["latency_ms"][bs] / int(bs),
                b["latency_ms"][bs] / int(bs),
                "ms",
            )
    pin = r.get("pinball")
    if pin:
        row(f"mean pinball loss ({r['pinball_on']})", pin["fp32"], pin["quantized"], "bp")
    else:
        t.add_row("mean pinball loss", "—", "—", r["pinball_on"])
    console.print(t)
    if inf:
        threads = inf["fp32"]["threads"]
        console.print(
            f"memory and latency: fresh process each, {threads} CPU threads, median of "
            f"{inf['fp32']['repeats']} passes; wall-clock numbers vary with machine load."
        )
