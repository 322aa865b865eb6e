"""Read and validate OHLCV bars from the files traders have: parquet, CSV, DBN.

Accepted layouts:

* one file, a directory of files or a glob; each file one symbol or many (long format with a
  ``symbol`` column). Files are read lazily where the format allows and concatenated.
* formats: parquet; CSV (``.csv``, ``.csv.gz``) in any dialect (``,`` ``;`` tab ``|``, header
  or not, decimal comma; see :mod:`foxhunt.data.csv_dialect`); Databento DBN OHLCV
  (``.dbn``, ``.dbn.zst``; see :mod:`foxhunt.data.dbn`).
* column names as vendors spell them (TradeStation, MetaTrader, Kibot, NinjaTrader,
  Dukascopy, Binance, Databento; see :mod:`foxhunt.data.columns`), including separate date and
  time columns. Other columns are listed in one warning and returned as ``LoadedBars.extra``.
* timestamps as datetimes, dates, text in many spellings or integer epochs (s, ms, us, ns;
  see :mod:`foxhunt.data.timestamps`). **Naive timestamps are wall-clock times in ``tz``**
  (default UTC, with a warning naming the file). Everything ends up ``Datetime("us", "UTC")``.
* no volume column: volume is 0.0 (one warning naming the file).
* symbol from a symbol column, else the leading run of letters and digits of the file name,
  upper-cased (``ES_FUT_small.parquet`` -> ``ES``). Contract codes become their root with the
  code kept in a ``contract`` column (``ESZ4.GLBX_5min_bars_20241001_20241031.csv`` -> symbol
  ``ES``, contract ``ESZ4``; see :mod:`foxhunt.data.contracts`). This applies to symbols that
  are names (the file name, a DBN file's symbology), not to a symbol column, which is kept as
  written; and not when one DBN file holds several contracts of one root.

Errors name the file, the column as spelled in the file, and the first offending row
(0-based data row, header not counted, as pandas/polars number it) and its time.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import polars as pl

from foxhunt.data.columns import ColumnMap, canonical_name, map_columns
from foxhunt.data.contracts import contract_root
from foxhunt.data.files import resolve_table_paths, table_kind
from foxhunt.data.scan import first_line, scan_table
from foxhunt.data.timestamps import Times, text_timestamp_expr, timestamp_expr
from foxhunt.data.validate import (
    BAR_COLUMNS,
    CONTRACT_COLUMN,
    FILE_COLUMN,
    PRICE_COLUMNS,
    ROW_COLUMN,
    VALUE_COLUMNS,
    validate_bars,
)
from foxhunt.errors import DataError

__all__ = [
    "BAR_COLUMNS",
    "CONTRACT_COLUMN",
    "PRICE_COLUMNS",
    "VALUE_COLUMNS",
    "LoadedBars",
    "load_bars",
    "read_bars",
    "symbol_from_filename",
    "validate_bars",
]

log = logging.getLogger(__name__)

_LEADING = re.compile(r"[A-Za-z0-9]+")
_FILE = FILE_COLUMN
_ROW = ROW_COLUMN


@dataclass(frozen=True)
class LoadedBars:
    """Bars read and normalised but not yet validated (what ``inspect`` summarises).

    Attributes:
        frame: the bar columns (plus ``contract`` when a file was contract-coded), ``__file``
            (index into ``files``) and ``__row`` (0-based row in that file), in file order.
        files: the files read.
        spellings: per file, canonical column name -> the name in the file (``symbol`` is
            absent when it came from the file name, ``volume`` when the file has none).
        extra: per file, the columns read past (not bars: spread, open interest ...).
        naive: per file, whether its timestamps were naive wall-clock times (read in ``tz``).
        tz: the zone naive timestamps were read in.
    """

    frame: pl.DataFrame
    files: tuple[Path, ...]
    spellings: tuple[dict[str, str], ...]
    extra: tuple[tuple[str, ...], ...] = field(default=())
    naive: tuple[bool, ...] = field(default=())
    tz: str = "UTC"


def symbol_from_filename(path: Path) -> str:
    """The symbol of a file without a symbol column: the stem's leading alphanumeric run, upper;
    a perpetual swap keeps its marker (``btc-perp-2022.csv`` -> ``BTC-PERP``, not the CME
    bitcoin future ``BTC``)."""
    m = _LEADING.match(path.stem)
    if not m:
        raise DataError(f"{path}: no symbol column and no symbol in the file name")
    symbol = m.group(0).upper()
    perp = _PERP_SUFFIX.match(path.stem, m.end())
    return f"{symbol}-{perp.group(1).upper()}" if perp else symbol


_PERP_SUFFIX = re.compile(r"[-_.](perp|swap)(?![a-z])", re.IGNORECASE)


def _value_expr(path: Path, col: str, dtype: pl.DataType, decimal_comma: bool) -> pl.Expr:
    c = pl.col(col)
    if dtype == pl.String:
        text = c.str.strip_chars()
        if decimal_comma:
            text = text.str.replace(",", ".", literal=True)
        return text.cast(pl.Float64, strict=False)
    if dtype.is_numeric():
        return c.cast(pl.Float64)
    raise DataError(f"{path}: column '{col}' has type {dtype}, not numbers")


def _times(
    lf: pl.LazyFrame, path: Path, schema: pl.Schema, cols: ColumnMap, tz: str, dayfirst: bool | None
) -> tuple[Times, str]:
    """The timestamp expression of a file and how its column(s) are spelled."""
    if cols.date is not None:
        d, t = cols.date, cols.time
        text = pl.concat_str([pl.col(d).cast(pl.String), pl.col(t).cast(pl.String)], separator=" ")
        where = f"{path} '{d}'+'{t}'"
        return text_timestamp_expr(lf, text, tz=tz, dayfirst=dayfirst, where=where), f"{d}+{t}"
    ts = cols.ts
    if ts is None:
        raise DataError(
            f"{path}: missing column 'ts' (a timestamp column such as ts, timestamp, "
            f"ts_event, datetime, or date and time; columns: {', '.join(schema.names())})"
        )
    return timestamp_expr(lf, path, ts, schema[ts], tz=tz, dayfirst=dayfirst), ts


def _split_contracts(df: pl.DataFrame) -> pl.DataFrame:
    """Contract-coded symbols -> root symbol + ``contract`` column (one contract per root)."""
    symbols = df["symbol"].unique().drop_nulls().to_list()
    roots = {s: r for s in symbols if (r := contract_root(s)) is not None}
    per_root: dict[str, int] = {}
    for r in roots.values():
        per_root[r] = per_root.get(r, 0) + 1
    roots = {s: r for s, r in roots.items() if per_root[r] == 1}
    if not roots:
        return df
    sym = pl.col("symbol")
    return df.with_columns(
        sym.replace(roots).alias("symbol"),
        pl.when(sym.is_in(list(roots))).then(sym).otherwise(None).alias(CONTRACT_COLUMN),
    )


def _normalise(
    path: Path, index: int, tz: str, dayfirst: bool | None, keep: tuple[str, ...] = ()
) -> tuple[pl.DataFrame, dict[str, str], tuple[str, ...], bool]:
    scanned = scan_table(path)
    lf = scanned.lf
    try:
        schema = lf.collect_schema()
    except Exception as e:
        raise DataError(f"{path}: cannot read ({first_line(e)})") from e
    names = list(schema.names())
    first = names[0] if names else None
    cols = map_columns(names, index_is_integer=first is not None and schema[first].is_integer())
    for canon in PRICE_COLUMNS:
        if canon not in cols.prices:
            raise DataError(f"{path}: missing column '{canon}' (columns: {', '.join(names)})")
    spell = dict(cols.prices)
    if cols.volume is not None:
        spell["volume"] = cols.volume
    times, spell["ts"] = _times(lf, path, schema, cols, tz, dayfirst)
    exprs = [times.expr.alias("ts")]
    if cols.symbol is not None:
        spell["symbol"] = cols.symbol
        exprs.append(pl.col(cols.symbol).cast(pl.String).str.strip_chars().alias("symbol"))
    else:
        exprs.append(pl.lit(symbol_from_filename(path), dtype=pl.String).alias("symbol"))
    comma = scanned.dialect is not None and scanned.dialect.decimal_comma
    for c in VALUE_COLUMNS:
        if c in spell:
            exprs.append(_value_expr(path, spell[c], schema[spell[c]], comma).alias(c))
        else:
            exprs.append(pl.lit(0.0, dtype=pl.Float64).alias(c))
    for c in keep:  # the user's extra columns (covariates, a target column)
        spell[c] = _kept_name(path, c, cols.extra, names)
        exprs.append(_value_expr(path, spell[c], schema[spell[c]], comma).alias(c))
    exprs += [pl.lit(index, dtype=pl.UInt32).alias(_FILE), pl.col(_ROW)]
    try:
        df = lf.with_row_index(_ROW).select(exprs).collect()
    except DataError:
        raise
    except Exception as e:
        raise DataError(f"{path}: cannot read ({first_line(e)})") from e
    if df.height == 0:
        raise DataError(f"{path}: empty file (no bars)")
    if cols.volume is None:
        log.warning("no volume column in %s: volume features will be constant", path)
    ignored = [c for c in cols.extra if c not in spell.values()]
    if ignored:
        log.warning("ignored columns in %s: %s", path, ", ".join(ignored))
    if times.naive and tz == "UTC":
        log.warning("naive timestamps in %s taken as UTC; pass --tz ZONE if they are local", path)
    elif times.naive:
        log.info("naive timestamps in %s read as %s", path, tz)
    # Names (file names, DBN symbology) are split into root + contract; a symbol column the user
    # wrote is kept as written (a panel of CLZ4 and CLF5 stays two series).
    if cols.symbol is None or table_kind(path) == "dbn":
        df = _split_contracts(df)
    return df, spell, cols.extra, times.naive


def _kept_name(path: Path, column: str, extra: tuple[str, ...], names: list[str]) -> str:
    """The file's spelling of the extra column ``column`` (exact, else trimmed/lower-case)."""
    if column in extra:
        return column
    for n in extra:
        if canonical_name(n) == canonical_name(column):
            return n
    used = "a bar field" if column in names else "missing"
    raise DataError(
        f"{path}: column '{column}' is {used}; an input column must be an extra numeric "
        f"column of the bars (columns: {', '.join(names)})"
    )


def load_bars(
    path: str | Path, *, tz: str = "UTC", dayfirst: bool | None = None, keep: tuple[str, ...] = ()
) -> LoadedBars:
    """Read and normalise every file under ``path`` without validating values.

    Args:
        path: a file, directory or glob (see the module docstring for accepted layouts).
        tz: IANA zone of naive timestamps (``America/Chicago``); UTC by default, with a
            warning per file that had naive timestamps.
        dayfirst: read ambiguous text dates (``01/02/2024``) day-first (True) or month-first
            (False); None decides from the data and the vendor convention, logging the guess.
        keep: extra columns to keep as Float64 after the bar columns (a file without one
            raises); text that is not a number becomes null.

    Returns:
        The normalised bars in file order, with provenance columns.

    Raises:
        DataError: no file, unreadable file, missing column, empty file or unknown zone.
    """
    _check_zone(tz)
    files = resolve_table_paths(path)
    frames, spellings, extra, naive = [], [], [], []
    for i, f in enumerate(files):
        df, spell, ext, nv = _normalise(f, i, tz, dayfirst, tuple(keep))
        frames.append(df)
        spellings.append(spell)
        extra.append(ext)
        naive.append(nv)
    frame = frames[0] if len(frames) == 1 else pl.concat(frames, how="diagonal")
    if CONTRACT_COLUMN in frame.columns:  # keep the bar columns first, provenance last
        frame = frame.select(*BAR_COLUMNS, CONTRACT_COLUMN, *keep, _FILE, _ROW)
    return LoadedBars(
        frame=frame,
        files=tuple(files),
        spellings=tuple(spellings),
        extra=tuple(extra),
        naive=tuple(naive),
        tz=tz,
    )


def _check_zone(tz: str) -> None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise DataError(
            f"unknown time zone {tz!r} (use an IANA name such as America/Chicago)"
        ) from e


def read_bars(
    path: str | Path,
    *,
    min_bars: int | None = None,
    min_bars_reason: str = "warm-up + encoder + horizon",
    tz: str = "UTC",
    dayfirst: bool | None = None,
    allow_outliers: bool = False,
    keep: Sequence[str] = (),
    future: list[pl.DataFrame] | None = None,
    future_cols: Sequence[str] = (),
) -> pl.DataFrame:
    """Read, validate and sort bars from a parquet/CSV file, a directory or a glob.

    Args:
        path: where the bars are (see the module docstring for accepted layouts).
        min_bars: per-symbol minimum number of bars (callers pass warm-up + encoder +
            horizon), or None for no minimum.
        min_bars_reason: how ``min_bars`` was made up, shown in the error message.
        tz: IANA zone of naive timestamps (see :func:`load_bars`).
        dayfirst: force day-first/month-first for ambiguous text dates (see :func:`load_bars`).
        allow_outliers: keep implausible bars (two interleaved price levels, prices off by
            orders of magnitude, implausible one-bar moves; :mod:`foxhunt.data.plausibility`),
            with one warning per file giving their count, instead of refusing the first.
        keep: extra numeric columns to keep (the user's covariates; ``docs/data.md``), checked
            like prices: a missing, non-numeric or non-finite value raises.
        future: when given, rows whose four prices are all empty are not bars but *future
            rows* (known-future covariates after the last bar): they are taken out before
            validation and appended to this list as one frame (``ts``, ``symbol``,
            ``future_cols``), each of those columns checked like ``keep``.
        future_cols: the kept columns future rows must fill (the known-future ones).

    Returns:
        Columns ``ts`` (Datetime us UTC), ``symbol`` (String), ``open high low close volume``
        (Float64), then ``contract`` (String) when a file was contract-coded, then ``keep``;
        sorted by (symbol, ts). A warning is logged when the input was unsorted.

    Raises:
        DataError: missing file or column, empty file, unparsable or null timestamp, missing
            or non-numeric value, NaN/inf, non-positive price, negative volume,
            ``high < max(open, close)``, ``low > min(open, close)``, duplicate bar, fewer
            than ``min_bars`` bars for a symbol, or (unless ``allow_outliers``) an implausible
            bar. The message names file, column, row and time.
    """
    keep = tuple(keep)
    loaded = load_bars(path, tz=tz, dayfirst=dayfirst, keep=keep)
    if future is not None:
        empty = pl.all_horizontal(pl.col(c).is_null() for c in PRICE_COLUMNS)
        rows = loaded.frame.filter(empty)
        future.append(rows.select("ts", "symbol", *future_cols).sort("symbol", "ts"))
        loaded = replace(loaded, frame=loaded.frame.filter(~empty))
        if rows.height:
            log.info("%d future rows (empty prices) read for the known-future inputs", rows.height)
    bars = validate_bars(
        loaded,
        min_bars=min_bars,
        min_bars_reason=min_bars_reason,
        allow_outliers=allow_outliers,
    )
    _check_kept(loaded, keep)
    if future is not None and future[-1].height:
        _check_kept(replace(loaded, frame=rows), tuple(future_cols))
        _check_future_after_bars(loaded, rows, bars)
    return bars


def _check_future_after_bars(loaded: LoadedBars, rows: pl.DataFrame, bars: pl.DataFrame) -> None:
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


def _check_kept(loaded: LoadedBars, keep: tuple[str, ...]) -> None:
    """A missing, non-numeric or non-finite value in a kept column, named by file/column/row."""
    from foxhunt.data.validate import _raw_value as raw_value

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
