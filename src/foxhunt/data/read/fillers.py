"""A vendor's filler bars: flat (open = high = low = close) and without volume, where the market
is closed. Dukascopy's exports hold one for every minute (hour, day) of the weekend; read as
bars they put a quarter of the file in closed hours, and the closed-hours rule blamed the zone
or the calendar. They carry nothing and are dropped, with one warning per file.

Only files whose volume is above 0 on half their bars or more are judged: where no volume is
read (or a vendor writes 0 on every bar, as histdata does), every quiet bar would look like a
filler, and those of a file read in the wrong zone are the evidence of the zone rules.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from foxhunt.data.market.calendar import closed_time
from foxhunt.data.market.instrument import Instrument
from foxhunt.data.market.instruments import calendar_of

log = logging.getLogger(__name__)

MIN_TRADED = 0.5
"""Share of a file's bars with a volume above 0 from which its fillers are dropped."""


def filler_mask(df: pl.DataFrame, instruments: Mapping[str, Instrument] | None = None) -> pl.Expr:
    """True on a flat bar without volume in its symbol's calendar's closed hours."""
    flat = (
        (pl.col("open") == pl.col("high"))
        & (pl.col("high") == pl.col("low"))
        & (pl.col("low") == pl.col("close"))
        & (pl.col("volume") == 0)
    )
    by_calendar: dict[str, list[str]] = {}
    for sym in df["symbol"].drop_nulls().unique().sort().to_list():
        by_calendar.setdefault(calendar_of(str(sym), instruments), []).append(sym)
    closed = pl.lit(False)
    for cal, syms in by_calendar.items():
        if cal != "24x7":  # never closed
            closed = closed | (pl.col("symbol").is_in(syms) & closed_time(pl.col("ts"), cal))
    return (flat & closed).fill_null(False)


def without_fillers(
    df: pl.DataFrame,
    files: Sequence[Path],
    spellings: Sequence[Mapping[str, str]],
    file_column: str,
    instruments: Mapping[str, Instrument] | None = None,
) -> pl.DataFrame:
    """``df`` (loaded bars with the file index column) without the filler bars of the files
    with a volume column above 0 on :data:`MIN_TRADED` of their bars or more (module
    docstring), one warning per file that had some."""
    if df.height == 0:
        return df
    traded = df.group_by(file_column).agg((pl.col("volume") > 0).mean())
    judged = [
        int(f)
        for f, share in traded.iter_rows()
        if share is not None and share >= MIN_TRADED and "volume" in spellings[int(f)]
    ]
    if not judged:
        return df
    fill = filler_mask(df, instruments) & pl.col(file_column).is_in(judged)
    counts = df.filter(fill).group_by(file_column).agg(pl.len(), pl.col("ts").min())
    if counts.height == 0:
        return df
    for f, n, first in counts.sort(file_column).iter_rows():
        log.warning(
            "%d flat bars without volume in closed hours in %s (a vendor's fillers, such as "
            "Dukascopy's weekends; first: %s): not bars, dropped",
            n,
            files[int(f)],
            first,
        )
    return df.filter(~fill)
