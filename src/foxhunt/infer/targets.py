"""What each forecast row is about: the target bar's time and, where known, its realised value.

A forecast made at origin ``t`` for horizon ``h`` is about the ``h``-th bar after ``t`` in the
bars, the bar the model's target is computed from (``shift(-h)`` per symbol,
:mod:`foxhunt.data.features.targets`) and ``evaluate`` scores: where the bars hold it, its time
and close. Beyond the last bar (the future) the target is the bar the instrument's calendar
schedules (:func:`foxhunt.data.market.calendar.project_bar_times`, the schedule the model's
decoder inputs describe): the next trading bars after the last one, skipping halts, weekends and
holidays, and the realised value is null. Until session 44 every row took the calendar's time
and the close at exactly that time: bars off the calendar's schedule (4-hour bars on another
grid, gold's daily break on the FX calendar, a vendor's bar on a holiday) put an h-bar forecast
beside an (h-1)-bar realised value, or none.

Past the last bar the calendar's times are put on the symbol's own grid (:func:`on_grid`) when
its recent intraday bars all share one phase of the interval: 4-hour FX bars on a UTC grid
(Sunday 20:00, then 00:00, 04:00 ...) were given 22:00, 02:00 ... after a weekend (the FX week
opens at 22:00 UTC), times no bar of the file would ever have. The model's decoder inputs keep
the calendar's times, as in training.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

import numpy as np
import polars as pl

from foxhunt.data.market.calendar import (
    infer_interval,
    project_bar_times,
    project_bar_times_us,
)
from foxhunt.data.market.calendars import CALENDARS, DEFAULT_CALENDAR

UTC_US = pl.Datetime("us", "UTC")
GRID_BARS = 64
"""A symbol's last bars that must share one phase of the interval for :func:`on_grid`."""
_MIN_GRID_BARS = 8
_DAY_US = 86_400_000_000


def on_grid(
    future: np.ndarray, ts: np.ndarray, interval_us: int, zone: str | None = None
) -> np.ndarray:
    """The calendar's future bar times ``future`` put on the grid of the symbol's bars ``ts``.

    The grid is the one phase of the interval the last :data:`GRID_BARS` bars (at least 8) of
    an intraday symbol share, in UTC (4-hour FX bars at 00:00, 04:00 ... UTC) or on the wall
    clock of the calendar's ``zone`` (CME's 4-hour bars from 17:00 Chicago, which move by an
    hour in UTC at daylight saving). A future time is kept where it is on the grid, else it
    becomes the start of the grid bar holding it (a session opening at 22:00 falls in the
    20:00-24:00 bar of a 4-hour UTC grid), each at least one interval after the one before and
    after the last bar. Where the last bars share a phase in both frames (no daylight-saving
    change among them) and the two frames put a time apart (a change since the last bar), the
    frame in which all the symbol's bars keep one phase decides; with no such frame the
    calendar's time stays. Bars of several phases in both frames (an hourly 09:30 first bar,
    then 10:00, 11:00 ...), too few bars, and daily or longer bars keep the calendar's times.

    Args:
        future: (H,) int64 µs, the calendar's next bar times after ``ts[-1]``.
        ts: The symbol's bar times, µs UTC, ascending.
        interval_us: The symbol's bar interval in µs.
        zone: The calendar's zone (None: UTC only).

    Returns:
        (H,) int64 µs.
    """
    recent = ts[-GRID_BARS:]
    if interval_us >= _DAY_US or len(recent) < _MIN_GRID_BARS:
        return future

    def wall(t: np.ndarray) -> np.ndarray:  # µs on the zone's clock
        utc = pl.Series(t).cast(UTC_US)
        return utc.dt.convert_time_zone(zone).dt.replace_time_zone(None).dt.epoch("us").to_numpy()  # type: ignore[arg-type]

    def phase(t: np.ndarray) -> int | None:  # the one phase of t, or None
        p = t % interval_us
        return int(p[0]) if (p == p[0]).all() else None

    def snap(t: int, p: int) -> int:  # the start of the grid bar holding t
        return t - (t - p) % interval_us

    utc, local = phase(recent), phase(wall(recent)) if zone else None
    if utc is None and local is None:
        return future
    out = future.copy()
    clock = wall(future) if zone else future
    by_history: int | None = None  # 0: UTC, 1: the clock, -1: neither (computed when needed)
    for k in range(len(out)):
        in_utc = None if utc is None else snap(int(future[k]), utc)
        in_clock = (
            None if local is None else int(future[k]) - (int(clock[k]) - snap(int(clock[k]), local))
        )
        if in_utc is None or in_clock is None or in_utc == in_clock:
            out[k] = in_utc if in_clock is None else in_clock
            continue
        if by_history is None:
            whole = [phase(ts) is not None, phase(wall(ts)) is not None]
            by_history = whole.index(True) if whole.count(True) == 1 else -1
        out[k] = (in_utc, in_clock)[by_history] if by_history >= 0 else future[k]
    prev = int(ts[-1])
    for k in range(len(out)):  # never before the bar before it (a break shorter than a bar)
        out[k] = prev = max(int(out[k]), prev + interval_us)
    return out


def forecast_targets(
    bars: pl.DataFrame,
    origins: pl.DataFrame,
    horizon: int,
    calendars: Mapping[str, str] | None = None,
) -> pl.DataFrame:
    """Target time and realised close of every origin x horizon, in the origins' order.

    Args:
        bars: Validated bars (``symbol``, ``ts``, ``close``), each symbol's rows in time order;
            each symbol's bar interval is inferred from them.
        origins: ``symbol`` and ``ts`` (UTC) of each forecast origin (``WindowDataset.origins``),
            each a bar of ``bars``.
        horizon: H.
        calendars: symbol -> calendar name (missing: ``globex``), as the model's windows used.

    Returns:
        ``len(origins) * H`` rows, window-major then horizon: ``target_ts`` (UTC) and
        ``realised_close`` (Float64, null past the last bar).
    """
    calendars = calendars or {}
    indexed = origins.select("symbol", pl.col("ts").cast(UTC_US)).with_row_index("__w")
    parts = []
    steps = np.arange(1, horizon + 1)
    for (sym,), group in indexed.group_by("symbol", maintain_order=True):
        mine = bars.filter(pl.col("symbol") == sym)
        times = mine["ts"].cast(UTC_US)
        ts = times.dt.epoch("us").to_numpy()
        close = mine["close"].cast(pl.Float64).to_numpy()
        origin = group["ts"].dt.epoch("us").to_numpy()
        cal = calendars.get(str(sym), DEFAULT_CALENDAR)
        pos = np.searchsorted(ts, origin)
        if not (pos < len(ts)).all() or not (ts[np.minimum(pos, len(ts) - 1)] == origin).all():
            raise ValueError(f"forecast origins of {sym!r} that are not bars of it")
        interval = infer_interval(times)
        ahead = project_bar_times(times.tail(1), horizon, interval, calendar=cal)
        future = np.array([ahead[c].dt.epoch("us")[0] for c in ahead.columns], np.int64)
        zone = CALENDARS[cal].tz if cal in CALENDARS else None
        future = on_grid(future, ts, interval // dt.timedelta(microseconds=1), zone)
        idx = pos[:, None] + steps[None, :]  # (W, H) the target bars' rows
        held = idx < len(ts)
        inside = np.minimum(idx, len(ts) - 1)
        target = np.where(held, ts[inside], future[np.maximum(idx - len(ts), 0)])
        realised = np.where(held, close[inside], np.nan)
        parts.append(
            pl.DataFrame(
                {
                    "__w": np.repeat(group["__w"].to_numpy(), horizon),
                    "target_ts": pl.Series(target.reshape(-1)).cast(UTC_US),
                    "realised_close": pl.Series(realised.reshape(-1)).fill_nan(None),
                }
            )
        )
    if not parts:
        return pl.DataFrame(schema={"target_ts": UTC_US, "realised_close": pl.Float64})
    return pl.concat(parts).sort("__w", maintain_order=True).select("target_ts", "realised_close")


def scheduled_targets(
    frame: pl.DataFrame, interval: dt.timedelta | None, calendars: Mapping[str, str]
) -> pl.Series | None:
    """The target time of each row of a live forecast (``symbol``, ``origin_ts``,
    ``horizon``): the horizon-th scheduled bar after its origin on the symbol's calendar, the
    times the decoder's known inputs were built on (:func:`project_bar_times`); None for a run
    that records no bar interval. Served forecasts carried none until session 54: a client
    could not see that GBPUSD's h = 2 from Friday 21:58 is Sunday 22:00."""
    if interval is None or frame.height == 0:
        return None
    step_us = interval // dt.timedelta(microseconds=1)
    origin = frame["origin_ts"].cast(UTC_US).dt.epoch("us").to_numpy()
    horizon = frame["horizon"].to_numpy().astype(np.int64)
    target = np.empty(frame.height, np.int64)
    symbols = frame["symbol"].to_numpy()
    for sym in np.unique(symbols):  # the live path: numpy, no frame of step columns
        rows = np.flatnonzero(symbols == sym)
        starts, at = np.unique(origin[rows], return_inverse=True)
        cal = calendars.get(str(sym), DEFAULT_CALENDAR)
        ahead = project_bar_times_us(starts, int(horizon[rows].max()), step_us, calendar=cal)
        target[rows] = ahead[at, horizon[rows] - 1]
    return pl.Series("target_ts", target).cast(UTC_US)
