"""The user's own inputs: extra numeric columns of the bars as observed, known-future or static
covariates (``--observed-cols``, ``--known-cols``, ``--static-cols``).

A covariate ``x`` becomes ``obs__user_x``, ``known__user_x`` or ``static__user_x``: its value at
the row's bar, cast to float32 and scaled like every input (training-split mean and std). The
reader keeps these columns and refuses a missing, non-numeric or non-finite value with file,
column and row (:func:`foxhunt.data.read.bars.read_bars`, ``keep``). Observed covariates are read up
to the forecast origin only; known-future ones also at the decoder's bar times, which at
forecast time come from *future rows* of the bars file: rows after a symbol's last bar with
empty prices and the known columns filled (:func:`future_values`). Static covariates must be
constant per symbol.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from foxhunt.config import DataConfig
from foxhunt.errors import DataError

USER = "user_"
"""Infix of a covariate's feature name: ``obs__user_<column>``."""


def covariate_names(data: DataConfig | None) -> tuple[tuple[str, ...], ...]:
    """``(observed, known, static)`` feature names of the covariates of ``data``."""
    if data is None:
        return (), (), ()
    return (
        tuple(f"obs__{USER}{c}" for c in data.observed_cols),
        tuple(f"known__{USER}{c}" for c in data.known_cols),
        tuple(f"static__{USER}{c}" for c in data.static_cols),
    )


def covariate_columns(data: DataConfig | None) -> tuple[str, ...]:
    """The bars' columns that the covariates of ``data`` read."""
    if data is None:
        return ()
    return (*data.observed_cols, *data.known_cols, *data.static_cols)


def covariate_exprs(data: DataConfig | None) -> list[pl.Expr]:
    """One float32 expression per covariate, named as :func:`covariate_names`."""
    if data is None:
        return []
    cols = covariate_columns(data)
    names = [n for group in covariate_names(data) for n in group]
    return [pl.col(c).cast(pl.Float32).alias(n) for c, n in zip(cols, names, strict=True)]


def check_static(bars: pl.DataFrame, columns: Sequence[str]) -> None:
    """Refuse a static covariate that changes within a symbol.

    Raises:
        DataError: naming the column, the symbol and the time of the first change.
    """
    for c in columns:
        moved = bars.filter((pl.col(c) != pl.col(c).first().over("symbol")).fill_null(False))
        if moved.height:
            row = moved.row(0, named=True)
            raise DataError(
                f"static column {c!r} changes within symbol {row['symbol']!r} at {row['ts']} "
                "(a static covariate is one value per symbol; pass it with --observed-cols)"
            )


def future_values(
    future: pl.DataFrame | None, times: pl.DataFrame, known: Sequence[str]
) -> pl.DataFrame:
    """The known columns at the decoder's scheduled bar times, from the bars' future rows.

    Args:
        future: the future rows (``symbol``, ``ts``, known columns), or None.
        times: ``symbol``, ``ts`` of the scheduled bars, in order.
        known: the known covariate columns.

    Returns:
        ``times`` with the known columns.

    Raises:
        DataError: a scheduled bar without a future row, or two future rows at one time
            (named by symbol and time).
    """
    if not known:
        return times
    if future is None or future.height == 0:
        row = times.row(0, named=True)
        raise DataError(
            f"known-future columns {', '.join(known)} need future rows: add rows after each "
            f"symbol's last bar (first: {row['symbol']!r} at {row['ts']}) with empty prices "
            "and the known columns filled (docs/data.md, Known-future columns)"
        )
    twice = future.filter(pl.struct("symbol", "ts").is_duplicated())
    if twice.height:
        row = twice.row(0, named=True)
        raise DataError(f"two future rows for symbol {row['symbol']!r} at {row['ts']}")
    got = times.join(
        future.select("symbol", "ts", *known),
        on=["symbol", "ts"],
        how="left",
        maintain_order="left",
    )
    gap = got.filter(pl.any_horizontal(pl.col(c).is_null() for c in known))
    if gap.height:
        row = gap.row(0, named=True)
        raise DataError(
            f"no future row for symbol {row['symbol']!r} at {row['ts']}: the forecast needs "
            f"the known-future columns ({', '.join(known)}) at each of its bar times"
        )
    return got
