"""A volume that is the day's running total, not each bar's: IQFeed's ``TotalVolume``.

Read as each bar's volume it grows all day and falls once, when the total starts again, so
every volume feature is wrong while every check of a bar passes. A bar's own volume falls
about as often as it rises (the 101 real series under ``../shared/data/real/``: on 20-52 % of
consecutive pairs, where it is not 0 throughout: ``benchmarks/experiments/reader_rules.py``);
a running total falls only where a day
starts. Judged on consecutive bars one interval apart (a day's first bar follows a halt or a
weekend, so it is left out), and only where the volume falls somewhere: a total starts again
each day, and a volume that never falls (a made-up ``1, 2, 3 ...``) is no evidence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from foxhunt.errors import DataError

MIN_PAIRS = 100
"""Consecutive bar pairs one interval apart, per symbol, below which nothing is judged."""
MAX_FALLS = 0.005
"""Largest share of those pairs on which a running total falls (where a day starts without a
halt before it: 1 in 1,440 one-minute bars of a 24-hour day)."""
MIN_RISES = 0.5
"""Smallest share of those pairs on which it rises."""


def running_symbol(df: pl.DataFrame) -> tuple[str, int, int] | None:
    """The first symbol whose volume looks like a running total, with its falls and pairs.

    Args:
        df: bars sorted by (``symbol``, ``ts``) with ``volume``.
    """
    step = pl.col("ts").diff().over("symbol")
    change = pl.col("volume").diff().over("symbol")
    usual = step == step.median().over("symbol")  # one interval apart
    stats = (
        df.lazy()
        .group_by("symbol", maintain_order=True)
        .agg(
            pairs=usual.sum(),
            falls=((change < 0) & usual).sum(),
            rises=((change > 0) & usual).sum(),
            # a running total starts again (falls) somewhere: a volume that never falls is none
            restarts=(change < 0).sum(),
        )
        .filter(
            (pl.col("pairs") >= MIN_PAIRS)
            & (pl.col("falls") <= MAX_FALLS * pl.col("pairs"))
            & (pl.col("rises") >= MIN_RISES * pl.col("pairs"))
            & (pl.col("restarts") > 0)
        )
        .collect()
    )
    if stats.height == 0:
        return None
    symbol, pairs, falls, _, _ = stats.row(0)
    return symbol, falls, pairs


def check_running_volume(
    df: pl.DataFrame,
    files: Sequence[Path],
    spellings: Sequence[Mapping[str, str]],
    extra: Sequence[Sequence[str]],
    file_column: str,
) -> None:
    """Refuse a volume column that reads as the day's running total (module docstring).

    Args:
        df: validated bars sorted by (``symbol``, ``ts``), with the file index column.
        files: the files read, by file index.
        spellings: per file, canonical column name -> the file's name for it.
        extra: per file, the columns read past (another volume among them is named).
        file_column: the column of ``df`` holding each bar's file index.

    Raises:
        DataError: naming the file, the symbol, the column and the flag.
    """
    found = running_symbol(df)
    if found is None:
        return
    symbol, falls, pairs = found
    f = int(df.filter(pl.col("symbol") == symbol)[file_column][0])
    column = spellings[f].get("volume", "volume")
    unread = [c for c in extra[f] if c != column]
    others = [c for c in unread if "vol" in c.lower()] or unread
    hint = f" (the file also has {', '.join(repr(c) for c in others[:4])})" if others else ""
    raise DataError(
        f"{files[f]}: symbol {symbol!r}: column '{column}' falls on {falls} of {pairs} "
        "consecutive bars and rises on most: the day's running total of the volume (IQFeed's "
        f"TotalVolume), not each bar's; --columns volume=COLUMN names each bar's volume{hint}"
    )
