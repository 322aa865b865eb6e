"""Bars as a notebook holds them (a path, a polars or a pandas DataFrame) in, the caller's kind out.

The library reads bars from files, where every vendor spelling is understood
(:func:`foxhunt.data.read.bars.read_bars`). A DataFrame is written once to a Parquet file in a
private working directory and read from there, so a frame and a file with the same columns
give the same bars, the same checks and the same fingerprint (a model trained on a frame
recognises the frame as its training data). Error messages and log lines name ``DataFrame``
instead of that file, and :func:`read_bars` speaks of its keyword arguments where the reader
names the CLI flags they stand for (:func:`python_words`).
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import polars as pl

from foxhunt.data.read.columns import (
    CHECKED_SYMBOL_NAMES,
    SYMBOL_NAMES,
    canonical_name,
    holds_tickers,
)
from foxhunt.errors import DataError, InputError
from foxhunt.infer.bar_frame import is_pandas, polars_bars

if TYPE_CHECKING:
    import pandas as pd

BarsLike: TypeAlias = "str | os.PathLike[str] | pl.DataFrame | pd.DataFrame"
"""Bars a caller may pass: a file, directory or glob, or a polars or pandas DataFrame."""

Kind = Literal["path", "polars", "pandas"]

FRAME = "DataFrame"
"""How error messages name bars that came as a DataFrame."""


def kind_of(bars: Any) -> Kind:
    """``path``, ``polars`` or ``pandas``; anything else is refused (InputError)."""
    if isinstance(bars, str | os.PathLike):
        return "path"
    if isinstance(bars, pl.DataFrame):
        return "polars"
    if is_pandas(bars):
        return "pandas"
    raise InputError(
        f"bars: expected a path, a polars or a pandas DataFrame, got {type(bars).__name__}"
    )


def to_polars(
    bars: pl.DataFrame | pd.DataFrame, symbol: str | None = None, named: str | None = None
) -> pl.DataFrame:
    """A DataFrame of bars as polars, its time index a column, a ``symbol`` column added.

    Args:
        bars: polars, or pandas (a ``DatetimeIndex`` becomes a column: its name, or ``ts``).
        symbol: the symbol of every row when the frame has no symbol column (``symbol``,
            ``ticker``, ``instrument``, ``raw_symbol``, ``instrument_id``, a ``Name`` of tickers).
        named: the symbol column the caller named (``columns={'symbol': 'Name'}``).

    Raises:
        InputError: no symbol column and no ``symbol``, or both (as ``--symbol`` on a file
            with a symbol column: it was ignored).
    """
    frame = polars_bars(bars, f"bars {FRAME}")
    held = named if named in frame.columns else None
    held = held or next((c for c in frame.columns if _symbol_column(frame, c)), None)
    if held is not None and symbol is not None:
        raise InputError(
            f"bars {FRAME}: has a symbol column '{held}'; symbol= is for frames without one"
        )
    if held is None:
        if symbol is None:
            raise InputError(
                f"bars {FRAME}: no symbol column ({', '.join(SYMBOL_NAMES[:8])}, or a Name, "
                "Code ... of tickers); pass symbol='ES'"
            )
        frame = frame.with_columns(pl.lit(symbol, dtype=pl.String).alias("symbol"))
    return frame


def _symbol_column(frame: pl.DataFrame, column: str) -> bool:
    """Whether ``column`` names the rows' symbols: a symbol's name, or one of
    :data:`CHECKED_SYMBOL_NAMES` whose values are tickers (Kaggle's S&P 500 ``Name``; a
    company's name is no symbol)."""
    name = canonical_name(column)
    if name not in CHECKED_SYMBOL_NAMES:
        return name in SYMBOL_NAMES
    return holds_tickers(frame[column])


def as_kind(frame: pl.DataFrame, kind: Kind) -> pl.DataFrame | pd.DataFrame:
    """``frame`` as the caller's kind: pandas for pandas, polars for polars and for a path."""
    return frame.to_pandas() if kind == "pandas" else frame


_ZONE = r"(ZONE|[A-Z][A-Za-z0-9_+:-]*(?:/[A-Za-z0-9_+:-]+)*|[+-]\d\d:\d\d)"
"""A zone after ``--tz``: a placeholder, an IANA name or UTC alias, or a fixed offset (a
lower-case word after the flag is prose: ``--tz to change``)."""

_PYTHON_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"--allow-odd-times\b"), "allow_odd_times=True"),
    (re.compile(r"--force-tz\b"), "force_tz=True"),
    (re.compile(r"--allow-outliers\b"), "allow_outliers=True"),
    (re.compile(r"--stamps (start|end)\b"), r"stamps='\1'"),
    (re.compile(r"--decimal (point|comma)\b"), r"decimal='\1'"),
    (re.compile(r"--bar-minutes (\d+|K)\b"), r"bar_minutes=\1"),
    (re.compile(r"--bar-minutes\b"), "bar_minutes"),
    (re.compile(r"--tz " + _ZONE), r"tz='\1'"),
    (re.compile(r"--tz\b"), "tz=..."),
    (re.compile(r"--ts-format ('[^']*')"), r"ts_format=\1"),
    (re.compile(r"--ts-format\b"), "ts_format=..."),
    (re.compile(r"--columns (\w+)=([\w.-]+)"), r"columns={'\1': '\2'}"),
    (re.compile(r"--columns\b"), "columns"),
    (re.compile(r"--symbol\b"), "symbol=..."),
    (re.compile(r"--strict\b"), "strict=True"),
    (re.compile(r"--windows (new|test|all)\b"), r"windows='\1'"),
    (re.compile(r"--overwrite or choose another --out\b"), "overwrite=True or another run_dir"),
    (re.compile(r"--overwrite\b"), "overwrite=True"),
)
""":func:`read_bars`' keyword argument for each CLI flag the reader's messages name (and
``fit``'s, ``predict``'s and ``evaluate``'s: they take the reader's too)."""


def checked_read(where: str, read: dict[str, Any]) -> dict[str, Any]:
    """:func:`read_fields` of a method's ``**read``; a keyword it does not take is a TypeError
    naming the method, as Python's own."""
    for k in read:
        if k not in inspect.signature(read_fields).parameters:
            raise TypeError(f"{where}() got an unexpected keyword argument {k!r}")
    return read_fields(**read)


def read_fields(
    *,
    tz: str | None = None,
    force_tz: bool = False,
    columns: dict[str, str] | None = None,
    ts_format: str | None = None,
    stamps: str | None = None,
    decimal: str | None = None,
    bar_minutes: int | None = None,
    allow_odd_times: bool = False,
    allow_outliers: bool = False,
) -> dict[str, Any]:
    """The reader's keyword arguments that were given, as ``DataConfig`` fields (what the
    CLI's ``--tz``, ``--columns`` ... give a run)."""
    given: dict[str, Any] = {
        "tz": tz,
        "force_tz": force_tz or None,
        "columns": tuple(f"{k}={v}" for k, v in columns.items()) if columns else None,
        "ts_format": ts_format,
        "stamps": stamps,
        "decimal": decimal,
        "bar_minutes": bar_minutes,
        "allow_odd_times": allow_odd_times or None,
        "allow_outliers": allow_outliers or None,
    }
    return {k: v for k, v in given.items() if v is not None}


def python_words(text: str) -> str:
    """``text`` with the reader's CLI flags as :func:`read_bars`' keyword arguments
    (``--allow-odd-times`` -> ``allow_odd_times=True``, ``--tz Etc/GMT+5`` -> ``tz='Etc/GMT+5'``);
    flags with no keyword there (``--instruments FILE``) stay as they are."""
    for pattern, words in _PYTHON_WORDS:
        text = pattern.sub(words, text)
    return text


_WORDS: contextvars.ContextVar[tuple[Callable[[str], str], ...]] = contextvars.ContextVar(
    "foxhunt_reworded", default=()
)
"""The rewrites of the :func:`reworded` blocks this thread (or task) is inside, innermost first."""

_FACTORY_LOCK = threading.Lock()
_FACTORY_USERS = 0
"""How many :func:`reworded` blocks are open in any thread: the record factory is installed
while there is one, and the one it wrapped is put back when the last one closes."""
_FACTORY_MADE: Callable[..., logging.LogRecord] | None = None
_MAKING = threading.local()
"""Set while this thread's :func:`_factory` calls the factory it wrapped: a factory the caller
set on top of ours while a block was open, and that ours then wrapped, cannot loop."""


def _apply(words: tuple[Callable[[str], str], ...], text: str) -> str:
    for rewrite in words:
        text = rewrite(text)
    return text


def _factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
    """The record factory while a :func:`reworded` block is open: it rewrites only the records
    made in a thread (or task) inside one, so another thread's lines keep their words."""
    assert _FACTORY_MADE is not None
    if getattr(_MAKING, "now", False):  # a caller's factory that wraps this one, wrapped again
        return logging.LogRecord(*args, **kwargs)
    _MAKING.now = True
    try:
        record = _FACTORY_MADE(*args, **kwargs)
    finally:
        _MAKING.now = False
    words = _WORDS.get()
    if words and record.name.startswith("foxhunt"):
        try:
            text = record.getMessage()
        except (TypeError, ValueError):  # a malformed record: logging reports it on emit
            return record
        new = _apply(words, text)
        if new != text:
            record.msg, record.args = new, ()
    return record


def _install() -> None:
    global _FACTORY_USERS, _FACTORY_MADE
    with _FACTORY_LOCK:
        if _FACTORY_USERS == 0 and logging.getLogRecordFactory() is not _factory:
            _FACTORY_MADE = logging.getLogRecordFactory()
            logging.setLogRecordFactory(_factory)
        _FACTORY_USERS += 1


def _uninstall() -> None:
    global _FACTORY_USERS
    with _FACTORY_LOCK:
        _FACTORY_USERS -= 1
        # a factory the caller set meanwhile stays (ours is inside it and does nothing now)
        if _FACTORY_USERS == 0 and logging.getLogRecordFactory() is _factory:
            assert _FACTORY_MADE is not None
            logging.setLogRecordFactory(_FACTORY_MADE)


@contextlib.contextmanager
def reworded(words: Callable[[str], str]) -> Iterator[None]:
    """Inside the block, foxhunt's log records and its DataError/InputError read ``words(text)``.

    Log records are rewritten as they are made (a record factory, installed while any block is
    open and restored after the last), so every handler, the caller's included, sees the new
    text. Only records made inside the block's thread (or asyncio task) are rewritten: two
    threads in two API calls each keep their own words, and a third thread's lines are its own.
    Blocks nest: the inner block's rewrite applies first.
    """
    token = _WORDS.set((words, *_WORDS.get()))
    _install()
    try:
        yield
    except (DataError, InputError) as e:
        message = words(str(e))
        if message == str(e):
            raise
        raise type(e)(message) from e
    finally:
        _uninstall()
        _WORDS.reset(token)


FRAME_FILE = "dataframe"
"""The stem of the file a frame handed to the API is written to (``dataframe-0.parquet``)."""


@contextlib.contextmanager
def bars_path(
    bars: BarsLike,
    workdir: Path,
    symbol: str | None = None,
    *,
    keep: bool = True,
    columns: dict[str, str] | None = None,
) -> Iterator[Path]:
    """A path to read ``bars`` from: the path itself, or the frame written to ``workdir``.

    The file stays in ``workdir`` with ``keep`` (a model trained on it records its path), else
    it goes when the block ends (``predict`` and ``evaluate``: a notebook's loop over large
    frames filled the scratch directory, a file per call). Inside the block
    a :class:`~foxhunt.errors.DataError` or :class:`~foxhunt.errors.InputError` that names
    that file, and every foxhunt log line, names ``DataFrame`` instead.
    """
    if kind_of(bars) == "path":
        yield Path(bars)  # type: ignore[arg-type]
        return
    frame = to_polars(bars, symbol, (columns or {}).get("symbol"))  # type: ignore[arg-type]
    workdir.mkdir(parents=True, exist_ok=True)
    # a name that says something (not "bars-0"): a name that says nothing of the symbol takes
    # the folder's word, and a temporary folder's random suffix ("foxhunt-4s_6ea6s") read as a
    # claim of 4-second bars refused 1-minute ones at random
    n = 0
    while True:  # the first free number, taken at once (two threads never share a file)
        path = workdir / f"{FRAME_FILE}-{n}.parquet"
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            break
        except FileExistsError:
            n += 1
    try:
        frame.write_parquet(path)
    except pl.exceptions.PolarsError as e:
        raise DataError(f"bars {FRAME}: cannot store it ({str(e).splitlines()[0]})") from e
    try:
        with reworded(lambda text: text.replace(str(path), FRAME)):
            yield path
    finally:
        if not keep:
            path.unlink(missing_ok=True)
