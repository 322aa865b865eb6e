"""One bar file read and normalised: the bar columns from its own (vendor) spelling, its
timestamps in UTC, its symbol, and what was guessed on the way (:class:`FileRead`).

The price and volume columns of delimited text are read as numbers first (several times
faster on millions of rows); when a value is not a number, the file is read again all as text
so that the error names its row (:func:`foxhunt.data.read.validate.validate_bars`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

import polars as pl

from foxhunt.data.market.contracts import split_contracts
from foxhunt.data.read.checks import (
    kept_name,
    one_interval_per_symbol,
    one_spelling_per_symbol,
    unknown_volume,
    warn_contract_rolls,
    without_spreads,
)
from foxhunt.data.read.columns import (
    CHECKED_SYMBOL_NAMES,
    HOUR_NAMES,
    TICK_VOLUME,
    ColumnMap,
    canonical_name,
    header_zone,
    holds_tickers,
    map_columns,
    range_index,
    up_down_volume,
)
from foxhunt.data.read.dbn import FIXED_POINT, fixed_point_prices
from foxhunt.data.read.digit_dates import cyymmdd_days, digit_clock
from foxhunt.data.read.files import table_kind
from foxhunt.data.read.fractions import fraction_value, written_in_fractions
from foxhunt.data.read.hours import hour_beside, hour_clock
from foxhunt.data.read.json_bars import market_dropped
from foxhunt.data.read.marked_utc import marked_utc, with_user_zone
from foxhunt.data.read.numbers import blank, value_expr, volume_expr
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.prints import ACTION, carried, no_quote_yet, prints_hint, prints_of
from foxhunt.data.read.scan import scan_table, unreadable
from foxhunt.data.read.timestamps import (
    EPOCH_FORMATS,
    Times,
    formatted_expr,
    text_timestamp_expr,
    timestamp_expr,
)
from foxhunt.data.read.twelve_hour import check_twelve_hour
from foxhunt.data.read.validate import (
    EMPTY_COLUMN,
    FILE_COLUMN,
    PRICE_COLUMNS,
    ROW_COLUMN,
    VALUE_COLUMNS,
)
from foxhunt.data.read.vendors import NameGuess, guess_from_name, name_guess
from foxhunt.data.read.wide import (
    check_duplicated,
    column_levels,
    not_bars_hint,
    quote_sides,
    ticker_prefix,
)
from foxhunt.data.read.zones import parse_zone
from foxhunt.errors import DataError

log = logging.getLogger(__name__)

_FILE = FILE_COLUMN
_ROW = ROW_COLUMN


def _written(lf: pl.LazyFrame, col: str) -> tuple[str, float]:
    """The first value written in a text price column (quoted) and its value in 32nds."""
    text = pl.col(col).cast(pl.String).str.strip_chars()
    first = lf.select(text.filter(text.str.contains(r"\d"))).head(1).collect().to_series()
    raw = str(first[0]) if first.len() else ""
    return repr(raw), float(pl.select(fraction_value(pl.lit(raw))).item() or float("nan"))


def _no_value(columns: list[str], schema: pl.Schema) -> pl.Expr:
    """True where every one of ``columns`` is missing as written (not where it is text that is
    no number: that row is refused by name), or is its column's name (a repeated header)."""
    empty, header = [], []
    for col in columns:
        raw = pl.col(col)
        if schema[col] == pl.String:
            text = raw.str.strip_chars().str.to_lowercase()
            empty.append(blank(col))
            header.append(text == col.strip().lower())
        else:
            empty.append(raw.cast(pl.Float64, strict=False).fill_nan(None).is_null())
            header.append(pl.lit(False))
    # the header again (files joined with `cat`): its values are the columns' names
    return pl.all_horizontal(empty) | pl.all_horizontal(header)


FEATURE_PREFIXES = ("obs__", "known__", "static__", "target__")
"""How ``foxhunt features`` names its columns: a table of them is no bars file."""


NAIVE_UTC = "naive timestamps read as UTC (no zone in the file); --tz to change"
"""The guess line of a file's naive times read as UTC for want of a zone: said once, by the
warning that names the file (until session 59 the guess line was logged beside it)."""
_TICKS = "__tick_volume__"
_NO_QUOTE = "__no_quote__"


def _tick_volume(cols: ColumnMap, opts: ReadOptions) -> str | None:
    """A tick-volume column beside the volume the reader chose (MetaTrader 5's ``<TICKVOL>``
    beside ``<VOL>``), unless the user named the volume column."""
    if cols.volume is None or "volume" in opts.column_map:
        return None
    return next((n for n in cols.extra if canonical_name(n) in TICK_VOLUME), None)


def _ticks_for_no_volume(
    df: pl.DataFrame, path: Path, spell: dict[str, str], ticks: str
) -> pl.DataFrame:
    """The tick volume where the volume column holds only zeros (MetaTrader 5's FX exports:
    ``<VOL>`` 0 on every bar, the ticks in ``<TICKVOL>``), with a warning; else as read."""
    tick_values = df[_TICKS].fill_nan(None).fill_null(0.0)
    if bool((df["volume"] == 0).all()) and bool((tick_values > 0).any()):
        log.warning(
            "%s: volume column '%s' is 0 on every bar: the tick volume '%s' read as the volume "
            "(--columns volume=COLUMN to change)",
            path,
            spell["volume"],
            ticks,
        )
        spell["volume"] = ticks
        df = df.with_columns(tick_values.alias("volume"))
    return df.drop(_TICKS)


def _index_levels(cols: ColumnMap, schema: pl.Schema) -> ColumnMap:
    """A pandas MultiIndex written to parquet without level names (``__index_level_0__``,
    ``__index_level_1__``): the level of datetimes is the time, a level of text the symbol
    (the first level was taken for the time whatever it held)."""
    levels = [n for n in schema.names() if n.startswith("__index_level_")]
    times = [n for n in levels if schema[n].is_temporal()]
    if len(levels) < 2 or cols.ts not in levels or not times:
        return cols
    texts = [n for n in levels if schema[n] in (pl.String, pl.Categorical)]
    symbol = cols.symbol if cols.symbol is not None or not texts else texts[0]
    extra = tuple(n for n in cols.extra if n not in (times[0], symbol, cols.ts))
    return replace(cols, ts=times[0], symbol=symbol, extra=extra)


class NoBarColumns(DataError):
    """A table with no price column at all (a dividends or splits table, a list of symbols):
    beside bar files in a folder it is passed over with a warning
    (:func:`foxhunt.data.read.bars.load_bars`); alone it is refused."""


def _names_of_tickers(lf: pl.LazyFrame, cols: ColumnMap, names: list[str]) -> ColumnMap:
    """``cols``, its symbol column, where it is one of :data:`CHECKED_SYMBOL_NAMES`, the first
    such column whose first 1,000 values look like tickers (Kaggle's ``AAPL``, not a company's
    ``Apple Inc.``), or none: the others left as extra columns."""
    if canonical_name(str(cols.symbol)) not in CHECKED_SYMBOL_NAMES:
        return cols
    order = {n: i for i, n in enumerate(CHECKED_SYMBOL_NAMES)}
    tried = sorted(
        (n for n in names if canonical_name(n) in order), key=lambda n: order[canonical_name(n)]
    )
    held = next((n for n in tried if holds_tickers(_head(lf, n))), None)
    extra = tuple(n for n in names if n in (*cols.extra, str(cols.symbol)) and n != held)
    return replace(cols, symbol=held, extra=extra)


def _head(lf: pl.LazyFrame, column: str) -> pl.Series:
    return lf.select(column).head(1000).collect().to_series()


def _claimed_interval(path: Path) -> timedelta | None:
    """The interval a file's name claims, for a file whose symbol is not taken from its name
    (a name that holds no symbol claims none)."""
    try:
        return guess_from_name(path).interval
    except DataError:
        return None


def _times(
    lf: pl.LazyFrame,
    path: Path,
    schema: pl.Schema,
    cols: ColumnMap,
    tz: str,
    dayfirst: bool | None,
    fmt: str | None = None,
    stamps: str = "start",
) -> tuple[Times, str]:
    """The timestamp expression of a file and how its column(s) are spelled."""
    if cols.date is not None and canonical_name(str(cols.time)) in HOUR_NAMES:
        cols = hour_beside(lf, path, cols, stamps)
    if cols.date is not None:
        d, t = cols.date, cols.time
        clock = pl.col(t).cast(pl.String).str.strip_chars()
        spelled = f"{d}+{t}"
        if canonical_name(t) in HOUR_NAMES:  # Date,Hour[,Minute]: 1 is 01:00, not 00:01
            clock, minute = hour_clock(clock, cols)
            spelled += f"+{minute}" if minute else ""
        clock = digit_clock(lf, clock)
        # a date stored as a midnight (Excel's date cells, pandas' parse_dates): its day only
        day = pl.col(d).dt.date() if isinstance(schema[d], pl.Datetime) else pl.col(d)
        day = day.cast(pl.String).str.strip_chars().str.replace(r"[ T]00:00(:00(\.0+)?)?$", "")
        days = cyymmdd_days(lf, day)  # EasyLanguage's 1240103
        day = day if days is None else days
        text = pl.concat_str([day, clock], separator=" ")
        if fmt is not None:
            return formatted_expr(text, fmt, tz), spelled
        where = f"{path} '{d}'+'{t}'"
        return text_timestamp_expr(lf, text, tz=tz, dayfirst=dayfirst, where=where), spelled
    ts = cols.ts
    if ts is None:
        raise DataError(
            f"{path}: missing column 'ts' (a timestamp column such as ts, timestamp, "
            f"ts_event, datetime, or date and time; columns: {', '.join(schema.names())}); "
            "--columns ts=COLUMN names it (or date=COLUMN,time=COLUMN)"
        )
    return timestamp_expr(lf, path, ts, schema[ts], tz=tz, dayfirst=dayfirst, fmt=fmt), ts


@dataclass(frozen=True)
class FileRead:
    """One file normalised, and what was guessed about it."""

    frame: pl.DataFrame
    spell: dict[str, str]
    extra: tuple[str, ...]
    naive: bool
    zone: str
    guesses: tuple[str, ...]
    claim: timedelta | None
    ignored: tuple[str, ...] = ()
    """Columns of the file that were not read (logged once per folder by the caller)."""
    doubts: tuple[str, ...] = ()
    """What ``data inspect``'s report warns of (not guesses): dates both orders read alike, a
    workbook's sheets of bars not read."""
    counted: bool = True
    """The times were counts from an epoch (numbers, or typed timestamps a writer may have
    built from numbers in the wrong unit): a bar in 1970 is a misread. False for dates written
    as dates (``1970-01-02``, ``19700102``), which are what they say."""
    prints: bool = False
    """The bars were built from prints (:mod:`foxhunt.data.read.prints`): one-minute bars
    whatever gaps lie between them."""
    marked: bool = False
    """The times were marked UTC and read so (:mod:`foxhunt.data.read.marked_utc`): the time-axis
    checks may find the zone whose clock they are."""


def read_file(
    path: Path,
    index: int,
    opts: ReadOptions,
    dayfirst: bool | None,
    keep: tuple[str, ...] = (),
) -> FileRead:
    """One file read with its price and volume columns as numbers (fast), else, when a value
    is not a number, all as text so that the error names its row."""
    try:
        return _normalise_as(path, index, opts, dayfirst, keep, typed=True)
    except _TypedReadFailed:
        return _normalise_as(path, index, opts, dayfirst, keep, typed=False)


def _collected(query: pl.LazyFrame, path: Path, typed: bool) -> pl.DataFrame:
    """``query`` read; a failure is the typed read's (read again as text) or the file's."""
    try:
        return query.collect()
    except DataError:
        raise
    except Exception as e:
        if typed:
            raise _TypedReadFailed from e
        raise unreadable(path, e) from e


class _TypedReadFailed(Exception):
    """A value of a column read as a number is not one."""


def _numeric_columns(opts: ReadOptions) -> Callable[[list[str]], tuple[str, ...]]:
    def pick(names: list[str]) -> tuple[str, ...]:
        try:
            cols = map_columns(names, given=opts.column_map)
        except DataError:
            return ()
        values = [*cols.prices.values(), cols.volume]
        return tuple(
            c for c in values if c is not None and c not in (cols.ts, cols.date, cols.time)
        )

    return pick


def _normalise_as(
    path: Path,
    index: int,
    opts: ReadOptions,
    dayfirst: bool | None,
    keep: tuple[str, ...],
    typed: bool,
) -> FileRead:
    try:
        numeric = _numeric_columns(opts) if typed else None
        scanned = scan_table(path, numeric, opts.decimal, say=typed)  # a text re-read: said
    except DataError:
        if typed:
            raise _TypedReadFailed from None
        raise
    lf = scanned.lf
    try:
        schema = lf.collect_schema()
    except Exception as e:
        raise unreadable(path, e) from e
    names = list(schema.names())
    ticker, ticker_from = None, "the column level"
    levels = column_levels(path, names)
    if levels is not None:  # pandas' column levels written to parquet: ('Open', 'AAPL')
        renamed, ticker = levels
        lf = lf.rename(renamed)
        schema = lf.collect_schema()
        names = list(schema.names())
    prefixed = ticker_prefix(names) if not opts.column_map else None
    if prefixed is not None:  # quantmod's AAPL.Open ...: the ticker names the fields
        (renamed, ticker), ticker_from = prefixed, "the column names"
        lf = lf.rename(renamed)
        schema = lf.collect_schema()
        names = list(schema.names())
    if any("\n" in n or "\r" in n for n in names):  # a quote opened in the header
        raise unreadable(path, ValueError("a column name spans lines"))
    if len(names) == 1 and len(names[0].split()) >= 4:  # Date  Time  Open ...: one column
        raise DataError(
            f"{path}: one column, {' '.join(names[0].split())[:60]!r}: fields separated by spaces (a "
            "fixed-width table) are not read; save it with commas, semicolons, tabs or '|' "
            "between the fields"
        )
    first = names[0] if names else None
    cols = map_columns(
        names,
        index_is_integer=first is not None and range_index(lf, schema, first),
        given=opts.column_map,
        where=str(path),
    )
    cols = _index_levels(cols, schema)
    if cols.symbol is not None and "symbol" not in opts.column_map:
        cols = _names_of_tickers(lf, cols, names)
    if not opts.column_map:
        check_duplicated(path, names, cols)
    one_interval_per_symbol(lf, cols.extra, cols.symbol, path)
    sides = quote_sides(names)
    found, prints = prints_of(path, cols, bool(sides), opts, lf)
    if prints is None and table_kind(path) == "scid" and "price" in names and not opts.column_map:
        raise DataError(
            f"{path}: a Sierra Chart tick file (each record one trade): --bar-minutes K builds "
            "K-minute bars from its trades (open the first price, high the highest, low the "
            "lowest, close the last, volume their sizes)"
        )
    cols = prints.columns(cols) if prints is not None else cols
    one_side = None
    # one side's bars alone (Oanda's mid.o ...): they are the prices
    if len(sides) == 1 and not cols.prices and prints is None:
        ((side, prices),) = sides.items()
        extra = tuple(c for c in cols.extra if c not in prices.values())
        cols = replace(cols, prices=prices, extra=extra)
        one_side = f"the prices read from the {side} side's bars ({', '.join(prices.values())})"
    for canon in PRICE_COLUMNS:
        if canon not in cols.prices:
            if sum(n.startswith(FEATURE_PREFIXES) for n in names) >= 5:
                raise DataError(
                    f"{path}: a feature table ({len(names)} columns such as "
                    f"{', '.join(n for n in names[:6] if n.startswith(FEATURE_PREFIXES))}: "
                    "foxhunt features' output), not bars: pass the bars it was made from, or "
                    "write the features with --shards for train to read"
                )
            shown = ", ".join(names[:20]) + (
                f", ... ({len(names)} in all)" if len(names) > 20 else ""
            )
            hint = not_bars_hint(names) or prints_hint(found)
            if not cols.prices and not hint:  # no price at all: a table of something else
                raise NoBarColumns(
                    f"{path}: missing column '{canon}' (columns: {shown}); "
                    f"--columns {canon}=COLUMN names it"
                )
            raise DataError(
                f"{path}: missing column '{canon}' (columns: {shown}); "
                f"--columns {canon}=COLUMN names it{hint}"
            )
    guesses: list[str] = [one_side] if one_side else []
    if opts.symbol is not None and cols.symbol and canonical_name(cols.symbol) == "instrument_id":
        # Databento's numbers are a fallback symbol column: --symbol names the one instrument
        cols = replace(cols, symbol=None, extra=(*cols.extra, cols.symbol))
    name = None
    if cols.symbol is None and opts.symbol is None:
        name = NameGuess(ticker, ticker_from) if ticker else name_guess(path, scanned.sheet)
    stated = header_zone(cols) if opts.tz is None else None
    zone = parse_zone(opts.tz or (name.tz if name and name.tz else "UTC")).name
    if stated is not None:
        try:
            zone = parse_zone(stated[0]).name
        except DataError:
            raise DataError(
                f"{path}: column '{stated[1]}' names the zone {stated[0]!r}, not an IANA name "
                "or UTC offset; --tz ZONE says which zone its times are in"
            ) from None
    spell = dict(cols.prices)
    parts = up_down_volume(cols)
    if cols.volume is not None:
        spell["volume"] = cols.volume
    elif parts is not None:
        spell["volume"] = "+".join(parts)
        guesses.append(f"volume read as {' + '.join(parts)}; --columns volume=COLUMN to change")
    dialect = scanned.dialect
    if (
        dayfirst is None
        and dialect is not None
        and (dialect.decimal_comma or dialect.delimiter == ";")
    ):  # a European export (Excel's list separator, decimal commas): 05/03/2018 is 5 March
        dayfirst = True
    try:  # the first reads of the whole file: a malformed one fails here
        times, spell["ts"] = _times(
            lf, path, schema, cols, zone, dayfirst, opts.ts_format, opts.stamps
        )
    except pl.exceptions.PolarsError as e:
        if typed:
            raise _TypedReadFailed from e
        raise unreadable(path, e) from e
    given = opts.ts_format or ""  # --ts-format epoch-s or %s: counted in UTC, as a guessed epoch
    counted_as = given if given in EPOCH_FORMATS else "epoch-s" if "%s" in given else None
    seen = replace(times, format=counted_as) if times.format is None and counted_as else times
    marked = marked_utc(lf, schema, spell["ts"], seen)
    times = replace(
        with_user_zone(seen, marked, path, spell["ts"], opts, zone), format=times.format
    )
    marked = marked and not times.naive  # read on --tz's clock with --force-tz: naive now
    exprs = [times.expr.alias("ts")]
    doubts: list[str] = list(scanned.notes)
    if times.other is not None:
        ways = "year first and last" if times.other[:2] == "%y" else "day-first and month-first"
        doubts.append(
            f"{path}: the dates of '{spell['ts']}' read both {ways} over the "
            f"same span: read as {times.format}; --ts-format '{times.other}' reads them the "
            "other way"
        )  # logged where it was found (timestamps); a warning of data inspect's report
    elif times.format is not None:
        guesses.append(f"'{spell['ts']}' read as {times.format}; --ts-format to change")
    if opts.symbol is not None:
        if cols.symbol is not None:
            raise DataError(
                f"{path}: has a symbol column '{cols.symbol}'; --symbol is for files without one"
            )
        exprs.append(pl.lit(opts.symbol.strip(), dtype=pl.String).alias("symbol"))
    elif cols.symbol is not None:
        if canonical_name(cols.symbol) == "instrument_id":
            log.warning(
                "%s: no symbol column; each 'instrument_id' is a series named by its number "
                "(Databento: export with map_symbols; --symbol names a single instrument)",
                path,
            )
        spell["symbol"] = cols.symbol
        symbol = pl.col(cols.symbol).cast(pl.String).str.strip_chars()
        exprs.append(market_dropped(symbol).alias("symbol"))  # Polygon's C:EUR-USD: EURUSD
    else:
        assert name is not None
        guesses.append(f"symbol {name.symbol} from {name.how}; --symbol to change")
        exprs.append(pl.lit(name.symbol, dtype=pl.String).alias("symbol"))
    comma = scanned.dialect is not None and scanned.dialect.decimal_comma
    # the user's word, or the file's "4,780.25" or "1,261" beside "820": a comma groups thousands
    points = opts.decimal == "point" or (
        scanned.dialect is not None and scanned.dialect.comma_groups
    )
    texts = [spell[c] for c in PRICE_COLUMNS if c in spell and schema[spell[c]] == pl.String]
    others = [c for c in cols.extra if schema[c] == pl.String]
    others += [p for p in (parts or (spell.get("volume"),)) if p and schema[p] == pl.String]
    fractions = swiss = False  # 32nds or 8ths: every price, the columns together (one query)
    if texts and opts.decimal is None:
        flags = written_in_fractions(lf, texts, others, blank)
        fractions, swiss = _collected(flags, path, typed).row(0)
    fixed = "open" in spell and fixed_point_prices(lf, names, spell["open"])
    if fixed:  # Databento's CSV without pretty_px: 4790000000000 is 4790.0
        guesses.append("prices in Databento's fixed point (units of 1e-9) read as their value")
    sides: dict[str, pl.Expr] = {}  # a sparse quote's sides, carried forward
    for c in VALUE_COLUMNS:
        if c == "volume" and c in spell:  # an empty cell: not reported (read as 0, one warning)
            exprs.append(volume_expr(path, parts or (spell[c],), schema, comma).alias(c))
        elif c in spell:
            value = value_expr(
                path, spell[c], schema[spell[c]], comma, False, fractions, points=points
            )
            value = value / FIXED_POINT if fixed else value
            if prints is not None and prints.sparse:  # MetaTrader 5: the side that changed
                value = sides[spell[c]] = carried(value, lf, spell[c])
            exprs.append(value.alias(c))
        else:  # no volume: 0, or 1 a print (summed into a bar: their count)
            exprs.append(pl.lit(float(prints is not None), dtype=pl.Float64).alias(c))
    if prints is not None and prints.action is not None:
        exprs.append(pl.col(prints.action).cast(pl.String).str.strip_chars().alias(ACTION))
    ticks = _tick_volume(cols, opts)
    if ticks is not None:
        exprs.append(volume_expr(path, (ticks,), schema, comma).alias(_TICKS))
    for c in keep:  # the user's extra columns (covariates, a target column)
        spell[c] = kept_name(path, c, cols.extra, names)
        value = value_expr(path, spell[c], schema[spell[c]], comma, False, points=points)
        exprs.append(value.alias(c))
    exprs.append(_no_value([spell[c] for c in (*PRICE_COLUMNS, *keep)], schema).alias(EMPTY_COLUMN))
    if sides:
        exprs.append(no_quote_yet(sides, lf).alias(_NO_QUOTE))
        guesses.append(
            "each row holds the side of the quote that changed (MetaTrader 5's ticks): the "
            "other carried forward from the rows before"
        )
    exprs += [pl.lit(index, dtype=pl.UInt32).alias(_FILE), pl.col(_ROW)]
    df = _collected(lf.with_row_index(_ROW).select(exprs), path, typed)
    if _NO_QUOTE in df.columns:  # one side given before the other: no quote yet
        if n := df[_NO_QUOTE].sum():
            log.info("%s: the first %d rows hold one side of a quote only: left out", path, n)
        df = df.filter(~pl.col(_NO_QUOTE)).drop(_NO_QUOTE)
    if df.height == 0:
        raise DataError(f"{path}: empty file (no bars)")
    df = without_spreads(df, path, doubts)
    if fractions:
        guesses.append(
            "prices in 32nds or 8ths of a point (131'290 = 131 + 29/32, 706'2 = 706 + 2/8) "
            "read as their value"
        )
        log.info("%s: prices written in 32nds or 8ths of a point, read as their value", path)
    if swiss:
        raw, value = _written(lf, spell["open"])
        doubts.append(
            f"{path}: prices such as {value:g} written {raw} read as 32nds of a point; if "
            "the apostrophes group thousands (Swiss), --decimal point reads them so"
        )
        log.warning("%s", doubts[-1])
    df = unknown_volume(df, path, spell.get("volume"))
    if times.naive:
        check_twelve_hour(df, path, spell["ts"], zone)
    df = one_spelling_per_symbol(df, path)
    if ticks is not None:
        df = _ticks_for_no_volume(df, path, spell, ticks)
    if cols.volume is None and parts is None and prints is None:  # prints: their count
        log.warning("no volume column in %s: volume features will be constant", path)
    used = {*spell.values(), *spell["ts"].split("+"), *(parts or ())}  # "Date+Hour+Minute"
    # an hour column beside a date that holds the time was mapped, then left (hours.hour_beside)
    maybe = {*cols.extra, *(c for c in (cols.date, cols.time) if c is not None)}
    ignored = tuple(c for c in names if c in maybe and c not in used)
    if cols.symbol is not None:
        warn_contract_rolls(lf, path, cols.symbol, ignored)
    if times.naive and opts.tz is None:
        if stated is not None:
            why = f"the header '{stated[1]}'"
        else:
            why = f"the clock of {name.how}" if name and name.tz else "no zone in the file"
        guesses.append(f"naive timestamps read as {zone} ({why}); --tz to change")
        if zone == "UTC" and stated is None:
            log.warning(
                "naive timestamps in %s taken as UTC; pass --tz ZONE if they are local", path
            )
            if "local" in canonical_name(spell["ts"]):  # Dukascopy's "Local time" without offset
                doubts.append(
                    f"{path}: column '{spell['ts']}' holds local times without their offset: "
                    "read as UTC; --tz ZONE names their clock"
                )
    if times.naive:
        log.debug("naive timestamps in %s read as %s", path, zone)
    for g in guesses:
        log.debug("%s: %s", path, g)
    # Names (file names, DBN symbology) are split into root + contract; a symbol column the user
    # wrote is kept as written (a panel of CLZ4 and CLF5 stays two series).
    if (cols.symbol is None and opts.symbol is None) or table_kind(path) == "dbn":
        df = split_contracts(df)
    claim = name.interval if name else _claimed_interval(path)
    written = times.format is not None and not times.format.startswith("epoch")
    typed = cols.ts is not None and schema[cols.ts] not in (pl.String, pl.Date)
    counted = not written and (typed or (times.format or opts.ts_format or "").startswith("epoch"))
    return FileRead(
        df,
        spell,
        cols.extra,
        times.naive,
        zone,
        tuple(guesses),
        claim,
        ignored,
        tuple(doubts),
        counted,
        prints is not None,
        marked,
    )
