"""Read and validate OHLCV bars from the files traders have: parquet, CSV, DBN.

Accepted layouts:

* one file, a directory of files or a glob; each file one symbol or many (long format with a
  ``symbol`` column). Files are read lazily where the format allows and concatenated.
* formats: parquet; Feather; CSV (``.csv``, plain or compressed: ``.csv.gz``, ``.csv.bz2``,
  ``.csv.xz``, ``.csv.zst``) in any dialect (``,`` ``;`` tab ``|``, header or not, decimal comma;
  see :mod:`foxhunt.data.read.csv_dialect`); Databento DBN OHLCV (``.dbn``, ``.dbn.zst``; see
  :mod:`foxhunt.data.read.dbn`); workbooks.
* column names as vendors spell them (TradeStation, MetaTrader, Kibot, NinjaTrader,
  Dukascopy, Binance, Databento; see :mod:`foxhunt.data.read.columns`), including separate date and
  time columns. Other columns are listed in one warning and returned as ``LoadedBars.extra``.
* timestamps as datetimes, dates, text in many spellings or integer epochs (s, ms, us, ns;
  see :mod:`foxhunt.data.read.timestamps`). **Naive timestamps are wall-clock times in ``tz``**
  (default UTC, with a warning naming the file). Everything ends up ``Datetime("us", "UTC")``.
* no volume column: volume is 0.0 (one warning naming the file).
* symbol from a symbol column, else the leading run of letters and digits of the file name,
  upper-cased (``ES_FUT_small.parquet`` -> ``ES``). Contract codes become their root with the
  code kept in a ``contract`` column (``ESZ4.GLBX_5min_bars_20241001_20241031.csv`` -> symbol
  ``ES``, contract ``ESZ4``; see :mod:`foxhunt.data.market.contracts`). This applies to symbols that
  are names (the file name, a DBN file's symbology), not to a symbol column, which is kept as
  written; and not when one DBN file holds several contracts of one root.

Errors name the file, the column as spelled in the file, and the first offending row
(0-based data row, header not counted, as pandas/polars number it) and its time.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path

import polars as pl

from foxhunt.data.market.instrument import Instrument
from foxhunt.data.read.checks import (
    check_future_after_bars,
    check_kept,
    check_min_bars,
    without_empty_rows,
    without_settlements,
)
from foxhunt.data.read.file_read import NAIVE_UTC, FileRead, NoBarColumns, read_file
from foxhunt.data.read.files import resolve_table_paths
from foxhunt.data.read.fillers import without_fillers
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.prints import minute_bars
from foxhunt.data.read.repeated_hour import second_passes
from foxhunt.data.read.resample import aggregate_bars
from foxhunt.data.read.stamps import to_bar_starts
from foxhunt.data.read.time_axis import check_time_axis
from foxhunt.data.read.validate import (
    BAR_COLUMNS,
    CONTRACT_COLUMN,
    EMPTY_COLUMN,
    FILE_COLUMN,
    PRICE_COLUMNS,
    ROW_COLUMN,
    VALUE_COLUMNS,
    validate_bars,
)
from foxhunt.data.read.vendors import guess_from_name, guess_lines
from foxhunt.data.read.zones import parse_zone

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
        tz: the zone naive timestamps were read in (the user's, else UTC).
        zones: per file, the zone its naive timestamps were read in (a vendor's clock where
            the file name says it, histdata: America/New_York).
        guesses: per file, what was guessed and the flag that changes it ("symbol EURUSD
            from histdata's file name; --symbol to change").
        claims: per file, the bar interval its name claims (``5min``), or None.
        options: the user's read options.
    """

    frame: pl.DataFrame
    files: tuple[Path, ...]
    spellings: tuple[dict[str, str], ...]
    extra: tuple[tuple[str, ...], ...] = field(default=())
    naive: tuple[bool, ...] = field(default=())
    tz: str = "UTC"
    zones: tuple[str, ...] = field(default=())
    guesses: tuple[tuple[str, ...], ...] = field(default=())
    doubts: tuple[tuple[str, ...], ...] = field(default=())
    """Per file, what ``data inspect``'s report warns of (:attr:`FileRead.doubts`)."""
    counted: tuple[bool, ...] = field(default=())
    """Per file, whether its times were counts from an epoch (a bar in 1970 is a misread), not
    dates written as dates; empty: all were."""
    claims: tuple[timedelta | None, ...] = field(default=())
    options: ReadOptions = field(default_factory=ReadOptions)
    prints: tuple[bool, ...] = field(default=())
    """Per file, whether its bars were built from prints (one-minute bars, gaps or not)."""
    marked: tuple[bool, ...] = field(default=())
    """Per file, whether its times were marked UTC and read so (a wrong ``Z`` the time-axis
    checks may name, :mod:`foxhunt.data.read.marked_utc`)."""

    def built_symbols(self) -> frozenset[str]:
        """The symbols whose bars were built from prints (:mod:`foxhunt.data.read.prints`)."""
        files = [i for i, p in enumerate(self.prints) if p]
        if not files:
            return frozenset()
        return frozenset(self.frame.filter(pl.col(_FILE).is_in(files))["symbol"].drop_nulls())

    def zone_of(self, index: int) -> str:
        """The zone file ``index``'s naive timestamps were read in."""
        return self.zones[index] if self.zones else self.tz


def symbol_from_filename(path: Path) -> str:
    """The symbol of a file without a symbol column (:func:`foxhunt.data.read.vendors.guess_from_name`:
    ``DAT_ASCII_EURUSD_M1_2018.csv`` -> ``EURUSD``, ``F_CL.txt`` -> ``F_CL``, ``ES_FUT.parquet``
    -> ``ES``, ``btc-perp-2022.csv`` -> ``BTC-PERP``)."""
    return guess_from_name(path).symbol


def _read_files(
    found: list[Path], opts: ReadOptions, dayfirst: bool | None, keep: tuple[str, ...]
) -> tuple[list[Path], list[FileRead]]:
    """Each file read, in order; beside bar files, a table with no price column at all
    (yfinance's ``AAPL_dividends.csv`` or ``AAPL_splits.csv``, a list of symbols) is passed over
    with one warning naming it (it refused the folder as missing 'open'); refused where no file
    holds bars."""
    files: list[Path] = []
    reads: list[FileRead] = []
    passed: list[NoBarColumns] = []
    for f in found:
        try:
            reads.append(read_file(f, len(files), opts, dayfirst, keep))
        except NoBarColumns as e:  # refused below when no file holds bars
            passed.append(e)
            continue
        files.append(f)
    if not files:
        raise passed[0]
    for e in passed:
        log.warning("not read, no bars: %s", e)
    return files, reads


def load_bars(
    path: str | Path,
    *,
    tz: str | None = None,
    dayfirst: bool | None = None,
    keep: tuple[str, ...] = (),
    options: ReadOptions | None = None,
) -> LoadedBars:
    """Read and normalise every file under ``path`` without validating values.

    Args:
        path: a file, directory or glob (see the module docstring for accepted layouts).
        tz: zone of naive timestamps, an IANA name (``America/Chicago``) or a fixed offset
            (``-05:00``); None: the vendor's clock where the file name says it (histdata:
            America/New_York), else UTC with a warning per file that had naive timestamps. Wins over
            ``options.tz``.
        dayfirst: read ambiguous text dates (``01/02/2024``) day-first (True) or month-first
            (False); None decides from the data and the vendor convention, logging the guess.
        keep: extra columns to keep as Float64 after the bar columns (a file without one
            raises); text that is not a number becomes null.
        options: the user's explicit choices (:class:`~foxhunt.data.read.options.ReadOptions`).

    Returns:
        The normalised bars in file order, with provenance columns.

    Raises:
        DataError: no file, unreadable file, missing column, empty file or unknown zone.
    """
    opts = options or ReadOptions()
    if tz is not None:
        opts = replace(opts, tz=tz)
    files, reads = _read_files(resolve_table_paths(path), opts, dayfirst, tuple(keep))
    for line in guess_lines(tuple(r.guesses for r in reads)):
        if line != NAIVE_UTC:  # each file's warning says it (file_read.NAIVE_UTC)
            log.info("guess: %s", line)
    for line in ignored_lines(files, [r.ignored for r in reads]):
        log.warning("%s", line)
    frames = [r.frame for r in reads]
    frame = frames[0] if len(frames) == 1 else pl.concat(frames, how="diagonal")
    zones = tuple(r.zone for r in reads)  # the autumn's repeated hour, by the rows' order:
    frame = second_passes(frame, files, [r.naive for r in reads], lambda i: zones[i], _FILE)
    guesses = [r.guesses for r in reads]
    if any(r.prints for r in reads):  # across the files: a minute split between two is one bar
        frame, counts = minute_bars(frame, frozenset(i for i, r in enumerate(reads) if r.prints))
        for i, (n, left_out, m) in counts.items():
            events = f" ({left_out:,} events other than trades left out)" if left_out else ""
            guesses[i] = (*guesses[i], f"{n:,} prints built into {m:,} one-minute bars{events}")
            log.info("%s: %s", files[i], guesses[i][-1])
    if CONTRACT_COLUMN in frame.columns:  # keep the bar columns first, provenance last
        frame = frame.select(*BAR_COLUMNS, CONTRACT_COLUMN, *keep, EMPTY_COLUMN, _FILE, _ROW)
    if opts.stamps == "end":
        frame = to_bar_starts(frame, ", ".join(str(f) for f in files))
    return LoadedBars(
        frame=frame,
        files=tuple(files),
        spellings=tuple(r.spell for r in reads),
        extra=tuple(r.extra for r in reads),
        naive=tuple(r.naive for r in reads),
        tz=parse_zone(opts.tz).name if opts.tz else "UTC",
        zones=zones,
        guesses=tuple(guesses),
        doubts=tuple(r.doubts for r in reads),
        counted=tuple(r.counted for r in reads),
        claims=tuple(r.claim for r in reads),
        options=opts,
        prints=tuple(r.prints for r in reads),
        marked=tuple(r.marked for r in reads),
    )


def ignored_lines(
    files: Sequence[Path], ignored: Sequence[tuple[str, ...]], most: int = 3
) -> list[str]:
    """One warning line per set of ignored columns: naming the file when one file has it,
    else how many files and the first ``most`` of them (a folder of 88 Quantiacs files gets one
    line, not 88)."""
    groups: dict[tuple[str, ...], list[Path]] = {}
    for f, cols in zip(files, ignored, strict=True):
        if cols:
            groups.setdefault(tuple(c.strip() for c in cols), []).append(f)
    lines = []
    for cols, paths in groups.items():
        if len(paths) == 1:
            lines.append(f"ignored columns in {paths[0]}: {', '.join(cols)}")
            continue
        names = ", ".join(p.name for p in paths[:most]) + (", ..." if len(paths) > most else "")
        lines.append(
            f"ignored columns in {len(paths)} files under {os.path.commonpath(paths)} ({names}): "
            + ", ".join(cols)
        )
    return lines


def read_bars(
    path: str | Path,
    *,
    min_bars: int | None = None,
    min_bars_reason: str = "warm-up + encoder + horizon",
    tz: str | None = None,
    dayfirst: bool | None = None,
    allow_outliers: bool = False,
    keep: Sequence[str] = (),
    future: list[pl.DataFrame] | None = None,
    future_cols: Sequence[str] = (),
    options: ReadOptions | None = None,
    instruments: Mapping[str, Instrument] | None = None,
    drop_short: bool = False,
) -> pl.DataFrame:
    """Read, validate and sort bars from a parquet/CSV file, a directory or a glob.

    Args:
        path: where the bars are (see the module docstring for accepted layouts).
        min_bars: per-symbol minimum number of bars (callers pass warm-up + encoder +
            horizon), or None for no minimum.
        min_bars_reason: how ``min_bars`` was made up, shown in the error message.
        tz: zone of naive timestamps (see :func:`load_bars`).
        dayfirst: force day-first/month-first for ambiguous text dates (see :func:`load_bars`).
        allow_outliers: keep implausible bars (two interleaved price levels, prices off by
            orders of magnitude, implausible one-bar moves; :mod:`foxhunt.data.read.plausibility`),
            with one warning per file giving their count, instead of refusing the first.
        keep: extra numeric columns to keep (the user's covariates; ``docs/data.md``), checked
            like prices: a missing, non-numeric or non-finite value raises.
        future: when given, rows whose four prices are all empty are not bars but *future
            rows* (known-future covariates after the last bar): they are taken out before
            validation and appended to this list as one frame (``ts``, ``symbol``,
            ``future_cols``), each of those columns checked like ``keep``.
        future_cols: the kept columns future rows must fill (the known-future ones).
        options: the user's explicit choices (symbol, columns, timestamp format and zone,
            ``bar_minutes`` aggregation, ``allow_odd_times``;
            :class:`~foxhunt.data.read.options.ReadOptions`).
        instruments: the user's instrument table: the calendars the time axis is judged by
            and ``bar_minutes`` buckets follow (else each symbol's built-in or inferred one).
        drop_short: leave out symbols of fewer than ``min_bars`` bars with one warning
            (refused only when no symbol has enough): ``predict`` and ``evaluate``.

    Returns:
        Columns ``ts`` (Datetime us UTC), ``symbol`` (String), ``open high low close volume``
        (Float64), then ``contract`` (String) when a file was contract-coded, then ``keep``;
        sorted by (symbol, ts). A warning is logged when the input was unsorted.

    Raises:
        DataError: missing file or column, empty file, unparsable or null timestamp, missing
            or non-numeric value, NaN/inf, non-positive price, negative volume,
            ``high < max(open, close)``, ``low > min(open, close)``, duplicate bar, fewer
            than ``min_bars`` bars for a symbol, (unless ``allow_outliers``) an implausible
            bar, or (unless ``options.allow_odd_times``) a time axis that looks wrong
            (:mod:`foxhunt.data.read.time_axis`). The message names file, column, row and time.
    """
    keep = tuple(keep)
    loaded = load_bars(path, tz=tz, dayfirst=dayfirst, keep=keep, options=options)
    # rows holding no value: not bars; with future rows to read, those with a time are them
    frame = without_empty_rows(loaded.frame, path, timed=future is None, files=loaded.files)
    frame = without_settlements(frame, loaded.files)
    frame = without_fillers(frame, loaded.files, loaded.spellings, _FILE, instruments)
    loaded = replace(loaded, frame=frame)
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
        drop_short=drop_short,
    )
    if drop_short:  # the symbols left out: neither their inputs nor their future rows judged
        loaded = replace(loaded, frame=_of_symbols(loaded.frame, bars))
        if future is not None:  # rows keep their provenance: a bad one is named by its row
            rows, future[-1] = _of_symbols(rows, bars), _of_symbols(future[-1], bars)
    check_kept(loaded, keep)
    if future is not None and future[-1].height:
        check_kept(replace(loaded, frame=rows), tuple(future_cols))
        check_future_after_bars(loaded, rows, bars)
    check_time_axis(loaded, bars, instruments)
    if loaded.options.bar_minutes is not None:
        bars = aggregate_bars(
            bars, loaded.options.bar_minutes, str(path), instruments, loaded.built_symbols()
        )
    if min_bars is not None and loaded.options.bar_minutes is not None:
        bars = check_min_bars(
            bars, min_bars, min_bars_reason, loaded.options.bar_minutes, drop_short=drop_short
        )
        if drop_short and future is not None:
            future[-1] = _of_symbols(future[-1], bars)
    return bars


def _of_symbols(frame: pl.DataFrame, bars: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``frame`` of the symbols ``bars`` holds."""
    return frame.filter(pl.col("symbol").is_in(bars["symbol"].unique().implode()))
