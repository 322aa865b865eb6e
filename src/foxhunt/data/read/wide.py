"""Several symbols side by side, and pandas' column levels: tables in the wrong shape for bars.

A wide table holds each symbol's prices in its own columns (``ES_open ... NQ_open``, or the same
names twice: the second set read past, verdict valid). yfinance's frame written to parquet
names its columns by two levels, ``('Close', 'AAPL')``: one ticker reads as its symbol, several
are a wide table. Both are named, with the long table (a symbol column) that reads them.
"""

from __future__ import annotations

import re
from pathlib import Path

from foxhunt.data.read.columns import ColumnMap
from foxhunt.errors import DataError

_PRICE_WORDS = ("open", "high", "low", "close", "last", "price")


def wide_symbols(names: list[str]) -> list[str]:
    """The symbols of a wide table's column groups (``ES_open``, ``open_ES``, ``ES Close``):
    two or more, else none."""
    found: list[str] = []
    for n in names:
        parts = [p for p in re.split(r"[\s_.:\-]+", n.strip()) if p]
        if len(parts) == 2 and sum(p.lower() in _PRICE_WORDS for p in parts) == 1:
            other = next(p for p in parts if p.lower() not in _PRICE_WORDS)
            if other not in found:
                found.append(other)
    return found if len(found) > 1 else []


_LEVELS = re.compile(r"^\(\s*'([^']*)',\s*'([^']*)'\s*\)$")
"""A column named by two levels as pandas writes its MultiIndex columns to parquet."""


def column_levels(path: Path, names: list[str]) -> tuple[dict[str, str], str | None] | None:
    """For columns named ``('Open', 'AAPL')`` (yfinance's frame written with ``to_parquet``):
    each renamed to its first level (``('Date', '')`` to ``Date``) and the one ticker of the
    second; None when the names are not so.

    Raises:
        DataError: the levels hold several tickers (a wide table).
    """
    split = {n: m.groups() for n in names if (m := _LEVELS.match(n))}
    if len(split) < 4:
        return None
    tickers = sorted({b for a, b in split.values() if a and b})
    if len(tickers) > 1:
        raise DataError(
            f"{path}: columns of several tickers side by side ({', '.join(tickers[:4])}): one "
            "table with a symbol column reads them (pandas: df.stack(level=1).reset_index())"
        )
    renamed = {n: (a or b) for n, (a, b) in split.items()}
    return renamed, (tickers[0] if tickers else None)


_PREFIXED = re.compile(
    r"^(?P<ticker>[A-Za-z0-9^][A-Za-z0-9^=.\-]*?)[._ ](?P<field>open|high|low|close|volume|adjusted)$",
    re.IGNORECASE,
)
"""A field named after its ticker: quantmod's ``AAPL.Open`` ... ``AAPL.Adjusted``."""
_NOT_TICKERS = ("px", "price", "last", "adj", "prev", "previous", *("mid", "bid", "ask"))
"""Words before a price that name no ticker (``PX_OPEN``, ``price_open``, ``bid_open``)."""


def ticker_prefix(names: list[str]) -> tuple[dict[str, str], str] | None:
    """For columns named ``AAPL.Open``, ``AAPL.High`` ... (R's ``write.zoo`` of a quantmod
    series, ``GSPC.Open`` for ``^GSPC``): each renamed to its field (``Open``) and the one
    ticker; None unless open, high, low and close share one ticker and no column is a bare
    price name (several tickers are a wide table: :func:`wide_symbols`)."""
    if any(n.strip().lower() in ("open", "high", "low", "close") for n in names):
        return None
    split = {n: m for n in names if (m := _PREFIXED.match(n.strip()))}
    tickers = {m["ticker"] for m in split.values()}
    fields = {m["field"].lower() for m in split.values()}
    if len(tickers) != 1 or not {"open", "high", "low", "close"} <= fields:
        return None
    ticker = tickers.pop()
    if ticker.lower() in _NOT_TICKERS:
        return None
    return {n: m["field"] for n, m in split.items()}, ticker.lstrip("^")


def check_duplicated(path: Path, names: list[str], cols: ColumnMap) -> None:
    """Refuse a header that names a bar field it reads twice (two symbols side by side under
    the same names): the second set was dropped, verdict valid (polars names it
    ``open_duplicated_0``, pandas ``open.1``)."""
    read = {*cols.prices.values(), cols.volume, cols.ts}
    for n in names:
        m = re.fullmatch(r"(.+)(?:_duplicated_|\.)\d+", n)  # polars' and pandas' renaming
        if m and m.group(1) in read:
            raise DataError(
                f"{path}: column '{m.group(1)}' appears more than once in the header: several "
                "symbols side by side under the same names? write one file per symbol, or one "
                f"table with a symbol column (--columns {m.group(1)}={n} reads the later one)"
            )


_SIDES = ("mid", "bid", "ask")
_FIELDS = {"open": "open", "o": "open", "high": "high", "h": "high"}
_FIELDS |= {"low": "low", "l": "low", "close": "close", "c": "close"}
_FIELDS |= {f"{f}price": f for f in ("open", "high", "low", "close")}  # IG's openPrice.bid


def quote_sides(names: list[str]) -> dict[str, dict[str, str]]:
    """Bars of a quote's sides side by side: side (``mid``, ``bid``, ``ask``) -> field -> the
    column, for each side with all four prices (FXCM's ``BidOpen``, ``Bid Open``, ``open_bid``,
    Oanda's ``bid.o`` / ``mid_c``)."""
    found: dict[str, dict[str, str]] = {}
    for n in names:
        squashed = re.sub(r"[\s_.:\-]+", "", n.strip().lower())
        for side in _SIDES:
            for word, field in _FIELDS.items():
                if squashed in (side + word, word + side):
                    found.setdefault(side, {})[field] = n
    return {s: f for s, f in found.items() if len(f) == 4}


def not_bars_hint(names: list[str]) -> str:
    """What a table without bar prices looks like instead, for the missing-column message:
    bid and ask bars (FXCM's ``BidOpen`` ...) or several symbols side by side (trades and
    quotes are read as prints before: :mod:`foxhunt.data.read.prints`)."""
    sides = quote_sides(names)
    if sides:  # the mid where there is one, else the bid
        side = next(s for s in ("mid", "bid", "ask") if s in sides)
        flags = ",".join(f"{k}={sides[side][k]}" for k in ("open", "high", "low", "close"))
        flags = f"'{flags}'" if " " in flags else flags  # as a shell takes it
        held = [s for s in ("bid", "ask", "mid") if s in sides]
        named = " and ".join(held) if len(held) < 3 else "bid, ask and mid"
        return f" ({named} bars: --columns {flags} reads the {side} side)"
    numbers = [n for n in names if re.fullmatch(r"\s*[+-]?\d+(\.\d*)?\s*", n)]
    # "2024-01-03 10:30:00.291, 4780.25, 3": the first line is data (pandas' names 0, 1, 2 of
    # a frame of lists are no prices: one with a point is)
    if len(numbers) >= 2 and any("." in n for n in numbers):
        return (
            f"; its first line looks like data ({', '.join(numbers[:2])}), not names: a file "
            "without a header needs one naming its columns (such as time,price,size), and "
            "--bar-minutes K builds K-minute bars from ticks"
        )
    wide = wide_symbols(names)
    if wide:
        return (
            f"; the columns look like several symbols side by side ({', '.join(wide[:4])}): "
            "write one file per symbol, or one table with a symbol column"
        )
    return ""
