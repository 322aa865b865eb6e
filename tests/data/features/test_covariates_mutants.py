"""The covariates' checks one by one: a static column that changes is named at its first change
(a missing value is not a change), and the known-future values at the decoder's bar times are
refused with the first missing, repeated or absent row named, the columns listed."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from foxhunt.config import DataConfig
from foxhunt.data.features.covariates import check_static, covariate_exprs, future_values
from foxhunt.errors import DataError

T0 = dt.datetime(2024, 1, 2, 15, tzinfo=dt.UTC)


def _at(minutes: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


def _frame(rows: list[tuple[str, int, float | None]], col: str = "a") -> pl.DataFrame:
    return pl.DataFrame(
        {
            "symbol": [r[0] for r in rows],
            "ts": [_at(r[1]) for r in rows],
            col: [r[2] for r in rows],
        },
        schema={"symbol": pl.String, "ts": pl.Datetime("us", "UTC"), col: pl.Float64},
    )


def test_a_static_column_is_named_at_its_first_change_and_a_gap_is_no_change() -> None:
    check_static(_frame([("ES", 0, 1.0), ("ES", 5, None), ("ES", 10, 1.0)]), ["a"])
    moved = _frame(
        [("ES", 0, 1.0), ("ES", 5, 1.0), ("NQ", 0, 2.0), ("NQ", 5, 3.0), ("NQ", 10, 4.0)]
    )
    with pytest.raises(DataError) as refused:
        check_static(moved, ["a"])
    assert str(refused.value) == (
        f"static column 'a' changes within symbol 'NQ' at {_at(5)} "
        "(a static covariate is one value per symbol; pass it with --observed-cols)"
    )


def test_covariates_are_float32_under_their_feature_names() -> None:
    frame = _frame([("ES", 0, 1.5)]).with_columns(b=pl.lit(2, dtype=pl.Int64))
    data = DataConfig(observed_cols=("a",), known_cols=("b",))
    got = frame.select(covariate_exprs(data))
    assert got.columns == ["obs__user_a", "known__user_b"]
    assert got.dtypes == [pl.Float32, pl.Float32] and got.row(0) == (1.5, 2.0)
    assert covariate_exprs(None) == []


def _times() -> pl.DataFrame:
    """The decoder's bar times (built per test: no polars work at import, where forked
    mutation-test processes would inherit its thread pool)."""
    return pl.DataFrame(
        {"symbol": ["ES", "ES", "NQ"], "ts": [_at(5), _at(10), _at(5)]},
        schema={"symbol": pl.String, "ts": pl.Datetime("us", "UTC")},
    )


def _future(rows: list[tuple[str, int, float | None]]) -> pl.DataFrame:
    return _frame(rows).with_columns(b=pl.col("a") * 10)


def test_the_known_values_at_the_bar_times_in_their_order() -> None:
    future = _future([("NQ", 5, 3.0), ("ES", 10, 2.0), ("ES", 5, 1.0), ("ES", 15, 9.0)])
    got = future_values(future, _times(), ["a", "b"])
    assert got.rows() == [("ES", _at(5), 1.0, 10.0), ("ES", _at(10), 2.0, 20.0),
                          ("NQ", _at(5), 3.0, 30.0)]  # fmt: skip
    times = _times()
    assert future_values(None, times, []) is times  # no known columns: nothing to read
    one = future_values(_future([("ES", 5, 1.0)]), _times().head(1), ["a"])  # a single future row
    assert one.rows() == [("ES", _at(5), 1.0)]


@pytest.mark.parametrize("empty", [False, True])
def test_no_future_rows_is_refused_naming_the_first_bar_time(empty: bool) -> None:
    future = _future([]).head(0) if empty else None
    with pytest.raises(DataError) as refused:
        future_values(future, _times(), ["a", "b"])
    assert str(refused.value) == (
        f"known-future columns a, b need future rows: add rows after each symbol's last bar "
        f"(first: 'ES' at {_at(5)}) with empty prices and the known columns filled "
        "(docs/data.md, Known-future columns)"
    )


def test_two_rows_at_one_time_are_refused_at_the_first_repeated_pair() -> None:
    same_time_other_symbols = _future([("ES", 5, 1.0), ("ES", 10, 2.0), ("NQ", 5, 3.0)])
    future_values(same_time_other_symbols, _times(), ["a"])  # one row per symbol and time: fine
    twice = _future(
        [("ES", 10, 2.0), ("NQ", 5, 3.0), ("ES", 10, 2.0), ("NQ", 5, 3.0), ("ES", 5, 1.0)]
    )
    with pytest.raises(DataError) as refused:
        future_values(twice, _times(), ["a"])
    assert str(refused.value) == f"two future rows for symbol 'ES' at {_at(10)}"


def test_a_bar_time_without_its_values_is_named_first() -> None:
    missing = _future([("ES", 5, 1.0), ("NQ", 5, None)])  # ES at 10 absent, NQ's value empty
    with pytest.raises(DataError) as refused:
        future_values(missing, _times(), ["a", "b"])
    assert str(refused.value) == (
        f"no future row for symbol 'ES' at {_at(10)}: the forecast needs the known-future "
        "columns (a, b) at each of its bar times"
    )
