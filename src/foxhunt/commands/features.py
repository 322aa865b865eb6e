"""``foxhunt features``: the 210/10/5 feature set and targets, as one file or a feature store."""

from __future__ import annotations

import argparse
from pathlib import Path


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
    f.set_defaults(func=run)


def run(a: argparse.Namespace) -> None:
    if a.shards:
        from foxhunt.data.store.format import write_feature_store

        write_feature_store(a.bars, a.out, horizon=a.horizon)
        return
    from foxhunt.data.features import write_features

    write_features(a.bars, a.out, horizon=a.horizon)
