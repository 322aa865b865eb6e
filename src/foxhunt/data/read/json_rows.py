"""Candle rows without names (a list of lists), read in their vendor's order.

Candle APIs write a bar as a list whose order is the vendor's: Binance ``[open time, open, high,
low, close, volume, close time, ...]`` (12 fields), Bybit ``[start, open, high, low, close,
volume, turnover]`` (7), Kraken ``[time, open, high, low, close, vwap, volume, count]`` (8),
OKX ``[ts, open, high, low, close, vol, volCcy, volCcyQuote, confirm]`` (9), and three orders
of six fields: Gemini's ``[time, open, high, low, close, volume]``, Coinbase's ``[time, low,
high, open, close, volume]`` and Bitfinex's ``[time, open, close, high, low, volume]``. The
length names the order; where it names several, the order in which every bar's high is at or
above its open, close and low and its low at or below its open and close is the one (where two
orders both hold, the bars read alike in each: their open is their low). Until session 59 every
such file was refused.
"""

from __future__ import annotations

from typing import Any

_OHLC = ("open", "high", "low", "close")
_ORDERS: dict[int, tuple[tuple[str, ...], ...]] = {
    5: (("t", "open", "high", "low", "close"),),
    6: (
        ("t", "open", "high", "low", "close", "volume"),  # Gemini, and most
        ("t", "low", "high", "open", "close", "volume"),  # Coinbase
        ("t", "open", "close", "high", "low", "volume"),  # Bitfinex
    ),
    7: (("t", "open", "high", "low", "close", "volume", ""),),  # Bybit
    8: (("t", "open", "high", "low", "close", "", "volume", ""),),  # Kraken
    9: (("t", "open", "high", "low", "close", "volume", "", "", ""),),  # OKX
    12: (("t", "open", "high", "low", "close", "volume", *[""] * 6),),  # Binance
}
"""Each row length's orders: the fields kept by name, ``""`` the ones left (a close time, a
turnover, a VWAP, a count)."""


def _bars(order: tuple[str, ...], rows: list[list[Any]]) -> list[tuple[float, ...]] | None:
    """Each row's (open, high, low, close) read in ``order``; None where one is no number or
    no bar (a high under its open, close or low; a low over its open or close)."""
    where = [order.index(name) for name in _OHLC]
    bars = []
    for row in rows:
        try:
            o, h, lo, c = (float(row[i]) for i in where)
        except (TypeError, ValueError):
            return None
        if h < max(o, c, lo) or lo > min(o, c):
            return None
        bars.append((o, h, lo, c))
    return bars


def positional_records(rows: list[Any]) -> list[dict[str, Any]] | None:
    """``rows`` (lists of one length) as named records in their vendor's order; None where no
    order of that length reads every row as a bar, or two read them differently."""
    if not rows or not all(isinstance(r, list) for r in rows):
        return None
    lengths = {len(r) for r in rows}
    orders = _ORDERS.get(lengths.pop(), ()) if len(lengths) == 1 else ()
    fits = [(o, bars) for o in orders if (bars := _bars(o, rows)) is not None]
    if not fits or any(bars != fits[0][1] for _, bars in fits[1:]):
        return None
    order = fits[0][0]
    return [{k: v for k, v in zip(order, row, strict=True) if k} for row in rows]
