"""Dates and clocks written as numbers, beyond ``yyyymmdd``: TradeStation EasyLanguage's
``CYYMMDD`` dates and clocks of digits (``930``, ``1705.00``, ``93000``).

EasyLanguage's ``Date`` is the years since 1900, then MMDD: ``1240103`` is 3 January 2024,
``991231`` 31 December 1999, and ``Print(Date, Time, ...)`` writes both as numbers
(``1240103.00,1705.00``). As epoch seconds such dates fall in January 1970, and as ``%Y%m%d``
``1240103`` is the year 1240: both were refused, naming no format that reads them.
"""

from __future__ import annotations

import re

import polars as pl

_HEAD = 200
"""Rows whose dates or clocks decide how the column is written."""

CYYMMDD = re.compile(r"^1?\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(\.0+)?$")
"""An EasyLanguage date: six digits up to 1999, seven from 2000 (``1240103``), perhaps printed
with zero decimals."""

_WHOLE_DECIMALS = r"\.0+$"


def cyymmdd_days(lf: pl.LazyFrame, text: pl.Expr) -> pl.Expr | None:
    """:data:`CYYMMDD` dates as ``yyyymmdd`` text (19,000,000 added), where every date of the
    first rows fits and one of the column has seven digits: in the first rows, or further on in
    a file that starts before 2000 (``950705`` ... ``991231``, then ``1000103``: refused at its
    first seven digits until session 58); else None (six digits alone are MetaStock's
    ``YYMMDD``)."""
    digits = text.cast(pl.String).str.strip_chars()
    head = lf.select(digits).head(_HEAD).collect().to_series().drop_nulls()
    if not (head.len() and head.str.contains(CYYMMDD.pattern).all()):
        return None
    seven = digits.str.replace(_WHOLE_DECIMALS, "").str.len_chars().eq(7)
    if not head.str.replace(_WHOLE_DECIMALS, "").str.len_chars().eq(7).any():
        later = seven & digits.str.contains(CYYMMDD.pattern)
        if not lf.select(later.any()).collect().item():
            return None
    whole = digits.str.replace(_WHOLE_DECIMALS, "").cast(pl.Int64, strict=False)
    # a later value of another shape (20240104) is no date here: null, named by its row
    dated = pl.when(digits.str.contains(CYYMMDD.pattern)).then(whole + 19_000_000)
    return dated.cast(pl.String)


def digit_clock(lf: pl.LazyFrame, clock: pl.Expr) -> pl.Expr:
    """A clock written as digits (``5``, ``930``, ``93000``: HHMM or HHMMSS unpadded) padded to
    HHMM / HHMMSS, as ``%H%M`` and ``%H%M%S`` read it: HHMMSS where any of the column has five
    or six digits (Forex Tester's 0, 100, 200 ... 10000 are seconds from midnight on). Such a
    clock printed with zero decimals (EasyLanguage's ``1705.00``) loses them where one of the
    first rows has three digits or more before them (``10.00`` alone may be a dotted clock)."""
    head = lf.select(clock).head(_HEAD).collect().to_series().drop_nulls()
    printed = head.len() > 0 and head.str.contains(r"^\d{1,6}\.0+$").all()
    if printed and head.str.contains(r"^\d{3,6}\.").any():
        clock = clock.str.replace(_WHOLE_DECIMALS, "")
    digits = clock.str.contains(r"^\d{1,6}$")
    seconds = pl.when(digits).then(clock.str.len_chars()).otherwise(0).max() >= 5
    return (
        pl.when(digits & seconds)
        .then(clock.str.zfill(6))
        .when(digits)
        .then(clock.str.zfill(4))
        .otherwise(clock)
    )
