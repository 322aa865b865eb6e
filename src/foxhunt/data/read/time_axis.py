"""Is the time axis of these bars plausible? Checks of the timestamps, not the prices.

A file can be valid bar by bar and still be read wrong: ``19900102`` taken as epoch seconds
(bars 1 s apart in 1970), a fixed-EST clock read as UTC (FX bars in the weekend), a 1-minute
file read as one bar a day. Per symbol, after validation (:func:`examine`):

* ``years``: a bar before 1980 (epoch counts; dates written as dates: before 1900) or after
  tomorrow (:data:`EARLIEST`, :data:`EARLIEST_WRITTEN`, :data:`FUTURE_SLACK`);
* ``interval``: the bar interval differs from the one the file name claims (``M1``, ``5min``,
  :mod:`foxhunt.data.read.vendors`), or one bar per trading day where the name claims intraday bars;
* ``closed``: more than :data:`CLOSED_SHARE_MAX` of the bars fall where the symbol's calendar
  is closed (daily bars, :data:`DAILY`: on days it does not trade; their time of day is a
  convention, so the ``zone`` rule skips them);
* ``clock``: naive timestamps whose sessions move by an hour at daylight-saving changes where
  another zone keeps them at the exchange's usual minute (:mod:`foxhunt.data.read.clock_fit`):
  local times read as UTC, all in hours open in both (regular-hours ES in New York time);
* ``stamps``: bars stamped at their end, read as their start: the sessions open an interval
  after the calendar's open and end with a bar at its close (:mod:`foxhunt.data.read.stamps`;
  ``--stamps end`` reads them right);
* ``zone``: naive timestamps read in a guessed zone (UTC, or a vendor's clock) while another
  zone or fixed offset (UTC-12..UTC+14, and the cities of :data:`CITY_ZONES`) puts clearly fewer
  bars in closed hours (:func:`~foxhunt.data.read.clock_zones.zone_fits`): a clock 5 hours off passes the closed-share limit on
  FX (3.6 % of bars in the weekend) but not this one. The closed bars must fall on one day in
  20 or more (:attr:`~foxhunt.data.read.clock_zones.ZoneFit.spread`): a vendor's session on a holiday is no clock's fault. A
  zone the user gave (``--tz``) is kept with a warning naming the better one, unless it also
  breaks the ``closed`` rule; the ``clock`` rule overrules a zone that moves the sessions.
  Times marked UTC (``Z``, ``+00:00``, epochs) are tried as well, read as marked, and the line
  names ``--tz ZONE --force-tz`` (:mod:`foxhunt.data.read.marked_utc`: the zone rule only where
  the zone's sessions open and close where the calendar's do, the clock rule only for a market a
  name places).

Each problem is one line naming the file, the symbol, what was read, the likely cause and the
flag that fixes it (:func:`examine`: the problems, and the warnings of zones kept as given).
:func:`check_time_axis` raises the first problem (exit 2) unless ``--allow-odd-times``, which
logs them instead; a kept zone is always a warning (``data inspect``: verdict "suspicious").
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from foxhunt.data.market.bars_market import EXTENDED, US_GUESS, bars_calendar, market_guess
from foxhunt.data.market.calendar import closed_day, closed_time, infer_interval, interval_text
from foxhunt.data.market.calendar_fit import (
    NEUTRAL,
    closed_in,
    fit_calendar,
    zone_fit,
)
from foxhunt.data.market.calendars import calendar_spec
from foxhunt.data.market.instruments import calendar_of, infer_instrument, lookup
from foxhunt.data.read.clock_fit import MIN_EDGES, ClockFit, clock_fits, session_edges
from foxhunt.data.read.clock_zones import (
    BROKER_ZONES,
    CITY_ZONES,
    flag_for_zone,
    metatrader_sign,
    server_clock_line,
    zone_fits,
)
from foxhunt.data.read.marked_utc import FORCE_FLAG, edges_kept
from foxhunt.data.read.stamps import DATED, FEW_EDGES, stamp_fit
from foxhunt.data.read.zones import local_to_utc, utc_to_local
from foxhunt.errors import DataError

if TYPE_CHECKING:
    from foxhunt.data.market.instrument import Instrument
    from foxhunt.data.read.bars import LoadedBars

log = logging.getLogger(__name__)

EARLIEST = datetime(1980, 1, 1, tzinfo=UTC)
"""No bar file of electronic markets starts before this; earlier bars are a misread clock."""
EARLIEST_WRITTEN = datetime(1900, 1, 1, tzinfo=UTC)
"""The floor of dates written as dates (``1970-01-02``, ``19700102``): they are what they say
(the S&P 500 from 1950, a daily future from 1970); :data:`EARLIEST` is for epoch counts."""
FUTURE_SLACK = timedelta(days=1)
"""A bar later than now + this is a misread clock (or a typo such as 2099)."""
DAILY = DATED
"""Bars this far apart or more (20 h) are daily: judged by their trading day, not their clock."""
WEEKLY = timedelta(days=5)
"""Bars this far apart or more (weekly, monthly) are not judged by the day they are stamped."""
CLOSED_SHARE_MAX = 0.25
"""Share of bars in the calendar's closed hours above which the axis is refused."""
CLOSED_SHARE_WARN = 0.05
"""Share above which the bars in closed hours are warned of (``data inspect``: suspicious)."""
ODD_TIMES_FLAG = "--allow-odd-times"


@dataclass(frozen=True)
class TimeAxisFindings:
    """What :func:`examine` found, one line each.

    Attributes:
        problems: refused (exit 2) unless ``--allow-odd-times``.
        kept: the user's ``--tz`` kept although another zone fits clearly better: never
            refused (a run trained with ``--tz Etc/GMT+5`` reads its later files the same way),
            always a warning; such bars are not "valid" (``data inspect``).
    """

    problems: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    closed: tuple[str, ...] = ()
    """Symbols with over :data:`CLOSED_SHARE_WARN` of their bars in closed hours (or on closed
    days), not refused: :func:`check_time_axis` warns of them (``data inspect`` has its own)."""


def _zone_keeping(
    symbol: str,
    ts: pl.Series,
    read_in: str,
    instruments: Mapping[str, Instrument] | None,
    guess: str,
) -> tuple[str, str] | None:
    """``(zone, calendar)``: the zone (UTC as written, the cities, the brokers' clock) in which
    a naive US guess's bars keep a calendar: the guess itself or its extended hours if some
    zone keeps them as a fit would (``AAPL``'s session in New York's wall clock: the zone rule
    names New York; FirstRate's 04:00-20:00 bars of ``MSFT`` in it: ``xnys_ext``, until session
    60 ICE's index futures read as UTC), else another (:func:`bars_calendar`), the fewest bars
    closed; None where none does (``EURO_1h.csv`` of New York's wall clock: the FX week in
    ``America/New_York``)."""
    wall = pl.DataFrame({"t": ts}).select(utc_to_local(pl.col("t"), read_in)).to_series()
    interval = infer_interval(ts)
    best: tuple[float, str, str] | None = None
    for zone in dict.fromkeys(("UTC", *CITY_ZONES, *BROKER_ZONES)):
        local = pl.DataFrame({"w": wall}).select(local_to_utc(pl.col("w"), zone)).to_series()
        local = local.drop_nulls()
        t = _us(local)
        for own in (guess, *([EXTENDED[guess]] if guess in EXTENDED else [])):
            if fit_calendar(t, interval, (own,), margin=0.0) is not None:
                return zone, own
        if (cal := bars_calendar(symbol, local, instruments)) is None:
            continue
        closed = closed_in(t, interval, cal)
        if best is None or closed < best[0]:
            best = (closed, zone, cal)
    return None if best is None else (best[1], best[2])


def _extended_hours(ts: pl.Series) -> bool:
    """Whether every bar falls on a weekday between 04:00 and 20:00 New York time: a US
    listing's regular session with its pre- and post-market trading (Alpha Vantage, Polygon)."""
    local = ts.dt.convert_time_zone("America/New_York")
    minute = local.dt.hour().cast(pl.Int32) * 60 + local.dt.minute().cast(pl.Int32)
    inside = (local.dt.weekday() <= 5) & (minute >= 4 * 60) & (minute < 20 * 60)
    return bool(inside.all())


def _has_extended_hours(symbol: str, instruments: Mapping[str, Instrument] | None) -> bool:
    """Whether ``symbol`` trades before and after the session: a stock or an ETF, not a cash
    index (``SPX``'s session written as UTC, 04:30-11:00 New York, is a zone, not pre-market)."""
    inst = lookup(symbol, instruments) or infer_instrument(symbol)
    return inst.asset_class in ("stock", "etf")


def _clock_vetoes(clock: ClockFit | None, zone: str) -> bool:
    """Whether the session edges speak against the zone the closed hours prefer: it moves them
    at daylight saving, or another zone keeps them clearly better (Tokyo, preferred for moving a
    holiday's bars to the next day, over New York for regular-hours bars in New York time)."""
    if clock is None:
        return False
    return clock.breaks_sessions(zone) or (clock.clearly_better and zone not in clock.best)


_STOCK_LIKE = re.compile(r"^[A-Z]{1,5}$")


def _guessed_market(
    symbol: str, calendar: str, instruments: Mapping[str, Instrument] | None
) -> str:
    """For a symbol whose market was guessed from its shape alone (a ticker taken for a US stock,
    an unknown name): a note that the calendar, not the clock, may be what is wrong (an ICE or
    Osaka future's correct UTC bars were told to move by hours); else ``""``."""
    if lookup(symbol, instruments) is not None:
        return ""
    kind = infer_instrument(symbol).asset_class
    if kind not in ("stock", "unknown"):
        return ""
    return (
        f" (the market of '{symbol}' is a guess, {kind} on calendar {calendar}: if it trades "
        "elsewhere, --instruments FILE names its calendar and the clock may be right)"
    )


def _root_as_ticker(symbol: str, instruments: Mapping[str, Instrument] | None) -> str:
    """For a bare built-in futures root that is also a stock's ticker (``ZS``: Zscaler, ``HE``:
    Hawaiian Electric) whose bars no zone fits: a note that it was read as the future; else
    ``""``."""
    key = symbol.strip().upper()
    found = lookup(symbol, instruments)
    if found is None or key in (instruments or {}) or key != found.root:
        return ""
    if not _STOCK_LIKE.match(key):
        return ""
    return (
        f" ('{symbol}' is read as the {found.asset_class} future {found.root} on calendar "
        f"{found.calendar}: if it is a stock, --instruments FILE names its market)"
    )


def _clock_line(where: str, fit: ClockFit, marked: bool = False) -> str:
    zones = " or ".join(fit.best)
    flags = " or ".join(f"--tz {flag_for_zone(z)}{_force(marked)}" for z in fit.best)
    which = (
        " (the same daylight-saving dates: the one the vendor writes)" if len(fit.best) > 1 else ""
    )
    return (
        f"{where}: the sessions open at {fit.usual_open} on the file's clock; with the "
        f"{_as_read(marked, fit.read_in)}, {fit.share:.0%} of the session opens and closes fall "
        f"at their usual minute of {fit.exchange_zone} time across the daylight-saving changes, "
        f"{fit.best_share:.0%} read as {zones}: the file's clock is likely local time; "
        f"{flags}{which} reads it so, or {ODD_TIMES_FLAG}"
    )


def _closed_line(where: str, share: float, bars: int, closed: str) -> str:
    """A symbol's bars in closed hours or on closed days, under the refusal's share."""
    return (
        f"{where}: {round(share * bars):,} of {bars:,} bars ({share:.0%}) fall {closed}: "
        "read as given, each a bar and a target of the series (data inspect lists them; drop "
        "them, or --instruments FILE sets the market's calendar)"
    )


def _force(marked: bool) -> str:
    """What follows ``--tz ZONE`` in advice: `` --force-tz`` for times marked UTC."""
    return f" {FORCE_FLAG}" if marked else ""


def _as_read(marked: bool, read_in: str) -> str:
    """How the times were read, in a line of advice."""
    return "timestamps marked UTC read as such" if marked else f"naive timestamps read as {read_in}"


_NAMED_DATE = re.compile(r"(?<!\d)((?:19|20)\d{6})(?!\d)")


def _times_of_day(path: object, ts: pl.Series) -> str | None:
    """Why bars read as epoch seconds that are whole thousands under 86,400,000 (a day's
    milliseconds), in a file whose name holds a date, were misread (QuantConnect LEAN's minute
    files: milliseconds since midnight, the day in the name); None for any other file."""
    named = _NAMED_DATE.search(str(path))
    seconds = ts.dt.epoch("s")
    # read as epoch seconds, the milliseconds of a day are under 86,400,000 and of whole seconds
    if named is None or seconds.min() < 0 or seconds.max() >= 86_400_000:  # type: ignore[operator]
        return None
    if (seconds % 1000 != 0).any():
        return None
    return (
        "counts time from midnight of a day the file does not hold (the date in its name, "
        f"{named.group(1)}: QuantConnect LEAN's milliseconds since midnight): no --ts-format "
        "reads it; write each bar's date and time (LEAN's ToolBox converts its data)"
    )


MIXED_MIN_GAPS = 20
"""Gaps between one symbol's bars a file needs before its interval is compared with the
symbol's other files (a file of a few bars says little), but for a file of daily bars or
coarser: two gaps (a week's daily download beside minute bars is no quiet minute file)."""


def mixed_intervals(loaded: LoadedBars) -> dict[str, str]:
    """Per symbol read from several files whose bars are of different intervals (a folder with
    Yahoo's daily ``AAPL.csv`` beside a one-minute ``AAPL_1min.csv``, merged into one series of
    minute bars with a bar at every midnight), what the files are: ``AAPL.csv (1d),
    AAPL_1min.csv (1min)``. A file's interval is its most common gap (the first reading of
    :func:`~foxhunt.data.market.calendar.infer_interval`, for each file at once);
    another file's differs where no two of its bars are as close as that (a quiet month of
    one-minute bars, gaps of two and three minutes the most common, is still one-minute bars);
    a file of fewer than :data:`MIXED_MIN_GAPS` gaps is compared only where its bars are a day
    apart or more."""
    from foxhunt.data.read.validate import FILE_COLUMN

    frame = loaded.frame
    if len(loaded.files) < 2 or frame.height == 0:
        return {}
    pairs = frame.select("symbol", FILE_COLUMN).unique()
    shared = pairs.group_by("symbol").len().filter(pl.col("len") > 1)["symbol"]
    if shared.len() == 0:  # each symbol from one file (a file per symbol): nothing to compare
        return {}
    gaps = (
        frame.filter(pl.col("symbol").is_in(shared.implode()))
        .select("symbol", FILE_COLUMN, "ts")
        .drop_nulls()
        .sort("symbol", FILE_COLUMN, "ts")
        .with_columns(gap=pl.col("ts").diff().over("symbol", FILE_COLUMN))
        .filter(pl.col("gap") > timedelta(0))
    )
    counts = gaps.group_by("symbol", FILE_COLUMN, "gap").len()
    per_file = (
        counts.sort("len", "gap", descending=[True, False])
        .group_by("symbol", FILE_COLUMN, maintain_order=True)
        .agg(
            interval=pl.col("gap").first(),
            closest=pl.col("gap").min(),
            gaps=pl.col("len").sum(),
        )
        .filter((pl.col("gaps") >= MIXED_MIN_GAPS) | (pl.col("closest") >= DAILY))
        .sort("symbol", FILE_COLUMN)
    )
    out: dict[str, str] = {}
    for (sym,), g in per_file.group_by("symbol", maintain_order=True):
        rows = g.rows(named=True)
        finest = min(r["interval"] for r in rows)
        if any(r["closest"] > finest for r in rows):
            out[str(sym)] = ", ".join(
                f"{loaded.files[r[FILE_COLUMN]].name} ({interval_text(r['interval'])})"
                for r in rows
            )
    return out


def examine(
    loaded: LoadedBars,
    bars: pl.DataFrame,
    instruments: Mapping[str, Instrument] | None = None,
    now: datetime | None = None,
) -> TimeAxisFindings:
    """Every time-axis problem of ``bars`` (validated, sorted by symbol and ts), and every
    zone given with ``--tz`` that another zone fits clearly better, one line each.

    Args:
        loaded: what ``bars`` were read from (files, zones, naive flags, claimed intervals).
        bars: the validated bars.
        instruments: the user's instrument table (calendars per symbol).
        now: the wall clock (tests pin it); None: now.
    """
    now = now or datetime.now(UTC)
    from foxhunt.data.read.validate import FILE_COLUMN

    first_file = dict(loaded.frame.group_by("symbol").agg(pl.col(FILE_COLUMN).min()).iter_rows())
    out: list[str] = []
    kept: list[str] = []
    closed: list[str] = []
    mixed = mixed_intervals(loaded)
    for (sym,), g in bars.select("symbol", "ts").group_by("symbol", maintain_order=True):
        f = int(first_file.get(sym, 0))
        where = f"{loaded.files[f]}: symbol {sym!r}"
        if sym in mixed:
            out.append(
                f"{where}: the files hold bars of different intervals ({mixed[sym]}), merged "
                "into one series: read each interval apart (a folder or a glob per interval), "
                f"or {ODD_TIMES_FLAG}"
            )
            continue
        ts = g["ts"]
        first, last = ts[0], ts[-1]
        read = f"'{loaded.spellings[f].get('ts', 'ts')}'"
        counted = loaded.counted[f] if loaded.counted else True
        if first < EARLIEST and (lean := _times_of_day(loaded.files[f], ts)):
            out.append(f"{where}: column {read} {lean}")
            continue
        if first < (EARLIEST if counted else EARLIEST_WRITTEN):
            out.append(
                f"{where}: first bar {first} is before 1980: column {read} is misread (dates "
                "taken as epoch seconds, or the wrong epoch unit); --ts-format (yyyymmdd, "
                f"epoch-ms, '%Y%m%d %H%M%S', ...) reads it right, or {ODD_TIMES_FLAG}"
            )
            continue
        if last > now + FUTURE_SLACK:
            out.append(
                f"{where}: last bar {last} is after tomorrow: column {read} is misread (wrong "
                f"epoch unit or date order) or holds a typo; --ts-format reads it right, or "
                f"{ODD_TIMES_FLAG}"
            )
            continue
        if ts.len() < 3:
            continue
        interval = infer_interval(ts)
        claim = loaded.claims[f] if loaded.claims else None
        if claim is not None and interval != claim:
            per_day = ""
            if interval >= DAILY and claim < DAILY:
                per_day = " (one bar per trading day where the name's bars would give hundreds)"
            out.append(
                f"{where}: bars are {interval_text(interval)} apart{per_day} but the file name says "
                f"{interval_text(claim)}: the timestamps are misread (--ts-format) or the file is not "
                f"what its name says ({ODD_TIMES_FLAG})"
            )
            continue
        cal = calendar_of(str(sym), instruments)
        naive = bool(loaded.naive[f]) if loaded.naive else False
        unzoned = naive and loaded.options.tz is None
        marked = bool(loaded.marked[f]) if loaded.marked else False  # a UTC mark, maybe wrong
        force = _force(marked)
        # the calendar resolve_bars will give it; a naive US guess keeps the zone advice, or is
        # told the zone in which its intraday bars keep another calendar (below)
        cal = bars_calendar(str(sym), ts, instruments, naive=unzoned) or cal
        as_utc = unzoned or marked  # read as UTC, perhaps another zone's wall clock
        guessed = market_guess(str(sym), instruments) if as_utc and interval < DAILY else None
        if guessed == NEUTRAL and cal == NEUTRAL and (hint := zone_fit(_us(ts), interval)):
            kept.append(  # a nameless file of local times: said, not refused (24x7 holds them)
                f"{where}: its {'times marked UTC' if marked else 'naive times read as UTC'} "
                f"keep no market's hours (calendar 24x7); read in {hint[1]} they keep calendar "
                f"{hint[0]}'s: --tz {hint[1]}{force} reads them so"
            )
        if interval >= WEEKLY:  # a week's or a month's bar is stamped by convention (pandas'
            continue  # "W" on a Sunday, month ends): its day says nothing of the calendar
        if interval >= DAILY:  # the time of day is a convention, not a clock: no zone rule
            share = float(g.select(closed_day(pl.col("ts"), cal).mean()).item())
            if share > CLOSED_SHARE_MAX:
                out.append(
                    f"{where}: {share:.0%} of the daily bars fall on days calendar {cal} does "
                    "not trade (weekends, holidays): dates shifted by a zone (--tz) or a market "
                    f"with other days (--instruments FILE sets its calendar), or {ODD_TIMES_FLAG}"
                )
            elif share > CLOSED_SHARE_WARN:
                closed.append(
                    _closed_line(where, share, ts.len(), f"on days calendar {cal} does not trade")
                )
            continue
        guess = _guessed_market(str(sym), cal, instruments)  # for the zone and clock lines
        share = float(g.select(closed_time(pl.col("ts"), cal).mean()).item())
        if CLOSED_SHARE_WARN < share <= CLOSED_SHARE_MAX:
            closed.append(
                _closed_line(where, share, ts.len(), f"in the closed hours of calendar {cal}")
            )
        read_in = "UTC" if marked else loaded.zone_of(f)
        kept_in = None  # a US guess's refused bars: the zone in which they keep a calendar
        if guessed == US_GUESS and share > CLOSED_SHARE_MAX:
            kept_in = _zone_keeping(str(sym), ts, read_in, instruments, cal)
            if kept_in is not None and kept_in[1] == cal:
                kept_in = None  # its own hours in another zone: the zone rule names it
            if kept_in is not None:
                zone, where_kept = kept_in
                said = "read as UTC, as written," if zone == "UTC" else f"read in {zone}"
                guess = (
                    f"{guess[:-1]}; {said} its bars keep calendar {where_kept}'s hours and "
                    f"days: --tz {zone}{force} reads them on it)"
                )
        # the zone and clock rules judge the guess's calendar: where another calendar's zone
        # keeps the bars (EURO_1h.csv's FX week in New York's), that zone is named alone
        clocked = (naive or marked) and kept_in is None
        fit = zone_fits(ts, read_in, cal) if clocked and share > 0 else None
        # the FX brokers' clock fits the FX week's edges as New York does: tried for its
        # calendar even when no bar is closed as read (4-hour bars of MetaTrader read as UTC)
        brokers = BROKER_ZONES if cal == "fx_24x5" else ()
        tried = (*CITY_ZONES, *brokers, *((fit.best,) if fit is not None else ()))
        # a mark is no naive time: only a market the name places speaks against its clock
        placed = not marked or guessed not in (US_GUESS, NEUTRAL)
        clock = clock_fits(ts, interval, read_in, cal, tried) if clocked and placed else None
        if fit is not None and fit.clearly_better and marked:
            if not edges_kept(ts, interval, fit.best, cal):  # only the calendar's edges prove
                fit = None  # a mark wrong
        if fit is not None and fit.clearly_better and not _clock_vetoes(clock, fit.best):
            line = (
                f"{where}: {share:.1%} of the bars fall in the closed hours of calendar {cal} "
                f"with the {_as_read(marked, fit.read_in)}, {fit.best_share:.1%} read as "
                f"{fit.best}: the file's clock is likely {fit.best_named}; {fit.flags(force)} "
                f"reads it so{' (the bars cannot tell them apart)' if fit.ties else ''}, or "
                f"{ODD_TIMES_FLAG}{guess}"
            )
            if naive and loaded.options.tz is not None and share <= CLOSED_SHARE_MAX:
                # The user named the zone: theirs is kept (a run trained with --tz Etc/GMT+5
                # reads its later files the same way), the better fit is named, not enforced.
                kept.append(f"--tz {loaded.options.tz} kept as given: {line}")
            else:
                out.append(line)
        elif clock is not None and clock.clearly_better:
            line = _clock_line(where, clock, marked) + guess
            if naive and loaded.options.tz is not None and share <= CLOSED_SHARE_MAX:  # as above
                kept.append(f"--tz {loaded.options.tz} kept as given: {line}")
            else:
                out.append(line)
        elif (stamp := stamp_fit(ts, interval, cal)) is not None and stamp.end_stamped:
            out.append(
                f"{where}: bars stamped at their end: {stamp.after_open} of {stamp.opens} "
                f"sessions open one bar ({interval_text(interval)}) after calendar {cal}'s open "
                f"and {stamp.at_close} of {stamp.closes} end with a bar at its close (stamped at "
                f"their start, they would open at the open and end a bar before the close); "
                f"--stamps end reads them so, or {ODD_TIMES_FLAG}"
            )
        elif stamp is not None and stamp.maybe_end_stamped and share <= CLOSED_SHARE_MAX:
            kept.append(
                f"{where}: bars perhaps stamped at their end: {stamp.after_open} of "
                f"{stamp.opens} sessions open one bar ({interval_text(interval)}) after calendar "
                f"{cal}'s open and {stamp.at_close} of {stamp.closes} end with a bar at its "
                f"close, too few sessions to tell ({FEW_EDGES} of each decide); --stamps end "
                "reads them so"
            )
        elif (
            share > CLOSED_SHARE_MAX
            and cal == "xnys"
            and kept_in is None  # another zone's clock keeps another market: said below
            and _has_extended_hours(str(sym), instruments)
            and _extended_hours(ts)
        ):  # an index has none: its session read in a zone hours off
            out.append(
                f"{where}: {share:.0%} of the bars fall in the closed hours of calendar {cal}, "
                "all of them in the pre- and post-market hours (04:00-20:00 New York): a file "
                "with extended-hours bars, which the calendar's 09:30-16:00 session does not "
                f"hold; {ODD_TIMES_FLAG} keeps them, or drop them before reading"
            )
        elif share > CLOSED_SHARE_MAX:  # and no zone fits clearly better (named above)
            out.append(
                f"{where}: {share:.0%} of the bars fall in the closed hours of calendar {cal}"
                ": timestamps in another zone (--tz) or a market with other hours "
                f"(--instruments FILE sets its calendar), or {ODD_TIMES_FLAG}"
                f"{guess or _root_as_ticker(str(sym), instruments)}"
            )
        said = any(line.startswith(where) for line in (*out, *kept))
        if unzoned and clock is None and not said and calendar_spec(cal).tz != "UTC":
            columns = (*loaded.spellings[f].values(), *(loaded.extra[f] if loaded.extra else ()))
            if (sign := metatrader_sign(loaded.guesses[f], columns)) is not None:
                if (edges := session_edges(ts, interval).height) < MIN_EDGES:  # MetaTrader's only
                    kept.append(server_clock_line(where, sign, edges))
    return TimeAxisFindings(tuple(out), tuple(kept), tuple(closed))


def check_time_axis(
    loaded: LoadedBars,
    bars: pl.DataFrame,
    instruments: Mapping[str, Instrument] | None = None,
) -> None:
    """Refuse the first time-axis problem (:func:`examine`), or log every one with
    ``loaded.options.allow_odd_times``; log every zone kept as given.

    Raises:
        DataError: the first problem, one line.
    """
    found = examine(loaded, bars, instruments)
    for line in (*found.kept, *found.closed):
        log.warning("%s", line)
    if not found.problems:
        return
    if not loaded.options.allow_odd_times:
        raise DataError(found.problems[0])
    for p in found.problems:
        log.warning("kept (%s): %s", ODD_TIMES_FLAG, p)


def _us(ts: pl.Series) -> np.ndarray:
    """µs since the epoch of a datetime series (naive times: their wall clock as UTC)."""
    return ts.dt.epoch("us").to_numpy().astype(np.int64)
