"""An open or close a tick outside its bar's high-low range: a vendor's rounding, mended.

Vendors that round each price on its own (adjusted daily bars, a feed's last trade stamped
after the high was sent) write bars whose open or close lies a tick above the high or below the
low. Refused, such a file could not be read at all (no flag widens a bar). A slip of at most
one tick of the symbol (the smallest price step in its other bars, :func:`infer_tick_size`:
the slipped price is no step of the grid) or one part in a million of the price is mended:
the high and low widen to hold the open and close, one warning per file. A larger slip is a
bad bar, refused by the validation as before.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from foxhunt.data.market.instruments import infer_tick_size

log = logging.getLogger(__name__)

RELATIVE = 1e-6
"""A slip this share of the price or less is mended whatever the tick (float noise)."""


def _slip() -> pl.Expr:
    """How far the open or close lies outside the high-low range (> 0: outside)."""
    top, bottom = pl.max_horizontal("open", "close"), pl.min_horizontal("open", "close")
    return pl.max_horizontal(top - pl.col("high"), pl.col("low") - bottom)


def with_slips_mended(
    df: pl.DataFrame, files: Sequence[Path], file_column: str, row_column: str
) -> pl.DataFrame:
    """``df`` (loaded bars with their file index and row columns) with every slip of a tick
    or less mended (module docstring), one warning per file that had some."""
    slip = _slip()
    slipped = df.filter(slip > 0)
    if slipped.height == 0:
        return df
    ticks = {}  # each symbol's price step, from its bars that do not slip (a slip is no step)
    for sym in slipped["symbol"].drop_nulls().unique().to_list():
        kept = df.filter((pl.col("symbol") == sym) & (slip <= 0).fill_null(True))
        prices = kept.select("open", "high", "low", "close")
        ticks[sym] = infer_tick_size(prices.to_numpy().reshape(-1)) or 0.0
    tick = pl.col("symbol").replace_strict(ticks, default=0.0, return_dtype=pl.Float64)
    tolerance = pl.max_horizontal(tick, RELATIVE * pl.col("high").abs()) * (1 + 1e-9)
    mend = ((slip > 0) & (slip <= tolerance)).fill_null(False)
    counts = df.filter(mend).group_by(file_column).agg(pl.len(), pl.col(row_column).first())
    if counts.height == 0:
        return df
    for f, n, row in counts.sort(file_column).iter_rows():
        log.warning(
            "%d bar%s of %s ha%s an open or close at most a tick outside the high-low range (a "
            "vendor's rounding; first: row %s): the high and low widened to hold them",
            n,
            "s" if n > 1 else "",
            files[int(f)],
            "ve" if n > 1 else "s",
            row,
        )
    return df.with_columns(
        high=pl.when(mend).then(pl.max_horizontal("high", "open", "close")).otherwise("high"),
        low=pl.when(mend).then(pl.min_horizontal("low", "open", "close")).otherwise("low"),
    )
