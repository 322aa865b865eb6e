"""Timestamp columns -> ``Datetime("us", "UTC")`` expressions.

Accepted: datetimes (any zone, converted; naive ones are wall-clock times in ``tz``), dates,
integer/float epochs (unit from the magnitude: s, ms, us, ns; always UTC) and text:

* ISO 8601 with or without offset (``2024-01-02 09:30:00``, ``2012-02-01 00:00:00+00:00``);
* epoch digits (``1640995200000``, crypto ``open_time``);
* vendor spellings, the format chosen by trying a short list on the data:
  ``2024.01.02 09:30`` (MetaTrader), ``20240102 093000`` (NinjaTrader), ``01/02/2024 09:30``
  (Kibot, TradeStation), ``01.02.2012 00:00:00.000`` (Dukascopy), with or without seconds.

Day-first or month-first is decided by the data (``13/01/2024`` only parses day-first). When
every value fits both, slash dates are read month-first (US vendors) and dotted or dashed dates
day-first (European vendors), the guess is logged, and ``dayfirst=`` forces it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from foxhunt.errors import DataError

log = logging.getLogger(__name__)

_HEAD = 200
"""Values tried against every candidate format before the survivors see the whole column."""


@dataclass(frozen=True)
class Times:
    """A timestamp expression and how it was read.

    Attributes:
        expr: ``Datetime("us", "UTC")`` expression; unparsable values are null.
        naive: the values were wall-clock times without a zone (read in the given ``tz``).
    """

    expr: pl.Expr
    naive: bool


def _epoch_unit(value: float) -> str:
    v = abs(value)
    if v >= 1e17:
        return "ns"
    if v >= 1e14:
        return "us"
    if v >= 1e11:
        return "ms"
    return "s"


def _epoch_expr(c: pl.Expr, first: float | None) -> pl.Expr:
    unit = _epoch_unit(first) if first is not None else "s"
    scale = {"s": 1_000_000, "ms": 1_000, "us": 1}.get(unit)
    whole = c.cast(pl.Float64).round(0).cast(pl.Int64) if scale == 1_000_000 else c.cast(pl.Int64)
    micros = whole * scale if scale else whole // 1_000
    return micros.cast(pl.Datetime("us")).dt.replace_time_zone("UTC")


def local_to_utc(c: pl.Expr, tz: str) -> pl.Expr:
    """Naive wall-clock datetimes in ``tz`` -> UTC (a repeated DST hour reads as its first
    occurrence; a skipped one becomes null, reported as unparsable)."""
    if tz == "UTC":
        return c.dt.replace_time_zone("UTC")
    local = c.dt.replace_time_zone(tz, ambiguous="earliest", non_existent="null")
    return local.dt.convert_time_zone("UTC")


_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?")
_OFFSET = re.compile(r"(Z|[+-]\d{2}:?\d{2})$")
_MONTH_FIRST = ("%m/%d/%Y", "%m/%d/%y", "%m.%d.%Y", "%m-%d-%Y")
_DAY_FIRST = ("%d/%m/%Y", "%d/%m/%y", "%d.%m.%Y", "%d-%m-%Y")
_YEAR_FIRST = ("%Y.%m.%d", "%Y/%m/%d", "%Y%m%d")
_TIMES = (
    "",
    " %H:%M",
    " %H:%M:%S",
    " %H:%M:%S%.f",
    " %H%M%S",
    " %H%M",
    "T%H:%M:%S",
    "T%H:%M:%S%.f",
)


def _convention(sample: str) -> bool:
    """Day-first when a date fits both ways: yes for ``.``/``-`` dates, no for ``/`` dates."""
    return "/" not in sample


def _text_formats(
    lf: pl.LazyFrame, text: pl.Expr, sample: str, dayfirst: bool | None, where: str
) -> pl.Expr | None:
    """The candidate format parsing the most values, or None when none parses the head."""
    dates = (*_YEAR_FIRST, *_MONTH_FIRST, *_DAY_FIRST)
    formats = [d + t for d in dates for t in _TIMES]
    head = lf.select(text).head(_HEAD).collect().to_series()
    fits = []
    for f in formats:
        n = head.str.to_datetime(f, strict=False).null_count()
        if n == head.null_count():
            fits.append(f)
    if not fits:
        return None
    if len(fits) > 1:
        parsed = [text.str.to_datetime(f, time_unit="us", strict=False) for f in fits]
        nulls = lf.select([p.null_count().alias(str(i)) for i, p in enumerate(parsed)]).collect()
        best = min(nulls.row(0))
        fits = [f for f, n in zip(fits, nulls.row(0), strict=True) if n == best]
    if len(fits) > 1:
        day = _convention(sample) if dayfirst is None else dayfirst
        chosen = [f for f in fits if (f[:2] == "%d") == day] or fits
        if dayfirst is None and any(f[:2] in ("%d", "%m") for f in fits):
            log.warning(
                "dates in %s fit both day-first and month-first (e.g. %r): read %s; "
                "pass dayfirst=%s to force the other",
                where,
                sample,
                "day-first" if day else "month-first",
                not day,
            )
        fits = chosen
    log.debug("timestamps in %s read with format %r", where, fits[0])
    return text.str.to_datetime(fits[0], time_unit="us", strict=False)


def text_timestamp_expr(
    lf: pl.LazyFrame,
    text: pl.Expr,
    *,
    tz: str = "UTC",
    dayfirst: bool | None = None,
    where: str = "the file",
) -> Times:
    """Parse timestamp strings (see the module docstring for the spellings).

    Args:
        lf: the file's lazy frame (samples are read from it to choose a unit/format).
        text: the text expression.
        tz: zone of naive wall-clock times.
        dayfirst: force day-first (True) or month-first (False) for ambiguous dates.
        where: the file (and column), for log messages.

    Returns:
        The UTC expression and whether the values were naive.
    """
    text = text.str.strip_chars()
    sample = lf.select(text.drop_nulls().first()).collect().item()
    if sample is not None and _NUMBER.match(sample):
        return Times(_epoch_expr(text.cast(pl.Float64, strict=False), float(sample)), False)
    if sample is None:
        return Times(text.str.to_datetime(time_unit="us", time_zone="UTC", strict=False), False)
    if _OFFSET.search(sample) and _ISO.match(sample):
        return Times(text.str.to_datetime(time_unit="us", time_zone="UTC", strict=False), False)
    dated_only = not re.search(r"\d[ T]\d", sample)
    parsed = None
    if not _ISO.match(sample):
        parsed = _text_formats(lf, text, sample, dayfirst, where)
    if parsed is None:
        parsed = text.str.to_datetime(time_unit="us", strict=False)
    return Times(local_to_utc(parsed, tz), naive=not dated_only)


def timestamp_expr(
    lf: pl.LazyFrame,
    path: Path,
    col: str,
    dtype: pl.DataType,
    *,
    tz: str = "UTC",
    dayfirst: bool | None = None,
) -> Times:
    """Expression turning column ``col`` of ``lf`` (dtype ``dtype``) into UTC microseconds.

    Args:
        lf: the file's lazy frame (small samples are read from it to choose a unit/format).
        path: the file, for messages.
        col: the timestamp column's name in the file.
        dtype: its type.
        tz: zone of naive wall-clock times (epochs and zoned values ignore it).
        dayfirst: force day-first (True) or month-first (False) for ambiguous text dates.

    Returns:
        The ``Datetime("us", "UTC")`` expression (unparsable values null) and whether the
        values were naive.

    Raises:
        DataError: the column's type cannot hold timestamps.
    """
    c = pl.col(col)
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone is None:
            return Times(local_to_utc(c, tz).dt.cast_time_unit("us"), True)
        return Times(c.dt.convert_time_zone("UTC").dt.cast_time_unit("us"), False)
    if dtype == pl.Date:
        return Times(c.cast(pl.Datetime("us")).dt.replace_time_zone("UTC"), False)
    if dtype.is_integer() or dtype.is_float():
        first = lf.select(c.drop_nulls().first()).collect().item()
        return Times(_epoch_expr(c, float(first) if first is not None else None), False)
    if dtype == pl.String:
        return text_timestamp_expr(lf, c, tz=tz, dayfirst=dayfirst, where=f"{path} '{col}'")
    raise DataError(f"{path}: column '{col}' has type {dtype}, which is not a timestamp")
