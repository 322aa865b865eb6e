"""Numbers as vendors write them: thousands separators (``2,052.50``, ``16.750,50``, ``2 682,25``),
currency signs, magnitude suffixes (``53.64K``), float32 parquet values, and how a missing value is
written (``null``, ``#N/A N/A``, ``-``)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import polars as pl

from foxhunt.data.read.csv_dialect import CURRENCY, GROUP_MARK, SPACE_GROUPED
from foxhunt.data.read.fractions import fraction_value
from foxhunt.errors import DataError

_GROUPED = r"^[+-]?\d{1,3}(,\d{3})+\.\d*$|^[+-]?\d{1,3}(,\d{3}){2,}$"
"""A number with thousands separators: ``2,052.50`` (a decimal point after the groups) or
``1,234,567`` (two groups or more). ``110,123`` alone is left as it is (refused): it may be a
decimal comma."""
_ONE_GROUP = r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$"
"""The same with one group allowed (``422,676``): a volume's, or any with ``--decimal point``."""
_SUFFIX = r"^([+-]?\d+(\.\d*)?)([KMB])$"
"""A count with a magnitude suffix, ``53.64K`` (Investing.com's volume)."""
_SCALE = {"K": 1e3, "M": 1e6, "B": 1e9}


_DOT_GROUPED = r"^[+-]?\d{1,3}(\.\d{3})+(,\d*)?$"
"""A number with points as thousands separators, as a decimal-comma locale writes it:
``16.750,50``, ``6.340`` (read only in a file whose dialect has decimal commas)."""
_DOTS_ONLY_GROUP = r"^[+-]?\d{1,3}(\.\d{3}){2,}$"
"""Points between thousands in two places or more (``30.120.000``): a number with two points is
no decimal, in a file of decimal points too (B3's share counts beside ``37.50``)."""


_MISSING = ("", "null", "nan", "none", "n/a", "na", "-", "#n/a", "#n/a n/a", "#n/a n.a.")
"""How files write a value that is not there (Yahoo's ``null``, a blank cell, ``NaN``,
Bloomberg's ``#N/A N/A`` on a holiday...)."""


def blank(col: str) -> pl.Expr:
    """Where a text column holds no value as written (:data:`_MISSING`)."""
    raw = pl.col(col)
    return raw.is_null() | raw.str.strip_chars().str.to_lowercase().is_in(_MISSING)


def _where(mask: pl.Series, then: pl.Series, otherwise: pl.Series) -> pl.Series:
    """``then`` where ``mask`` holds, else ``otherwise`` (a null mask: ``otherwise``)."""
    return then.zip_with(mask, otherwise)


def _text_values(
    column: pl.Series, *, decimal_comma: bool, suffixes: bool, points: bool
) -> pl.Series:
    """The numbers of a text column (:func:`value_expr`); null where a value is no number."""
    text = column.str.strip_chars().str.replace(CURRENCY, "")  # Nasdaq.com's "$185.09"
    text = _where(text.str.contains(SPACE_GROUPED), text.str.replace_all(GROUP_MARK, ""), text)
    if decimal_comma:
        grouped = text.str.contains(_DOT_GROUPED)
        text = _where(grouped, text.str.replace_all(".", "", literal=True), text)
        text = text.str.replace(",", ".", literal=True)
    else:
        grouped = text.str.contains(_GROUPED if not (suffixes or points) else _ONE_GROUP)
        text = _where(grouped, text.str.replace_all(",", "", literal=True), text)
        dotted = text.str.contains(_DOTS_ONLY_GROUP)  # "30.120.000": no decimal has two
        text = _where(dotted, text.str.replace_all(".", "", literal=True), text)
    number = text.cast(pl.Float64, strict=False)
    if not suffixes:
        return number
    suffix = text.str.extract(_SUFFIX, 3)
    scale = suffix.replace_strict(_SCALE, default=None, return_dtype=pl.Float64)
    scaled = text.str.extract(_SUFFIX, 1).cast(pl.Float64, strict=False) * scale
    return _where(suffix.is_not_null(), scaled, number)


def value_expr(
    path: Path,
    col: str,
    dtype: pl.DataType,
    decimal_comma: bool,
    suffixes: bool = True,
    fractions: bool = False,
    points: bool = False,
) -> pl.Expr:
    """A value column as Float64; text that is no number reads as null (reported later with its
    row). Text numbers may carry thousands separators (``2,052.50``, not with a decimal comma)
    and, with ``suffixes`` (the volume), a K/M/B suffix (``53.64K``); where ``fractions`` holds
    (the prices, when all of them are written in 32nds or 8ths of a point:
    :mod:`foxhunt.data.read.fractions`) text reads as such a price. A comma before one group
    of three digits (``422,676``) groups thousands in a volume (a count) and with ``points``
    (``--decimal point``); elsewhere it may be a decimal comma, and is refused by row."""
    c = pl.col(col)
    if dtype == pl.String and fractions:
        return fraction_value(c.str.strip_chars())
    if dtype == pl.String:  # one pass of Series steps: as one expression each step's input was
        # copied three times (condition, then, otherwise), 135 copies of the column's text:
        # 10 ms a column of five rows (docs/testing.md, session 59)
        read = partial(_text_values, decimal_comma=decimal_comma, suffixes=suffixes, points=points)
        return c.map_batches(read, return_dtype=pl.Float64, is_elementwise=True)
    if dtype == pl.Float32:  # 1325.45 is 1325.449951171875 in float32: back to its digits
        return c.cast(pl.Float64).round_sig_figs(FLOAT32_DIGITS)
    if dtype.is_numeric():
        return c.cast(pl.Float64)
    raise DataError(f"{path}: column '{col}' has type {dtype}, not numbers")


FLOAT32_DIGITS = 7
"""Significant digits a float32 holds (24 bits: 7.2): a price written to parquet as float32 is
read back to the decimal it was (the tick inferred from XAUUSD's float32 prices was 0.009887,
not 0.01); a price of more digits never survived the float32 anyway."""


def volume_expr(
    path: Path, parts: tuple[str, ...], schema: pl.Schema, decimal_comma: bool
) -> pl.Expr:
    """The volume: one column, or the sum of up and down volume; NaN where every part is empty
    (not reported: read as 0 with one warning), null where a part is no number."""
    value = pl.lit(0.0, dtype=pl.Float64)
    empty = pl.lit(True)
    for part in parts:
        value = value + value_expr(path, part, schema[part], decimal_comma)
        missing = pl.col(part).is_null()
        if schema[part] == pl.String:  # Investing.com's "-", Bloomberg's "#N/A N/A", "null"
            missing = missing | blank(part)
        empty = empty & missing
    return pl.when(empty).then(float("nan")).otherwise(value)
