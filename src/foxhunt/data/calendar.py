"""The CME Globex calendar and the known-future (calendar/session) features.

Globex equity, energy, metal, rate and FX futures trade Sunday 17:00 to Friday 16:00
America/Chicago, with a daily maintenance halt 16:00-17:00 CT and closed weekends. A *trading
session* runs from 17:00 CT to 16:00 CT the next day and is named after the day it ends on (the
session that opens Sunday 17:00 is Monday's). Exchange holidays are not modelled: a future bar
time is a time the exchange would normally be open.

Known-future features depend on the timestamp alone, so they can be computed for bars that have
not happened yet (the decoder part of a window at inference).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import polars as pl

EXCHANGE_TZ = "America/Chicago"
"""Time zone of the Globex calendar."""
SESSION_OPEN = time(17, 0)
"""Session open (and end of the daily halt), CT."""
SESSION_CLOSE = time(16, 0)
"""Session close (start of the daily halt), CT."""
SESSION_MINUTES = 23 * 60
"""Length of a full trading session in minutes (17:00 -> 16:00 next day)."""

_OPEN_MIN = SESSION_OPEN.hour * 60  # 1020
_CLOSE_MIN = SESSION_CLOSE.hour * 60  # 960
_CT = ZoneInfo(EXCHANGE_TZ)

KNOWN_FEATURES: tuple[str, ...] = (
    "known__tod_sin",
    "known__tod_cos",
    "known__dow_sin",
    "known__dow_cos",
    "known__session_progress",
    "known__is_asia",
    "known__is_europe",
    "known__is_us",
    "known__is_us_open_hour",
    "known__days_to_expiry",
)
"""The 10 known-future feature names, in model input order."""


# --- polars expressions ----------------------------------------------------------------------


def exchange_time(ts: pl.Expr) -> pl.Expr:
    """``ts`` (UTC) converted to exchange (CT) wall-clock time."""
    return ts.dt.convert_time_zone(EXCHANGE_TZ)


def clock_minutes(ts: pl.Expr) -> pl.Expr:
    """Minutes since CT midnight, fractional (0 <= m < 1440)."""
    ct = exchange_time(ts)
    return (
        ct.dt.hour().cast(pl.Float64) * 60.0
        + ct.dt.minute().cast(pl.Float64)
        + ct.dt.second().cast(pl.Float64) / 60.0
    )


def session_minutes(ts: pl.Expr) -> pl.Expr:
    """Minutes since the most recent 17:00 CT session open (0 <= m < 1440; >= 1380 in the halt)."""
    return (clock_minutes(ts) - _OPEN_MIN) % 1440.0


def trading_date(ts: pl.Expr) -> pl.Expr:
    """The trading session's date: the CT calendar date, plus one day from 17:00 CT on."""
    ct = exchange_time(ts)
    day = ct.dt.date()
    return pl.when(ct.dt.hour() >= SESSION_OPEN.hour).then(day.dt.offset_by("1d")).otherwise(day)


def closed_time(ts: pl.Expr) -> pl.Expr:
    """True where Globex is normally closed at ``ts``: daily halt, Friday close to Sunday open."""
    clock = clock_minutes(ts)
    wd = exchange_time(ts).dt.weekday()  # Mon=1 .. Sun=7
    halt = (clock >= _CLOSE_MIN) & (clock < _OPEN_MIN)
    return (
        halt | (wd == 6) | ((wd == 7) & (clock < _OPEN_MIN)) | ((wd == 5) & (clock >= _CLOSE_MIN))
    )


def _third_friday(year: pl.Expr, month: pl.Expr) -> pl.Expr:
    first = pl.date(year, month, 1)
    first_friday = 1 + (5 - first.dt.weekday().cast(pl.Int32)) % 7  # weekday: Mon=1 .. Sun=7
    return pl.date(year, month, first_friday + 14)


def days_to_quarterly_expiry(day: pl.Expr) -> pl.Expr:
    """Days from ``day`` (a Date) to the next quarterly (Mar/Jun/Sep/Dec) third Friday, >= 0."""
    year = day.dt.year().cast(pl.Int32)
    month = day.dt.month().cast(pl.Int32)
    q_month = ((month - 1) // 3 + 1) * 3
    this_q = _third_friday(year, q_month)
    next_year = pl.when(q_month == 12).then(year + 1).otherwise(year)
    next_month = pl.when(q_month == 12).then(3).otherwise(q_month + 3)
    expiry = pl.when(day <= this_q).then(this_q).otherwise(_third_friday(next_year, next_month))
    return (expiry - day).dt.total_days().cast(pl.Float64)


def known_features(ts: pl.Expr) -> list[pl.Expr]:
    """The 10 known-future features of a bar, from its (UTC) timestamp alone.

    Args:
        ts: a ``Datetime(time_zone="UTC")`` expression (the bar's open time).

    Returns:
        Ten ``Float64`` expressions aliased with the names in :data:`KNOWN_FEATURES`:
        time of day (sin/cos of CT clock time, 24 h period), day of week (sin/cos of the trading
        day, 5-day period), session progress (minutes since 17:00 CT / 1380), session flags
        (Asia 17:00-02:00, Europe 02:00-08:30, US 08:30-15:00 CT, first US hour 08:30-09:30) and
        days to the next quarterly expiry (third Friday of Mar/Jun/Sep/Dec) / 91.
    """
    clock = clock_minutes(ts)
    tod = clock * (2.0 * math.pi / 1440.0)
    weekday = trading_date(ts).dt.weekday().cast(pl.Float64) - 1.0  # Mon=0 .. Fri=4
    dow = weekday * (2.0 * math.pi / 5.0)

    def flag(lo: float, hi: float) -> pl.Expr:
        return ((clock >= lo) & (clock < hi)).cast(pl.Float64)

    asia = ((clock >= _OPEN_MIN) | (clock < 120.0)).cast(pl.Float64)
    exprs = [
        tod.sin(),
        tod.cos(),
        dow.sin(),
        dow.cos(),
        session_minutes(ts) / float(SESSION_MINUTES),
        asia,
        flag(120.0, 510.0),
        flag(510.0, 900.0),
        flag(510.0, 570.0),
        days_to_quarterly_expiry(trading_date(ts)) / 91.0,
    ]
    return [e.alias(name) for e, name in zip(exprs, KNOWN_FEATURES, strict=True)]


# --- projecting bar times ------------------------------------------------------------------


def next_session_open(ts: pl.Expr) -> pl.Expr:
    """The first 17:00 CT session open strictly after ``ts`` (UTC in, UTC out).

    Sessions open Sunday to Thursday evenings; 17:00 CT is never inside a DST change.
    """
    ct = exchange_time(ts)
    date = ct.dt.date()
    date = (
        pl.when(clock_minutes(ts) >= float(_OPEN_MIN)).then(date.dt.offset_by("1d")).otherwise(date)
    )
    wd = date.dt.weekday()  # Mon=1 .. Sun=7; Friday and Saturday evenings have no open
    skip = pl.when(wd == 5).then(2).when(wd == 6).then(1).otherwise(0)
    day = date + pl.duration(days=skip)
    wall = day.cast(pl.Datetime("us")).dt.offset_by(f"{SESSION_OPEN.hour}h")
    return wall.dt.replace_time_zone(EXCHANGE_TZ).dt.convert_time_zone("UTC")


def next_bar_time(ts: pl.Expr, interval: timedelta) -> pl.Expr:
    """The scheduled open time of the bar after a bar opening at ``ts`` (UTC).

    Intraday bars (``interval`` under a day) step by ``interval`` while Globex is open; a step
    that lands in the daily halt or the weekend goes to the next 17:00 CT session open. Daily
    (or longer) bars keep their clock time and skip to the next step whose trading session is a
    weekday, so a daily bar stamped at the cash close stays at the cash close. Holidays are not
    modelled: this is the exchange's normal schedule.
    """
    step = ts + pl.lit(interval)
    if interval >= timedelta(days=1):
        for _ in range(3):  # at most a weekend to skip (each skip moves >= 1 day)
            weekend = trading_date(step).dt.weekday() >= 6
            step = pl.when(weekend).then(step + pl.lit(interval)).otherwise(step)
        return step
    return pl.when(closed_time(step)).then(next_session_open(ts)).otherwise(step)


def project_bar_times(last_ts: pl.Series, n: int, interval: timedelta) -> pl.DataFrame:
    """The next ``n`` scheduled bar open times after each of ``last_ts``.

    The one definition of "future bar times" in foxhunt: the decoder's known-future inputs of
    every window (training, evaluation, ``predict``, the streaming ``Forecaster``) come from
    these times, never from the bars that actually followed, so what a window sees does not
    depend on data that was not yet known at its origin (a holiday, a gap in the data).

    Args:
        last_ts: Bar open times, ``Datetime(time_zone="UTC")`` (or naive meaning UTC).
        n: Steps to project.
        interval: The bar interval (see :func:`infer_interval`); must be positive.

    Returns:
        ``len(last_ts)`` rows, columns ``step1 .. step{n}`` (UTC datetimes, µs).
    """
    if interval <= timedelta(0):
        raise ValueError(f"interval must be positive, got {interval}")
    ts = last_ts.cast(pl.Datetime("us", last_ts.dtype.time_zone or "UTC"))  # type: ignore[union-attr]
    frame = pl.DataFrame({"step0": ts.dt.convert_time_zone("UTC")})
    for k in range(1, n + 1):
        frame = frame.with_columns(
            next_bar_time(pl.col(f"step{k - 1}"), interval).alias(f"step{k}")
        )
    return frame.drop("step0")


def future_timestamps(last_ts: datetime, n: int, interval: timedelta) -> list[datetime]:
    """The next ``n`` scheduled bar open times after ``last_ts`` (see :func:`project_bar_times`).

    Args:
        last_ts: The last observed bar's open time (tz-aware, or naive meaning UTC).
        n: How many future bar times.
        interval: The bar interval.

    Returns:
        ``n`` tz-aware UTC datetimes, strictly increasing, all after ``last_ts``.
    """
    t = last_ts if last_ts.tzinfo is not None else last_ts.replace(tzinfo=UTC)
    row = project_bar_times(pl.Series([t.astimezone(UTC)]), n, interval).row(0)
    return list(row)


def is_open(t: datetime) -> bool:
    """Whether Globex is normally open at instant ``t`` (tz-aware; naive means UTC)."""
    t = t if t.tzinfo is not None else t.replace(tzinfo=UTC)
    return not pl.select(closed_time(pl.lit(t.astimezone(UTC)))).item()


def session_bar_times(trading_day: datetime | str, interval: timedelta) -> list[datetime]:
    """Open times (UTC) of every bar of one full trading session.

    Args:
        trading_day: the session's date (a Monday..Friday); the session opens 17:00 CT the
            evening before and closes 16:00 CT on this day.
        interval: bar length; bars start at the open and every ``interval`` after, while the
            whole bar fits before the close.

    Returns:
        The bar open times, tz-aware UTC.
    """
    day = datetime.fromisoformat(trading_day) if isinstance(trading_day, str) else trading_day
    prev = day.date() - timedelta(days=1)
    start = datetime.combine(prev, SESSION_OPEN, tzinfo=_CT).astimezone(UTC)
    n = int(timedelta(minutes=SESSION_MINUTES) / interval)
    return [start + k * interval for k in range(n)]


def infer_interval(ts: pl.Series | Sequence[datetime]) -> timedelta:
    """The bar interval: the most common positive gap between consecutive timestamps.

    Args:
        ts: one symbol's bar times, sorted.

    Returns:
        The modal positive difference (ties go to the smaller one).

    Raises:
        ValueError: fewer than two distinct timestamps.
    """
    s = ts if isinstance(ts, pl.Series) else pl.Series(list(ts))
    diffs = s.diff().drop_nulls()
    diffs = diffs.filter(diffs > timedelta(0))
    if diffs.len() == 0:
        raise ValueError("need at least two distinct timestamps to infer the bar interval")
    counts = diffs.value_counts(sort=False)
    name = diffs.name
    counts = counts.sort(["count", name], descending=[True, False])
    return counts[name][0]
