"""The order of a headerless file's four prices, told by its bars.

A file without a header is read by position: a time, then open, high, low and close
(:func:`foxhunt.data.read.csv_dialect.headerless_names`). Some vendors write the prices in
another order, and their rows are saved so by scripts and exports: IQFeed's history answers
(``2024-01-02 09:31:00,high,low,open,close,total volume,period volume,trades``), Coinbase's
candles (``time,low,high,open,close,volume``), Bitfinex's (``time,open,close,high,low,volume``).
Where the usual order reads some sampled rows as no bar (a high under the open, close or low, a
low over the open or close; two at the least) and exactly one of these orders reads every
sampled row as one,
the prices are read in that order (until session 60 such a file was refused, the refusal
naming the order it was read in and ``--columns`` to change it), and IQFeed's three fields
after them by its names (:data:`IQFEED_TAIL`). ``--columns`` still names each column by these
names where the guess is wrong.
"""

from __future__ import annotations

USUAL = ("open", "high", "low", "close")
VENDOR_ORDERS = {
    ("high", "low", "open", "close"): "IQFeed's",
    ("low", "high", "open", "close"): "Coinbase's",
    ("open", "close", "high", "low"): "Bitfinex's",
}
"""The vendors' orders of the four prices, each with whose it is."""
MIN_TOLD = 2
"""Rows that only another order reads as bars, at the least, before the file is read in it."""
IQFEED_TAIL = ("TotalVolume", "PeriodVolume", "NumberOfTrades")
"""IQFeed's three fields after an interval bar's prices, by its names: the day's running total
of the volume first (read as each bar's volume, every volume feature was wrong), then the bar's
own (its daily bars' two, ``PeriodVolume, OpenInterest``, read as before)."""


def _prices(cells: list[str]) -> tuple[float, ...] | None:
    try:
        return tuple(float(c.strip()) for c in cells)
    except ValueError:
        return None


def _bars(order: tuple[str, ...], rows: list[tuple[float, ...]]) -> list[tuple[float, ...]] | None:
    """Each row's (open, high, low, close) read in ``order``; None where one is no bar."""
    where = [order.index(name) for name in USUAL]
    bars = []
    for row in rows:
        o, h, lo, c = (row[i] for i in where)
        if h < max(o, c, lo) or lo > min(o, c):
            return None
        bars.append((o, h, lo, c))
    return bars


def price_order(names: tuple[str, ...], rows: list[list[str]]) -> tuple[str, ...]:
    """``names`` (a headerless file's, by position) with its four prices in the one vendor's
    order (:data:`VENDOR_ORDERS`) that reads every sampled row in ``rows`` as a bar where the
    usual order does not; else ``names`` as they are."""
    if "open" not in names:
        return names
    at = names.index("open")
    if names[at : at + 4] != USUAL:
        return names
    prices = [_prices(r[at : at + 4]) for r in rows if len(r) >= at + 4]
    if not prices or any(p is None for p in prices):
        return names  # a number written otherwise (a decimal comma): read as usual, then judged
    read = [p for p in prices if p is not None]
    if _bars(USUAL, read) is not None:
        return names
    # the rows only the vendor's order reads as bars tell it (a row it reads alike, flat or
    # opening at its low, tells nothing): at least MIN_TOLD (one bad bar among bars opening at
    # their low was read in Coinbase's order, every column swapped, until the review of
    # session 60)
    if sum(_bars(USUAL, [p]) is None for p in read) < MIN_TOLD:
        return names
    fits = {order: bars for order in VENDOR_ORDERS if (bars := _bars(order, read)) is not None}
    if len({tuple(b) for b in fits.values()}) != 1:
        return names  # none reads them, or two read them differently: refused, naming the order
    order = next(iter(fits))
    tail = names[at + 4 :]
    if VENDOR_ORDERS[order] == "IQFeed's" and len(tail) == len(IQFEED_TAIL):
        tail = IQFEED_TAIL
    return (*names[:at], *order, *tail)


def vendor_order(names: tuple[str, ...] | None) -> str | None:
    """What a headerless file's ``names`` say of a price order other than the usual one
    (``high, low, open, close (IQFeed's)``), or None."""
    if not names or "open" not in names:
        return None
    at = min(names.index(p) for p in USUAL if p in names)
    order = tuple(names[at : at + 4])
    return f"{', '.join(order)} ({VENDOR_ORDERS[order]})" if order in VENDOR_ORDERS else None
