"""``foxhunt features``: the 210/10/5 feature set and targets, as one file or a feature store."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from foxhunt.commands.options import add_read_args, read_options_of, refuse_out_over_inputs


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
        "`foxhunt train --bars FOLDER` trains from it",
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
        )
    Console().print(
        f"wrote {rows:,} rows x ({len(spec.historical)} observed + {len(spec.known)} "
        f"known + {len(spec.static)} static features, {len(spec.targets)} targets) to {a.out} "
        f"({spec.warmup} warm-up rows and the last {a.horizon} rows of each symbol dropped)",
        soft_wrap=True,
        highlight=False,
    )
