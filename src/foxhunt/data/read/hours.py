"""A column of the hour beside the date (``Date,Hour,...``, ``Date,Hour,Minute,...``): how
:mod:`foxhunt.data.read.file_read` makes the bar's time of it (docs/data.md)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import polars as pl

from foxhunt.data.read.columns import MINUTE_NAMES, ColumnMap, canonical_name
from foxhunt.errors import DataError


def hour_beside(lf: pl.LazyFrame, path: Path, cols: ColumnMap, stamps: str) -> ColumnMap:
    """An hour column found beside the date: the date alone when it holds the time already
    (``2024-01-02 09:00`` beside ``9``); refused when the hours run to 24 (the hours ending,
    as power markets number them 1-24) unless ``--stamps end`` says the bars are stamped so.

    Raises:
        DataError: hours of 24, without ``--stamps end``.
    """
    d, t = str(cols.date), str(cols.time)
    head = lf.select(pl.col(d).cast(pl.String).str.strip_chars()).head(64).collect().to_series()
    clock = head.str.extract(r"\d[ T](\d{1,2}:\d\d(?::\d\d(?:\.\d+)?)?)")
    if (~clock.str.contains(r"^0?0:00(:00(\.0+)?)?$")).any():  # a time other than midnight
        return replace(cols, ts=d, date=None, time=None, extra=(*cols.extra, t))
    hours = whole_hours(pl.col(t).cast(pl.String).str.strip_chars())
    if stamps != "end" and lf.select((hours == "24").any()).collect().item():
        raise DataError(
            f"{path}: column '{t}' runs to 24: the hours ending (1-24, as power markets number "
            "them), each bar stamped at its end; --stamps end reads them so"
        )
    return cols


def hour_clock(hour: pl.Expr, cols: ColumnMap) -> tuple[pl.Expr, str | None]:
    """The time of day of an hour column (``1`` is 01:00, not the 00:01 a clock written in
    digits is), with the minutes of a minute column beside it; and that column's name."""
    minute = next((c for c in cols.extra if canonical_name(c) in MINUTE_NAMES), None)
    mm = pl.lit("00")
    if minute is not None:
        mm = whole_hours(pl.col(minute).cast(pl.String).str.strip_chars()).str.zfill(2)
    hour = whole_hours(hour)
    clock = (
        pl.when(hour.str.contains(r"^\d{1,2}$"))
        .then(pl.concat_str([hour.str.zfill(2), mm], separator=":"))
        .otherwise(hour)
    )
    return clock, minute


def whole_hours(text: pl.Expr) -> pl.Expr:
    """``9.0`` as ``9``: a column of hours stored as floats (pandas, after a missing value)."""
    return text.str.replace(r"^(\d+)\.0*$", "${1}")
