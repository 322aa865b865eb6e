"""Timestamp columns -> ``Datetime("us", "UTC")`` expressions.

Accepted: datetimes (naive = UTC, or any zone, converted), dates, integer/float epochs (unit from
the magnitude: s, ms, us, ns) and text: ISO 8601 with or without offset, epoch digits, or slash
dates (``1/13/1999``, ``13/01/1999 14:35``; month-first unless only day-first parses).
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from foxhunt.errors import DataError


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


_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
_SLASH_DATES = ("%m/%d/%Y", "%d/%m/%Y", "%m/%d/%y", "%d/%m/%y")
_SLASH_TIMES = ("", " %H:%M", " %H:%M:%S", " %H:%M:%S%.f")


def text_timestamp_expr(lf: pl.LazyFrame, text: pl.Expr) -> pl.Expr:
    """Parse timestamp strings: ISO (with or without offset), epoch digits, or slash dates.

    Slash dates are ambiguous; the first format (month-first before day-first) that parses
    every value wins, so ``1/13/1999`` and ``13/1/1999`` both work and an all-ambiguous file is
    read month-first (US style).
    """
    text = text.str.strip_chars()
    sample = lf.select(text.drop_nulls().first()).collect().item()
    if sample is not None and _NUMBER.match(sample):
        return _epoch_expr(text.cast(pl.Float64, strict=False), float(sample))
    if sample is None or "/" not in sample:
        return text.str.to_datetime(time_unit="us", time_zone="UTC", strict=False)
    formats = [d + t for d in _SLASH_DATES for t in _SLASH_TIMES]
    parsed = [
        text.str.to_datetime(f, time_unit="us", time_zone="UTC", strict=False) for f in formats
    ]
    nulls = lf.select([p.null_count().alias(str(i)) for i, p in enumerate(parsed)]).collect()
    counts = nulls.row(0)
    return parsed[counts.index(min(counts))]


def timestamp_expr(lf: pl.LazyFrame, path: Path, col: str, dtype: pl.DataType) -> pl.Expr:
    """Expression turning column ``col`` of ``lf`` (dtype ``dtype``) into UTC microseconds.

    Args:
        lf: the file's lazy frame (small samples are read from it to choose a unit/format).
        path: the file, for error messages.
        col: the timestamp column's name in the file.
        dtype: its type.

    Returns:
        A ``Datetime("us", "UTC")`` expression; unparsable values become null.

    Raises:
        DataError: the column's type cannot hold timestamps.
    """
    c = pl.col(col)
    if isinstance(dtype, pl.Datetime):
        c = (
            c.dt.replace_time_zone("UTC")
            if dtype.time_zone is None
            else c.dt.convert_time_zone("UTC")
        )
        return c.dt.cast_time_unit("us")
    if dtype == pl.Date:
        return c.cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
    if dtype.is_integer() or dtype.is_float():
        first = lf.select(c.drop_nulls().first()).collect().item()
        return _epoch_expr(c, float(first) if first is not None else None)
    if dtype == pl.String:
        return text_timestamp_expr(lf, c)
    raise DataError(f"{path}: column '{col}' has type {dtype}, which is not a timestamp")
