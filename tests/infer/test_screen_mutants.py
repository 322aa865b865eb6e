"""The follower's judge line by line: every check's reason and detail word for word, each at its
edge (a zero price refused, a price under 1 and a zero volume taken, ``high``/``low`` against
both of open and close), duplicates and late bars against the bars taken and the saved times,
rejects sorted by line, and good rows with the input's columns only."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl

from foxhunt.infer.screen import WHERE, Reject, screen

T0 = datetime(2024, 1, 3, 15, tzinfo=UTC)
SCHEMA = {
    "ts": pl.Datetime("us", "UTC"),
    "symbol": pl.String,
    "open": pl.Float64,
    "high": pl.Float64,
    "low": pl.Float64,
    "close": pl.Float64,
    "volume": pl.Float64,
    WHERE: pl.Int64,
}


def _row(where: int, minute: int | None = None, **values: Any) -> dict[str, Any]:
    row = {
        "ts": T0 + timedelta(minutes=where if minute is None else minute),
        "symbol": "ES",
        "open": 100.0,
        "high": 101.0,
        "low": 99.0,
        "close": 100.5,
        "volume": 10.0,
        WHERE: where,
    }
    return row | values


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=SCHEMA)


def test_each_check_word_for_word() -> None:
    rows = [
        _row(1, ts=None),
        _row(2, symbol=None),
        _row(3, symbol=""),
        _row(4, volume=None),
        _row(5, volume=math.inf),
        _row(6, open=math.nan),
        _row(7, open=0.0, high=0.0, low=0.0, close=0.0),
        _row(8, volume=-5.0),
        _row(9, high=100.25),  # under close (100.5), over open
        _row(10, low=100.25),  # over open (100.0), under close
        _row(11, symbol="CL"),
        _row(12, volume=0.0),  # taken: no volume is not a negative one
        _row(13, open=0.75, high=1.0, low=0.5, close=0.9),  # taken: prices under 1
        _row(14, open=100.5, close=100.0, low=100.25),  # over close, under open
        _row(15, open=100.5, close=100.0, high=100.25),  # under open, over close
    ]
    good, rejects = screen(_frame(rows), {}, frozenset({"NQ", "ES"}))
    assert rejects == [
        Reject(1, "malformed", "timestamp missing or unparsable"),
        Reject(2, "malformed", "symbol missing"),
        Reject(3, "malformed", "symbol missing"),
        Reject(4, "malformed", "volume missing or not a number"),
        Reject(5, "invalid", "volume is inf (must be finite)"),
        Reject(6, "invalid", "open is NaN (must be finite)"),
        Reject(7, "invalid", "non-positive price open 0.0"),
        Reject(8, "invalid", "negative volume -5.0"),
        Reject(9, "invalid", "high 100.25 < max(open, close) 100.5"),
        Reject(10, "invalid", "low 100.25 > min(open, close) 100.0"),
        Reject(11, "unknown_symbol", "symbol 'CL' is not one the model serves (ES, NQ)"),
        Reject(14, "invalid", "low 100.25 > min(open, close) 100.0"),
        Reject(15, "invalid", "high 100.25 < max(open, close) 100.5"),
    ]
    assert good[WHERE].to_list() == [12, 13]
    assert good.schema == SCHEMA  # the input's columns, nothing of the judging left


def test_the_first_failing_check_names_the_row() -> None:
    both = _row(1, close=None, volume=-1.0)  # malformed before invalid
    _, rejects = screen(_frame([both]), {}, frozenset({"ES"}))
    assert rejects == [Reject(1, "malformed", "close missing or not a number")]


def test_duplicates_and_late_bars_against_the_bars_taken_and_the_saved_times() -> None:
    rows = [
        _row(1, 5),
        _row(2, 5, symbol="NQ"),  # NQ's saved latest bar is 15:05: a duplicate
        _row(3, 5),  # the same time as line 1
        _row(4, 3),  # before line 1
        _row(5, 6, symbol="NQ"),
        _row(6, 4, symbol="NQ"),  # before line 5 (and the saved time)
        _row(7, 10),
    ]
    saved = {"NQ": int((T0 + timedelta(minutes=5)).timestamp() * 1_000_000)}
    good, rejects = screen(_frame(rows), saved, None)
    at = "2024-01-03 15:0{}:00.000000+00:00".format
    assert rejects == [
        Reject(2, "duplicate", f"NQ at {at(5)} was already read"),
        Reject(3, "duplicate", f"ES at {at(5)} was already read"),
        Reject(4, "out_of_order", f"ES at {at(3)} is before {at(5)}, already read"),
        Reject(6, "out_of_order", f"NQ at {at(4)} is before {at(6)}, already read"),
    ]
    assert good[WHERE].to_list() == [1, 5, 7] and good.schema == SCHEMA


def test_rejects_of_both_kinds_come_sorted_by_line() -> None:
    rows = [_row(1, 5), _row(2, 5), _row(3, 6, volume=-1.0), _row(4, 4), _row(5, 7)]
    good, rejects = screen(_frame(rows), {}, None)
    assert [(r.where, r.reason) for r in rejects] == [
        (2, "duplicate"),
        (3, "invalid"),
        (4, "out_of_order"),
    ]
    assert good[WHERE].to_list() == [1, 5]
