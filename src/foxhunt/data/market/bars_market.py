"""Symbols whose market their bars decide: those no name places, and bare tickers taken for US
stocks whose bars do not keep the NYSE's hours and days.

:func:`bars_calendar` is the one rule, used by :func:`fitted_calendars` (instrument
resolution: training, features, evaluation, live updates), by ``data inspect`` and by the
time-axis checks, so all three see the same calendar:

- a symbol of the user's table or of the built-in futures, crypto, a spot FX pair, a CFD, a
  listing with its market (``7203.T``) or a list's index of another market keeps its
  calendar, but for the bare root of a CME crypto future (``BTC``, ``ETH``), which its bars
  through the weekends make a coin on ``24x7``;
- a symbol whose name gives no market (``unknown`` or another market's ``^`` index, on
  ``24x7``; Quantiacs' future outside the US, ``F_AX``, on the weekday rule's ``fx_24x5``,
  forecast on Christmas and New Year's Day until session 58) takes the calendar its bars keep
  (:func:`foxhunt.data.market.calendar_fit.fit_calendar`), if any;
- a bare ticker of 1-5 letters, taken for a US stock on ``xnys``, keeps ``xnys`` while at most
  :data:`LEFT_GUESS` of its intraday bars fall outside it (beyond that the time axis refuses
  them), or 1 % of its daily bars (on US holidays: ``BMW.csv``'s Xetra days); beyond, the
  calendar its bars keep, if any (``SONY_5m.csv`` of Tokyo's hours: ``xtks``; ``AAPL``'s
  04:00-20:00 bars: ``xnys_ext``, the extended hours; ``CABLE``'s FX week: ``fx_24x5``;
  ``DOGE``'s intraday bars through the weekends: ``24x7``), and is then no stock where that
  is no stock market's (``instruments.on_calendar``);
- a symbol its name puts on the NYSE (an ETF or US index of the lists, ``AAPL.US``) moves
  to the NYSE's extended hours, ``xnys_ext``, where over a quarter of its bars leave the
  session and the bars keep 04:00-20:00 New York; a cash index of the lists (``SPX``, ``DAX``)
  also to its future's or a CFD's hours (:data:`INDEX_MOVES`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import timedelta
from typing import Any

import numpy as np
import polars as pl

from foxhunt.data.market.calendar import infer_interval
from foxhunt.data.market.calendar_fit import (
    CANDIDATES,
    CLOSED_MAX,
    MARGIN,
    NEUTRAL,
    WEEKDAYS,
    closed_in,
    fit_calendar,
    round_the_clock,
)
from foxhunt.data.market.instrument import Instrument
from foxhunt.data.market.instruments import (
    infer_instrument,
    lookup,
    on_calendar,
    resolve_all,
    tick_from_prices,
)

US_GUESS = "xnys"
"""The calendar of a bare ticker taken for a US stock."""
LEFT_GUESS = 0.25
"""Share of a US guess's intraday bars outside the NYSE's hours beyond which its bars decide:
where the time-axis checks would refuse them (``CLOSED_SHARE_MAX``); fewer are a file's odd
bars. Daily bars decide beyond 1 % on US holidays (``CLOSED_MAX``): they have no hours to
misread, and an exchange's calendar needs two of its holidays among them to be taken."""
EXTENDED = {"xnys": "xnys_ext"}
"""A name's calendar -> the same exchange's extended hours, which bars of a symbol placed by its
name (an ETF of the list, ``AAPL.US``, a US cash index) may move it to; a cash index also to
:data:`INDEX_MOVES`."""
INDEX_MOVES = ("fx_24x5", "cme_equity", "ice_us", "eurex", "ice_europe", "ice_europe_index")
"""Calendars a cash index of the lists (``SPX``, ``DAX``) moves to where over a quarter of its
intraday bars leave its exchange's session and they keep one of them: its future's (CME's,
Eurex's, ICE's) or a CFD's (the FX week). A ``DAX_5m.csv`` of FDAX's 01:10-22:00 was refused
until session 56 as 59 % closed on Xetra's calendar."""
STOCK_MARKETS = tuple(c for c in CANDIDATES if c.startswith("x") or c == "bvmf")
"""The calendars a US guess's daily bars may move to: stock exchanges' (not a futures
exchange's: Xetra's stock, not Eurex)."""


def market_guess(symbol: str, table: Mapping[str, Instrument] | None = None) -> str | None:
    """The calendar ``symbol``'s name guesses when its bars may overrule it, else None.

    ``24x7`` for a name that gives no market, ``xnys`` for a bare ticker taken for a US stock,
    ``fx_24x5`` for Quantiacs' future outside the US (``F_AX``; the days its bars lack decide),
    ``cme_crypto`` for a built-in crypto future's bare root (``BTC``, ``ETH``: a coin's name
    too; its bars through the weekends make it one); None for anything else placed by a table,
    a list, a listing suffix, or crypto."""
    if (found := lookup(symbol, table)) is not None:
        coin = found.asset_class == "crypto_future" and found.root == symbol.strip().upper()
        return found.calendar if coin and found is lookup(symbol) else None
    guess = infer_instrument(symbol)
    if guess.asset_class == "crypto":
        return None
    if guess.calendar == NEUTRAL:
        return NEUTRAL
    if guess.asset_class == "unknown" and guess.calendar == WEEKDAYS:
        return WEEKDAYS  # Quantiacs' future outside the US (F_AX): the weekday rule, a guess
    bare = symbol.strip().upper() == guess.root and "." not in symbol  # not AAPL.US, BRK.B
    return (
        US_GUESS if guess.asset_class == "stock" and guess.calendar == US_GUESS and bare else None
    )


def bars_calendar(
    symbol: str,
    ts: pl.Series,
    table: Mapping[str, Instrument] | None = None,
    *,
    naive: bool = False,
) -> str | None:
    """The calendar ``symbol``'s bars (times ``ts``) give it in place of its name's guess, or
    None: its name or table places it, its bars keep the guess, or they keep no calendar.

    ``naive``: the times were written without a zone and read as UTC, no ``--tz`` given; a US
    guess's intraday bars then move only to the FX week or ``24x7`` (no zone turns a stock's
    hours into 24-hour days), else keep it (the time-axis checks name the zone that fits)."""
    guess = market_guess(symbol, table)
    named = None if guess is not None or lookup(symbol, table) is not None else symbol
    beyond = _beyond(named)
    if guess is None and not beyond:
        return None
    ts = ts.drop_nulls().unique().sort()
    if ts.len() < 3:
        return None
    t = ts.dt.epoch("us").to_numpy().astype(np.int64)
    interval = infer_interval(ts)
    if beyond:  # placed by its name: there, its extended hours, or an index's future's
        if closed_in(t, interval, infer_instrument(symbol).calendar) <= LEFT_GUESS:
            return None
        # kept as a calendar keeps bars, not merely inside it: RTH bars read in a zone hours
        # off sit inside 04:00-20:00 but span a third of its day (refused, the zone named)
        fit = fit_calendar(t, interval, beyond, margin=0.0)  # 24x7 is no choice here
        return None if fit is None else fit.calendar
    daily = interval >= timedelta(days=1)
    # daily bars hold no hours to misread: a few on US holidays (over 1 %) are a market's; the
    # weekday rule has no holidays for bars to fall on, the days the bars lack tell theirs
    weekdays = guess == WEEKDAYS and daily
    if guess != NEUTRAL and not weekdays:
        if closed_in(t, interval, guess) <= (CLOSED_MAX if daily else LEFT_GUESS):
            return None
    # the guess itself cannot fit: over a quarter of the bars (1 % of daily ones) left it
    margin = MARGIN if guess == NEUTRAL else 0.0  # 24x7 is no choice for a guess's bars
    fit = fit_calendar(t, interval, _moves(guess, daily, naive), margin)
    if fit is not None:
        return fit.calendar
    # intraday bars through the weekends are no stock's or CME future's: a coin's (DOGE, BTC
    # spot); a stock's daily bars on every day are as likely its weekdays' carried forward
    coin = guess != NEUTRAL and (guess != US_GUESS or not daily)
    return NEUTRAL if coin and round_the_clock(t, interval) else None


def _beyond(named: str | None) -> tuple[str, ...]:
    """The calendars a symbol placed by its name (``named``; None: placed otherwise) may move
    to: its exchange's extended hours (an ETF of the list, ``AAPL.US``: ``xnys_ext``) and, for a
    cash index of the lists, its future's or a CFD's hours (:data:`INDEX_MOVES`)."""
    if named is None:
        return ()
    inst = infer_instrument(named)
    own = (EXTENDED[inst.calendar],) if inst.calendar in EXTENDED else ()
    return own + INDEX_MOVES if inst.asset_class == "cash_index" else own


def _moves(guess: str, daily: bool, naive: bool) -> tuple[str, ...]:
    """The calendars a guess may move to (besides ``24x7`` for bars through the weekends).

    Any for a name that gives no market, and for the weekday rule's (Quantiacs' futures outside
    the US: ``F_AX``'s days are Eurex's, its holidays left out). For a US guess: daily bars, a stock exchange's only
    (their days alone cannot tell Xetra's stock from Eurex's future); intraday bars, any (a
    23-hour day is a future's, ``EMINI`` on ``cme_equity``; the FX week's, ``CABLE``'s, a
    pair's), but of naive times only the FX week (a stock's hours read in the wrong zone keep
    another exchange's; no zone makes them 24-hour days). None for a crypto future's root."""
    if guess in (NEUTRAL, WEEKDAYS):
        return CANDIDATES
    if guess != US_GUESS:
        return ()
    if daily:
        return STOCK_MARKETS
    return (WEEKDAYS,) if naive else CANDIDATES


def fitted_calendars(
    bars: Any,
    table: Mapping[str, Instrument] | None = None,
    naive: Collection[str] = (),
) -> dict[str, str]:
    """``{symbol: calendar}`` for the symbols of ``bars`` (``symbol``, ``ts``) whose bars decide
    their calendar (:func:`bars_calendar`; ``naive``: the symbols read from naive times, no
    ``--tz``); the others are left out."""
    if "ts" not in bars.columns:
        return {}
    out: dict[str, str] = {}
    for (sym,), g in bars.select("symbol", "ts").group_by("symbol"):
        if (cal := bars_calendar(str(sym), g["ts"], table, naive=sym in naive)) is not None:
            out[str(sym)] = cal
    return dict(sorted(out.items()))


def with_calendars(
    table: Mapping[str, Instrument] | None, calendars: Mapping[str, str]
) -> dict[str, Instrument] | None:
    """``table`` plus, for each symbol of ``calendars``, its name's instrument on that calendar
    (the table given, unchanged, when there are none)."""
    if not calendars:
        return None if table is None else dict(table)
    extra = {s.strip().upper(): on_calendar(infer_instrument(s), c) for s, c in calendars.items()}
    return {**(table or {}), **extra}


def resolve_bars(bars: Any, table: Mapping[str, Instrument] | None = None) -> dict[str, Instrument]:
    """``{symbol: instrument}`` for every symbol of a bars frame (``symbol``, prices).

    The data is read only for symbols that need a tick size from it (crypto, CFDs, unknown): their
    open/high/low/close values go to :func:`~foxhunt.data.market.instruments.infer_tick_size`.
    A symbol whose bars decide its calendar (:func:`fitted_calendars`) gets it (and, moved
    from a stock or future to no stock market's, the tick its prices show). Inferred
    symbols are warned about as :func:`~foxhunt.data.market.instruments.resolve_all` does.

    Args:
        bars: a polars DataFrame with ``symbol``, ``open high low close`` and, for the
            calendars from the bars, ``ts``.
        table: the user's instruments, or None.
    """
    fits = fitted_calendars(bars, table)
    prices_by_symbol: dict[str, Any] = {}
    for sym in sorted(bars["symbol"].unique().to_list()):
        prices = None
        if tick_from_prices(sym, table) or sym in fits:  # a stock moved may be none
            rows = bars.filter(pl.col("symbol") == sym)
            cols = [c for c in ("open", "high", "low", "close") if c in rows.columns]
            prices = rows.select(cols).to_numpy().reshape(-1)
        prices_by_symbol[sym] = prices
    return resolve_all(prices_by_symbol, table, calendars=fits)
