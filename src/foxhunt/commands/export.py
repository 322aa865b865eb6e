"""``foxhunt export``: the model as ONNX, checked against PyTorch."""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
from pathlib import Path

from rich.console import Console

from foxhunt.commands.options import refuse_out_over_inputs

log = logging.getLogger(__name__)


def add_parser(sub: argparse._SubParsersAction) -> None:
    x = sub.add_parser("export", help="export the model for other runtimes (ONNX)")
    x.add_argument("--model", type=Path, required=True, help="fp32 run directory")
    x.add_argument("--format", choices=["onnx"], default="onnx", help="export format")
    x.add_argument("--out", type=Path, required=True, help="output file, e.g. model.onnx")
    x.set_defaults(func=run)


def run(a: argparse.Namespace) -> None:
    from foxhunt.infer.export import export_model

    refuse_out_over_inputs(a.out, model=a.model)
    chatter = io.StringIO()  # the exporter prints its passes to stdout: keep them for -v
    with Console(stderr=True).status(f"exporting {a.model} to ONNX"):
        with contextlib.redirect_stdout(chatter):
            result = export_model(a.model, a.out, fmt=a.format)
    log.debug("%s", chatter.getvalue())
    s = result["shapes"]

    def shape(name: str) -> str:
        return "[" + ", ".join(str(d) for d in s[name]) + "]"

    Console().print(
        f"wrote {result['out']} ({result['bytes'] / 1e6:.2f} MB; inputs static {shape('static')}, "
        f"historical {shape('historical')}, known {shape('known')} -> quantiles "
        f"{shape('quantiles')}, scaled); onnxruntime matches PyTorch: max abs diff "
        f"{result['max_abs_diff']:.2e}",
        soft_wrap=True,
        highlight=False,
        markup=False,
    )
