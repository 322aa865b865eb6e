"""The forecast target (``--target``): what ``target__h1 .. target__hH`` hold at an origin t.

* a price column ``P`` (default ``close``; ``open``, ``high``, ``low`` or an extra positive
  column of the bars): the log return ``log(P[t+h] / P[t])`` of the same symbol;
* ``return:COLUMN``: an extra column of one-bar returns (``r[t]`` is the return from bar t-1 to
  bar t), summed over the next h bars: ``r[t+1] + ... + r[t+h]``.

Either way the target at t reads bars after t only (that is what a target is) and no input
reads them. Scaling, the loss, the baselines and ``evaluate`` work on the target as it is.
``predict``'s ``price_q*`` columns are ``close * exp(return_q*)``: prices only for the default
target; with another one read the ``return_q*`` columns (docs/features.md, Target).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from foxhunt.data.read.validate import VALUE_COLUMNS
from foxhunt.errors import DataError

RETURN = "return:"
"""Prefix of a target column of one-bar returns."""


def target_column(target: str) -> tuple[str, bool]:
    """``(column, is_return)`` of a ``--target`` value."""
    if target.startswith(RETURN):
        return target[len(RETURN) :].strip(), True
    return target.strip(), False


def target_extra_columns(target: str) -> tuple[str, ...]:
    """The bars' extra column the target reads (none for a bar price)."""
    column, _ = target_column(target)
    return () if column in VALUE_COLUMNS else (column,)


def target_exprs(target: str, names: Sequence[str]) -> list[pl.Expr]:
    """``names[h-1]`` = the target over h bars, per symbol (see the module docstring).

    Raises:
        DataError: ``volume`` or an empty name as a price target.
    """
    column, is_return = target_column(target)
    if not column or column == "volume" and not is_return:
        raise DataError(f"--target {target!r}: name a price column or return:COLUMN")
    c = pl.col(column).cast(pl.Float64)
    if is_return:
        return [c.rolling_sum(h).shift(-h).over("symbol").alias(n) for h, n in enumerate(names, 1)]
    lp = c.log()
    return [(lp.shift(-h) - lp).over("symbol").alias(n) for h, n in enumerate(names, 1)]


def check_target_prices(bars: pl.DataFrame, target: str) -> None:
    """Refuse a non-positive value of a price target column (named by symbol and time)."""
    column, is_return = target_column(target)
    if is_return or column not in bars.columns:
        return
    bad = bars.filter(pl.col(column) <= 0).head(1)
    if bad.height:
        row = bad.row(0, named=True)
        raise DataError(
            f"--target {column}: value {row[column]} of symbol {row['symbol']!r} at {row['ts']} "
            "is not a positive price (for a column of returns use --target return:COLUMN)"
        )
