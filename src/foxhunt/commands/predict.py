"""``foxhunt predict``: quantile forecasts for every origin, or as bars arrive (``--follow``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from foxhunt.commands.options import (
    add_engine_arg,
    add_read_args,
    read_flags,
    refuse_out_over_inputs,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    pr = sub.add_parser("predict", help="quantile forecasts for every origin, written in batches")
    pr.add_argument("--model", type=Path, required=True, help="run directory")
    src = pr.add_mutually_exclusive_group(required=True)
    src.add_argument("--bars", type=Path, help="bars file, directory or glob")
    src.add_argument(
        "--follow",
        type=Path,
        metavar="FILE",
        help="keep polling this growing .parquet/.csv file and forecast as bars arrive",
    )
    pr.add_argument(
        "--out",
        type=Path,
        required=True,
        help="output .parquet (with --follow: .csv appends every forecast, .parquet keeps the latest)",
    )
    pr.add_argument(
        "--long",
        action="store_true",
        help="one row per quantile level (columns quantile, return, price) instead of one column "
        "per level (return_q*, price_q*); not with --follow",
    )
    pr.add_argument("--batch-size", type=int, default=256, help="windows per forward pass")
    pr.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N")
    pr.add_argument(
        "--instruments",
        type=Path,
        help="instrument table (TOML or CSV) for symbols the run did not store; the run's own "
        "instruments.json always wins",
    )
    pr.add_argument(
        "--allow-outliers",
        action="store_true",
        help="keep bars that fail the plausibility checks (interleaved price levels, prices off "
        "by orders of magnitude, implausible one-bar moves; docs/data.md), counted in one warning (always, if the run was trained with it; not with --follow)",
    )
    pr.add_argument(
        "--poll-seconds", type=float, default=5.0, help="with --follow: wait between polls"
    )
    pr.add_argument("--max-polls", type=int, help="with --follow: stop after this many polls")
    add_engine_arg(pr, "with --follow: ")
    pr.add_argument(
        "--strict",
        action="store_true",
        help="refuse bars of symbols the model was not trained on (default: one warning); with "
        "--follow: stop at the first bad line (exit 2) instead of skipping it",
    )
    add_read_args(pr, stored=False, over_run=True)
    pr.set_defaults(func=run)


def run(a: argparse.Namespace) -> None:
    refuse_out_over_inputs(a.out, bars=a.bars, follow=a.follow, model=a.model)
    if a.follow is not None:
        if a.long:
            from foxhunt.errors import InputError

            raise InputError("--long: not with --follow (the live file keeps one row per horizon)")
        from foxhunt.infer.follow import follow_path

        follow_path(
            a.model,
            a.follow,
            a.out,
            poll_seconds=a.poll_seconds,
            max_polls=a.max_polls,
            strict=a.strict,
            device=a.device,
            read=read_flags(a),
            engine=a.engine,
        )
        return
    from foxhunt.infer.predict import predict_to_file

    console = Console(stderr=True)
    with Progress(console=console, transient=True) as progress:
        rows, origins, horizons = predict_to_file(
            a.model,
            a.bars,
            a.out,
            batch_size=a.batch_size,
            device=a.device,
            progress=progress,
            instruments=a.instruments,
            strict=a.strict,
            allow_outliers=a.allow_outliers,
            long=a.long,
            read=read_flags(a),
        )
    shape = f"{origins:,} origins x {horizons} horizons"
    shape += f" x {rows // (origins * horizons)} quantiles" if a.long else ", a column per quantile"
    console.print(f"wrote {rows:,} rows ({shape}) to {a.out}")
