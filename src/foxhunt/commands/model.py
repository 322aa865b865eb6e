"""``foxhunt model summary``: parameters and bytes per top-level block."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from foxhunt.commands.options import add_config_args, run_config
from foxhunt.config import TFTConfig


def add_parser(sub: argparse._SubParsersAction) -> None:
    m = sub.add_parser("model", help="model inspection")
    msub = m.add_subparsers(dest="model_command", required=True, metavar="SUBCOMMAND")
    s = msub.add_parser("summary", help="parameters and bytes per block")
    add_config_args(s, with_batch=False)
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=lambda a: summary(run_config(a).model, as_json=a.json))


def summary(config: TFTConfig, as_json: bool) -> None:
    """Print the parameter table of a TFT built from ``config`` (no weights are allocated).

    Args:
        config: The network to describe.
        as_json: Print JSON (``{"config", "blocks", "total_parameters", "total_bytes"}``) instead
            of a table.
    """
    import torch
    from rich.console import Console
    from rich.table import Table

    from foxhunt.model.summary import parameter_table
    from foxhunt.model.tft import TFT

    with torch.device("meta"):
        model = TFT(config)
    rows = parameter_table(model)
    total_params = sum(r[1] for r in rows)
    total_bytes = sum(r[2] for r in rows)
    if as_json:
        doc = {
            "config": dataclasses.asdict(config),
            "dtype": "float32",
            "blocks": [{"name": n, "parameters": p, "bytes": b} for n, p, b in rows],
            "total_parameters": total_params,
            "total_bytes": total_bytes,
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    table = Table(title=f"TFT parameters (vsn_mode={config.vsn_mode}, fp32)")
    table.add_column("block")
    table.add_column("parameters", justify="right")
    table.add_column("MB", justify="right")
    table.add_column("share", justify="right")
    for name, n, b in rows:
        table.add_row(name, f"{n:,}", f"{b / 1e6:.2f}", f"{n / total_params:.1%}")
    table.add_section()
    table.add_row("total", f"{total_params:,}", f"{total_bytes / 1e6:.2f}", "100%")
    Console().print(table)
