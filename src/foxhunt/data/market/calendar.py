"""Calendar features and bar-time projection, per trading calendar.

Every function takes ``calendar=`` (a name of :data:`foxhunt.data.market.calendars.CALENDARS`, chosen
per instrument by the instrument table). The default, ``globex``, is the CME Globex weekly rule
without holidays: Sunday 17:00 to Friday 16:00 America/Chicago with a daily 16:00-17:00 CT
halt; a *trading session* runs from 17:00 CT to 16:00 CT the next day and is named after the
day it ends on (the session that opens Sunday 17:00 is Monday's). The library calendars
(``cme_equity``, ``cme_energy``, ``xnys``, ...) add holidays and early closes; ``fx_24x5`` and
``24x7`` are spot FX and crypto.

Known-future features depend on the timestamp (and the calendar) alone, so they can be
computed for bars that have not happened yet (the decoder part of a window at inference).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl

from foxhunt.data.market.calendars import (
    DEFAULT_CALENDAR,
    Sessions,
    calendar_spec,
    closed_share,
    locate,
    sessions,
)

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
_DAY_US = 86_400_000_000
_WEEK_US = 7 * _DAY_US

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


def exchange_time(ts: pl.Expr, calendar: str = DEFAULT_CALENDAR) -> pl.Expr:
    """``ts`` (UTC) converted to the calendar's exchange wall-clock time (CT for Globex)."""
    return ts.dt.convert_time_zone(calendar_spec(calendar).tz)


def clock_minutes(ts: pl.Expr, calendar: str = DEFAULT_CALENDAR) -> pl.Expr:
    """Minutes since exchange-local midnight, fractional (0 <= m < 1440)."""
    local = exchange_time(ts, calendar)
    return (
        local.dt.hour().cast(pl.Float64) * 60.0
        + local.dt.minute().cast(pl.Float64)
        + local.dt.second().cast(pl.Float64) / 60.0
    )


def session_minutes(ts: pl.Expr) -> pl.Expr:
    """Minutes since the most recent 17:00 CT session open (0 <= m < 1440; >= 1380 in the halt)."""
    return (clock_minutes(ts) - _OPEN_MIN) % 1440.0


def trading_date(ts: pl.Expr, calendar: str = DEFAULT_CALENDAR) -> pl.Expr:
    """The trading day of ``ts``: the exchange-local date, plus one day from the calendar's
    roll time on (17:00 CT for Globex: the session that opens Sunday evening is Monday's)."""
    spec = calendar_spec(calendar)
    local = exchange_time(ts, calendar)
    day = local.dt.date()
    if spec.roll == time(0):
        return day
    after = local.dt.time() >= pl.lit(spec.roll)
    return pl.when(after).then(day.dt.offset_by("1d")).otherwise(day)


def trading_day_starts_us(
    days: np.ndarray, calendar: str = DEFAULT_CALENDAR
) -> tuple[np.ndarray, np.ndarray]:
    """Where each trading day begins and where its first session opens, in µs UTC.

    Args:
        days: trading days (days since the epoch, as :func:`trading_date` gives them).
        calendar: the calendar's name.

    Returns:
        ``(roll, open)``: the instant the day begins (the calendar's roll time on the day
        before, or midnight where the roll is 00:00: every timestamp of the day is at or after
        it) and its first session's open; a day the calendar does not trade (a holiday in the
        bars, a day outside :data:`~foxhunt.data.market.calendars.SPAN`) opens at its roll.
    """
    spec = calendar_spec(calendar)
    days = np.asarray(days, dtype=np.int64)
    before = 0 if spec.roll == time(0) else 1
    roll_s = spec.roll.hour * 3600 + spec.roll.minute * 60 + spec.roll.second
    local = (days - before) * _DAY_US + roll_s * 1_000_000
    naive = pl.Series(local, dtype=pl.Int64).cast(pl.Datetime("us"))
    zoned = naive.dt.replace_time_zone(spec.tz, ambiguous="earliest", non_existent="null")
    roll = zoned.dt.epoch("us").fill_null(naive.dt.epoch("us")).to_numpy().astype(np.int64)
    cal = sessions(calendar)
    known, first = np.unique(cal.day, return_index=True)
    if known.size == 0:
        return roll, roll.copy()
    i = np.minimum(np.searchsorted(known, days), known.size - 1)
    traded = known[i] == days
    return roll, np.where(traded, cal.day_open[first][i], roll)


def _epoch_us(ts: pl.Expr) -> pl.Expr:
    return ts.dt.epoch("us")


def _session_index(ts: pl.Expr, cal: Sessions) -> pl.Expr:
    """Index of the first session interval that closes after ``ts`` (clipped to the last)."""
    closes = pl.lit(pl.Series(cal.closes))
    return closes.search_sorted(_epoch_us(ts), side="right").clip(upper_bound=cal.closes.size - 1)


def closed_time(ts: pl.Expr, calendar: str = DEFAULT_CALENDAR) -> pl.Expr:
    """True where the calendar has no session at ``ts`` (halts, weekends, holidays, breaks)."""
    cal = sessions(calendar)
    k = _session_index(ts, cal)
    t = _epoch_us(ts)
    opens = pl.lit(pl.Series(cal.opens)).gather(k)
    closes = pl.lit(pl.Series(cal.closes)).gather(k)
    return ~((opens <= t) & (t < closes))


def closed_day(ts: pl.Expr, calendar: str = DEFAULT_CALENDAR) -> pl.Expr:
    """True where ``ts``'s trading day (:func:`trading_date`) is not one the calendar trades
    (weekends, holidays): the closed test of daily bars, whose time of day is a convention.
    Days outside the calendar's span (1985-2060) are not judged: False."""
    days = np.unique(sessions(calendar).day).astype(np.int32)
    day = trading_date(ts, calendar).cast(pl.Int32)
    inside = day.is_between(int(days[0]), int(days[-1]))
    return inside & ~day.is_in(pl.Series(days).implode())


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


def session_progress(ts: pl.Expr, calendar: str = DEFAULT_CALENDAR) -> pl.Expr:
    """Share of the trading day elapsed at ``ts``, in [0, 1]; 1 outside a trading day (the
    last session has ended). A break (grains) counts as part of its day."""
    cal = sessions(calendar)
    k = _session_index(ts, cal)
    t = _epoch_us(ts).cast(pl.Float64)
    d0 = pl.lit(pl.Series(cal.day_open)).gather(k).cast(pl.Float64)
    d1 = pl.lit(pl.Series(cal.day_close)).gather(k).cast(pl.Float64)
    inside = (d0 <= t) & (t < d1)
    return pl.when(inside).then((t - d0) / (d1 - d0)).otherwise(1.0)


def known_features(ts: pl.Expr, calendar: str = DEFAULT_CALENDAR) -> list[pl.Expr]:
    """The 10 known-future features of a bar, from its (UTC) timestamp and calendar alone.

    Args:
        ts: a ``Datetime(time_zone="UTC")`` expression (the bar's open time).
        calendar: the instrument's calendar (see :mod:`foxhunt.data.market.calendars`).

    Returns:
        Ten ``Float64`` expressions aliased with the names in :data:`KNOWN_FEATURES`:
        time of day (sin/cos of exchange-local clock time, 24 h period), day of week (sin/cos of
        the trading day counted from the week's first, ``first_day``; period 5, or 7 for
        calendars that trade every day), session progress
        (share of the trading day elapsed, 1 when closed), world-session flags read on the CT
        clock for every calendar (Asia 17:00-02:00, Europe 02:00-08:30, US 08:30-15:00 CT,
        first US hour 08:30-09:30) and days to the next quarterly expiry (third Friday of
        Mar/Jun/Sep/Dec) / 91. All finite for every timestamp.
    """
    spec = calendar_spec(calendar)
    tod = clock_minutes(ts, calendar) * (2.0 * math.pi / 1440.0)
    day = trading_date(ts, calendar)
    # days from the week's first trading day (Mon=0 .. Sun=6 where it is Monday; Tel Aviv's
    # Sunday 0 .. Thursday 4: its Sunday was Tuesday's phase, period 5, until session 59)
    first = pl.lit(spec.first_day, dtype=pl.Int32)
    if spec.first_day_until:  # Tel Aviv's Monday-Friday week since January 2026
        since = pl.lit(date.fromisoformat(spec.first_day_until))
        first = pl.when(day < since).then(first).otherwise(pl.lit(0, dtype=pl.Int32))
    weekday = ((day.dt.weekday().cast(pl.Int32) - 1 - first) % 7).cast(pl.Float64)
    dow = weekday * (2.0 * math.pi / spec.week_days)
    clock = clock_minutes(ts)  # CT: the world-session flags are the same for every market

    def flag(lo: float, hi: float) -> pl.Expr:
        return ((clock >= lo) & (clock < hi)).cast(pl.Float64)

    asia = ((clock >= _OPEN_MIN) | (clock < 120.0)).cast(pl.Float64)
    exprs = [
        tod.sin(),
        tod.cos(),
        dow.sin(),
        dow.cos(),
        session_progress(ts, calendar),
        asia,
        flag(120.0, 510.0),
        flag(510.0, 900.0),
        flag(510.0, 570.0),
        days_to_quarterly_expiry(day) / 91.0,
    ]
    return [e.alias(name) for e, name in zip(exprs, KNOWN_FEATURES, strict=True)]


# --- projecting bar times ------------------------------------------------------------------


def _to_us(ts: pl.Series) -> np.ndarray:
    """Datetime series (tz-aware, or naive meaning UTC) -> int64 µs since the epoch."""
    return ts.dt.epoch("us").to_numpy().astype(np.int64, copy=False)


def _trading_day_us(ts_us: np.ndarray, calendar: str) -> np.ndarray:
    """Trading day (days since the epoch) of each µs timestamp, by :func:`trading_date`."""
    frame = pl.DataFrame({"t": pl.Series(ts_us, dtype=pl.Int64).cast(pl.Datetime("us", "UTC"))})
    day = frame.select(trading_date(pl.col("t"), calendar).cast(pl.Int32)).to_series()
    return day.to_numpy().astype(np.int64)


def _step(cur: np.ndarray, iv: int, cal: Sessions) -> np.ndarray:
    """One intraday step: ``cur + iv`` if that is open, else the first open after it. A
    re-open inside the bar (CME equity futures' 15:15-15:30 CT halt until 2021, inside the
    15:00 hourly bar) is no bar of its own: from 15:00 the next hourly bar is 17:00, not
    15:30."""
    step = cur + iv
    _, inside = locate(step, cal)
    j = np.minimum(np.searchsorted(cal.opens, step, side="right"), cal.opens.size - 1)
    nxt = cal.opens[j]
    nxt = np.where(nxt > step, nxt, step)  # past the precomputed span: just step
    return np.where(inside, step, nxt)


def project_bar_times(
    last_ts: pl.Series, n: int, interval: timedelta, calendar: str = DEFAULT_CALENDAR
) -> pl.DataFrame:
    """The next ``n`` scheduled bar open times after each of ``last_ts``.

    The one definition of "future bar times" in foxhunt: the decoder's known-future inputs of
    every window (training, evaluation, ``predict``, the streaming ``Forecaster``) come from
    these times, never from the bars that actually followed, so what a window sees does not
    depend on data that was not yet known at its origin (a gap in the data).

    Intraday bars (``interval`` under a day) step by ``interval`` while the calendar is open; a
    step that lands in a halt, break, weekend or holiday goes to the next session open after it
    (:func:`_step`: a halt inside the bar makes no bar of its reopen). Daily
    bars (a day up to a week) keep their clock time and step again while the step's trading day
    is not a trading day of the calendar (weekends, holidays), so a daily bar stamped at the
    cash close stays at the cash close. Weekly and longer bars just step (a bar stamped on a
    Saturday stays on Saturdays), and so does every bar beyond the calendar's precomputed span
    (:data:`~foxhunt.data.market.calendars.SPAN`), where no day is judged closed. Vectorised:
    sessions are precomputed once per calendar.

    Args:
        last_ts: Bar open times, ``Datetime(time_zone="UTC")`` (or naive meaning UTC).
        n: Steps to project.
        interval: The bar interval (see :func:`infer_interval`); must be positive.
        calendar: The instrument's calendar; ``globex`` (no holidays) by default.

    Returns:
        ``len(last_ts)`` rows, columns ``step1 .. step{n}`` (UTC datetimes, µs).
    """
    if interval <= timedelta(0):
        raise ValueError(f"interval must be positive, got {interval}")
    times = project_bar_times_us(
        _to_us(last_ts), n, interval // timedelta(microseconds=1), calendar
    )
    frame = pl.from_numpy(times, schema=[f"step{k}" for k in range(1, n + 1)], orient="row")
    return frame.select(pl.all().cast(pl.Datetime("us", "UTC")))


def project_bar_times_us(
    last_us: np.ndarray, n: int, interval_us: int, calendar: str = DEFAULT_CALENDAR
) -> np.ndarray:
    """:func:`project_bar_times` on epoch microseconds, without polars (the live forecaster's
    path, where building 64 columns cost several times the projection itself).

    Args:
        last_us: (m,) int64 bar open times, µs since the epoch, UTC.
        n: Steps to project.
        interval_us: The bar interval in µs (positive).
        calendar: The instrument's calendar.

    Returns:
        (m, n) int64: column ``k - 1`` holds step ``k``.
    """
    if interval_us <= 0:
        raise ValueError(f"interval must be positive, got {interval_us} us")
    cal = sessions(calendar)
    cur = np.asarray(last_us, np.int64)
    out = np.empty((len(cur), n), np.int64)
    days = None if interval_us < _DAY_US else np.unique(cal.day)
    # Skipping closed days helps bars of under a week: a weekly bar stamped on a Saturday
    # lands on a Saturday at every step, and skipping moved it 11 weeks per step.
    skip = days is not None and days.size > 0 and interval_us < _WEEK_US
    for k in range(n):
        if days is None:
            cur = _step(cur, interval_us, cal)
        else:
            cur = cur + interval_us
            for _ in range(10 if skip else 0):  # a weekend plus holidays: a few skips at most
                day = _trading_day_us(cur, calendar)
                # a day outside the precomputed span is not judged (as intraday: just step);
                # judged closed, a daily bar past it moved 11 days per step
                bad = ~np.isin(day, days) & (day >= days[0]) & (day <= days[-1])
                if not bad.any():
                    break
                cur = np.where(bad, cur + interval_us, cur)
        out[:, k] = cur
    return out


def future_timestamps(
    last_ts: datetime, n: int, interval: timedelta, calendar: str = DEFAULT_CALENDAR
) -> list[datetime]:
    """The next ``n`` scheduled bar open times after ``last_ts`` (see :func:`project_bar_times`).

    Args:
        last_ts: The last observed bar's open time (tz-aware, or naive meaning UTC).
        n: How many future bar times.
        interval: The bar interval.
        calendar: The instrument's calendar.

    Returns:
        ``n`` tz-aware UTC datetimes, strictly increasing, all after ``last_ts``.
    """
    t = last_ts if last_ts.tzinfo is not None else last_ts.replace(tzinfo=UTC)
    row = project_bar_times(pl.Series([t.astimezone(UTC)]), n, interval, calendar).row(0)
    return list(row)


def is_open(t: datetime, calendar: str = DEFAULT_CALENDAR) -> bool:
    """Whether the calendar has a session at instant ``t`` (tz-aware; naive means UTC)."""
    t = t if t.tzinfo is not None else t.replace(tzinfo=UTC)
    return not pl.select(closed_time(pl.lit(t.astimezone(UTC)), calendar)).item()


def closed_hours_share(ts: pl.Series, calendar: str = DEFAULT_CALENDAR) -> float:
    """Share of bar times ``ts`` outside the calendar's sessions (0.0 for none), for
    ``inspect``: a large share says the file's time zone or the instrument's calendar is off."""
    return closed_share(_to_us(ts.drop_nulls()), calendar)


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


def interval_text(td: timedelta) -> str:
    """A bar interval or gap in its largest whole unit: ``1d``, ``36h``, ``5min``, ``90s``
    (minutes as ``min``: ``m`` reads as months)."""
    secs = int(td.total_seconds())
    for unit, n in (("d", 86400), ("h", 3600), ("min", 60)):
        if secs % n == 0:
            return f"{secs // n}{unit}"
    return f"{secs}s"


SPARSE_MODE_SHARE = 0.5
"""Below this share of the gaps, an intraday modal gap is checked against the other common ones
(:func:`infer_interval`)."""
COMMON_GAP_SHARE = 0.05
"""A gap this common or more is one of the bars' own spacings, not a stray print's."""


def infer_interval(ts: pl.Series | Sequence[datetime]) -> timedelta:
    """The bar interval: the most common positive gap between consecutive timestamps, unless
    that gap is intraday, holds under half the gaps, and another common gap (5 % or more) is no
    multiple of it: then the greatest common divisor of the common gaps (an illiquid stock's
    one-minute bars, only the minutes that traded, 2, 3, 4 and 5 minutes apart: 1 minute, not
    the modal 3).

    Args:
        ts: one symbol's bar times, sorted.

    Returns:
        The modal positive difference (ties go to the smaller one), or the divisor above.

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
    mode: timedelta = counts[name][0]
    if mode >= timedelta(days=1) or counts["count"][0] >= SPARSE_MODE_SHARE * diffs.len():
        return mode
    common = [g for g, n in counts.rows() if n >= COMMON_GAP_SHARE * diffs.len()]
    if all(g % mode == timedelta(0) for g in common):
        return mode
    micros = [g // timedelta(microseconds=1) for g in common]
    return timedelta(microseconds=math.gcd(*micros))


def bars_interval(frame: pl.DataFrame) -> timedelta | None:
    """The most common of each symbol's bar interval (``symbol``, ``ts`` columns; ties go to
    the smaller); None when no symbol has two distinct times."""
    found: Counter[timedelta] = Counter()
    for (_,), group in frame.select("symbol", "ts").group_by("symbol"):
        try:
            found[infer_interval(group["ts"].sort())] += 1
        except ValueError:  # fewer than two distinct times
            continue
    if not found:
        return None
    most = max(found.values())
    return min(k for k, n in found.items() if n == most)
