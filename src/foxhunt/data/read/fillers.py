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

from foxhunt.data.market.calendar import closed_day, closed_time, infer_interval
from foxhunt.data.market.instrument import Instrument
from foxhunt.data.market.instruments import calendar_of
from foxhunt.data.read.time_axis import DAILY, WEEKLY

log = logging.getLogger(__name__)

MIN_TRADED = 0.5
"""Share of a file's bars with a volume above 0 from which its fillers are dropped."""


def _spacing(ts: pl.Series) -> str:
    """``intraday``, ``daily`` or ``weekly`` (a week's or a month's bars, or one bar alone:
    not judged) by the symbol's bar interval."""
    try:
        interval = infer_interval(ts.sort())
    except ValueError:  # one time
        return "weekly"
    return "intraday" if interval < DAILY else "daily" if interval < WEEKLY else "weekly"


def filler_mask(df: pl.DataFrame, instruments: Mapping[str, Instrument] | None = None) -> pl.Expr:
    """True on a flat bar without volume where its symbol's calendar is closed: in closed hours,
    or for daily bars on a day it does not trade (a daily bar's time of day is a convention:
    until session 54 a halted stock's day at 00:00 UTC was closed hours, and dropped)."""
    flat = (
        (pl.col("open") == pl.col("high"))
        & (pl.col("high") == pl.col("low"))
        & (pl.col("low") == pl.col("close"))
        & (pl.col("volume") == 0)
    )
    groups: dict[tuple[str, str], list[str]] = {}
    for (sym,), g in df.select("symbol", "ts").drop_nulls().group_by("symbol", maintain_order=True):
        key = (calendar_of(str(sym), instruments), _spacing(g["ts"]))
        groups.setdefault(key, []).append(str(sym))
    closed = pl.lit(False)
    for (cal, spacing), syms in sorted(groups.items()):
        if cal == "24x7" or spacing == "weekly":  # never closed; stamped by convention
            continue
        shut = closed_time if spacing == "intraday" else closed_day
        closed = closed | (pl.col("symbol").is_in(syms) & shut(pl.col("ts"), cal))
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
