"""split_bounds / split_sizes / split_by_time edges that `make mutate` found unguarded."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import polars as pl
import pytest

from foxhunt.data.windows.splits import split_bounds, split_by_time, split_sizes, too_short
from foxhunt.errors import DataError


def _bounds(n: int, val: float, test: float, embargo: int, min_rows: int | None = None):
    return split_bounds(
        [("ES", n)], val_fraction=val, test_fraction=test, embargo=embargo, min_rows=min_rows
    )["ES"]


@pytest.mark.parametrize(
    ("val", "test"),
    [(1.0, 0.0), (0.0, 1.0), (0.5, 0.5), (0.3, 0.8), (0.2, -0.5), (-0.5, 0.2), (1.5, 0.0)],
)
def test_fractions_outside_the_unit_interval_or_summing_to_one_are_refused(
    val: float, test: float
) -> None:
    with pytest.raises(ValueError, match=rf"^bad fractions: val {val}, test {test}$"):
        _bounds(100, val, test, 0)


def test_a_negative_embargo_is_refused_with_its_value() -> None:
    with pytest.raises(ValueError, match=r"^embargo must be >= 0, got -1$"):
        _bounds(100, 0.2, 0.2, -1)


def test_one_row_splits_are_allowed_without_an_embargo() -> None:
    assert _bounds(3, 1 / 3 + 1e-9, 1 / 3 + 1e-9, 0) == (1, 1, 2, 2)


def test_a_split_of_exactly_min_rows_is_allowed() -> None:
    assert _bounds(9, 1 / 3 + 1e-9, 1 / 3 + 1e-9, 0, min_rows=3) == (3, 3, 6, 6)


def test_an_empty_requested_test_split_is_refused_naming_it() -> None:
    with pytest.raises(DataError, match=r"leave 0 for test \(need >= 1"):
        _bounds(10, 0.0, 0.05, 0)


def test_no_embargo_before_a_split_that_is_not_requested() -> None:
    # no validation: the test split follows train after one embargo, validation is empty
    assert _bounds(10, 0.0, 0.2, 2, min_rows=1) == (7, 7, 7, 9)
    # no test: validation follows train after one embargo, test starts at the end
    assert _bounds(10, 0.2, 0.0, 2, min_rows=1) == (7, 9, 10, 10)


def test_embargoes_longer_than_the_symbol_leave_no_rows() -> None:
    assert split_sizes(2, val_fraction=0.5, test_fraction=0.0, embargo=5) == (0, 0, 0)


@pytest.mark.parametrize("dtype", [pl.Categorical, pl.Enum(["ES", "NQ"])])
def test_split_by_time_keeps_a_categorical_symbol_column(dtype: pl.DataType) -> None:
    features = pl.DataFrame(
        {"symbol": ["ES"] * 10 + ["NQ"] * 10, "ts": list(range(10)) * 2, "x": range(20)},
        schema_overrides={"symbol": dtype},
    )
    s = split_by_time(features, val_fraction=0.2, test_fraction=0.2, embargo=1, min_rows=1)
    assert s.train.schema == features.schema
    # 10 rows, 2 embargo rows: 8 usable -> 1 validation, 1 test, 6 train per symbol
    assert s.train["x"].to_list() == [0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15]
    assert s.val["x"].to_list() == [7, 17] and s.test["x"].to_list() == [9, 19]


@pytest.mark.parametrize(
    ("n_short", "tail"),
    [(1, "S0 (40 rows)"), (8, "S7 (40 rows)"), (9, "S7 (40 rows) and 1 more"),
     (10, "S7 (40 rows) and 2 more")],
)  # fmt: skip
def test_the_warning_names_eight_short_symbols_then_counts_the_rest(
    n_short: int, tail: str, caplog: pytest.LogCaptureFixture
) -> None:
    ts = pl.datetime_range(
        datetime(2024, 1, 1), datetime(2024, 1, 1, 8, 19), "1m", time_zone="UTC", eager=True
    )  # 500 rows
    long = pl.DataFrame({"symbol": "LONG", "ts": ts, "x": np.arange(500.0)})
    short = [long.head(40).with_columns(pl.lit(f"S{k}").alias("symbol")) for k in range(n_short)]
    table = pl.concat([long, *short]).sort("symbol", "ts")
    with caplog.at_level("WARNING", logger="foxhunt.data.windows.splits"):
        split_by_time(table, val_fraction=0.15, test_fraction=0.15, embargo=20)
    line = next(r.getMessage() for r in caplog.records if "left out" in r.getMessage())
    assert line.endswith(tail)


def test_too_short_says_why_per_symbol() -> None:
    out = too_short(
        [("OK", 1000), ("TINY", 50)], val_fraction=0.2, test_fraction=0.1, embargo=20,
        min_rows=20,
    )  # fmt: skip
    assert list(out) == ["TINY"]
    assert out["TINY"].startswith("symbol 'TINY': 50 feature rows leave ")
    assert "embargo 20 x2, val 0.2, test 0.1" in out["TINY"]


@pytest.mark.parametrize(("val", "test"), [(1.0, 0.0), (0.0, 1.0), (1.5, 0.0), (0.0, 1.5)])
def test_split_bounds_refuses_fractions_of_one_or_more(val: float, test: float) -> None:
    with pytest.raises(ValueError, match="bad fractions"):
        split_bounds([("A", 1000)], val_fraction=val, test_fraction=test, embargo=0)


def test_split_bounds_error_names_the_rows_and_the_embargo() -> None:
    with pytest.raises(DataError, match=r"'A': 60 feature rows leave .* embargo 15 x2"):
        split_bounds([("A", 60)], val_fraction=0.2, test_fraction=0.2, embargo=15, min_rows=20)


def test_the_default_minimum_is_one_row_without_an_embargo() -> None:
    ts = pl.datetime_range(
        datetime(2024, 1, 1), datetime(2024, 1, 1, 0, 9), "1m", time_zone="UTC", eager=True
    )
    table = pl.DataFrame({"symbol": "A", "ts": ts, "x": np.arange(10.0)})
    s = split_by_time(table, val_fraction=0.1, test_fraction=0.1, embargo=0)
    assert (s.train.height, s.val.height, s.test.height) == (8, 1, 1)


def test_without_an_embargo_one_row_per_split_is_enough_among_many_symbols() -> None:
    ts = pl.datetime_range(
        datetime(2024, 1, 1), datetime(2024, 1, 1, 8, 19), "1m", time_zone="UTC", eager=True
    )
    long = pl.DataFrame({"symbol": "LONG", "ts": ts, "x": np.arange(500.0)})
    table = pl.concat([long, long.head(10).with_columns(pl.lit("TEN").alias("symbol"))])
    s = split_by_time(table.sort("symbol", "ts"), val_fraction=0.1, test_fraction=0.1, embargo=0)
    assert s.val.filter(pl.col("symbol") == "TEN").height == 1  # kept, not left out
