"""The real series behind two reader rules' thresholds (docs/data.md, "Headerless files" and
the vendor table's IQFeed row): reads every bar file under ``../shared/data/real/`` and prints,
per series, the open/close ratio of :mod:`foxhunt.data.read.open_close` (median |open - previous
close| over median |close - previous open|, as read and with the two swapped) and the shares of
consecutive bars whose volume falls and rises (:mod:`foxhunt.data.read.running_volume`).

    .venv/bin/python benchmarks/experiments/reader_rules.py [--root ../shared/data/real]
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import polars as pl

from foxhunt.data.read.bars import read_bars

SUFFIXES = (".csv", ".zip", ".txt", ".parquet", ".gz")


def _ratio(df: pl.DataFrame) -> float:
    gap = (pl.col("open") - pl.col("close").shift(1)).abs().over("symbol").median()
    two = (pl.col("close") - pl.col("open").shift(1)).abs().over("symbol").median()
    g, t = df.select(gap, two).row(0)
    return float("inf") if not t else g / t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="../shared/data/real")
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    files = sorted(
        f for f in Path(args.root).rglob("*") if f.suffix in SUFFIXES and f.name != "README.md"
    )
    print(f"{'as read':>8} {'swapped':>8} {'falls':>6} {'rises':>6}  series")
    for f in files:
        bars = read_bars(f)
        for (sym,), g in bars.sort("symbol", "ts").group_by("symbol", maintain_order=True):
            swapped = g.with_columns(open=pl.col("close"), close=pl.col("open"))
            change = g["volume"].diff().drop_nulls()
            print(
                f"{_ratio(g):8.3f} {_ratio(swapped):8.3f} {(change < 0).mean():6.3f} "
                f"{(change > 0).mean():6.3f}  {sym} ({f.name})"
            )


if __name__ == "__main__":
    main()
