"""Prices written in fractions of a point, as bond and grain futures are quoted.

* 32nds: ``131'29`` or ``131-29`` is 131 + 29/32; a third digit gives quarters of a 32nd
  (``0``, ``2`` = 1/4, ``5`` = 1/2, ``7`` = 3/4: ``124'302`` is 124 + 30.25/32, the 5-year
  note's quarter-32nds; ``131'295`` the 10-year's half-32nds), and ``+`` a half (``131-29+``).
* 8ths: ``706'2`` or ``706-2`` is 706 + 2/8 (corn, wheat and soybeans in cents and eighths).

A file's prices are read so only when every price written in its four price columns is in one
of these notations, with the 32nd's count under 32, no other column holds an apostrophe and
``--decimal`` is not given: a Swiss export's ``131'290`` (131,290 with an apostrophe between
the thousands) is read as thousands unless every price of the file also passes as 32nds, which
Swiss-grouped numbers rarely do (``2'682.25`` has decimals; whole numbers must keep every group
under 320 and end in 0, 2, 5 or 7, as a price on a round tick in a narrow range can). Prices
only in that form (``131'290``, no ``131'29``, ``131-29`` or ``+``) are read as 32nds with a
warning, and ``data inspect`` calls them suspicious: ``--decimal point`` reads them as
thousands. Until session 45
``131'290`` was read as 131,290 with verdict valid, and ``131'29`` was refused as no number.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

THIRTY_SECONDS = r"^(\d+)['’-](\d{2})([0257+]?)$"
"""A price in 32nds: the whole points, an apostrophe or a dash, the 32nds, their quarter."""
EIGHTHS = r"^(\d+)['’-]([0-7])$"
"""A price in 8ths: the whole points (cents, for grains), an apostrophe or a dash (Barchart's
``425-2``: refused as no number until session 59), the 8ths."""
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


SWISS_LIKE = r"^\d+['’]\d{3}$"
"""The one form 32nds share with Swiss thousands: ``131'290``."""


def written_in_fractions(
    lf: pl.LazyFrame, prices: list[str], others: list[str], blank: Callable[[str], pl.Expr]
) -> pl.LazyFrame:
    """A file's two flags, one row: ``every`` price is written in 32nds or 8ths (every value
    not blank reads as one, each column holds one, and no column of ``others`` holds an
    apostrophe: a Swiss volume of ``12'345`` says they group thousands); and every price is in
    the form Swiss thousands share (``131'290``), as ``swiss``.

    Each column's text is read once, then asked (as one expression of aggregates each value
    was read again for every question: 10-25 ms a file of five rows).

    Args:
        lf: The file.
        prices: The text price columns.
        others: The file's other text columns.
        blank: A column's cells holding no value.
    """
    cells = [
        e
        for i, t in enumerate(prices)
        for e in (
            fraction_value(pl.col(t).str.strip_chars()).is_not_null().alias(f"read{i}"),
            blank(t).alias(f"blank{i}"),
            pl.col(t).str.strip_chars().str.contains(SWISS_LIKE).alias(f"swiss{i}"),
        )
    ]
    marks = (pl.col(c).str.contains("['’]") for c in others)
    cells.append((pl.any_horizontal(marks) if others else pl.lit(False)).alias("apostrophe"))
    read, empty, swiss = (
        [pl.col(f"{name}{i}") for i in range(len(prices))] for name in ("read", "blank", "swiss")
    )
    every = (
        pl.all_horizontal((r | b).all() & r.any() for r, b in zip(read, empty, strict=True))
        & ~pl.col("apostrophe").any()
    )
    like = pl.all_horizontal((s | b).all() for s, b in zip(swiss, empty, strict=True))
    return lf.select(cells).select(every.alias("every"), (every & like).alias("swiss"))
