"""The command line: a map from command names to the modules of :mod:`foxhunt.commands`.

Each command module adds its own arguments (``add_parser``) and handles them; heavy modules
(torch, polars) are imported inside the handlers so ``--help`` stays fast. Bad input
(``InputError``, ``ConfigError``) becomes one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from collections.abc import Sequence

from foxhunt.commands import (
    backtest,
    data,
    evaluate,
    export,
    features,
    memory,
    model,
    predict,
    quantize,
    serve,
)
from foxhunt.commands import train as train_cmd
from foxhunt.commands import tune as tune_cmd
from foxhunt.config import ConfigError
from foxhunt.errors import InputError
from foxhunt.memory.allocator import enable_huge_pages
from foxhunt.version import __version__

COMMANDS = (
    data,
    features,
    model,
    train_cmd,
    tune_cmd,
    evaluate,
    backtest,
    predict,
    serve,
    quantize,
    export,
    memory,
)
"""Every command, in the order ``foxhunt --help`` lists them."""


def build_parser() -> argparse.ArgumentParser:
    """The full ``foxhunt`` argument parser."""
    p = argparse.ArgumentParser(
        prog="foxhunt",
        description="A memory-lean Temporal Fusion Transformer for futures bars.",
    )
    p.add_argument("--version", action="version", version=f"foxhunt {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``foxhunt`` console script; returns the exit code."""
    enable_huge_pages()  # before torch's first allocation, which is when it reads the setting
    parser = build_parser()
    args = parser.parse_args(argv)
    # foxhunt's own logs at INFO (DEBUG with -v); other libraries' only from WARNING on, so -v
    # is not flooded by matplotlib's font lookups or the ONNX exporter's passes.
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    logging.getLogger("foxhunt").setLevel(logging.DEBUG if args.verbose else logging.INFO)
    try:
        rc = args.func(args)
    except (InputError, ConfigError) as e:
        print(f"foxhunt: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if argv is None:  # the console script: a Ctrl-C more while it exits keeps exit code 130
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # (else Python dies by the signal, -2)
        print("foxhunt: interrupted", file=sys.stderr)
        return 130
    return int(rc or 0)


if __name__ == "__main__":
    raise SystemExit(main())
