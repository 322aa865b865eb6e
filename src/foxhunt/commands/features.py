"""``foxhunt features``: the 210/10/5 feature set and targets, as one file or a feature store."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from rich.console import Console

from foxhunt.commands.options import add_read_args, read_options_of, refuse_out_over_inputs

log = logging.getLogger(__name__)

LARGE_TABLE_SHARE = 0.5
"""A feature table estimated over this share of the machine's memory gets a warning (as a
training's preparation does, ``train.resources.plan.LARGE_PREPARATION_SHARE``; not imported
from there: ``foxhunt features`` imports no torch)."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    f = sub.add_parser("features", help="compute the 210/10/5 feature set and targets")
    f.add_argument("--bars", type=Path, required=True, help="bars file, directory or glob")
    f.add_argument(
        "--out", type=Path, required=True, help="output .parquet (with --shards: a folder)"
    )
    f.add_argument("--horizon", type=int, default=10, help="target horizons h=1..H (default 10)")
    f.add_argument(
        "--shards",
        action="store_true",
        help="write a feature store: one shard per symbol + manifest.json in folder --out, "
        "computed one symbol at a time; unchanged symbols are skipped on re-runs; "
        "`foxhunt train --bars FOLDER` trains from it (without it the whole table is held "
        "in memory: estimated once the bars are read, refused over the machine's memory)",
    )
    add_read_args(f, stored=False)
    f.add_argument(
        "--instruments",
        type=Path,
        help="instrument table, TOML or CSV (docs/data.md): static features and calendar per "
        "symbol; unknown symbols are inferred with one warning",
    )
    f.add_argument(
        "--allow-outliers",
        action="store_true",
        help="keep bars that fail the plausibility checks (interleaved price levels, prices off "
        "by orders of magnitude, implausible one-bar moves; docs/data.md), counted in one warning",
    )
    f.set_defaults(func=run)


def run(a: argparse.Namespace) -> None:
    refuse_out_over_inputs(a.out, bars=a.bars, out_is_dir=a.shards)
    console = Console(stderr=True)
    if a.shards:
        from foxhunt.data.store.write import write_feature_store

        with console.status(f"writing the feature store {a.out}"):
            manifest, computed = write_feature_store(
                a.bars,
                a.out,
                horizon=a.horizon,
                allow_outliers=a.allow_outliers,
                options=read_options_of(a),
                instruments=a.instruments,
            )
        spec, shards = manifest.spec, manifest.shards
        Console().print(
            f"wrote {a.out / 'manifest.json'}: {len(shards)} symbols ({computed} computed, "
            f"{len(shards) - computed} unchanged), {sum(s.rows for s in shards):,} rows x "
            f"({len(spec.historical)} observed + {len(spec.known)} known + {len(spec.static)} "
            f"static features, {len(spec.targets)} targets)",
            soft_wrap=True,
            highlight=False,
        )
        return
    from foxhunt.data.features.table import write_features

    with console.status(f"computing features of {a.bars}"):
        rows, spec = write_features(
            a.bars,
            a.out,
            horizon=a.horizon,
            options=read_options_of(a),
            instruments=a.instruments,
            allow_outliers=a.allow_outliers,
            before=lambda n, symbols: check_table_fits(a.bars, n, symbols, a.horizon),
        )
    Console().print(
        f"wrote {rows:,} rows x ({len(spec.historical)} observed + {len(spec.known)} "
        f"known + {len(spec.static)} static features, {len(spec.targets)} targets) to {a.out} "
        f"({spec.warmup} warm-up rows and the last {a.horizon} rows of each symbol dropped)",
        soft_wrap=True,
        highlight=False,
    )


def check_table_fits(
    bars: Path, n: int, symbols: int, horizon: int, total: int | None = None
) -> int:
    """Once the bars are read, before one feature table of their ``n`` bars (of ``symbols``
    symbols) is computed in memory: refuse it when its estimated peak
    (:func:`~foxhunt.memory.preparation.preparation_peak` of every bar, the table whole; 7.96 GB
    measured for the 3.54 M 1-minute bars of 2018, 2.75 GB for three of their symbols,
    estimates -3 % and +5 %) is over ``total`` (default: this machine's memory), warn over half
    of it; both name ``--shards``, which computes and writes one symbol at a time. Counted from
    the bars read, not the files' lines: trades and ``--bar-minutes`` make fewer bars.

    Returns:
        The estimated peak in bytes.

    Raises:
        InputError: the table would not fit in memory.
    """
    import psutil

    from foxhunt.data.features.table import feature_spec
    from foxhunt.errors import InputError
    from foxhunt.memory.preparation import preparation_peak
    from foxhunt.memory.units import format_bytes

    peak = preparation_peak(n, len(feature_spec(horizon).inputs), horizon)
    total = psutil.virtual_memory().total if total is None else total
    if peak <= LARGE_TABLE_SHARE * total:
        return peak
    how = (
        "--shards computes and writes one symbol at a time (a folder `foxhunt train --bars` reads)"
    )
    if symbols == 1:
        how = "one symbol's table is computed whole, with --shards too: cut its bars into periods"
    said = f"{bars}: one feature table of {n:,} bars needs an estimated {format_bytes(peak)}"
    if peak > total:
        raise InputError(f"{said}, more than this machine's {format_bytes(total)}; {how}")
    log.warning("%s, %.0f %% of this machine's %s; %s", said, 100 * peak / total,
                format_bytes(total), how)  # fmt: skip
    return peak
