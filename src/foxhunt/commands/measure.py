"""``python -m foxhunt.commands.measure``: the fresh process in which
:func:`foxhunt.train.resources.measure.measure_in_subprocess` measures a training step or a forward pass;
prints one JSON line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import polars  # noqa: E402, F401
import torch

# The baseline of a `foxhunt train` process: its training stack and polars are imported too.
import foxhunt.train.run  # noqa: E402, F401, I001
from foxhunt.config import ConfigError, RunConfig, preset
from foxhunt.errors import InputError
from foxhunt.memory.allocator import apply_cpu_allocator, enable_huge_pages
from foxhunt.train.resources.measure import measure_here


def build_parser() -> argparse.ArgumentParser:
    """The measuring child's arguments."""
    p = argparse.ArgumentParser(prog="python -m foxhunt.commands.measure", description=__doc__)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--preset", default="tft-225")
    g.add_argument("--config", type=Path)
    g.add_argument("--config-json", help="the config itself, as JSON")
    p.add_argument("--batch-size", type=int)
    p.add_argument("--precision", choices=["auto", "fp32", "bf16", "fp16"])
    p.add_argument("--checkpointing", action="store_true")
    p.add_argument("--mode", choices=["train", "infer"], default="train")
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--num-threads", type=int)
    p.add_argument(
        "--default-allocator",
        action="store_true",
        help="same as --cpu-allocator glibc (glibc's default malloc thresholds)",
    )
    p.add_argument(
        "--cpu-allocator",
        choices=["balanced", "lean", "glibc"],
        help="override the config's cpu_allocator",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m foxhunt.commands.measure``: measure once, print one JSON line."""
    enable_huge_pages()  # as the foxhunt CLI does, before torch's first allocation
    p = build_parser()
    a = p.parse_args(argv)
    if a.num_threads:
        torch.set_num_threads(a.num_threads)
    try:
        if a.config_json:
            cfg = RunConfig.from_dict(json.loads(a.config_json))
        else:
            cfg = RunConfig.load(a.config) if a.config else preset(a.preset)
    except (InputError, ConfigError, json.JSONDecodeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    train: dict[str, Any] = {}
    if a.batch_size:
        train.update(batch_size=a.batch_size, micro_batch_size=None)
    if a.precision:
        train["precision"] = a.precision
    if a.checkpointing:
        train["checkpointing"] = True
    if a.cpu_allocator or a.default_allocator:
        train["cpu_allocator"] = "glibc" if a.default_allocator else a.cpu_allocator
    if train:
        cfg = cfg.replace(train=train)
    apply_cpu_allocator(cfg)  # before the baseline: the process as foxhunt train runs it
    result = measure_here(cfg, a.mode, steps=a.steps)
    result["command"] = [
        Path(sys.executable).name,
        "-m",
        "foxhunt.commands.measure",
        *(sys.argv[1:] if argv is None else argv),
    ]
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
