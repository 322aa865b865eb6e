"""Bars stamped at their end: seen at the sessions' edges, and read as their start (``--stamps``).

foxhunt's bars are stamped at their start (a 1-minute bar at 09:30 covers 09:30-09:31). Many
futures platforms stamp the end instead (TradeStation, MultiCharts, NinjaTrader, IQFeed, CQG:
the same bar at 09:31). Read as starts, every bar is an interval late: calendar features and
``--bar-minutes`` groups are off by one bar, and nothing else looks wrong.

The sessions tell them apart (:func:`stamp_fit`): start stamps put the session's first bar at
the calendar's open and its last an interval before the close; end stamps put the first an
interval after the open and the last at the close. A closing auction's bar at the close alone
(start stamps, a stock's 16:00 bar) is not enough: the opens must agree.

``--stamps end`` (:func:`to_bar_starts`) moves every intraday bar one interval earlier, the
interval inferred per symbol, or to the end of the bar before it where that is later (a short
bar: TradeStation's hourly stock bars end 10:30 ... 15:30, then 16:00 for the last half hour,
which starts at 15:30, not 15:00); daily and longer bars are dated, not stamped, and stay.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
import polars as pl

from foxhunt.data.market.calendar import infer_interval
from foxhunt.data.market.calendars import calendar_spec, sessions
from foxhunt.data.read.clock_fit import session_edges
from foxhunt.errors import DataError

STAMPS = ("start", "end")
"""What a bar's timestamp marks (``--stamps``)."""
DATED = timedelta(hours=20)
"""Bars this far apart or more are dated, not stamped (daily, weekly): never moved. The time
axis's ``DAILY`` is this."""
MIN_EDGES = 10
"""Session opens (and closes) counted before :func:`stamp_fit` says anything on shares ..."""
END_SHARE = 0.5
"""Share of the opens and of the closes that must sit where end stamps put them ..."""
START_SHARE = 0.1
"""... while at most this share sits where start stamps put them."""
FEW_EDGES = 4
"""... or, from this many of each up to :data:`MIN_EDGES`, every one where end stamps put them
and none where start stamps would: two weeks of TradeStation bars (9 opens and 9 closes inside
the file) read an interval late with verdict valid until session 46."""


@dataclass(frozen=True)
class StampFit:
    """Where the session edges sit against the calendar's opens and closes.

    Attributes:
        opens: session opens counted; ``at_open``: at the calendar's open (start stamps);
            ``after_open``: one interval after it (end stamps).
        closes: session closes counted; ``before_close``: one interval before the calendar's
            close (start stamps); ``at_close``: at it (end stamps).
    """

    opens: int
    at_open: int
    after_open: int
    closes: int
    before_close: int
    at_close: int

    @property
    def maybe_end_stamped(self) -> bool:
        """Every edge where end stamps put them and none where start stamps would, over fewer
        than :data:`FEW_EDGES` of each (a file of two or three sessions): a doubt, not a
        refusal."""
        edges = min(self.opens, self.closes)
        return 0 < edges < FEW_EDGES and (
            self.after_open,
            self.at_close,
            self.at_open,
            self.before_close,
        ) == (self.opens, self.closes, 0, 0)

    @property
    def end_stamped(self) -> bool:
        """Both edges where end stamps put them, and few where start stamps would."""
        edges = min(self.opens, self.closes)
        if FEW_EDGES <= edges < MIN_EDGES:
            return (self.after_open, self.at_close, self.at_open, self.before_close) == (
                self.opens,
                self.closes,
                0,
                0,
            )
        return (
            edges >= MIN_EDGES
            and self.after_open >= END_SHARE * self.opens
            and self.at_close >= END_SHARE * self.closes
            and self.at_open <= START_SHARE * self.opens
            and self.before_close <= START_SHARE * self.closes
        )


@functools.cache
def _sorted_edges(calendar: str) -> tuple[np.ndarray, np.ndarray]:
    """The calendar's opens and closes, each sorted (once a process: 4 ms a read before)."""
    cal = sessions(calendar)
    return np.sort(cal.opens), np.sort(cal.closes)


def stamp_fit(ts: pl.Series, interval: timedelta, calendar: str) -> StampFit | None:
    """Count ``ts``'s session edges at the calendar's opens and closes, and an interval off.

    Args:
        ts: one symbol's bar times (UTC, sorted).
        interval: the bar interval (intraday).
        calendar: the symbol's calendar name.

    Returns:
        The counts, or None for a calendar that never closes (``24x7``).
    """
    if calendar_spec(calendar).week_days == 7:
        return None
    edges = session_edges(ts, interval)
    step = int(interval / timedelta(microseconds=1))

    def at(times: pl.Series, bounds: np.ndarray, offset: int) -> int:
        """How many of ``times`` + ``offset`` are in ``bounds`` (sorted): a binary search, not
        ``np.isin``, which hashes the calendar's decades of sessions again at each call."""
        us = times.dt.epoch("us").to_numpy() + offset
        return int((np.searchsorted(bounds, us, "right") > np.searchsorted(bounds, us)).sum())

    opens = edges.filter(pl.col("open"))["t"]
    closes = edges.filter(~pl.col("open"))["t"]
    at_opens, at_closes = _sorted_edges(calendar)
    return StampFit(
        opens=opens.len(),
        at_open=at(opens, at_opens, 0),
        after_open=at(opens, at_opens, -step),
        closes=closes.len(),
        before_close=at(closes, at_closes, step),
        at_close=at(closes, at_closes, 0),
    )


def bar_start(end: pl.Expr, before: pl.Expr, interval: pl.Expr | timedelta) -> pl.Expr:
    """An end-stamped bar's start: ``interval`` before its ``end``, or the end of the bar
    ``before`` it where that is later (a bar shorter than the interval); a time repeated from
    the bar before (or none before) moves by the interval alike."""
    moved = end - interval
    return pl.when(before < end).then(pl.max_horizontal(moved, before)).otherwise(moved)


def to_bar_starts(frame: pl.DataFrame, where: str) -> pl.DataFrame:
    """Move end-stamped intraday bars to their start: each symbol's stamps one interval earlier,
    or to the stamp of the bar before where that is later (a bar shorter than the interval).

    Args:
        frame: bars (``ts``, ``symbol``), in any order.
        where: the files read, for the error.

    Raises:
        DataError: a symbol with fewer than two bar times (no interval to move them by).
    """
    shifts = {}
    for (symbol,), g in frame.select("symbol", "ts").drop_nulls().group_by("symbol"):
        times = g["ts"].unique().sort()
        if times.len() < 2:
            raise DataError(
                f"{where}: symbol {symbol!r} has one bar time: --stamps end moves bars by their "
                "interval, which one bar does not give"
            )
        interval = infer_interval(times)
        shifts[symbol] = interval if interval < DATED else timedelta(0)
    if not any(shifts.values()):
        return frame
    shift = pl.col("symbol").replace_strict(
        pl.Series(list(shifts)), pl.Series(list(shifts.values())), default=timedelta(0)
    )
    start = bar_start(pl.col("ts"), pl.col("ts").shift(1).over("symbol"), shift)
    order = "__stamps_order"
    return (
        frame.with_row_index(order)
        .sort("symbol", "ts", order, nulls_last=True)
        .with_columns(start.alias("ts"))
        .sort(order)
        .drop(order)
    )
