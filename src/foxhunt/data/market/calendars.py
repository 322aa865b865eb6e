"""Trading calendars: which hours a market trades, as sorted arrays of open intervals.

A calendar is a name (the ``calendar`` column of the instrument table) for a
:class:`CalendarSpec`: the exchange time zone, the local clock time at which its trading day
rolls over, the days per trading week, and where its sessions come from:

- CME Globex product groups (equity, rates, FX, energy, metals, grains, crypto), Cboe futures,
  Eurex (with its Asian hours from 2018-12-10 and closed on 24 and 31 December:
  :attr:`CalendarSpec.early_open`, :attr:`CalendarSpec.closed_dates`), ICE US, NYSE and the
  cash markets of Xetra, London, Tokyo, Hong Kong, Sydney, India, Singapore and Toronto come
  from ``pandas_market_calendars`` (holidays and early closes included; it builds on
  ``exchange_calendars``) — see docs/data.md, "Calendars", for why that library; since
  session 55 also Paris, Amsterdam, Zurich, Madrid, Milan, Stockholm, Seoul (since session 58
  from ``exchange_calendars`` itself, :data:`EXCHANGE_CALENDARS`: the mirror adds a lunch
  break and loses the late opens), Taipei, Shanghai (Shenzhen's days and hours are the same),
  São Paulo and Johannesburg; since session 59 Tel Aviv (Sunday-Thursday until January 2026),
  Jakarta, Bangkok, Kuala Lumpur, Wellington, Mexico, Istanbul and nine smaller European
  exchanges from ``exchange_calendars`` too (the mirror has none of them), and breaks and half
  days the libraries lack (Singapore's lunch since 2017 and its eves, :class:`LocalBreak`,
  :class:`HalfDays`);
- ICE Futures Europe takes its trading days from the library and its hours (01:00-23:00
  London) from :attr:`CalendarSpec.local_hours`: the library keeps them on New York's clock,
  an hour off in the weeks between the two daylight-saving changes; ``xnys_ext``, US stocks'
  extended hours (04:00-20:00 New York on the NYSE's trading days), is built the same way;
- ``globex`` is the weekly CME rule without holidays (Sunday 17:00 to Friday 16:00 CT, a daily
  16:00-17:00 halt): what foxhunt used before calendars came from a library, and still the
  default of every function that takes a calendar, so old callers keep their behaviour;
- ``fx_24x5`` (spot FX: Sunday 17:00 to Friday 17:00 New York) and ``24x7`` (crypto, and the
  neutral calendar of unknown symbols) are rules.

Sessions are precomputed once per calendar for :data:`SPAN` (a library call per calendar, not
per bar) into :class:`Sessions`: int64 microsecond arrays that vectorised code searches with
``searchsorted``. A session with a break (grains) is two intervals with the same trading day.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import time
from typing import NamedTuple

import numpy as np

from foxhunt.errors import DataError

SPAN = ("1985-01-01", "2060-12-31")
"""First and last trading day for which sessions are precomputed."""
HOLIDAYS_TO = "2049-12-31"
"""The last day of sessions from a calendar whose holidays are recorded no further."""
EXCHANGE_CALENDARS = "xc:"
"""A source so prefixed is ``exchange_calendars``' calendar of that code, its breaks and its
Saturdays (Seoul's until 1998) left out; its Sundays are kept (Tel Aviv traded Sunday to
Thursday until January 2026): a calendar here trades five days a week."""

DEFAULT_CALENDAR = "globex"
"""The calendar of callers that do not name one, of a symbol nobody named one for and of runs
from before calendars: the Globex weekly rule, no holidays (the one definition of ``globex``)."""


class LocalBreak(NamedTuple):
    """A break inside each trading day from ``since`` (``YYYY-MM-DD``) on, from ``start`` to
    ``end`` wall-clock time, on the days of ``weekdays`` (Monday 0 .. Sunday 6)."""

    since: str
    start: time
    end: time
    weekdays: str = "0123456"


class HalfDays(NamedTuple):
    """Trading days from ``since`` on that close at ``close`` wall-clock time: the days of the
    year in ``dates`` (``MM-DD``) and, with ``lunar_eve``, the eve of the Lunar New Year, where
    the library trades them."""

    since: str
    close: time
    dates: tuple[str, ...] = ()
    lunar_eve: bool = False


@dataclass(frozen=True)
class CalendarSpec:
    """How one calendar's sessions and trading days are defined."""

    tz: str
    """Exchange time zone: clock-time features and the trading-day roll are read in it."""
    roll: time
    """Local clock time from which a timestamp belongs to the next trading day."""
    week_days: int
    """Trading days per week (5, or 7 for markets that never close): the day-of-week period."""
    source: str
    """``pandas_market_calendars`` calendar name, or ``""`` for a rule built here."""
    hours: float
    """Typical hours traded per trading day (the ``static__session_hours`` default)."""
    local_hours: tuple[time, time] | None = None
    """Where set, ``source`` gives the trading days only, and each day trades from the first to
    the second wall-clock time in ``tz`` (the first after the second: from the evening before)."""
    early_open: tuple[str, time] | None = None
    """From that day on (``YYYY-MM-DD``), the library's sessions open at that wall-clock time in
    ``tz`` instead (Eurex's Asian hours, 01:10 Frankfurt from 2018-12-10)."""
    closed_dates: tuple[str, ...] = ()
    """Days of the year (``MM-DD``) the market never trades, whatever the library says (Eurex's
    24 and 31 December, which the library opens until 12:30)."""
    first_day: int = 0
    """The week's first trading day (Monday 0 .. Sunday 6): the day-of-week feature counts from
    it (Tel Aviv's week started on Sunday, 6, until January 2026)."""
    first_day_until: str = ""
    """The day (``YYYY-MM-DD``) from which the week starts on Monday again; ``""``: never."""
    breaks: tuple[LocalBreak, ...] = ()
    """Breaks the library lacks, in ``tz``'s wall-clock time (Singapore's lunch since 2017)."""
    half_days: HalfDays | None = None
    """Days the library trades in full that close early (Singapore's eves)."""


CALENDARS: dict[str, CalendarSpec] = {
    "globex": CalendarSpec("America/Chicago", time(17), 5, "", 23.0),
    "cme_equity": CalendarSpec("America/Chicago", time(17), 5, "CME_Equity", 23.0),
    "cme_rates": CalendarSpec("America/Chicago", time(17), 5, "CME_Rate", 23.0),
    "cme_fx": CalendarSpec("America/Chicago", time(17), 5, "CMEGlobex_FX", 23.0),
    "cme_energy": CalendarSpec("America/Chicago", time(17), 5, "CMEGlobex_Energy", 23.0),
    "cme_metals": CalendarSpec("America/Chicago", time(17), 5, "CMEGlobex_Metals", 23.0),
    "cme_grains": CalendarSpec("America/Chicago", time(17), 5, "CMEGlobex_Grains", 17.5),
    "cme_crypto": CalendarSpec("America/Chicago", time(17), 5, "CME Globex Crypto", 23.0),
    "cme_livestock": CalendarSpec("America/Chicago", time(17), 5, "CMEGlobex_Livestock", 4.6),
    "cfe": CalendarSpec("America/Chicago", time(17), 5, "CFE", 6.75),
    "eurex": CalendarSpec(
        "Europe/Berlin",
        time(23),
        5,
        "EUREX",
        14.0,
        early_open=("2018-12-10", time(1, 10)),
        closed_dates=("12-24", "12-31"),
    ),
    "ice_europe": CalendarSpec("Europe/London", time(23), 5, "IEPA", 22.0, (time(1), time(23))),
    # ICE Futures Europe's FTSE 100 future: 01:00-21:00 London on the LSE's trading days
    "ice_europe_index": CalendarSpec(
        "Europe/London", time(22), 5, "XLON", 20.0, (time(1), time(21))
    ),
    "ice_us": CalendarSpec("America/New_York", time(18), 5, "ICEUS", 22.0),
    "ice_softs": CalendarSpec(
        "America/New_York", time(18), 5, "ICEUS", 10.5, (time(3, 30), time(14))
    ),
    "xnys": CalendarSpec("America/New_York", time(17), 5, "XNYS", 6.5),
    "xnys_ext": CalendarSpec("America/New_York", time(20), 5, "XNYS", 16.0, (time(4), time(20))),
    # cash markets elsewhere (their indices; any instrument through --instruments)
    "xetr": CalendarSpec("Europe/Berlin", time(20), 5, "XETR", 8.5),
    "xlon": CalendarSpec("Europe/London", time(18), 5, "XLON", 8.5),
    "xtks": CalendarSpec("Asia/Tokyo", time(18), 5, "XTKS", 5.0),
    "xhkg": CalendarSpec("Asia/Hong_Kong", time(18), 5, "XHKG", 5.5),
    "xasx": CalendarSpec("Australia/Sydney", time(18), 5, "XASX", 6.0),
    "xnse": CalendarSpec("Asia/Kolkata", time(18), 5, "XNSE", 6.25),
    # SGX's lunch, 12:00-13:00 since 13 November 2017, and its half days on the eves of
    # Christmas, New Year and the Lunar New Year (09:00-12:00), which neither library has
    "xses": CalendarSpec(
        "Asia/Singapore",
        time(18),
        5,
        "XSES",
        8.0,  # kept: runs trained on it hold it as a static input (7 hours since the lunch)
        breaks=(LocalBreak("2017-11-13", time(12), time(13)),),
        half_days=HalfDays("2017-11-13", time(12), ("12-24", "12-31"), lunar_eve=True),
    ),
    "xtse": CalendarSpec("America/Toronto", time(18), 5, "XTSE", 6.5),
    "xpar": CalendarSpec("Europe/Paris", time(20), 5, "XPAR", 8.5),
    "xams": CalendarSpec("Europe/Amsterdam", time(20), 5, "XAMS", 8.5),
    "xswx": CalendarSpec("Europe/Zurich", time(20), 5, "XSWX", 8.5),
    "xmad": CalendarSpec("Europe/Madrid", time(20), 5, "XMAD", 8.5),
    "xmil": CalendarSpec("Europe/Rome", time(20), 5, "XMIL", 8.5),
    "xsto": CalendarSpec("Europe/Stockholm", time(20), 5, "XSTO", 8.5),
    # exchange_calendars' own: pandas_market_calendars' mirror gives Korea a lunch break it
    # has not had since 2000, and loses its late opens (the exam day's 10:00-16:30, the
    # year's first day's 10:00) and its 15:00 close before August 2016
    "xkrx": CalendarSpec("Asia/Seoul", time(18), 5, f"{EXCHANGE_CALENDARS}XKRX", 6.5),
    "xtai": CalendarSpec("Asia/Taipei", time(18), 5, "XTAI", 4.5),
    "xshg": CalendarSpec("Asia/Shanghai", time(18), 5, "XSHG", 4.0),
    "bvmf": CalendarSpec("America/Sao_Paulo", time(20), 5, "BVMF", 8.0),
    "xjse": CalendarSpec("Africa/Johannesburg", time(20), 5, "XJSE", 8.0),
    # since session 59, from exchange_calendars (pandas_market_calendars has none of them)
    "xtae": CalendarSpec(
        "Asia/Jerusalem",
        time(20),
        5,
        f"{EXCHANGE_CALENDARS}XTAE",
        7.25,
        first_day=6,
        first_day_until="2026-01-05",  # Monday to Friday since: the week starts on Monday
    ),
    # Jakarta's lunch: 12:00-13:30, on Fridays 11:30-14:00 (from 2024: earlier years' hours
    # changed often, not recorded here); Bangkok's and Kuala Lumpur's 12:30-14:30
    "xidx": CalendarSpec(
        "Asia/Jakarta",
        time(18),
        5,
        f"{EXCHANGE_CALENDARS}XIDX",
        5.3,
        breaks=(
            LocalBreak("2024-01-01", time(12), time(13, 30), "0123"),
            LocalBreak("2024-01-01", time(11, 30), time(14), "4"),
        ),
    ),
    "xbkk": CalendarSpec(
        "Asia/Bangkok",
        time(18),
        5,
        f"{EXCHANGE_CALENDARS}XBKK",
        4.5,
        breaks=(LocalBreak("2015-01-01", time(12, 30), time(14, 30)),),
    ),
    "xkls": CalendarSpec(
        "Asia/Kuala_Lumpur",
        time(18),
        5,
        f"{EXCHANGE_CALENDARS}XKLS",
        6.0,
        breaks=(LocalBreak("2015-01-01", time(12, 30), time(14, 30)),),
    ),
    "xnze": CalendarSpec("Pacific/Auckland", time(18), 5, f"{EXCHANGE_CALENDARS}XNZE", 6.75),
    "xmex": CalendarSpec("America/Mexico_City", time(20), 5, f"{EXCHANGE_CALENDARS}XMEX", 6.5),
    "xist": CalendarSpec("Europe/Istanbul", time(20), 5, f"{EXCHANGE_CALENDARS}XIST", 8.0),
    "xwar": CalendarSpec("Europe/Warsaw", time(20), 5, f"{EXCHANGE_CALENDARS}XWAR", 8.0),
    "xhel": CalendarSpec("Europe/Helsinki", time(20), 5, f"{EXCHANGE_CALENDARS}XHEL", 8.5),
    "xcse": CalendarSpec("Europe/Copenhagen", time(20), 5, f"{EXCHANGE_CALENDARS}XCSE", 8.0),
    "xosl": CalendarSpec("Europe/Oslo", time(20), 5, f"{EXCHANGE_CALENDARS}XOSL", 7.33),
    "xwbo": CalendarSpec("Europe/Vienna", time(20), 5, f"{EXCHANGE_CALENDARS}XWBO", 8.5),
    "xpra": CalendarSpec("Europe/Prague", time(20), 5, f"{EXCHANGE_CALENDARS}XPRA", 7.33),
    "xbud": CalendarSpec("Europe/Budapest", time(20), 5, f"{EXCHANGE_CALENDARS}XBUD", 8.0),
    "asex": CalendarSpec("Europe/Athens", time(20), 5, f"{EXCHANGE_CALENDARS}ASEX", 7.33),
    "xlis": CalendarSpec("Europe/Lisbon", time(20), 5, f"{EXCHANGE_CALENDARS}XLIS", 8.5),
    "xbru": CalendarSpec("Europe/Brussels", time(20), 5, f"{EXCHANGE_CALENDARS}XBRU", 8.5),
    "xdub": CalendarSpec("Europe/Dublin", time(20), 5, f"{EXCHANGE_CALENDARS}XDUB", 8.5),
    "fx_24x5": CalendarSpec("America/New_York", time(17), 5, "", 24.0),
    "24x7": CalendarSpec("UTC", time(0), 7, "", 24.0),
}
"""Calendar name -> spec. Names are what the instrument table's ``calendar`` field holds."""


class Sessions(NamedTuple):
    """Open intervals of one calendar, sorted and disjoint (µs since the epoch, UTC).

    ``opens[i] <= t < closes[i]`` is open; ``day[i]`` is the interval's trading day (days since
    the epoch); ``day_open``/``day_close`` span the whole trading day the interval belongs to.
    """

    opens: np.ndarray
    closes: np.ndarray
    day: np.ndarray
    day_open: np.ndarray
    day_close: np.ndarray


def calendar_spec(name: str) -> CalendarSpec:
    """The spec of calendar ``name``.

    Raises:
        DataError: unknown name (the message lists the known ones).
    """
    try:
        return CALENDARS[name]
    except KeyError:
        raise DataError(
            f"unknown calendar {name!r} (known: {', '.join(sorted(CALENDARS))})"
        ) from None


def _utc_us(local: np.ndarray, tz: str) -> np.ndarray:
    """Naive local wall times (datetime64) in ``tz`` -> µs since the epoch, UTC."""
    import pandas as pd

    idx = pd.DatetimeIndex(local).tz_localize(tz).tz_convert("UTC")
    return idx.as_unit("us").asi8.copy()


def _rule_sessions(name: str) -> Sessions:
    days = np.arange(np.datetime64(SPAN[0]), np.datetime64(SPAN[1]) + 1)  # datetime64[D]
    weekday = (days.astype(np.int64) + 3) % 7  # Mon=0 .. Sun=6 (1970-01-01 was a Thursday)
    if name == "24x7":
        opens = days.astype("datetime64[us]").astype(np.int64)
        closes = opens + 86_400_000_000
    else:
        days = days[weekday < 5]
        prev = (days - 1).astype("datetime64[us]")
        spec = CALENDARS[name]
        if name == "globex":
            opens = _utc_us(prev + np.timedelta64(17, "h"), spec.tz)
            closes = _utc_us(days.astype("datetime64[us]") + np.timedelta64(16, "h"), spec.tz)
        else:  # fx_24x5: one continuous week, Sunday 17:00 to Friday 17:00 New York
            opens = _utc_us(prev + np.timedelta64(17, "h"), spec.tz)
            closes = _utc_us(days.astype("datetime64[us]") + np.timedelta64(17, "h"), spec.tz)
    day = days.astype(np.int64)
    return Sessions(opens, closes, day, opens, closes)


def _library_sessions(source: str) -> Sessions:
    import pandas_market_calendars as mcal

    sched = mcal.get_calendar(source).schedule(*SPAN)

    def us(col: str) -> np.ndarray:
        return sched[col].dt.tz_convert("UTC").dt.as_unit("us").astype("int64").to_numpy()

    opens, closes = us("market_open"), us("market_close")
    day = sched.index.values.astype("datetime64[D]").astype(np.int64)
    if "break_start" in sched.columns:
        b0, b1 = us("break_start"), us("break_end")
        has = (b0 < b1) & (b0 > opens) & (b1 < closes)  # a real break inside the session
        parts = [
            (opens, np.where(has, b0, closes), day, opens, closes),
            (b1[has], closes[has], day[has], opens[has], closes[has]),
        ]
        cols = [np.concatenate(c) for c in zip(*parts, strict=True)]
        order = np.argsort(cols[0], kind="stable")
        opens, closes, day, day_open, day_close = (c[order] for c in cols)
        return Sessions(opens, closes, day, day_open, day_close)
    return Sessions(opens, closes, day, opens, closes)


def _exchange_sessions(code: str) -> Sessions:
    """``exchange_calendars``' sessions of ``code`` over :data:`SPAN` (within the years whose
    holidays it records, where those are fewer), each from its open to its close: its special
    opens and closes kept, its Sundays kept (Tel Aviv's until 2026), its breaks (none since 2000
    in Seoul) and Saturdays (Seoul's until 1998) left out."""
    import exchange_calendars as xc
    import pandas as pd

    probe = xc.get_calendar(code)  # its default span: for the bounds of its records
    lo, hi = probe.bound_min(), probe.bound_max()
    start = max(pd.Timestamp(SPAN[0]), lo) if lo is not None else pd.Timestamp(SPAN[0])
    end = min(pd.Timestamp(SPAN[1]), hi) if hi is not None else pd.Timestamp(SPAN[1])
    try:
        cal = xc.get_calendar(code, start=start, end=end)
    except ValueError:  # holidays recorded to 2050 only (Seoul's): the sessions end there
        cal = xc.get_calendar(code, start=start, end=min(end, pd.Timestamp(HOLIDAYS_TO)))
    sched = cal.schedule
    sched = sched[sched.index.dayofweek != 5]  # Seoul's Saturdays until 1998 out
    opens, closes = (
        sched[c].dt.tz_convert("UTC").dt.as_unit("us").astype("int64").to_numpy()
        for c in ("open", "close")
    )
    day = sched.index.values.astype("datetime64[D]").astype(np.int64)
    return Sessions(opens, closes, day, opens, closes)


def _library_day_sessions(source: str, tz: str, hours: tuple[time, time]) -> Sessions:
    """The library's trading days, each open from ``hours[0]`` to ``hours[1]`` local time."""
    import pandas_market_calendars as mcal

    sched = mcal.get_calendar(source).schedule(*SPAN)
    days = sched.index.values.astype("datetime64[D]")
    start, end = (np.timedelta64(t.hour * 60 + t.minute, "m") for t in hours)
    midnight = days.astype("datetime64[us]")
    opens = _utc_us(midnight - np.timedelta64(int(start >= end), "D") + start, tz)
    closes = _utc_us(midnight + end, tz)
    return Sessions(opens, closes, days.astype(np.int64), opens, closes)


@functools.cache
def sessions(name: str = DEFAULT_CALENDAR) -> Sessions:
    """The open intervals of calendar ``name`` over :data:`SPAN` (computed once per process,
    and a library calendar's once per machine: :mod:`foxhunt.data.market.session_cache`).

    Raises:
        DataError: unknown calendar name.
    """
    spec = calendar_spec(name)
    if not spec.source:
        return _rule_sessions(name)
    from foxhunt.data.market.session_cache import cached_sessions

    if spec.local_hours is not None:
        key = f"{spec.source}_{spec.tz}_" + "-".join(t.strftime("%H%M") for t in spec.local_hours)
        return Sessions(
            *cached_sessions(
                key, SPAN, lambda: _library_day_sessions(spec.source, spec.tz, spec.local_hours)
            )
        )
    if spec.source.startswith(EXCHANGE_CALENDARS):
        from importlib import metadata

        code = spec.source.removeprefix(EXCHANGE_CALENDARS)
        # its version, and how the sessions are taken from it (no Saturdays, no breaks; until
        # session 59 ``_weekdays``: no Sundays either)
        key = f"{spec.source}_xc{metadata.version('exchange_calendars')}_nosaturdays"
    else:
        key, code = spec.source, ""

    def build() -> Sessions:
        return _exchange_sessions(code) if code else _library_sessions(spec.source)

    if spec.half_days is None and not spec.breaks:
        return _amended(Sessions(*cached_sessions(key, SPAN, build)), spec)
    # half days and breaks cached with the library's sessions (Singapore's Lunar New Year's
    # eves would import exchange_calendars in every process), the key naming them
    special = "_".join(
        "-".join("+".join(v) if isinstance(v, tuple) else str(v) for v in part).replace(":", "")
        for part in ((spec.half_days,) if spec.half_days else ()) + spec.breaks
    )

    def amended() -> Sessions:
        cal = Sessions(*build())
        if spec.half_days is not None:
            cal = _half_days(cal, spec.half_days, spec.tz)
        for br in spec.breaks:
            cal = _with_break(cal, br, spec.tz)
        return cal

    return _amended(Sessions(*cached_sessions(f"{key}_{special}", SPAN, amended)), spec)


def _amended(cal: Sessions, spec: CalendarSpec) -> Sessions:
    """A library calendar's sessions with ``spec``'s closed dates dropped and its early open
    applied (a trading day's first interval opens earlier)."""
    if spec.closed_dates:
        keep = ~np.isin(_month_days(cal.day), list(spec.closed_dates))
        cal = Sessions(*(a[keep] for a in cal))
    if spec.early_open is None:
        return cal
    since, at = spec.early_open
    days = cal.day.astype("datetime64[D]")
    early = _local_us(cal.day, at, spec.tz)
    first = np.r_[True, cal.day[1:] != cal.day[:-1]]  # the day's first interval
    moved = first & (days >= np.datetime64(since)) & (early < cal.opens)
    opens = np.where(moved, early, cal.opens)
    day_open = np.where(days >= np.datetime64(since), np.minimum(early, cal.day_open), cal.day_open)
    return Sessions(opens, cal.closes, cal.day, day_open, cal.day_close)


def _month_days(days: np.ndarray) -> np.ndarray:
    """Each of ``days`` (days since the epoch) as ``MM-DD``."""
    return np.char.partition(np.datetime_as_string(days.astype("datetime64[D]")), "-")[:, 2]


def _local_us(days: np.ndarray, at: time, tz: str) -> np.ndarray:
    """Wall-clock time ``at`` in ``tz`` on each of ``days`` (days since the epoch) -> µs UTC."""
    midnight = days.astype("datetime64[D]").astype("datetime64[us]")
    return _utc_us(midnight + np.timedelta64(at.hour * 60 + at.minute, "m"), tz)


def _half_days(cal: Sessions, half: HalfDays, tz: str) -> Sessions:
    """``cal`` with the trading days of ``half`` closed at its wall-clock close: intervals from
    the close on dropped, the one across it cut there."""
    days = cal.day.astype("datetime64[D]")
    hit = np.isin(_month_days(cal.day), list(half.dates))
    if half.lunar_eve:
        from exchange_calendars.lunisolar_holidays import chinese_lunar_new_year_dates

        eves = chinese_lunar_new_year_dates.values.astype("datetime64[D]") - 1
        hit |= np.isin(days, eves)
    hit &= days >= np.datetime64(half.since)
    close = np.where(hit, _local_us(cal.day, half.close, tz), cal.day_close)
    keep = cal.opens < close
    closes = np.minimum(cal.closes, close)
    day_close = np.where(hit, close, cal.day_close)
    return Sessions(
        cal.opens[keep], closes[keep], cal.day[keep], cal.day_open[keep], day_close[keep]
    )


def _with_break(cal: Sessions, br: LocalBreak, tz: str) -> Sessions:
    """``cal`` with the break ``br`` cut out of every interval that spans it on its days."""
    weekday = (cal.day + 3) % 7  # 1970-01-01 was a Thursday: Monday 0
    b0, b1 = _local_us(cal.day, br.start, tz), _local_us(cal.day, br.end, tz)
    on = np.isin(weekday, [int(d) for d in br.weekdays])
    split = on & (cal.day >= np.datetime64(br.since, "D").astype(np.int64))
    split &= (cal.opens < b0) & (b1 < cal.closes)
    parts = [
        (cal.opens, np.where(split, b0, cal.closes), cal.day, cal.day_open, cal.day_close),
        (b1[split], cal.closes[split], cal.day[split], cal.day_open[split], cal.day_close[split]),
    ]
    cols = [np.concatenate(c) for c in zip(*parts, strict=True)]
    order = np.argsort(cols[0], kind="stable")
    return Sessions(*(c[order] for c in cols))


def locate(ts_us: np.ndarray, cal: Sessions) -> tuple[np.ndarray, np.ndarray]:
    """For each time, the first interval that closes after it and whether it is inside it.

    Args:
        ts_us: µs since the epoch, UTC, any shape.
        cal: the calendar's sessions.

    Returns:
        ``(k, inside)``: interval indices clipped to the last one, and a boolean mask.
    """
    k = np.searchsorted(cal.closes, ts_us, side="right")
    k = np.minimum(k, cal.closes.size - 1)
    inside = (cal.opens[k] <= ts_us) & (ts_us < cal.closes[k])
    return k, inside


def closed_share(ts_us: np.ndarray, name: str = DEFAULT_CALENDAR) -> float:
    """Share of ``ts_us`` (µs since the epoch, UTC) outside the sessions of calendar ``name``.

    For ``inspect``: a large share says the file's zone or the instrument's calendar is wrong.
    Returns 0.0 for no timestamps.
    """
    ts_us = np.asarray(ts_us, dtype=np.int64)
    if ts_us.size == 0:
        return 0.0
    _, inside = locate(ts_us, sessions(name))
    return float(1.0 - inside.mean())
