"""TradingView's export names, ``EXCHANGE_SYMBOL, INTERVAL.csv``: the symbol, the interval it
claims, and the market its exchange names.

``CME_MINI_ES1!, 5.csv`` is E-mini S&P 500 front-month 5-minute bars, ``TSE_7203, 1D.csv``
Toyota's days on Tokyo. A stock exchange outside the US is kept as Yahoo's market after the
ticker (``7203.T``), so the stock is judged on that exchange's calendar
(:data:`foxhunt.data.market.instruments.LISTING_MARKETS`); until session 54 the exchange was
dropped, and ``LSE_VOD, 60`` was the NYSE's VOD, ``TSE_7203`` an unknown market on 24x7.
"""

from __future__ import annotations

import re
from datetime import timedelta

TRADINGVIEW = re.compile(
    r"^([A-Za-z0-9]+(?:_[A-Za-z0-9]+)*?)_([A-Za-z0-9][^_,\s]*), (\d+[SDWM]?|[SDWM])"
    r"(?:_[A-Za-z0-9]+)?(?: \(\d+\))?$"
)
"""The name, perhaps with a download suffix (``_a1b2c``, `` (1)``); the exchange may hold ``_``
(``CME_MINI``)."""

UNITS = {"": timedelta(minutes=1), "S": timedelta(seconds=1), "D": timedelta(days=1)}
"""Interval units that are fixed lengths (``W`` and ``M``, a month, are not)."""

EXCHANGE_MARKETS = {
    "TSE": "T", "LSE": "L", "XETR": "DE", "HKEX": "HK", "ASX": "AX", "NSE": "NS", "BSE": "BO",
    "SGX": "SI", "TSX": "TO",
    # since session 59 (Euronext's one prefix names four markets: left out)
    "KRX": "KS", "TWSE": "TW", "SSE": "SS", "SZSE": "SZ", "BMFBOVESPA": "SA", "JSE": "JO",
    "SIX": "SW", "BME": "MC", "MIL": "MI", "OMXSTO": "ST", "OMXHEX": "HE", "OMXCOP": "CO",
    "OSL": "OL", "GPW": "WA", "ATHEX": "AT", "TASE": "TA", "IDX": "JK", "BMV": "MX",
    "BIST": "IS", "SET": "BK", "MYX": "KL", "NZX": "NZ",
}  # fmt: skip
"""TradingView's stock exchanges outside the US -> Yahoo's market after the ticker."""


def tradingview_name(
    exchange: str, symbol: str, interval: str, continuous: re.Pattern[str]
) -> tuple[str, timedelta | None]:
    """The symbol (``continuous``: a front-month code, ``ES1!`` -> ``ES``) and the interval
    claimed (``5``, ``1D``; ``W`` and ``M`` claim none)."""
    front = continuous.fullmatch(symbol)
    if front:
        symbol = front.group(1) or front.group(2)
    count, unit = interval.rstrip("SDWM") or "1", interval.lstrip("0123456789")
    claim = UNITS[unit] * int(count) if unit in UNITS and int(count) > 0 else None
    symbol = symbol.upper().rstrip("!")
    market = EXCHANGE_MARKETS.get(exchange.upper())
    if market is not None and not front:
        padded = symbol.zfill(4) if market == "HK" and symbol.isdigit() else symbol
        symbol = f"{padded}.{market}"  # HKEX_700: Yahoo's 0700.HK
    return symbol, claim
