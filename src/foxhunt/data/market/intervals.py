"""Bar intervals of several symbols: which symbols' bars are of another interval.

A model's horizon counts bars, so every symbol it trains on or forecasts must be of one
interval: training refuses symbols of different intervals (:func:`refuse_mixed_intervals`), and
``evaluate``/``predict`` refuse a symbol of another interval than the run's
(:mod:`foxhunt.infer.bar_interval`). Each symbol is judged on its own gaps.
"""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from foxhunt.data.market.calendar import infer_interval
from foxhunt.errors import DataError

__all__ = [
    "MIN_GAPS",
    "TRAINED_SHARE",
    "aggregating_minutes",
    "describe_interval",
    "refuse_mixed_intervals",
    "symbols_off_interval",
]

MIN_GAPS = 20
"""A symbol's gaps between bars before its interval is judged (two bars across a weekend or a
session break say nothing)."""
TRAINED_SHARE = 0.1
"""Share of the gaps at the trained interval above which bars are taken as the trained kind
(illiquid 1-minute bars skip minutes, but one gap in ten or more is still one minute)."""


def describe_interval(interval: timedelta) -> str:
    """``1-minute``, ``15-minute``, ``1-hour``, ``1-day``, ``30-second``."""
    seconds = interval.total_seconds()
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}-{unit}"
    return f"{seconds:g}-second"


def symbols_off_interval(frame: pl.DataFrame, interval: timedelta) -> list[tuple[str, timedelta]]:
    """(symbol, its own interval) of each symbol of ``frame`` (``symbol``, ``ts``) whose bars
    are of another interval than ``interval``, in the frame's order of symbols: judged on
    :data:`MIN_GAPS` gaps or more, under :data:`TRAINED_SHARE` of them at ``interval`` (an
    illiquid series of the same bars skips bars, but one gap in ten is still the interval), and
    its most common gap (:func:`~foxhunt.data.market.calendar.infer_interval`) another."""
    gaps = (
        frame.select("symbol", "ts")
        .with_columns(pl.col("ts").sort().diff().over("symbol").alias("gap"))
        .filter(pl.col("gap") > timedelta(0))
        .group_by("symbol", maintain_order=True)
        .agg(pl.len().alias("n"), (pl.col("gap") == interval).mean().alias("share"))
        .filter((pl.col("n") >= MIN_GAPS) & (pl.col("share") < TRAINED_SHARE))
    )
    out = []
    for sym in gaps["symbol"].to_list():
        own = infer_interval(frame.filter(pl.col("symbol") == sym)["ts"].sort())
        if own != interval:
            out.append((str(sym), own))
    return out


def aggregating_minutes(fine: timedelta, coarse: timedelta) -> int | None:
    """The ``--bar-minutes K`` that turns ``fine`` bars into ``coarse`` ones: K = the coarse
    interval in minutes, when it is a whole number of minutes under a day and a whole multiple
    of ``fine``; else None."""
    ratio = coarse / fine
    whole = coarse < timedelta(days=1) and coarse.total_seconds() % 60 == 0
    return (
        int(coarse.total_seconds() // 60) if ratio > 1 and ratio == int(ratio) and whole else None
    )


def refuse_mixed_intervals(frame: pl.DataFrame, interval: timedelta | None, bars: object) -> None:
    """Refuse training bars whose symbols are of different intervals (``interval``: the most
    common of the symbols' own, :func:`~foxhunt.data.market.calendar.bars_interval`): the
    horizon counts bars, so the model would learn an hour ahead from one symbol and 15 minutes
    from another, under one ``bar_interval_s``.

    Raises:
        DataError: naming a symbol of another interval and the remedy.
    """
    if interval is None:
        return
    off = symbols_off_interval(frame, interval)
    if not off:
        return
    sym, got = off[0]
    k = aggregating_minutes(min(got, interval), max(got, interval))
    hint = f"--bar-minutes {k} aggregates them to one interval, or " if k else ""
    others = f" and {len(off) - 1} more" if len(off) > 1 else ""
    raise DataError(
        f"{bars}: symbols of different bar intervals: {sym}{others} holds "
        f"{describe_interval(got)} bars, the others mostly {describe_interval(interval)}: "
        f"{hint}train them apart"
    )
