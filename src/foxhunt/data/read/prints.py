"""Bars built from prices at times: trades (a price per print, with or without its size),
quotes (bid and ask) or a series of closes — a file with no open, high or low.

``--bar-minutes K`` reads such a file. Each row is a print; the prints of each minute (UTC)
become a one-minute bar — open the first price, high the highest, low the lowest, close the
last (in time; rows of one time in file order); volume the sizes summed (trades with a size
column), else the number of prints (quotes: the tick volume) — and those bars are then
aggregated to K minutes on the calendar's grid like any one-minute bars
(:mod:`foxhunt.data.read.resample`). A quote's price is its mid, (bid + ask) / 2: a crossed
quote is a price like another. A minute without a print has no bar (vendors' bar files skip
them too). Without ``--bar-minutes`` quotes are refused naming the flag, and a file of one
price column is refused as missing its open, the flag named as the other reading (its other
columns may be bars' prices under names not recognised).

The bars are built across the files read together (:func:`foxhunt.data.read.bars.load_bars`),
so a minute split between two tick files is one bar; an empty size counts 0 (the unreported
volume's warning), a signed one by its size. Rows whose time or a price is missing, not a
number or not positive, or whose size is not a number, are left as they are for the validation
to name by their row (:mod:`foxhunt.data.read.validate`); rows with every price empty stay too
(future rows, fillers). Each bar keeps the row of its first print, so a later error names a row
of the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import polars as pl

from foxhunt.data.read.columns import ColumnMap, canonical_name
from foxhunt.data.read.numbers import blank
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.validate import EMPTY_COLUMN, FILE_COLUMN, PRICE_COLUMNS, ROW_COLUMN
from foxhunt.errors import DataError

_BID = ("bid", "bidprice", "bestbid", "bestbidprice", "bidpx", "bidpx00")
_ASK = ("ask", "askprice", "bestask", "bestaskprice", "askpx", "askpx00", "offer", "offerprice")
_SIZE = ("size", "qty", "quantity", "amount", "tradesize", "lastsize", "shares", "tradevolume")
"""Spellings (squashed: lower case, no spaces, ``_``, ``.`` or ``-``) of a quote's sides and of
a trade's size (Binance's ``qty``, Polygon's ``size``, Databento's ``bid_px_00``)."""

_PRICE = "__print_price"
ACTION = "__print_action"
"""The column an ``action`` is read into (:attr:`Prints.action`)."""
_TIME = "__print_ts"


def _squashed(name: str) -> str:
    return re.sub(r"[\s_.:\-]+", "", canonical_name(name))


@dataclass(frozen=True)
class Prints:
    """How a file of prints is read: ``trades`` (one price column, the close's, and perhaps a
    size) or ``quotes`` (bid and ask columns)."""

    kind: str
    prices: tuple[str, ...]
    size: str | None
    action: str | None = None
    """Databento's ``action`` column (an event per row: adds, cancels, trades ``T``): only the
    trades are prints."""
    sparse: bool = False
    """A quote's rows hold only the side that changed, the other cell blank (MetaTrader 5's
    tick export, ``<FLAGS>`` 2 or 4): each side is carried forward to the next row."""

    @property
    def what(self) -> str:
        """The file's rows, for messages."""
        if self.kind == "quotes":
            return f"quotes (bid '{self.prices[0]}', ask '{self.prices[1]}')"
        return f"prices at times (column '{self.prices[0]}': trades or closes)"

    def columns(self, cols: ColumnMap) -> ColumnMap:
        """``cols`` with the bar fields read from the prints: a quote's bid as open and low, its
        ask as high and close (the mid is taken after reading, :func:`minute_bars`); a trade's
        price as all four; its size as the volume."""
        first, last = self.prices[0], self.prices[-1]
        prices = {"open": first, "high": last, "low": first, "close": last}
        unused = [p for p in cols.prices.values() if p not in self.prices]  # an empty <LAST>
        unread = (
            *cols.extra,
            *unused,
            *([cols.volume] if cols.volume and self.size is None else []),
        )
        extra = tuple(n for n in unread if n not in (*self.prices, self.size, self.action))
        return replace(cols, prices=prices, volume=self.size, extra=extra)


def find_prints(cols: ColumnMap) -> Prints | None:
    """The prints a file holds when it has none of open, high and low: trades or closes (a
    close column: ``price``, ``last``, ``close``), else quotes (bid and ask columns); None
    when it holds neither, or holds some of a bar's prices."""
    if any(c in cols.prices for c in ("open", "high", "low")):
        return None
    if "close" in cols.prices:
        size = cols.volume or next((n for n in cols.extra if _squashed(n) in _SIZE), None)
        action = next((n for n in cols.extra if canonical_name(n) == "action"), None)
        return Prints("trades", (cols.prices["close"],), size, action)
    bid = next((n for n in cols.extra if _squashed(n) in _BID), None)
    ask = next((n for n in cols.extra if _squashed(n) in _ASK), None)
    if bid is None or ask is None:
        return None
    return Prints("quotes", (bid, ask), None)


def prints_of(
    path: object, cols: ColumnMap, sides: bool, opts: ReadOptions, lf: pl.LazyFrame
) -> tuple[Prints | None, Prints | None]:
    """The prints a file without a bar's prices holds (None when it has them all, or has a
    quote's sides as bars, ``sides``), and those read as prints: with ``--bar-minutes``.

    Raises:
        DataError: quotes without ``--bar-minutes``, prints with ``--stamps end``, or a file
            of "trades" whose other columns hold a bar's high and low (:func:`_disguised`).
    """
    if sides or all(c in cols.prices for c in PRICE_COLUMNS):
        return None, None
    found = find_prints(cols)
    if found is None:
        return None, None
    found = _quotes_beside_no_trades(lf, cols, found)
    flags = any(canonical_name(n) == "flags" for n in cols.extra)  # MetaTrader 5's <FLAGS>
    if found.kind == "quotes" and flags and _one_sided(lf, found):
        found = replace(found, sparse=True)
    if opts.bar_minutes is None:
        if found.kind == "quotes":  # a close column alone may be bars named otherwise
            raise DataError(refusal(path, found))
        return found, None
    if opts.stamps == "end":
        raise DataError(refusal(path, found, opts.stamps))
    if (
        found.kind == "trades"
        and not opts.column_map  # the user named the columns: read as they say
        and (pair := _disguised(lf, cols, found)) is not None
    ):
        price, (high, low) = found.prices[0], pair
        raise DataError(
            f"{path}: missing column 'open'; columns '{high}' and '{low}' stay above and below "
            f"'{price}' as a bar's high and low do: bars whose names were not recognised, not "
            f"prices at times (--bar-minutes reads those); --columns open=COLUMN,high={high},"
            f"low={low} names them (--columns close={price} reads the file as prices)"
        )
    return found, found


_HEAD_ROWS = 1000
"""Rows a file's prints are judged on (:func:`_quotes_beside_no_trades`, :func:`_one_sided`)."""
ONE_SIDED_SHARE = 0.1
"""The share of the first rows holding one side of a quote, the other blank, that makes a file
of quotes with a ``<FLAGS>`` column one whose rows carry only the side that changed (MetaTrader
5's), not one with a few cells missing (those are named by their row)."""


def _missing(lf: pl.LazyFrame, col: str) -> pl.Expr:
    """Where ``col`` holds no value: null, or blank text."""
    if lf.collect_schema()[col] == pl.String:
        return blank(col)
    return pl.col(col).is_null()


def _quotes_beside_no_trades(lf: pl.LazyFrame, cols: ColumnMap, found: Prints) -> Prints:
    """Quotes for a file of "trades" whose price column (MetaTrader 5's ``<LAST>``) is empty over
    the first rows while bid and ask columns hold the prices (a currency's ticks); else
    ``found``."""
    if found.kind != "trades" or found.action is not None:
        return found
    quotes = find_prints(replace(cols, prices={}, extra=(*cols.extra, found.prices[0])))
    if quotes is None or quotes.kind != "quotes":
        return found
    try:
        empty = lf.head(_HEAD_ROWS).select(_missing(lf, found.prices[0]).all()).collect().item()
    except pl.exceptions.PolarsError:  # a malformed file: its read names the line
        return found
    return quotes if empty else found


def _one_sided(lf: pl.LazyFrame, quotes: Prints) -> bool:
    """Whether at least :data:`ONE_SIDED_SHARE` of the first rows hold one side of the quote
    and leave the other blank."""
    bid, ask = (_missing(lf, c) for c in quotes.prices)
    try:
        share = lf.head(_HEAD_ROWS).select((bid ^ ask).mean()).collect().item()
    except pl.exceptions.PolarsError:
        return False
    return share is not None and share >= ONE_SIDED_SHARE


def carried(value: pl.Expr, lf: pl.LazyFrame, col: str) -> pl.Expr:
    """A sparse quote's side (:attr:`Prints.sparse`) read from ``col`` as ``value``: where its
    cell is blank, the last value before it (null before the first); a cell that is no number
    stays null, to be named by its row."""
    return pl.when(_missing(lf, col)).then(value.forward_fill()).otherwise(value)


def no_quote_yet(values: dict[str, pl.Expr], lf: pl.LazyFrame) -> pl.Expr:
    """The first rows of a sparse quote file that hold one side before the other has been
    given (no quote yet: left out), ``values`` each side's column -> its :func:`carried`
    value."""
    return pl.any_horizontal(_missing(lf, c) & v.is_null() for c, v in values.items())


_BRACKET = 2.0
"""How far (a factor) a bar's high and low stay from its close, at most, in :func:`_disguised`."""


def _disguised(lf: pl.LazyFrame, cols: ColumnMap, found: Prints) -> tuple[str, str] | None:
    """Two other number columns of a file of one price column, over its first 1,000 rows: one
    never below the price, one never above it, each within a factor of :data:`_BRACKET` and
    apart from it somewhere — a bar's high and low under names not recognised (``First, Max,
    Min, Last``); None for trades (their ids, epochs and sizes are far from the price, and a
    quote's sides beside its trades, TAQ's and Databento's ``bid_px_00``, are no bar's)."""
    price = found.prices[0]
    quote = (*_BID, *_ASK)
    others = [
        n for n in cols.extra if n not in (found.size, found.action) and _squashed(n) not in quote
    ]
    if not others:
        return None
    number = [pl.col(n).cast(pl.Float64, strict=False) for n in (price, *others)]
    try:
        head = lf.select(number).head(1000).collect().drop_nulls()
    except pl.exceptions.PolarsError:  # a malformed file: its read names the line
        return None
    if head.height < 2:
        return None
    ratios = {n: head[n] / head[price] for n in others}
    above = [n for n, r in ratios.items() if r.is_between(1, _BRACKET).all() and (r > 1).any()]
    below = [n for n, r in ratios.items() if r.is_between(1 / _BRACKET, 1).all() and (r < 1).any()]
    return (above[0], below[0]) if above and below else None


_BUILT = "open the first price, high the highest, low the lowest, close the last"
"""How a bar is built from prints, for the refusals that name ``--bar-minutes``."""


def refusal(path: object, prints: Prints, stamps: str = "start") -> str:
    """Why such a file is not read without ``--bar-minutes`` (or with ``--stamps end``), and
    the flag that reads it."""
    if stamps == "end":
        return (
            f"{path}: holds {prints.what}, not bars: --stamps end is for bars stamped at their "
            "end (a print's time is its own); leave it out"
        )
    return (
        f"{path}: holds {prints.what}, not bars (no open, high or low): --bar-minutes K "
        f"builds K-minute bars from them ({_BUILT})"
    )


def prints_hint(prints: Prints | None) -> str:
    """For a file of one price column without open, high or low (trades, closes, or bars whose
    other columns went unrecognised), the flag that reads it as prints; else ``""``."""
    if prints is None:
        return ""
    return (
        f"; or, if its rows are {prints.what}, --bar-minutes K builds K-minute bars from "
        f"them ({_BUILT}; --bar-minutes 1 reads a series of closes a minute or more apart bar "
        "for bar)"
    )


def minute_bars(
    frame: pl.DataFrame, files: frozenset[int]
) -> tuple[pl.DataFrame, dict[int, tuple[int, int, int]]]:
    """The prints of ``files`` (rows of ``frame`` as :meth:`Prints.columns` read them: a trade's
    price in all four, a quote's bid in open and low and its ask in high and close; the volume a
    size, or 1 per print where there is none) as one-minute bars, stamped at the minute's start,
    across the files (a minute split between two files is one bar); rows of other files, and
    prints that are no good (no time, a price missing, not positive or not finite) as they are.
    Databento's events other than trades are left out.

    Returns:
        The frame in file order (a bar where its first print was), without the action column;
        per file of prints, how many prints, events left out and bars (of its first prints).
    """
    printed = pl.col(FILE_COLUMN).is_in(list(files))
    left_out: dict[int, int] = {}
    if ACTION in frame.columns:  # Databento's adds, cancels, modifies ...: no trade
        other = printed & pl.col(ACTION).is_not_null() & (pl.col(ACTION) != "T")
        left_out = dict(frame.filter(other).group_by(FILE_COLUMN).len().rows())
        frame = frame.filter(~other)
    prices = [pl.col(c) for c in PRICE_COLUMNS]
    good = (
        printed
        & pl.col("ts").is_not_null()
        & pl.all_horizontal(p.is_not_null() & p.is_finite() & (p > 0) for p in prices)
        & pl.col("volume").is_not_null()
        & pl.col("volume").is_finite()
    ).fill_null(False)
    price = (pl.col("open") + pl.col("close")) / 2  # a quote's mid; a trade's price (p + p) / 2
    kept = [c for c in frame.columns if c not in ("ts", "symbol", "volume", *PRICE_COLUMNS)]
    firsts = (FILE_COLUMN, ROW_COLUMN, EMPTY_COLUMN)
    bars = (
        frame.filter(good)
        .with_columns(price.alias(_PRICE), pl.col("ts").alias(_TIME))
        .sort("symbol", _TIME, FILE_COLUMN, ROW_COLUMN)
        .with_columns(pl.col("ts").dt.truncate("1m"))
        .group_by("symbol", "ts", maintain_order=True)
        .agg(
            pl.col(_PRICE).first().alias("open"),
            pl.col(_PRICE).max().alias("high"),
            pl.col(_PRICE).min().alias("low"),
            pl.col(_PRICE).last().alias("close"),
            pl.col("volume").abs().sum(),  # a signed size (Bitfinex's sells) counts by its size
            *[pl.col(c).first() if c in firsts else pl.col(c).last() for c in kept],
        )
        .select(frame.columns)
    )
    counts: dict[int, tuple[int, int, int]] = {}
    for f in sorted(files):
        of = pl.col(FILE_COLUMN) == f
        counts[f] = (frame.filter(of & good).height, left_out.get(f, 0), bars.filter(of).height)
    out = pl.concat([bars, frame.filter(~good)]).sort(FILE_COLUMN, ROW_COLUMN)
    return out.drop(ACTION, strict=False), counts
