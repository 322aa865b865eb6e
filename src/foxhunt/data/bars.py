"""Read and validate OHLCV bars from parquet or CSV files.

Accepted layouts:

* one file, a directory of files or a glob; each file one symbol or many (long format with a
  ``symbol`` column). Files are scanned lazily (only the needed columns are read) and
  concatenated.
* timestamp column, first found of: ``ts``, ``ts_event``, ``timestamp``, ``datetime``,
  ``date_time``, a leading unnamed index column as pandas writes it (CSV header ``""`` or
  ``Unnamed: 0``, parquet ``__index_level_0__``), ``date`` + ``time`` together, ``time``,
  ``date``. Names are matched case-insensitively.
* timestamps as datetimes, dates, ISO strings (with or without offset) or integer epochs (the
  unit is taken from the magnitude: s, ms, us or ns such as Databento's ``ts_event``).
  **Naive timestamps are taken as UTC.** Everything ends up ``Datetime("us", "UTC")``.
* price/volume columns ``open high low close volume`` in any case, or ``o h l c v``/``vol``.
* symbol column ``symbol``, ``ticker``, ``instrument`` or ``raw_symbol``. Without one, the
  symbol is the leading run of letters and digits of the file name, upper-cased:
  ``ES_FUT_small.parquet`` -> ``ES``, ``esh4.csv`` -> ``ESH4``.

Errors name the file, the column as spelled in the file, and the first offending row
(0-based data row, header not counted, as pandas/polars number it) and its time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from foxhunt.data.files import is_parquet, resolve_table_paths
from foxhunt.data.timestamps import text_timestamp_expr, timestamp_expr
from foxhunt.data.validate import (
    BAR_COLUMNS,
    FILE_COLUMN,
    PRICE_COLUMNS,
    ROW_COLUMN,
    VALUE_COLUMNS,
    validate_bars,
)
from foxhunt.errors import DataError

__all__ = [
    "BAR_COLUMNS",
    "PRICE_COLUMNS",
    "VALUE_COLUMNS",
    "LoadedBars",
    "load_bars",
    "read_bars",
    "symbol_from_filename",
    "validate_bars",
]

_TS_NAMES = ("ts", "ts_event", "timestamp", "datetime", "date_time")
_INDEX_NAMES = ("", "unnamed: 0", "__index_level_0__")
_ALIASES = {
    "open": ("open", "o"),
    "high": ("high", "h"),
    "low": ("low", "l"),
    "close": ("close", "c"),
    "volume": ("volume", "v", "vol"),
}
_SYMBOL_NAMES = ("symbol", "ticker", "instrument", "raw_symbol")
_LEADING = re.compile(r"[A-Za-z0-9]+")
_FILE = FILE_COLUMN
_ROW = ROW_COLUMN


@dataclass(frozen=True)
class LoadedBars:
    """Bars read and normalised but not yet validated (what ``inspect`` summarises).

    Attributes:
        frame: the bar columns plus ``__file`` (index into ``files``) and ``__row`` (0-based
            row in that file), in file order.
        files: the files read.
        spellings: per file, canonical column name -> the name in the file (``symbol`` is
            absent when it came from the file name).
    """

    frame: pl.DataFrame
    files: tuple[Path, ...]
    spellings: tuple[dict[str, str], ...]


def symbol_from_filename(path: Path) -> str:
    """The symbol of a file without a symbol column: the stem's leading alphanumeric run, upper."""
    m = _LEADING.match(path.stem)
    if not m:
        raise DataError(f"{path}: no symbol column and no symbol in the file name")
    return m.group(0).upper()


def _pick(lower: dict[str, str], names: tuple[str, ...]) -> str | None:
    for n in names:
        if n in lower:
            return lower[n]
    return None


def _scan(path: Path) -> pl.LazyFrame:
    if path.stat().st_size == 0:
        raise DataError(f"{path}: empty file (no bars)")
    try:
        if is_parquet(path):
            return pl.scan_parquet(path)
        # All columns as text: we cast ourselves, so a bad value is reported with its row.
        return pl.scan_csv(path, infer_schema=False, truncate_ragged_lines=False)
    except Exception as e:  # polars raises several types for unreadable files
        raise DataError(f"{path}: cannot read ({_first_line(e)})") from e


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def _value_expr(path: Path, col: str, dtype: pl.DataType) -> pl.Expr:
    c = pl.col(col)
    if dtype == pl.String:
        return c.str.strip_chars().cast(pl.Float64, strict=False)
    if dtype.is_numeric():
        return c.cast(pl.Float64)
    raise DataError(f"{path}: column '{col}' has type {dtype}, not numbers")


def _normalise(path: Path, index: int) -> tuple[pl.DataFrame, dict[str, str]]:
    lf = _scan(path)
    try:
        schema = lf.collect_schema()
    except Exception as e:
        raise DataError(f"{path}: cannot read ({_first_line(e)})") from e
    names = list(schema.names())
    lower = {n.strip().lower(): n for n in names}
    spell: dict[str, str] = {}

    for canon in VALUE_COLUMNS:
        found = _pick(lower, _ALIASES[canon])
        if found is None:
            raise DataError(f"{path}: missing column '{canon}' (columns: {', '.join(names)})")
        spell[canon] = found

    ts_col = _pick(lower, _TS_NAMES)
    if ts_col is None:
        unnamed = _pick(lower, _INDEX_NAMES)
        if unnamed is not None and not schema[unnamed].is_integer():  # a RangeIndex is no time
            ts_col = unnamed
    exprs: list[pl.Expr] = []
    if ts_col is None and "date" in lower and "time" in lower:
        d, t = lower["date"], lower["time"]
        spell["ts"] = f"{d}+{t}"
        text = pl.concat_str([pl.col(d).cast(pl.String), pl.col(t).cast(pl.String)], separator=" ")
        exprs.append(text_timestamp_expr(lf, text).alias("ts"))
    else:
        if ts_col is None:
            ts_col = _pick(lower, ("time", "date"))
        if ts_col is None:
            raise DataError(
                f"{path}: missing column 'ts' (a timestamp column such as ts, timestamp, "
                f"ts_event, datetime or date; columns: {', '.join(names)})"
            )
        spell["ts"] = ts_col
        exprs.append(timestamp_expr(lf, path, ts_col, schema[ts_col]).alias("ts"))

    sym_col = _pick(lower, _SYMBOL_NAMES)
    if sym_col is not None:
        spell["symbol"] = sym_col
        exprs.append(pl.col(sym_col).cast(pl.String).str.strip_chars().alias("symbol"))
    else:
        exprs.append(pl.lit(symbol_from_filename(path), dtype=pl.String).alias("symbol"))
    exprs += [_value_expr(path, spell[c], schema[spell[c]]).alias(c) for c in VALUE_COLUMNS]
    exprs += [pl.lit(index, dtype=pl.UInt32).alias(_FILE), pl.col(_ROW)]
    try:
        df = lf.with_row_index(_ROW).select(exprs).collect()
    except DataError:
        raise
    except Exception as e:
        raise DataError(f"{path}: cannot read ({_first_line(e)})") from e
    if df.height == 0:
        raise DataError(f"{path}: empty file (no bars)")
    return df, spell


def load_bars(path: str | Path) -> LoadedBars:
    """Read and normalise every file under ``path`` without validating values.

    Args:
        path: a file, directory or glob (see the module docstring for accepted layouts).

    Returns:
        The normalised bars in file order, with provenance columns.

    Raises:
        DataError: no file, unreadable file, missing column or empty file.
    """
    files = resolve_table_paths(path)
    frames, spellings = [], []
    for i, f in enumerate(files):
        df, spell = _normalise(f, i)
        frames.append(df)
        spellings.append(spell)
    frame = frames[0] if len(frames) == 1 else pl.concat(frames, how="vertical")
    return LoadedBars(frame=frame, files=tuple(files), spellings=tuple(spellings))


def read_bars(
    path: str | Path,
    *,
    min_bars: int | None = None,
    min_bars_reason: str = "warm-up + encoder + horizon",
) -> pl.DataFrame:
    """Read, validate and sort bars from a parquet/CSV file, a directory or a glob.

    Args:
        path: where the bars are (see the module docstring for accepted layouts).
        min_bars: per-symbol minimum number of bars (callers pass warm-up + encoder +
            horizon), or None for no minimum.
        min_bars_reason: how ``min_bars`` was made up, shown in the error message.

    Returns:
        Columns ``ts`` (Datetime us UTC), ``symbol`` (String), ``open high low close volume``
        (Float64), sorted by (symbol, ts). A warning is logged when the input was unsorted.

    Raises:
        DataError: missing file or column, empty file, unparsable or null timestamp, missing
            or non-numeric value, NaN/inf, non-positive price, negative volume,
            ``high < max(open, close)``, ``low > min(open, close)``, duplicate bar, or fewer
            than ``min_bars`` bars for a symbol. The message names file, column, row and time.
    """
    return validate_bars(load_bars(path), min_bars=min_bars, min_bars_reason=min_bars_reason)
