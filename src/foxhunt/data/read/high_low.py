"""A high below its low: the two written the other way round, in one row (a vendor's slip) or
in every row (a header naming the columns the wrong way). The refusal of the row
(:mod:`foxhunt.data.read.validate`) said only ``high < max(open, close)``; this says which."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from foxhunt.data.read.bars import LoadedBars

_SWAPPED = (
    (pl.col("high") < pl.col("low"))
    & (pl.col("low") >= pl.max_horizontal("open", "close"))
    & (pl.col("high") <= pl.min_horizontal("open", "close"))
)
"""A bar whose high and low, read the other way round, bound its open and close."""


def swapped_hint(
    df: pl.DataFrame, hit: Mapping[str, object], loaded: LoadedBars, file_column: str
) -> str:
    """What the refusal of ``hit`` (a bar of loaded ``df``) adds when its high and low read the
    other way round make a valid bar (the high below the open and close, the low above them):
    the rows of its file so written, and for all of them the ``--columns`` that read the file's
    two columns the other way; else ``""`` (a high below its low for another reason, a
    headerless file in IQFeed's order read in the usual one, is no swap)."""
    prices = ("open", "high", "low", "close")
    o, high, low, c = (float(hit[k]) for k in prices)  # type: ignore[arg-type]
    if not (high < low and low >= max(o, c) and high <= min(o, c)):  # as _SWAPPED
        return ""
    f = int(hit[file_column])  # type: ignore[call-overload]
    mine = df.filter((pl.col(file_column) == f) & (pl.col("high") != pl.col("low")))
    below = mine.select(_SWAPPED.sum()).item()
    if below >= 2 and below == mine.height:  # every bar with a range: the columns themselves
        spell = loaded.spellings[f]
        hi, lo = spell.get("high", "high"), spell.get("low", "low")
        return (
            f" (and below its low {low}, as the high is on every bar of the file: its columns "
            f"read as high ({hi!r}) and low ({lo!r}) hold each other's values; "
            f"--columns {shlex.quote(f'high={lo},low={hi}')} reads them)"
        )
    rows = "this row" if below == 1 else f"{below} rows of the file, this one among them"
    return f" (and below its low {low}: high and low written the other way round in {rows}?)"
