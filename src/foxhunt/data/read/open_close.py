"""Open and close read the wrong way round: ``close,high,low,open`` taken as ``open,high,low,close``.

Swapping the open and the close breaks no check of a bar (the high and the low still bound
both), so a headerless file in yfinance's column order (``Close,High,Low,Open,Volume``) read
in the usual order would pass everything. The series gives it away: a bar opens where the
previous one closed, so the median of ``|open - previous close|`` (the gap between bars) is
small next to that of ``|close - previous open|`` (two bars' moves). Read swapped, the two
trade places. On the 101 real series under ``../shared/data/real/`` the gap's median is at
most 1.0 times the two-bar move's (daily futures; 0.07-0.66 for 1-minute bars); swapped, the
1-minute series give 1.5-14 times or a two-bar median of 0
(``benchmarks/experiments/reader_rules.py`` prints them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from foxhunt.errors import DataError

MIN_PAIRS = 100
"""Consecutive bar pairs of a symbol below which nothing is judged."""
RATIO = 3.0
"""How many times the two-bar move's median the gap's median must be to call the columns
swapped (3 times the largest ratio seen on correct real bars)."""


def swapped_symbol(df: pl.DataFrame) -> tuple[str, float, float] | None:
    """The first symbol whose open and close look swapped, with the gap's and the two-bar
    move's medians; None when none does.

    Args:
        df: bars sorted by (``symbol``, ``ts``) with ``open`` and ``close``.
    """
    stats = (
        df.lazy()
        .select(
            pl.col("symbol"),
            gap=(pl.col("open") - pl.col("close").shift(1)).abs().over("symbol"),
            two=(pl.col("close") - pl.col("open").shift(1)).abs().over("symbol"),
        )
        .group_by("symbol", maintain_order=True)
        .agg(pl.col("gap").median(), pl.col("two").median(), pairs=pl.col("gap").count())
        .filter((pl.col("pairs") >= MIN_PAIRS) & (pl.col("gap") > RATIO * pl.col("two")))
        .collect()
    )
    if stats.height == 0:
        return None
    symbol, gap, two, _ = stats.row(0)
    return symbol, gap, two


def check_open_close(
    df: pl.DataFrame,
    files: Sequence[Path],
    spellings: Sequence[Mapping[str, str]],
    file_column: str,
) -> None:
    """Refuse bars whose open and close columns look swapped (module docstring).

    Args:
        df: validated bars sorted by (``symbol``, ``ts``), with the file index column.
        files: the files read, by file index.
        spellings: per file, canonical column name -> the file's name for it.
        file_column: the column of ``df`` holding each bar's file index.

    Raises:
        DataError: naming the file, the symbol, both columns and the ``--columns`` that swaps
            them.
    """
    found = swapped_symbol(df)
    if found is None:
        return
    symbol, gap, two = found
    f = int(df.filter(pl.col("symbol") == symbol)[file_column][0])
    o, c = (spellings[f].get(k, k) for k in ("open", "close"))
    raise DataError(
        f"{files[f]}: symbol {symbol!r}: columns '{o}' (open) and '{c}' (close) look swapped: a "
        f"bar's open is {gap:.6g} from the previous close (median) but its close only {two:.6g} "
        f"from the previous open; the file's columns may be in close,high,low,open order "
        f"(yfinance's); --columns open={c},close={o} reads them so"
    )
