"""The calendar a symbol's bars keep, for symbols whose name places them in no market.

A symbol foxhunt cannot place by its name (``MSFT1H``, ``prices``, an index of another market)
was put on ``24x7``, the neutral calendar: its forecasts then targeted nights and weekends, and
its known-future inputs counted hours the market never trades. Its bars say more than its name:
a stock's 5-minute bars fill 09:30-16:00 New York on the NYSE's trading days and nothing else.

:func:`fit_calendar` scores each calendar of :data:`CANDIDATES` on the bars' times and returns
the best one where it clearly beats ``24x7``, else None:

- **intraday bars**: at most :data:`CLOSED_MAX` of the bars may fall in the calendar's closed
  hours (a bar stamped at a session's close, a closing auction's print or the last of bars
  stamped at their end, is not counted), :data:`ALIGNED_MIN` of them must sit on its bar grid
  (a whole number of intervals after their session's open, where the forecast's bar times are
  projected, or on the clock's: IB's hourly bars at 10:00, 11:00 after a 09:30 half bar), and
  on the median day the bars must span :data:`SPAN_MIN` of the trading day (from its first
  bar to its last, less its longest hole inside a session). The score is that
  median span times the share of the calendar's trading days (between the first and the last
  bar) that have bars;
- **daily bars** (a day up to a week): at most :data:`CLOSED_MAX` on days the calendar does
  not trade, and an exchange's calendar must explain :data:`MIN_HOLIDAYS` weekdays without a
  bar; the score is the share of its trading days with a bar.

Both scores are scaled by the share of bars not closed, so markets of the same hours are told
apart by the holidays that hold bars as well as by those that lack them (Xetra's bars on
London's August bank holiday: Xetra's, not London's).

A candidate must score :data:`MARGIN` times ``24x7``'s (on a crypto's bars every other calendar
has closed hours with bars: 24x7 stays). Ties go to the earlier candidate: ``fx_24x5`` (the
weekdays, no holidays) first, so bars too few to show a holiday get no exchange's.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import timedelta
from typing import NamedTuple

import numpy as np

from foxhunt.data.market.calendars import SPAN, calendar_spec, locate, sessions

CANDIDATES: tuple[str, ...] = (
    "fx_24x5",
    "cme_equity",
    "ice_us",
    "eurex",
    "ice_europe",
    "ice_europe_index",
    "xnys",
    "xnys_ext",
    "xtse",
    "xlon",
    "xetr",
    "xtks",
    "xhkg",
    "xasx",
    "xnse",
    "xses",
    "xpar",
    "xams",
    "xswx",
    "xmad",
    "xmil",
    "xsto",
    "xkrx",
    "xtai",
    "xshg",
    "bvmf",
    "xjse",
    "xtae",
    "xidx",
    "cme_grains",
)
"""Calendars tried, in the order that breaks ties (the neutral weekday rule first). Of the
markets added in session 59 Tel Aviv (its Sunday bars keep no other) and Jakarta (without it
its bars fitted Singapore's read an hour off, its lunch an hour after Singapore's in UTC); the
others keep hours and days too near those of the markets above to be told from their bars over
a few weeks."""
INTRADAY_ONLY = frozenset({"cme_grains"})
"""Candidates told by their hours alone (CBOT grains' two sessions a day): their trading days
are the NYSE's but for a holiday or two, so daily bars are not judged on them."""
NEUTRAL = "24x7"
"""The calendar of a symbol no name or bars place."""
CLOSED_MAX = 0.01
"""Most of the bars that may fall in the closed hours (or days) of a fitting calendar: a few
odd prints, a holiday the library lacks (bars at a session's close are not counted)."""
ALIGNED_MIN = 0.9
"""Least share of in-session intraday bars on the calendar's bar grid."""
SPAN_MIN = 0.8
"""Least share of the trading day the median day's bars must span."""
ROUND_MIN = 0.9
"""Least ``24x7`` score of bars that fill the whole week (:func:`round_the_clock`): a long
history of weekdays' bars reaches 5/7, with a Sunday evening's (the FX week, CME's) 6/7."""
WEEKEND_BREAK = timedelta(hours=36)
"""A gap between bars at least this long (beyond a day for daily bars) is a weekend's break
(:func:`round_the_clock`): the FX week's 48 hours, CME's 49; a coin's bars have none but an
outage's."""
MARGIN = 1.05
"""How many times ``24x7``'s score a candidate must reach."""
MIN_DAYS = 2
"""Fewest trading days with intraday bars judged."""
MIN_DAILY_BARS = 10
"""Fewest daily bars judged."""
MIN_HOLIDAYS = 2
"""Daily bars: fewest of an exchange's holidays (weekdays it shuts) that must lack a bar for its
calendar to be taken (one missing day in two weeks of bars is as likely a gap in the file)."""
WEEKDAYS = "fx_24x5"
"""The weekday rule: daily bars on weekdays with no holiday to tell an exchange by."""
BROKER_CLOCKS = {"America/New_York+07:00": ("America/New_York", 7)}
"""Clocks of no IANA zone (``--tz`` spelling -> the zone they move, by how many hours): the FX
brokers' server time, MetaTrader's GMT+2, GMT+3 while New York keeps summer time (New York's
17:00 close is midnight), for every symbol the broker quotes (its gold on CME's hours too).
The time-axis checks try them as well (``clock_zones.BROKER_ZONES``)."""
ZONE_BARS = 50_000
"""Bars :func:`zone_fit` judges (the last): one localisation per zone a candidate is read in."""
_DAY_US = 86_400_000_000


class Score(NamedTuple):
    """One calendar's score on the bars, their share in its closed hours or days, and (daily
    bars) the holidays it explains."""

    score: float
    closed: float
    holidays: int = 0
    """Daily bars: weekdays without a bar that the calendar does not trade."""


class CalendarFit(NamedTuple):
    """The calendar chosen for a symbol's bars, and the evidence."""

    calendar: str
    score: float
    """Share of the calendar's trading days with bars, times (intraday) the median day's span,
    times the share of bars not closed."""
    neutral_score: float
    """``24x7``'s score on the same bars."""
    closed: float
    """Share of the bars in the calendar's closed hours (or on its closed days)."""
    bars: int


def _intraday_score(t: np.ndarray, iv: int, name: str, judged: bool = True) -> Score | None:
    """``(score, closed share)`` of calendar ``name`` on sorted µs times ``t``, or None when
    the bars do not keep its hours (too many closed, off its grid, too short a day; not
    ``judged``: only when no bar is inside or too few days have bars)."""
    cal = sessions(name)
    k, inside = locate(t, cal)
    # a bar stamped at a session's close (a closing auction's print, the last of end-stamped
    # bars: the time-axis checks name those) is no bar in closed hours
    at_close = ~inside & (t == cal.closes[np.maximum(k - 1, 0)])
    closed = float((~inside & ~at_close).mean())
    if not inside.any() or (judged and closed > CLOSED_MAX):
        return None
    ti, ki = t[inside], k[inside]
    on_grid = ((ti - cal.opens[ki]) % iv == 0) | (ti % iv == 0)  # the session's or the clock's
    if judged and float(on_grid.mean()) < ALIGNED_MIN:
        return None
    days = cal.day[ki]
    uniq, first = np.unique(days, return_index=True)
    if uniq.size < MIN_DAYS:
        return None
    last = np.r_[first[1:], days.size] - 1
    length = cal.day_close[ki[first]] - cal.day_open[ki[first]]
    # the day's longest hole inside one session (a break the calendar keeps lies between two):
    # bars at both ends of a day and none between (B3's 09:00-18:25 across the FX week's 17:00
    # roll) do not span it
    inner = (np.diff(ki) == 0) & (np.diff(days) == 0)
    hole = np.maximum.reduceat(np.r_[np.where(inner, np.diff(ti) - iv, 0), 0], first)
    span = np.minimum((ti[last] + iv - ti[first] - hole) / np.maximum(length, 1), 1.0)
    median = float(np.median(span))
    if judged and median < SPAN_MIN:
        return None
    return Score(median * _days_share(uniq, _traded(name)) * (1.0 - closed), closed)


@functools.cache
def _traded(name: str) -> np.ndarray:
    """Calendar ``name``'s trading days (days since the epoch), sorted: once per process, not
    once per symbol and candidate."""
    return np.unique(sessions(name).day)


def _days_share(days: np.ndarray, traded: np.ndarray) -> float:
    """Share of the calendar's trading days ``traded`` from ``days[0]`` to ``days[-1]`` that
    are among ``days`` (both sorted, unique)."""
    lo, hi = np.searchsorted(traded, [days[0], days[-1]], side="left")
    hi += int(hi < traded.size and traded[hi] == days[-1])
    expected = int(hi - lo)
    return float(np.isin(days, traded).sum()) / expected if expected > 0 else 0.0


def _daily_score(t: np.ndarray, name: str, judged: bool = True) -> Score | None:
    from foxhunt.data.market.calendar import _trading_day_us

    days = np.unique(_trading_day_us(t, name))
    traded = _traded(name)
    closed = 1.0 - float(np.isin(days, traded).mean())
    if judged and closed > CLOSED_MAX:
        return None
    span = np.arange(days[0], days[-1] + 1)
    lacking = span[((span + 3) % 7 < 5) & ~np.isin(span, days)]  # weekdays without a bar
    share = _days_share(days, traded) * (1.0 - closed)
    return Score(share, closed, int((~np.isin(lacking, traded)).sum()))


def _in_span(ts_us: np.ndarray) -> np.ndarray:
    """The distinct bar times inside the calendars' precomputed :data:`SPAN` (1985-2060), sorted:
    a daily history from 1980 was judged closed on every calendar for its first five years."""
    t = np.unique(np.asarray(ts_us, dtype=np.int64))
    lo, hi = (int(np.datetime64(d, "us").astype(np.int64)) for d in SPAN)
    return t[(t >= lo) & (t < hi + _DAY_US)]


def fit_calendar(
    ts_us: np.ndarray,
    interval: timedelta,
    candidates: Sequence[str] = CANDIDATES,
    margin: float = MARGIN,
) -> CalendarFit | None:
    """The calendar of :data:`CANDIDATES` whose sessions the bars keep, or None (stay on
    ``24x7``): too few bars, weekly or longer bars, or no candidate clearly better.

    Args:
        ts_us: the symbol's bar times, µs since the epoch UTC (any order, repeats allowed).
        interval: the bars' interval.
        candidates: the calendars tried, in the order that breaks ties.
        margin: how many times ``24x7``'s score the best must reach; 0 where ``24x7`` is no
            choice (a name placed elsewhere whose bars left it: a week of the FX week's or
            CME's bars scores as well on ``24x7``, no weekend among them to tell).
    """
    t = _in_span(ts_us)
    iv = int(interval / timedelta(microseconds=1))
    if iv <= 0 or interval >= timedelta(days=7):
        return None
    daily = interval >= timedelta(days=1)
    if daily and t.size < MIN_DAILY_BARS:
        return None

    def score(name: str, judged: bool = True) -> Score | None:
        return _daily_score(t, name, judged) if daily else _intraday_score(t, iv, name, judged)

    neutral = score(NEUTRAL, judged=False)
    if neutral is None:  # too few days to judge
        return None
    base = neutral.score
    best: CalendarFit | None = None
    for name in candidates:
        if daily and name in INTRADAY_ONLY:
            continue
        got = score(name)
        if daily and got is not None and name != WEEKDAYS and got.holidays < MIN_HOLIDAYS:
            continue  # an exchange's days need two of its holidays to tell them
        if got is not None and (best is None or got.score > best.score + 1e-9):
            best = CalendarFit(name, got.score, base, got.closed, int(t.size))
    if best is None or best.score < margin * base:
        return None
    return best


def closed_in(ts_us: np.ndarray, interval: timedelta, name: str) -> float:
    """Share of the bars outside calendar ``name``: in its closed hours (intraday bars) or on
    days it does not trade (a day up to a week); 0.0 for weekly bars or none."""
    t = _in_span(ts_us)
    if t.size == 0 or interval >= timedelta(days=7):
        return 0.0
    if interval >= timedelta(days=1):
        from foxhunt.data.market.calendar import _trading_day_us

        return 1.0 - float(np.isin(_trading_day_us(t, name), _traded(name)).mean())
    return 1.0 - float(locate(t, sessions(name))[1].mean())


def round_the_clock(ts_us: np.ndarray, interval: timedelta) -> bool:
    """Whether the bars fill the whole week, weekends too, as a coin's do and no exchange's
    stock or future's: ``24x7``'s score (the share of all days with bars, times intraday the
    median day's span) at least :data:`ROUND_MIN`; bars on a Saturday and on a Sunday (UTC),
    over :data:`CLOSED_MAX` of them where the FX week is shut; and at most one break of
    :data:`WEEKEND_BREAK` (beyond a daily bar's day) in four weeks. The FX week and CME's break
    48-49 hours every weekend in whatever zone their times are read, and a week of them fills
    every day from its first bar to its last."""
    t = _in_span(ts_us)
    iv = int(interval / timedelta(microseconds=1))
    if iv <= 0 or interval >= timedelta(days=7):
        return False
    daily = interval >= timedelta(days=1)
    if daily:
        got = _daily_score(t, NEUTRAL) if t.size >= MIN_DAILY_BARS else None
    else:
        got = _intraday_score(t, iv, NEUTRAL)
    if got is None or got.score < ROUND_MIN:
        return False
    weekday = (t // _DAY_US + 3) % 7  # 1 January 1970 was a Thursday: Monday is 0
    if not (np.any(weekday == 5) and np.any(weekday == 6)):
        return False
    gap = WEEKEND_BREAK + (interval if daily else timedelta(0))
    breaks = int((np.diff(t) >= gap // timedelta(microseconds=1)).sum())
    if breaks * 28 * _DAY_US > t[-1] - t[0]:
        return False
    return closed_in(t, interval, WEEKDAYS) > CLOSED_MAX


def zone_fit(wall_us: np.ndarray, interval: timedelta) -> tuple[str, str] | None:
    """``(calendar, zone)``: naive wall-clock bar times (µs, read as UTC) that keep a candidate
    calendar's hours when read in its own zone (the best score of those that do), or None.

    For a nameless file of local times written without a zone: read as UTC they keep no
    calendar's hours (Tokyo's 09:00 read as UTC is 18:00 there), read in the market's zone
    they do; a MetaTrader export's server clock keeps the FX week's (or CME's) read in
    :data:`BROKER_CLOCKS`. None where the times as read (UTC) keep a calendar as well as any
    zone does. Intraday bars only; the last :data:`ZONE_BARS` are judged (one reading per
    zone).
    """
    import polars as pl

    iv = int(interval / timedelta(microseconds=1))
    if iv <= 0 or interval >= timedelta(days=1):
        return None
    wall = pl.Series(np.unique(np.asarray(wall_us, dtype=np.int64))[-ZONE_BARS:])
    naive = wall.cast(pl.Datetime("us"))
    trials = [(name, "UTC", "UTC", 0) for name in CANDIDATES]  # as read: first on a tie
    trials += [(name, calendar_spec(name).tz, calendar_spec(name).tz, 0) for name in CANDIDATES]
    trials += [(n, clock, tz, h) for clock, (tz, h) in BROKER_CLOCKS.items() for n in CANDIDATES]
    best: tuple[float, str, str] | None = None
    read: dict[tuple[str, int], np.ndarray] = {}  # one reading per zone and shift
    for name, zone, tz, hours in trials:
        if (tz, hours) not in read:
            local = naive - timedelta(hours=hours)  # the zone's wall clock
            utc = local.dt.replace_time_zone(tz, ambiguous="earliest", non_existent="null")
            read[tz, hours] = _in_span(utc.drop_nulls().dt.epoch("us").to_numpy())
        got = _intraday_score(read[tz, hours], iv, name)
        if got is not None and (best is None or got.score > best[0] + 1e-9):
            best = (got.score, name, zone)
    # as read is best: no zone to name (Databento's CME bars under an instrument_id, one week
    # of them too short to tell CME's calendar from 24x7, were told a broker's clock 2 h off)
    return None if best is None or best[2] == "UTC" else (best[1], best[2])
