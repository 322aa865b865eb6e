"""K-minute bars from finer ones, at read time (``--bar-minutes K``).

A bar's ``ts`` is its open time (the convention of every reader here): the K-minute bar
stamped ``t`` aggregates the bars with ``t <= ts < t + K`` minutes — open of the first, high
max, low min, close of the last, volume summed (``contract`` and kept columns: the last bar's)
— so it is known when its last bar closes, and nothing after it is used (causal). Buckets are
K-minute steps from the open of the symbol's trading day in its calendar (the session open:
17:00 New York for FX, 17:00 Chicago for CME, 09:30 New York for NYSE; midnight UTC for 24/7
markets), whichever bars the file holds, and never span two trading days: a session that
opens at 17:00 New York gives 17:00, 17:00 + K, ... (a bucket cut by the session's end is
shorter, not merged into the next day; bars before the open, on a calendar whose day begins
earlier, fall on the same grid, the first bucket cut at the day's start). A day the calendar
does not trade is gridded from the day's start.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from foxhunt.data.market.calendar import infer_interval, trading_date, trading_day_starts_us
from foxhunt.data.market.instruments import calendar_of
from foxhunt.data.read.validate import BAR_COLUMNS
from foxhunt.errors import DataError

if TYPE_CHECKING:
    from foxhunt.data.market.instrument import Instrument

_DAY = "__day"
_BUCKET = "__bucket"


def _check_interval(
    bars: pl.DataFrame, minutes: int, where: str, built: frozenset[str] = frozenset()
) -> None:
    """Each symbol's bars must be finer than K minutes and divide them; those ``built`` from
    prints are one-minute bars however far apart, but prints further apart than K minutes (a
    daily series of closes) are read bar for bar only at K = 1."""
    step = timedelta(minutes=minutes)
    for (sym,), g in bars.select("symbol", "ts").group_by("symbol", maintain_order=True):
        if g.height < 2:
            continue
        interval = infer_interval(g["ts"])
        if sym in built:
            if interval > step and minutes > 1:
                raise DataError(
                    f"{where}: symbol {sym!r} has prints {interval} apart, further than "
                    f"--bar-minutes {minutes}: --bar-minutes 1 reads them bar for bar"
                )
            continue
        if interval > step or step % interval:
            raise DataError(
                f"{where}: symbol {sym!r} has bars {interval} apart; --bar-minutes {minutes} "
                "needs bars that divide K minutes (a multiple of the bars' interval)"
            )


def aggregate_bars(
    bars: pl.DataFrame,
    minutes: int,
    where: str = "bars",
    instruments: Mapping[str, Instrument] | None = None,
    built: frozenset[str] = frozenset(),
) -> pl.DataFrame:
    """``bars`` (validated, sorted by symbol and ts) as ``minutes``-minute bars.

    Args:
        bars: columns ``ts symbol open high low close volume`` (+ ``contract``, kept ones).
        minutes: K.
        where: the path, for messages.
        instruments: the user's instrument table (each symbol's calendar; else its built-in
            or inferred one).
        built: symbols whose bars were built from prints (one-minute bars, whatever the gaps
            between them: :mod:`foxhunt.data.read.prints`).

    Returns:
        The K-minute bars, same columns, sorted by symbol and ts.

    Raises:
        DataError: a symbol's bars are coarser than K minutes or do not divide them.
    """
    _check_interval(bars, minutes, where, built)
    k_us = minutes * 60_000_000
    parts = []
    for (sym,), g in bars.group_by("symbol", maintain_order=True):
        cal = calendar_of(str(sym), instruments)
        g = g.with_columns(trading_date(pl.col("ts"), cal).alias(_DAY))
        # The grid runs from the trading day's session open, its first bucket cut at the
        # day's start (the roll): buckets of two days never share a stamp.
        roll, open_ = trading_day_starts_us(g[_DAY].cast(pl.Int32).to_numpy(), cal)
        t = g["ts"].dt.epoch("us").to_numpy()
        bucket = np.maximum(roll, open_ + ((t - open_) // k_us) * k_us)
        # µs since the epoch; polars reads a naive datetime cast to a zoned one as UTC
        stamp = pl.Series(_BUCKET, bucket, dtype=pl.Int64).cast(pl.Datetime("us"))
        parts.append(g.with_columns(stamp.cast(g.schema["ts"])))
    frame = (
        pl.concat(parts)
        if parts
        else bars.with_columns(pl.lit(None).alias(_DAY), pl.col("ts").alias(_BUCKET))
    )
    other = [c for c in frame.columns if c not in (*BAR_COLUMNS, _DAY, _BUCKET)]
    out = (
        frame.group_by("symbol", _DAY, _BUCKET, maintain_order=True)
        .agg(
            pl.col("open").first(),
            pl.col("high").max(),
            pl.col("low").min(),
            pl.col("close").last(),
            pl.col("volume").sum(),
            *[pl.col(c).last() for c in other],
        )
        .rename({_BUCKET: "ts"})
        .sort("symbol", "ts")
    )
    return out.select(*BAR_COLUMNS, *other)
