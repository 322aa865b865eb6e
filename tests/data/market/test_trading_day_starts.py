"""trading_day_starts_us: where a trading day begins (its roll) and where its first session
opens, per calendar, across DST, on a holiday and outside the precomputed span."""

from __future__ import annotations

from datetime import UTC, date, datetime

import numpy as np
import pytest

from foxhunt.data.market.calendar import trading_day_starts_us


def _day(d: date) -> int:
    return (d - date(1970, 1, 1)).days


def _us(*args: int) -> int:
    return int(datetime(*args, tzinfo=UTC).timestamp()) * 1_000_000


@pytest.mark.parametrize(
    ("calendar", "day", "roll", "opens"),
    [
        # NYSE: the day begins 17:00 New York the evening before, opens 09:30 (EST, EDT)
        ("xnys", date(2024, 1, 10), (2024, 1, 9, 22), (2024, 1, 10, 14, 30)),
        ("xnys", date(2024, 7, 10), (2024, 7, 9, 21), (2024, 7, 10, 13, 30)),
        ("xnys", date(2023, 12, 25), (2023, 12, 24, 22), (2023, 12, 24, 22)),  # a holiday
        # CME: the day begins and opens at 17:00 Chicago the evening before
        ("cme_equity", date(2024, 1, 10), (2024, 1, 9, 23), (2024, 1, 9, 23)),
        ("globex", date(2024, 7, 10), (2024, 7, 9, 22), (2024, 7, 9, 22)),
        # 24/7: midnight UTC, also beyond the precomputed span
        ("24x7", date(2024, 1, 10), (2024, 1, 10), (2024, 1, 10)),
        ("24x7", date(2100, 1, 4), (2100, 1, 4), (2100, 1, 4)),
        ("fx_24x5", date(2100, 1, 4), (2100, 1, 3, 22), (2100, 1, 3, 22)),
    ],
)
def test_roll_and_open(calendar: str, day: date, roll: tuple, opens: tuple) -> None:
    got_roll, got_open = trading_day_starts_us(np.array([_day(day)]), calendar)
    assert got_roll.tolist() == [_us(*roll)]
    assert got_open.tolist() == [_us(*opens)]


def test_many_days_at_once_keep_their_order() -> None:
    days = np.array([_day(date(2024, 1, d)) for d in (12, 10, 11, 10)])
    roll, opens = trading_day_starts_us(days, "xnys")
    assert opens.tolist() == [_us(2024, 1, d, 14, 30) for d in (12, 10, 11, 10)]
    assert (roll < opens).all() and roll.dtype == opens.dtype == np.int64
