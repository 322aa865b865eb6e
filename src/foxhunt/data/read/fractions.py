"""Prices written in fractions of a point, as bond and grain futures are quoted.

* 32nds: ``131'29`` or ``131-29`` is 131 + 29/32; a third digit gives quarters of a 32nd
  (``0``, ``2`` = 1/4, ``5`` = 1/2, ``7`` = 3/4: ``124'302`` is 124 + 30.25/32, the 5-year
  note's quarter-32nds; ``131'295`` the 10-year's half-32nds), and ``+`` a half (``131-29+``).
* 8ths: ``706'2`` is 706 + 2/8 (corn, wheat and soybeans in cents and eighths).

A file's prices are read so only when every price written in its four price columns is in one
of these notations, with the 32nd's count under 32: a Swiss export's ``131'290`` (131,290 with
an apostrophe between the thousands) is read as thousands unless every price of the file also
passes as 32nds, which real Swiss-grouped numbers do not (a group's last digit is 0, 2, 5 or 7
and its first two under 32 for about one number in eight; ``2'682.25`` has decimals). Until session 45
``131'290`` was read as 131,290 with verdict valid, and ``131'29`` was refused as no number.
"""

from __future__ import annotations

import polars as pl

THIRTY_SECONDS = r"^(\d+)['’-](\d{2})([0257+]?)$"
"""A price in 32nds: the whole points, an apostrophe or a dash, the 32nds, their quarter."""
EIGHTHS = r"^(\d+)['’]([0-7])$"
"""A price in 8ths: the whole points (cents, for grains), an apostrophe, the 8ths."""
_QUARTERS = {"": 0.0, "0": 0.0, "2": 0.25, "5": 0.5, "7": 0.75, "+": 0.5}


def fraction_value(text: pl.Expr) -> pl.Expr:
    """The value of a price written in 32nds or 8ths; null for any other text."""
    whole = text.str.extract(THIRTY_SECONDS, 1).cast(pl.Float64)
    n = text.str.extract(THIRTY_SECONDS, 2).cast(pl.Float64)
    part = text.str.extract(THIRTY_SECONDS, 3).replace_strict(
        _QUARTERS, default=None, return_dtype=pl.Float64
    )
    in_32nds = pl.when(n < 32).then(whole + (n + part) / 32)
    in_8ths = text.str.extract(EIGHTHS, 1).cast(pl.Float64) + (
        text.str.extract(EIGHTHS, 2).cast(pl.Float64) / 8
    )
    return pl.coalesce(in_32nds, in_8ths)


def in_fractions(text: pl.Expr, blank: pl.Expr) -> pl.Expr:
    """True (for every row: an aggregate) when the column is written in fractions: every value
    not ``blank`` reads as one, and there is at least one."""
    value = fraction_value(text)
    return (value.is_not_null() | blank).all() & value.is_not_null().any()
