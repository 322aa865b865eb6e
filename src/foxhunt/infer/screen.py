"""Sort a followed file's new rows into the bars a forecaster can take and the lines it cannot.

``foxhunt predict --follow`` must get past a bad line of an append-only feed, so instead of
stopping at the first problem (what :func:`~foxhunt.data.read.validate.validate_bars` does for a
file read once) every row is judged on its own, in file order, and rejected with a reason:

* ``malformed``: no timestamp, symbol or value could be read (unparsable number or time, a
  missing field, a line the CSV reader cannot split);
* ``invalid``: the bar breaks the rules of :mod:`foxhunt.data.read.validate` (non-finite value,
  non-positive price, negative volume, high/low inconsistent with open/close);
* ``unknown_symbol``: a symbol the forecaster does not serve (the model was not trained on it);
* ``duplicate``: the same time as the latest bar already taken for its symbol;
* ``out_of_order``: earlier than the latest bar already taken for its symbol.

Order is judged against the bars *taken*, in file order, the same way for a backlog and for
live rows: a late bar is skipped, never sorted in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from foxhunt.data.read.validate import PRICE_COLUMNS, VALUE_COLUMNS

REASONS = ("malformed", "invalid", "unknown_symbol", "duplicate", "out_of_order")
"""Why a line is skipped, in the order the checks run."""

WHERE = "__where"
"""Column of a piece of a followed file: the row's place in the file (CSV: 1-based line
number; parquet: 0-based row)."""


@dataclass(frozen=True)
class Reject:
    """One skipped line.

    Attributes:
        where: CSV: the 1-based line number in the file; parquet: the 0-based row.
        reason: One of :data:`REASONS`.
        detail: What is wrong, for the log (no file name, no line number).
    """

    where: int
    reason: str
    detail: str


def screen(
    rows: pl.DataFrame, last: Mapping[str, int], allowed: frozenset[str] | None
) -> tuple[pl.DataFrame, list[Reject]]:
    """Split loaded rows into good bars and rejects.

    Args:
        rows: Columns ``ts`` (Datetime UTC, null when unparsable), ``symbol``, the value
            columns (Float64, null when unreadable) and :data:`WHERE`, in file order.
        last: Per symbol, the time of the latest bar already taken (epoch µs).
        allowed: The symbols served (None: any).

    Returns:
        The good rows (same columns, file order) and the rejects, by ``where``.
    """
    judged = rows.with_columns(_problem(allowed))
    rest = judged.filter(pl.col("__reason").is_null())
    rest = rest.drop("__reason", "__detail").with_columns(_order(last))
    good = rest.filter(pl.col("__reason").is_null()).drop("__reason", "__detail")
    bad = pl.concat(
        [
            judged.filter(pl.col("__reason").is_not_null()),
            rest.filter(pl.col("__reason").is_not_null()),
        ],
        how="vertical",
    ).sort(WHERE)
    rejects = [
        Reject(int(w), str(r), str(d))
        for w, r, d in bad.select(WHERE, "__reason", "__detail").iter_rows()
    ]
    return good, rejects


def _problem(allowed: frozenset[str] | None) -> list[pl.Expr]:
    """``__reason`` and ``__detail`` of the first problem of a row on its own (null if none)."""
    sym = pl.col("symbol")
    checks: list[tuple[str, pl.Expr, pl.Expr]] = [
        ("malformed", pl.col("ts").is_null(), pl.lit("timestamp missing or unparsable")),
        ("malformed", sym.is_null() | (sym == ""), pl.lit("symbol missing")),
    ]
    checks += [
        ("malformed", pl.col(c).is_null(), pl.lit(f"{c} missing or not a number"))
        for c in VALUE_COLUMNS
    ]
    checks += [
        ("invalid", ~pl.col(c).is_finite(), pl.format(f"{c} is {{}} (must be finite)", pl.col(c)))
        for c in VALUE_COLUMNS
    ]
    checks += [
        ("invalid", pl.col(c) <= 0, pl.format(f"non-positive price {c} {{}}", pl.col(c)))
        for c in PRICE_COLUMNS
    ]
    top, bottom = pl.max_horizontal("open", "close"), pl.min_horizontal("open", "close")
    checks += [
        ("invalid", pl.col("volume") < 0, pl.format("negative volume {}", pl.col("volume"))),
        ("invalid", pl.col("high") < top, pl.format("high {} < max(open, close) {}", "high", top)),
        (
            "invalid",
            pl.col("low") > bottom,
            pl.format("low {} > min(open, close) {}", "low", bottom),
        ),
    ]
    if allowed is not None:
        served = ", ".join(sorted(allowed))
        checks.append(
            (
                "unknown_symbol",
                ~sym.is_in(sorted(allowed)),
                pl.format(f"symbol '{{}}' is not one the model serves ({served})", sym),
            )
        )
    reason: pl.Expr = pl.lit(None, dtype=pl.String)
    detail: pl.Expr = pl.lit(None, dtype=pl.String)
    for r, bad, d in reversed(checks):  # the first check that fails wins
        reason = pl.when(bad.fill_null(False)).then(pl.lit(r)).otherwise(reason)
        detail = pl.when(bad.fill_null(False)).then(d).otherwise(detail)
    return [reason.alias("__reason"), detail.alias("__detail")]


def _order(last: Mapping[str, int]) -> list[pl.Expr]:
    """``__reason``/``__detail`` for duplicates and late bars among rows that are otherwise good.

    A row is good when it is later than every earlier row of its symbol and than ``last``; a
    rejected row is never later than that, so the running maximum over all earlier rows equals
    the one over the good ones.
    """
    t = pl.col("ts").dt.epoch("us")
    held = pl.col("symbol").replace_strict(dict(last), default=None, return_dtype=pl.Int64)
    before = pl.max_horizontal(t.cum_max().shift(1).over("symbol"), held)
    latest = pl.from_epoch(before, "us").dt.replace_time_zone("UTC")
    return [
        pl.when(t == before)
        .then(pl.lit("duplicate"))
        .when(t < before)
        .then(pl.lit("out_of_order"))
        .alias("__reason"),
        pl.when(t == before)
        .then(pl.format("{} at {} was already read", "symbol", "ts"))
        .when(t < before)
        .then(pl.format("{} at {} is before {}, already read", "symbol", "ts", latest))
        .alias("__detail"),
    ]
