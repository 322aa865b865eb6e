"""The bar interval a file name claims: ``ES_5min``, ``EURUSD_M1``, ``daily``.

:func:`foxhunt.data.read.vendors.guess_from_name` gives it with the symbol; the time-axis check
(:mod:`foxhunt.data.read.time_axis`) compares it with the bars.
"""

from __future__ import annotations

import re
from datetime import timedelta

_DECADE = re.compile(r"^(19|20)\d0s$")
"""``1990s`` in a file name is a decade, not 1,990 seconds."""
TOKEN = re.compile(r"[-_. ]+")
_COUNT_UNIT = re.compile(
    r"^(\d+)(s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hr|hour|hours|d|day|days)$"
)
_MT_CODE = re.compile(r"^([mhd])(\d+)$")
_WORDS = {"daily": timedelta(days=1), "hourly": timedelta(hours=1), "minute": timedelta(minutes=1)}
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_APART = re.compile(
    r"(?<![A-Za-z0-9])(?<!\d{4}-)([1-9]\d{0,2})[-_ ](secs?|seconds?|mins?|minutes?|hr|hours?|days?)"
    r"(?![A-Za-z0-9])",
    re.IGNORECASE,
)
"""A count and its unit apart: Kaggle's bitcoin history ``bitstampUSD_1-min_data_...``,
Dukascopy's ``EURUSD_Candlestick_1_Hour_BID_...``, ``AAPL 5 min`` (claimed nothing until
session 60); a count of one to three digits, not a year's month (``BTC_2021_minute``: a year
and the 1-minute bars; ``NQ_2020-12_minutes``: December; ``ES_2020_1_min``: one minute)."""
_DUKASCOPY = re.compile(r"(?<=candlestick_)(\d+)_([md])(?=_(?:bid|ask)(?![a-z]))", re.IGNORECASE)
"""Dukascopy's minutes and days, ``EURUSD_Candlestick_5_M_BID_...``, ``..._1_D_ASK_...`` (its
``M`` is no month: it writes ``1_M``, ``5_M``, ``10_M``, ``30_M``)."""


_MT_TIMEFRAMES = {
    "m": (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30),
    "h": (1, 2, 3, 4, 6, 8, 12),
    "d": (1,),
}
"""MetaTrader 5's timeframes: another letter-and-number (``H24``) is no interval (``ES_H24``:
March 2024's contract)."""


def name_interval(stem: str) -> timedelta | None:
    """The bar interval a file name claims (``ES_5min``, ``EURUSD_M1``, ``daily``), or None:
    none, or several that differ (yfinance's period beside its interval, ``AAPL_60d_5m``,
    ``SPY_6M_daily``: the claim was the first, and 5-minute bars were refused as misread). A
    count of days above one (``7d``, ``60d``) is a download's period, not its bars; a count
    of ``M`` in capitals (``SPY_3M``, Binance's ``BTCUSDT-1M``) is months or minutes by vendor,
    and claims nothing."""
    found: list[timedelta] = []
    stem = _DUKASCOPY.sub(lambda m: m[1] + ("min" if m[2] in "mM" else "d"), stem)
    for written in TOKEN.split(_APART.sub(r"\1\2", stem)):
        token = written.lower()
        if re.fullmatch(r"\d+M", written):  # "3M", "1M": months as Binance and TradingView
            continue  # write them, minutes elsewhere; a month is no fixed interval either way
        if _DECADE.match(token):
            continue
        if token in _WORDS:
            found.append(_WORDS[token])
            continue
        m = _COUNT_UNIT.match(token)
        if m and m.group(2)[0] == "h" and int(m.group(1)) >= 24:
            continue  # "24h": a 24-hour session (ES_24h_1min.csv), not a bar a day
        if m and m.group(2)[0] == "d" and int(m.group(1)) > 1:
            continue  # "60d": yfinance's period, the days downloaded
        if m and int(m.group(1)) > 0:
            unit = "m" if m.group(2).startswith("mi") else m.group(2)[0]
            found.append(timedelta(seconds=int(m.group(1)) * _UNITS[unit]))
            continue
        m = _MT_CODE.match(token)
        if m and int(m.group(2)) in _MT_TIMEFRAMES[m.group(1)]:
            found.append(timedelta(seconds=int(m.group(2)) * _UNITS[m.group(1)]))
    return found[0] if len(set(found)) == 1 else None
