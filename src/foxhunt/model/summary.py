"""``foxhunt model summary``: parameters and bytes per top-level block."""

from __future__ import annotations

import dataclasses
import json
import sys

import torch
from rich.console import Console
from rich.table import Table
from torch import nn

from foxhunt.config import TFTConfig
from foxhunt.model.tft import TFT


def parameter_table(model: nn.Module) -> list[tuple[str, int, int]]:
    """Parameters per top-level block.

    Args:
        model: Any module; its direct children are the blocks (for a TFT, the paper's blocks).

    Returns:
        ``(block name, parameters, bytes)`` per direct child with parameters, in definition order;
        parameters held directly by ``model`` appear under the name ``(own)``.
    """
    rows: list[tuple[str, int, int]] = []
    for name, child in model.named_children():
        params = list(child.parameters())
        if params:
            rows.append(
                (
                    name,
                    sum(p.numel() for p in params),
                    sum(p.numel() * p.element_size() for p in params),
                )
            )
    own = list(model.parameters(recurse=False))
    if own:
        rows.append(
            ("(own)", sum(p.numel() for p in own), sum(p.numel() * p.element_size() for p in own))
        )
    return rows


def summary_command(config: TFTConfig, as_json: bool) -> None:
    """Print the parameter table of a TFT built from ``config`` (no weights are allocated).

    Args:
        config: The network to describe.
        as_json: Print JSON (``{"config", "blocks", "total_parameters", "total_bytes"}``) instead
            of a table.
    """
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
