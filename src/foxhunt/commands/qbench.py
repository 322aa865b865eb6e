"""``python -m foxhunt.commands.qbench``: the fresh process in which
:func:`foxhunt.quantize.bench.measure_in_subprocess` measures a model directory's inference
memory and latency; prints one JSON line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from foxhunt.quantize.bench import compare_preset, measure_here


def build_parser() -> argparse.ArgumentParser:
    """The child's options (its ``--help`` is checked with the commands')."""
    p = argparse.ArgumentParser(prog="python -m foxhunt.commands.qbench", description=__doc__)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--model", type=Path, help="model directory")
    g.add_argument("--preset", help="random-init fp32 vs quantised models of this preset")
    p.add_argument("--precision", choices=["int8", "bf16"], default="int8", help="with --preset")
    p.add_argument("--mode", choices=["dynamic", "static"], default="dynamic", help="with --preset")
    p.add_argument("--batch-size", type=int, action="append", help="repeatable (default 1, 32)")
    p.add_argument("--repeats", type=int, default=10, help="timed passes per batch size")
    p.add_argument("--num-threads", type=int, default=1, help="torch CPU threads (default 1)")
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m foxhunt.commands.qbench``: measure once, print one JSON line."""
    from foxhunt.errors import InputError
    from foxhunt.memory.allocator import tune_cpu_allocator

    a = build_parser().parse_args(argv)
    tune_cpu_allocator()  # as `foxhunt train` and `foxhunt memory --measure` do
    if a.num_threads:
        torch.set_num_threads(a.num_threads)
    if a.preset is not None and a.mode == "static":
        print(
            "error: --preset measures random weights; static mode needs calibration",
            file=sys.stderr,
        )
        return 2
    try:
        if a.preset is not None:
            result = compare_preset(
                a.preset, a.precision, a.mode, repeats=max(1, a.repeats), num_threads=a.num_threads
            )
        else:
            result = measure_here(a.model, a.batch_size or [1, 32], repeats=max(1, a.repeats))
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
