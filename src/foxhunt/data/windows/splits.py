"""Time-ordered train / validation / test splits with an embargo between them.

Per symbol, rows (already in time order) are laid out as::

    [ train | embargo | val | embargo | test ]

so no window in one split can see bars of the next: with ``embargo >= encoder + horizon``, the
last training target (which looks ``horizon`` bars ahead) ends before the first validation
encoder bar begins. The fractions apply to the rows left after removing the embargoes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import polars as pl

from foxhunt.errors import DataError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SplitCut:
    """How each symbol's rows are cut (``split_by_time``'s arguments)."""

    val_fraction: float
    test_fraction: float
    embargo: int
    min_rows: int


@dataclass(frozen=True)
class Splits:
    """Three disjoint, time-ordered parts of a feature table (same columns as the input)."""

    train: pl.DataFrame
    val: pl.DataFrame
    test: pl.DataFrame


def split_sizes(
    n: int, *, val_fraction: float, test_fraction: float, embargo: int
) -> tuple[int, int, int]:
    """(train, val, test) row counts for one symbol of ``n`` rows.

    A split with fraction 0 gets no rows and no embargo before it.
    """
    gaps = embargo * ((val_fraction > 0) + (test_fraction > 0))
    usable = max(n - gaps, 0)
    n_test = int(usable * test_fraction)
    n_val = int(usable * val_fraction)
    return usable - n_val - n_test, n_val, n_test


def split_bounds(
    counts: Iterable[tuple[str, int]],
    *,
    val_fraction: float,
    test_fraction: float,
    embargo: int,
    min_rows: int | None = None,
) -> dict[str, tuple[int, int, int, int]]:
    """Where each symbol's splits start and end, from its row count alone.

    Args:
        counts: ``(symbol, rows)`` pairs, in table order.
        val_fraction: share of each symbol's usable rows for validation (0 for none).
        test_fraction: share for test (0 for none).
        embargo: rows dropped between train|val and val|test.
        min_rows: fewest rows a non-empty split may have per symbol; defaults to
            ``max(embargo, 1)``.

    Returns:
        symbol -> ``(train_end, val_start, val_end, test_start)`` row offsets within the
        symbol's rows (train is ``[0, train_end)``, test runs to the symbol's last row).

    Raises:
        DataError: a requested split would have fewer than ``min_rows`` rows for a symbol.
    """
    if embargo < 0:
        raise ValueError(f"embargo must be >= 0, got {embargo}")
    if not (0 <= val_fraction < 1 and 0 <= test_fraction < 1 and val_fraction + test_fraction < 1):
        raise ValueError(f"bad fractions: val {val_fraction}, test {test_fraction}")
    need = max(embargo, 1) if min_rows is None else min_rows
    bounds = {}
    for sym, n in counts:
        n_train, n_val, n_test = split_sizes(
            n, val_fraction=val_fraction, test_fraction=test_fraction, embargo=embargo
        )
        problem = _short_split(
            sym, n, (n_train, n_val, n_test), need, val_fraction, test_fraction, embargo
        )
        if problem is not None:
            raise DataError(problem)
        val_start = n_train + (embargo if val_fraction > 0 else 0)
        test_start = val_start + n_val + (embargo if test_fraction > 0 else 0)
        bounds[sym] = (n_train, val_start, val_start + n_val, test_start)
    return bounds


def _short_split(
    sym: str,
    n: int,
    rows: tuple[int, int, int],
    need: int,
    val_fraction: float,
    test_fraction: float,
    embargo: int,
) -> str | None:
    """Why ``sym``'s ``n`` rows cannot be split (a split under ``need`` rows), or None."""
    for name, got, wanted in zip(
        ("train", "validation", "test"), rows, (True, val_fraction > 0, test_fraction > 0),
        strict=True,
    ):  # fmt: skip
        if wanted and got < need:
            fewest = fewest_rows(  # past n: the splits' floors make a larger count fail at times
                need,
                val_fraction=val_fraction,
                test_fraction=test_fraction,
                embargo=embargo,
                start=n + 1,
            )
            return (
                f"symbol {sym!r}: {n} feature rows leave {max(got, 0)} for {name} "
                f"(need >= {need}; embargo {embargo} x2, val {val_fraction}, "
                f"test {test_fraction}): the splits need {fewest} feature rows, "
                f"{fewest - n} more bar{'' if fewest - n == 1 else 's'}"
            )
    return None


def fewest_rows(
    need: int, *, val_fraction: float, test_fraction: float, embargo: int, start: int = 0
) -> int:
    """The fewest feature rows of a symbol, ``start`` or more, whose every requested split gets
    ``need`` rows or more (one more bar is one more feature row: a message can say how many
    bars are missing, not only that some are). Not every larger count fits: the train split
    is what the others' floors leave, and can lose a row as the count grows."""
    shares = [f for f in (val_fraction, test_fraction) if f]  # train gets the floors' rest
    gaps = embargo * len(shares)
    # a start at or under the answer (each of val and test needs floor(usable x f) >= need),
    # so the loop walks a few rows, not thousands
    n = max([need, start, *(int(need / f) + gaps - 1 for f in shares)])
    while True:
        sizes = split_sizes(
            n, val_fraction=val_fraction, test_fraction=test_fraction, embargo=embargo
        )
        wanted = (True, val_fraction > 0, test_fraction > 0)
        if all(got >= need for got, w in zip(sizes, wanted, strict=True) if w):
            return n
        n += 1


def too_short(
    counts: Iterable[tuple[str, int]],
    *,
    val_fraction: float,
    test_fraction: float,
    embargo: int,
    min_rows: int,
) -> dict[str, str]:
    """Symbols whose rows are too few for the splits: symbol -> the reason (as
    :func:`split_bounds` would raise it)."""
    out = {}
    for sym, n in counts:
        sizes = split_sizes(
            n, val_fraction=val_fraction, test_fraction=test_fraction, embargo=embargo
        )
        problem = _short_split(sym, n, sizes, min_rows, val_fraction, test_fraction, embargo)
        if problem is not None:
            out[sym] = problem
    return out


def short_symbols_warning(short: Mapping[str, str], rows: Mapping[str, int], need: int) -> str:
    """The one warning naming the symbols left out of a pooled split (``short``: symbol ->
    reason, from :func:`too_short`; ``rows``: every symbol's row count)."""
    listed = ", ".join(f"{sym} ({rows[sym]:,} rows)" for sym in list(short)[:8])
    more = f" and {len(short) - 8} more" if len(short) > 8 else ""
    return (
        f"{len(short)} of {len(rows)} symbols left out: too few feature rows for train, "
        f"validation and test (need >= {need} each after the embargoes): {listed}{more}"
    )


def split_by_time(
    features: pl.DataFrame,
    *,
    val_fraction: float,
    test_fraction: float,
    embargo: int,
    min_rows: int | None = None,
) -> Splits:
    """Split each symbol's rows by time into train, validation and test.

    Args:
        features: a feature table sorted by (symbol, ts), e.g. from ``compute_features``.
        val_fraction: share of each symbol's usable rows for validation (0 for none).
        test_fraction: share for test (0 for none).
        embargo: rows dropped between train|val and val|test (callers pass at least
            encoder + horizon).
        min_rows: fewest rows a non-empty split may have per symbol; defaults to
            ``max(embargo, 1)`` (a window needs encoder + horizon rows).

    Returns:
        The three splits, each sorted by (symbol, ts). With several symbols, those too short
        for every split are left out of all three (one warning names them): a pooled model
        over many markets is not refused because one of them started late.

    Raises:
        DataError: a requested split would have fewer than ``min_rows`` rows for every symbol
            (for the only one, with one symbol).
    """
    counts = features.group_by("symbol", maintain_order=True).len()
    need = max(embargo, 1) if min_rows is None else min_rows
    short = too_short(
        counts.iter_rows(),
        val_fraction=val_fraction,
        test_fraction=test_fraction,
        embargo=embargo,
        min_rows=need,
    )
    if short and len(short) < counts.height:  # pooled data: leave out the short, train the rest
        log.warning(short_symbols_warning(short, dict(counts.iter_rows()), need))
        counts = counts.filter(~pl.col("symbol").is_in(list(short)))
    bounds = split_bounds(
        counts.iter_rows(),
        val_fraction=val_fraction,
        test_fraction=test_fraction,
        embargo=embargo,
        min_rows=min_rows,
    )

    # Which split each row falls in, from row-aligned expressions (each row's index within its
    # symbol, its symbol's bounds looked up by value): filtering the wide table by a mask copies
    # only the rows kept, where a join of the bounds onto it (or a filtered copy without the
    # short symbols) would hold the whole table again per split.
    symbols = list(bounds)

    def bound(k: int) -> pl.Expr:  # the symbols left out have none: null, in no split
        values = [b[k] for b in bounds.values()]
        return pl.col("symbol").replace_strict(symbols, values, default=None, return_dtype=pl.Int64)

    i = pl.int_range(pl.len()).over("symbol")
    where = features.select(
        pl.when(i < bound(0))
        .then(0)
        .when((i >= bound(1)) & (i < bound(2)))
        .then(1)
        .when(i >= bound(3))
        .then(2)
        .otherwise(None)  # the embargoes
        .cast(pl.Int8)
    ).to_series()
    train, val, test = (features.filter(where == k) for k in range(3))
    log.info(
        "splits: train %d, val %d, test %d rows (embargo %d rows x2 per symbol)",
        train.height,
        val.height,
        test.height,
        embargo,
    )
    return Splits(train=train, val=val, test=test)
