"""``check_twelve_hour`` on small hand-made frames: each boundary of the 12-hour-clock check."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.twelve_hour import check_twelve_hour
from foxhunt.data.read.validate import ROW_COLUMN
from foxhunt.errors import DataError

PATH = Path("bars/ES.csv")
D1, D2, D3, D4 = "2024-03-05", "2024-03-06", "2024-03-07", "2024-03-08"
TURN = ["10:00", "11:00", "12:00", "01:00", "02:00"]
"""One day that goes forward three times and back once (12:00 -> 01:00): a turn."""
FILE_ROW = pl.UInt32()
"""The row column's type as file_read makes it (``with_row_index``)."""


def _frame(
    stamps: list[str | None],
    symbols: list[str | None] | None = None,
    rows: list[int] | None = None,
    row_dtype: pl.DataType = FILE_ROW,
) -> pl.DataFrame:
    """Bars as file_read hands them over: ``ts`` (UTC), ``symbol`` and the file row."""
    ts = [
        None if s is None else datetime.strptime(s, "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
        for s in stamps
    ]
    return pl.DataFrame(
        {
            "ts": pl.Series(ts, dtype=pl.Datetime("us", "UTC")),
            "symbol": pl.Series(symbols or ["ES"] * len(ts), dtype=pl.String),
            ROW_COLUMN: pl.Series(rows or list(range(len(ts))), dtype=row_dtype),
        }
    )


def _day(day: str, clocks: list[str]) -> list[str | None]:
    return [f"{day} {c}" for c in clocks]


def _refusal(row: int, clock: str, turns: int, days: int) -> str:
    return (
        f"{PATH}: column 'Time', row {row}: the time goes back to {clock} within the day on "
        f"{turns} of {days} days, and every hour is 1-12: a 12-hour clock written without "
        "AM/PM; write the times with AM/PM or on a 24-hour clock"
    )


def _refused(df: pl.DataFrame, zone: str = "UTC") -> str:
    with pytest.raises(DataError) as refused:
        check_twelve_hour(df, PATH, "Time", zone)
    return str(refused.value)


def _passes(df: pl.DataFrame, zone: str = "UTC") -> None:
    assert check_twelve_hour(df, PATH, "Time", zone) is None


@pytest.mark.parametrize("row_dtype", [FILE_ROW, pl.Int64()])
def test_one_day_that_turns_once_is_refused_naming_the_row_that_goes_back(
    row_dtype: pl.DataType,
) -> None:
    # forward 3 > 2 * back 1, on 1 of 1 days (>= max(1, 0.5)); the first step of the day counts
    df = _frame(_day(D1, TURN), row_dtype=row_dtype)
    assert _refused(df) == _refusal(3, "01:00", 1, 1)


def test_the_wall_clock_of_the_zone_is_what_is_checked() -> None:
    # 10:00 .. 02:00 in New York (EST, UTC-5) are 15:00 .. 07:00 UTC: hours up to 17 in UTC
    df = _frame(_day(D1, ["15:00", "16:00", "17:00", "06:00", "07:00"]))
    _passes(df)
    assert _refused(df, "America/New_York") == _refusal(3, "01:00", 1, 1)


@pytest.mark.parametrize(
    "clocks",
    [
        [*TURN, "13:00"],  # an hour of 13 is a 24-hour clock
        ["10:00", "11:00", "12:00", "00:30", "01:00", "02:00"],  # so is an hour of 0
    ],
)
def test_an_hour_outside_1_to_12_lets_the_file_through(clocks: list[str]) -> None:
    _passes(_frame(_day(D1, clocks)))


def test_forward_exactly_twice_back_is_no_turn() -> None:
    # four bars (the fewest the check looks at): forward 2 == 2 * back 1
    _passes(_frame(_day(D1, ["10:00", "11:00", "12:00", "01:00"])))
    # back 2, forward 4 == 2 * 2
    _passes(_frame(_day(D1, ["11:00", "12:00", "01:00", "02:00", "03:00", "01:30", "02:30"])))


def test_two_backs_with_forward_one_more_than_twice_is_a_turn() -> None:
    clocks = ["10:00", "11:00", "12:00", "01:00", "02:00", "03:00", "01:30", "02:30"]
    assert _refused(_frame(_day(D1, clocks))) == _refusal(3, "01:00", 1, 1)


def test_three_backs_in_a_day_are_no_turn() -> None:
    # back 3, forward 8 (> 6): three times back is not a 12-hour clock
    clocks = ["10:00", "11:00", "12:00", "01:00", "02:00", "03:00"]
    clocks += ["01:10", "01:20", "01:30", "01:15", "01:16", "01:17"]
    _passes(_frame(_day(D1, clocks)))


def test_a_repeated_time_is_not_back_and_the_row_named_is_the_one_going_back() -> None:
    # 12:00 twice: a step of zero; back 1, forward 3; the row named is 01:00's, not the repeat's
    df = _frame(_day(D1, ["10:00", "11:00", "12:00", "12:00", "01:00", "02:00"]))
    assert _refused(df) == _refusal(4, "01:00", 1, 1)


def test_a_repeated_time_is_not_forward() -> None:
    # forward 2 (the repeated 01:00 is a step of zero) == 2 * back 1
    _passes(_frame(_day(D1, ["10:00", "11:00", "12:00", "01:00", "01:00"])))


def test_a_missing_time_is_dropped_before_the_steps() -> None:
    # kept, the null would hide the step 12:00 -> 01:00
    stamps = [*_day(D1, TURN[:3]), None, *_day(D1, TURN[3:])]
    assert _refused(_frame(stamps)) == _refusal(4, "01:00", 1, 1)


def test_a_bar_without_a_symbol_is_still_a_bar() -> None:
    # the null symbol's day (2 bars, forward) counts: only a null time drops a bar
    stamps = _day(D1, TURN) + _day(D2, ["03:00", "04:00"])
    symbols: list[str | None] = ["ES"] * 5 + [None, None]
    assert _refused(_frame(stamps, symbols)) == _refusal(3, "01:00", 1, 2)


def test_days_with_one_bar_are_left_out_and_days_with_two_are_counted() -> None:
    stamps = _day(D1, TURN) + _day(D2, ["05:00"]) + _day(D3, ["03:00", "04:00"])
    assert _refused(_frame(stamps)) == _refusal(3, "01:00", 1, 2)


def test_turns_on_exactly_half_of_the_days_are_refused() -> None:
    stamps = _day(D1, TURN) + _day(D2, TURN) + _day(D3, ["03:00", "04:00"])
    stamps += _day(D4, ["05:00", "06:00"])
    assert _refused(_frame(stamps)) == _refusal(3, "01:00", 2, 4)


def test_turns_on_less_than_half_of_the_days_pass() -> None:
    stamps = _day(D1, TURN) + _day(D2, ["03:00", "04:00"]) + _day(D3, ["05:00", "06:00"])
    _passes(_frame(stamps))


@pytest.mark.parametrize(
    "stamps",
    [
        # days newest first, each day forward: 12:00 -> 01:00 crosses a date, so is no turn
        _day(D2, ["09:00", "10:00", "11:00", "12:00"]) + _day(D1, TURN[3:] + ["03:00", "04:00"]),
        # a file written newest first goes back all day long
        _day(D2, list(reversed(TURN))) + _day(D1, list(reversed(TURN))),
    ],
)
def test_going_back_only_across_days_or_all_day_long_passes(stamps: list[str | None]) -> None:
    _passes(_frame(stamps))


def test_interleaved_symbols_are_followed_each_in_file_order() -> None:
    # BB goes back (row 4) before AA does (row 7): the row named is the first of the symbols
    # in order, AA's
    bars = [
        ("BB", "10:00"),
        ("AA", "10:00"),
        ("BB", "11:00"),
        ("BB", "12:00"),
        ("BB", "01:30"),
        ("AA", "11:00"),
        ("AA", "12:00"),
        ("AA", "01:00"),
        ("BB", "02:00"),
        ("AA", "02:00"),
    ]
    df = _frame([f"{D1} {c}" for _, c in bars], [s for s, _ in bars])
    assert _refused(df) == _refusal(7, "01:00", 2, 2)


def test_each_symbol_has_its_own_days() -> None:
    # on the same date BB only goes back (back 2, forward 0): AA's turn is 1 of 2 days, where
    # one day for both would be back 3, forward 3 and no turn
    stamps = _day(D1, ["03:00", "02:00", "01:00"]) + _day(D1, TURN)
    symbols: list[str | None] = ["BB"] * 3 + ["AA"] * 5
    assert _refused(_frame(stamps, symbols)) == _refusal(6, "01:00", 1, 2)


def test_file_order_is_the_row_column_not_the_frames_order() -> None:
    # the bars of the first test, handed over last row first
    df = _frame(_day(D1, list(reversed(TURN))), rows=[4, 3, 2, 1, 0])
    assert _refused(df) == _refusal(3, "01:00", 1, 1)
