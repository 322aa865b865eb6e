"""Checks ``read_bars`` makes around validation: the user's kept columns (their names and
values), future rows after each symbol's last bar, enough bars after ``--bar-minutes``
aggregation, and a volume a vendor wrote as NaN. Each names the file, column and row."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from foxhunt.data.market.contracts import is_spread
from foxhunt.data.read.columns import canonical_name
from foxhunt.data.read.validate import EMPTY_COLUMN, warn_short_left_out
from foxhunt.data.read.validate import FILE_COLUMN as _FILE
from foxhunt.data.read.validate import ROW_COLUMN as _ROW
from foxhunt.errors import DataError

if TYPE_CHECKING:
    from foxhunt.data.read.bars import LoadedBars

log = logging.getLogger(__name__)


def check_min_bars(
    bars: pl.DataFrame, min_bars: int, reason: str, minutes: int, *, drop_short: bool = False
) -> pl.DataFrame:
    """Enough bars per symbol after aggregation to ``minutes``-minute bars; with
    ``drop_short`` the symbols of too few are left out (one warning) while any has enough."""
    counts = bars.group_by("symbol").len().sort(["len", "symbol"])
    short = counts.filter(pl.col("len") < min_bars)
    if short.height == 0:
        return bars
    if not drop_short or short.height == counts.height:
        sym, n = short.row(0)
        raise DataError(
            f"symbol {sym!r} has {n} bars of {minutes} minutes after --bar-minutes {minutes}; "
            f"need at least {min_bars} ({reason})"
        )
    warn_short_left_out(short["symbol"].to_list(), short["len"].to_list(), min_bars, reason)
    return bars.filter(~pl.col("symbol").is_in(short["symbol"].implode()))


def check_future_after_bars(loaded: LoadedBars, rows: pl.DataFrame, bars: pl.DataFrame) -> None:
    """A row with empty prices before its symbol's last bar is a missing bar, not a future row."""
    last = bars.group_by("symbol").agg(pl.col("ts").max().alias("__last"))
    early = rows.join(last, on="symbol", how="left").filter(
        pl.col("__last").is_null() | (pl.col("ts") <= pl.col("__last"))
    )
    if early.height:
        row = early.sort(_FILE, _ROW).row(0, named=True)
        spell = loaded.spellings[int(row[_FILE])].get("close", "close")
        raise DataError(
            f"{loaded.files[int(row[_FILE])]}: column '{spell}', row {row[_ROW]} ({row['ts']}): "
            f"missing value (a row with empty prices is a future row only after symbol "
            f"{row['symbol']!r}'s last bar)"
        )


def check_kept(loaded: LoadedBars, keep: tuple[str, ...]) -> None:
    """A missing, non-numeric or non-finite value in a kept column, named by file/column/row."""
    from foxhunt.data.read.hints import raw_value

    for c in keep:
        hit = loaded.frame.filter(~pl.col(c).is_finite().fill_null(False)).head(1)
        if hit.height:
            row = hit.row(0, named=True)
            f, r = int(row[_FILE]), int(row[_ROW])
            spell = loaded.spellings[f].get(c, c)
            if row[c] is None:
                raw = raw_value(loaded.files[f], spell, r)
                what = "missing value" if raw in (None, "") else f"not a number {raw!r}"
            else:
                what = f"{c} is {row[c]} (must be finite)"
            raise DataError(f"{loaded.files[f]}: column '{spell}', row {r} ({row['ts']}): {what}")


def without_empty_rows(
    df: pl.DataFrame, where: object, timed: bool, files: tuple[object, ...] = ()
) -> pl.DataFrame:
    """Rows that hold no value are not bars: blank or separator-only lines (``,,,,,``, a
    trailing empty line) and a footer line (Barchart's ``Downloaded from ...``), which have no
    time either, and a vendor's ``null`` row for a closed day (Yahoo), which has one. A row
    holds no value when its prices and kept input columns are all missing as written (blank,
    ``null``, ``NaN``...: the reader's ``__empty`` column; text that is no number is refused
    later, by name). They are dropped with one warning naming how many and the first, and the
    ``__empty`` column goes.

    ``timed=False`` drops only the rows without a time (a priceless row with a time is a future
    row for the known-future inputs); ``timed=True`` also those with one.
    ``files``: the files the provenance column numbers, to name the first row's file.

    Raises:
        DataError: every row holds no value (no bars).
    """
    if EMPTY_COLUMN not in df.columns:
        return df
    empty = pl.col(EMPTY_COLUMN)
    drop = empty if timed else empty & pl.col("ts").is_null()
    n = df.select(drop.sum()).item()
    if not n:
        return df.drop(EMPTY_COLUMN)
    first = df.filter(drop).row(0, named=True)
    if files and first.get(_FILE) is not None:
        where = files[int(first[_FILE])]
    if n == df.height:
        raise DataError(f"{where}: no bars: all {n} rows hold no value")
    log.warning(
        "%d rows of %s hold no value (blank lines, 'null' rows, a footer, the header again; "
        "first: row %s): not bars, dropped",
        n,
        where,
        first[_ROW],
    )
    return df.filter(~drop).drop(EMPTY_COLUMN)


def warn_contract_rolls(lf: pl.LazyFrame, path: Path, symbol: str, extra: tuple[str, ...]) -> None:
    """One warning when a ``contract`` column beside the symbol column changes within a symbol:
    the bars of several contracts are one series, and a roll's price gap is read as a return."""
    contract = next((c for c in extra if canonical_name(c) == "contract"), None)
    if contract is None:
        return
    rolls = (
        lf.select(pl.col(symbol).cast(pl.String), pl.col(contract).cast(pl.String))
        .with_row_index(_ROW)
        .filter((pl.col(contract) != pl.col(contract).shift(1).over(symbol)).fill_null(False))
    )
    try:
        found = rolls.collect()
    except pl.exceptions.PolarsError:  # a malformed file: its read names the line
        return
    if found.height == 0:
        return
    first = found.row(0, named=True)
    log.warning(
        "%s: column '%s' changes within a symbol %d times (first: %s, %s at row %s): the bars of "
        "several contracts are read as one series, a roll's price gap as a return; back-adjust "
        "the prices first, or --columns symbol=%s reads each contract apart",
        path,
        contract,
        found.height,
        first[symbol],
        first[contract],
        first[_ROW],
        contract,
    )


def without_settlements(df: pl.DataFrame, files: tuple[object, ...]) -> pl.DataFrame:
    """Rows with a close and no trade: open, high and low all written 0 or all empty beside a
    positive close (a back month's settlement-only days in CSI's and Quandl's exports, CHRIS's
    ``Settle`` without ``Open``): not bars, dropped with one warning naming how many and the
    first (they were refused as a non-positive or missing price). A row with some of them
    (a 0 open beside a high) is left for the validation to refuse by name.

    Raises:
        DataError: every row is such a row (no bars).
    """
    if df.height == 0 or not {"open", "high", "low", "close"} <= set(df.columns):
        return df
    side = ("open", "high", "low")
    zero = pl.all_horizontal(pl.col(c) == 0 for c in side).fill_null(False)
    empty = pl.all_horizontal(pl.col(c).is_null() for c in side)
    drop = (zero | empty) & (pl.col("close") > 0).fill_null(False)
    n = df.select(drop.sum()).item()
    if not n:
        return df
    first = df.filter(drop).row(0, named=True)
    where = files[int(first[_FILE])] if files and first.get(_FILE) is not None else "the bars"
    what = "settlement-only rows: a close, and open, high and low all written 0 or empty"
    if n == df.height:
        raise DataError(f"{where}: no bars: all {n} rows are {what}")
    log.warning(
        "%d rows of %s are %s (no trade that day or bar; first: row %s, %s): not bars, dropped",
        n,
        where,
        what,
        first[_ROW],
        first["ts"],
    )
    return df.filter(~drop)


def unknown_volume(df: pl.DataFrame, path: Path, column: str | None) -> pl.DataFrame:
    """A volume written ``NaN`` or left empty (Quantiacs, Investing.com: not reported that day)
    reads as 0, one warning."""
    # on rows with a price: a row without any is dropped or refused as a whole, by its caller
    priced = pl.any_horizontal(
        pl.col(c).fill_nan(None).is_not_null() for c in ("open", "high", "low", "close")
    )
    nan = pl.col("volume").is_nan().fill_null(False) & priced
    n = df.select(nan.sum()).item() if column is not None else 0
    if not n:
        return df
    row = df.filter(nan).row(0, named=True)[_ROW]
    log.warning(
        "volume NaN or empty (not reported) in %d rows of %s (column '%s', first row %s): "
        "read as 0",
        n,
        path,
        column,
        row,
    )
    return df.with_columns(pl.when(nan).then(0.0).otherwise(pl.col("volume")).alias("volume"))


def kept_name(path: Path, column: str, extra: tuple[str, ...], names: list[str]) -> str:
    """The file's spelling of the extra column ``column`` (exact, else trimmed/lower-case)."""
    if column in extra:
        return column
    for n in extra:
        if canonical_name(n) == canonical_name(column):
            return n
    bar_fields = {canonical_name(n) for n in names}  # names not in extra: bar fields
    used = "a bar field" if canonical_name(column) in bar_fields else "missing"
    raise DataError(
        f"{path}: column '{column}' is {used}; an input column must be an extra numeric "
        f"column of the bars (columns: {', '.join(names)})"
    )


def one_spelling_per_symbol(df: pl.DataFrame, path: Path) -> pl.DataFrame:
    """Symbols written in two cases in one file (``es`` and ``ES``) are one symbol, spelt as
    most of its rows spell it (one warning); they were two instruments, each with gaps."""
    counts = df.group_by("symbol").len()
    if counts.height < 2:
        return df
    counts = counts.with_columns(key=pl.col("symbol").str.to_uppercase())
    spellings = counts.filter(pl.len().over("key") > 1)
    if spellings.height == 0:
        return df
    rename: dict[str, str] = {}
    for _, group in spellings.sort(["len", "symbol"], descending=[True, False]).group_by(
        "key", maintain_order=True
    ):
        kept = group["symbol"][0]  # the most rows' spelling
        names = sorted(group["symbol"])
        rename.update(dict.fromkeys(names, kept))
        log.warning(
            "%s: symbol written %s: read as one symbol, %r",
            path,
            " and ".join(map(repr, names)),
            kept,
        )
    return df.with_columns(pl.col("symbol").replace(rename))


def without_spreads(df: pl.DataFrame, path: Path, doubts: list[str]) -> pl.DataFrame:
    """``df`` without the bars of spreads (:func:`is_spread`) where it holds outright contracts
    too (a parent symbology's download): one warning naming them, a doubt of the report."""
    symbols = df["symbol"].unique().drop_nulls().to_list()
    spreads = sorted(s for s in symbols if is_spread(s))
    if not spreads or len(spreads) == len(symbols):
        return df
    kept = df.filter(~pl.col("symbol").is_in(spreads))
    shown = ", ".join(spreads[:4]) + (f", ... ({len(spreads)} in all)" if len(spreads) > 4 else "")
    doubts.append(
        f"{path}: {df.height - kept.height} bars of spreads between contracts left out ({shown}): "
        "their prices are differences; the outright contracts are read"
    )
    log.warning("%s", doubts[-1])
    return kept


INTERVAL_NAMES = ("interval", "timeframe", "time_frame", "resolution", "granularity", "freq",
                  "frequency", "bar_size", "barsize")  # fmt: skip
"""Names of a column that says each bar's interval (a database's dump of klines: ``1m`` and
``1d`` rows in one table)."""


def one_interval_per_symbol(
    lf: pl.LazyFrame, extra: tuple[str, ...], symbol: str | None, path: Path
) -> None:
    """Refuse a table whose interval column (:data:`INTERVAL_NAMES`) gives one symbol bars of
    several intervals: read as one series, daily and 1-minute bars were merged with verdict
    valid until session 53.

    Raises:
        DataError: such a symbol, named with the intervals.
    """
    column = next((c for c in extra if canonical_name(c) in INTERVAL_NAMES), None)
    if column is None:
        return
    keys = [symbol] if symbol is not None else []
    pairs = lf.select(*keys, pl.col(column).cast(pl.String).str.strip_chars()).unique().collect()
    counts = pairs.group_by(keys).len() if keys else pl.DataFrame({"len": [pairs.height]})
    mixed = counts.filter(pl.col("len") > 1)
    if mixed.height == 0:
        return
    who = f"symbol {mixed[symbol][0]!r}: " if symbol is not None else ""
    seen = pairs.filter(pl.col(symbol) == mixed[symbol][0]) if symbol is not None else pairs
    values = sorted(str(v) for v in seen[column].to_list())
    raise DataError(
        f"{path}: {who}column '{column}' gives bars of several intervals ({', '.join(values[:4])}):"
        " foxhunt reads one interval per symbol; write each interval's bars to a file of its own"
    )
