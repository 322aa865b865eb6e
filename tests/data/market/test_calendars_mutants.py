"""The calendars' session arrays built exactly: the weekly rules' first and last days and their
clock times, a library calendar's intervals (one per day, two around a real break and only
then), the interval lookup at its edges, and the closed share. The library functions are
called directly: ``sessions`` reads them from the per-machine cache
(:mod:`foxhunt.data.market.session_cache`), where a test would never see them built."""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pandas as pd
import pandas_market_calendars as mcal
import pytest

from foxhunt.data.market import calendars
from foxhunt.data.market.calendars import (
    CALENDARS,
    Sessions,
    _library_sessions,
    _rule_sessions,
    calendar_spec,
    closed_share,
    locate,
)
from foxhunt.errors import DataError


def _us(text: str) -> int:
    """µs since the epoch of an ISO UTC time."""
    return int(dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC).timestamp() * 1_000_000)


def _day(text: str) -> int:
    return (dt.date.fromisoformat(text) - dt.date(1970, 1, 1)).days


def _at(cal: Sessions, day: str) -> list[tuple[int, int, int, int]]:
    """The (open, close, day_open, day_close) intervals of one trading day."""
    rows = np.flatnonzero(cal.day == _day(day))
    return [
        (int(cal.opens[i]), int(cal.closes[i]), int(cal.day_open[i]), int(cal.day_close[i]))
        for i in rows
    ]


def test_an_unknown_calendar_lists_the_known_ones() -> None:
    known = ", ".join(sorted(CALENDARS))
    with pytest.raises(
        DataError, match=rf"^unknown calendar 'nope' \(known: {re.escape(known)}\)$"
    ):
        calendar_spec("nope")
    assert calendar_spec("eurex") is CALENDARS["eurex"]


def test_the_24x7_rule_is_every_utc_day_of_the_span() -> None:
    cal = _rule_sessions("24x7")
    assert cal.opens.dtype == cal.closes.dtype == cal.day.dtype == np.int64
    assert int(cal.day[0]) == _day(calendars.SPAN[0]) and int(cal.day[-1]) == _day(
        calendars.SPAN[1]
    )
    assert int(cal.opens[0]) == _us(calendars.SPAN[0] + "T00:00")
    assert np.all(cal.closes - cal.opens == 86_400_000_000)
    assert np.array_equal(cal.opens[1:], cal.closes[:-1])  # one continuous week
    assert cal.day_open is cal.opens and cal.day_close is cal.closes


def test_the_globex_rule_opens_at_17_and_closes_at_16_chicago_on_weekdays() -> None:
    cal = _rule_sessions("globex")
    assert cal.day.dtype == np.int64
    assert int(cal.day[0]) == _day("1985-01-01")  # a Tuesday
    assert int(cal.day[-1]) == _day("2060-12-31")  # a Friday
    # Wednesday 3 Jan 2024 (CST, UTC-6): Tuesday 17:00 to Wednesday 16:00
    assert _at(cal, "2024-01-03") == [(_us("2024-01-02T23:00"), _us("2024-01-03T22:00")) * 2]
    # Monday 1 Jul 2024 (CDT, UTC-5): Sunday 17:00 to Monday 16:00; nothing on Saturday/Sunday
    assert _at(cal, "2024-07-01") == [(_us("2024-06-30T22:00"), _us("2024-07-01T21:00")) * 2]
    assert _at(cal, "2024-06-29") == [] and _at(cal, "2024-06-30") == []


def test_the_fx_rule_runs_from_17_to_17_new_york() -> None:
    cal = _rule_sessions("fx_24x5")
    assert _at(cal, "2024-01-03") == [(_us("2024-01-02T22:00"), _us("2024-01-03T22:00")) * 2]
    assert int(cal.day[-1]) == _day("2060-12-31")


class _Calendar:
    def __init__(self, schedule: pd.DataFrame) -> None:
        self._schedule = schedule

    def schedule(self, start: str, end: str) -> pd.DataFrame:
        assert (start, end) == calendars.SPAN
        return self._schedule


def _schedule(rows: list[tuple[str, ...]], breaks: bool) -> pd.DataFrame:
    cols = (
        ["market_open", "break_start", "break_end", "market_close"]
        if breaks
        else [
            "market_open",
            "market_close",
        ]
    )
    index = pd.DatetimeIndex([r[0] for r in rows])
    data = {c: pd.to_datetime([r[i + 1] for r in rows], utc=True) for i, c in enumerate(cols)}
    return pd.DataFrame(data, index=index)


def test_a_library_calendar_without_breaks_is_one_interval_per_day(monkeypatch) -> None:
    sched = _schedule(
        [
            ("2024-01-02", "2024-01-02T14:30", "2024-01-02T21:00"),
            ("2024-01-03", "2024-01-03T14:30", "2024-01-03T18:00"),  # an early close
        ],
        breaks=False,
    )
    monkeypatch.setattr(mcal, "get_calendar", lambda name: _Calendar(sched))
    cal = _library_sessions("XNYS")
    assert cal.opens.dtype == cal.closes.dtype == cal.day.dtype == np.int64
    assert cal.day.tolist() == [_day("2024-01-02"), _day("2024-01-03")]
    assert cal.opens.tolist() == [_us("2024-01-02T14:30"), _us("2024-01-03T14:30")]
    assert cal.closes.tolist() == [_us("2024-01-02T21:00"), _us("2024-01-03T18:00")]
    assert np.array_equal(cal.day_open, cal.opens) and np.array_equal(cal.day_close, cal.closes)


def test_a_real_break_splits_the_day_in_two_and_only_a_real_one(monkeypatch) -> None:
    sched = _schedule(
        [  # open, break start, break end, close
            ("2024-01-02", "2024-01-02T01:00", "2024-01-02T13:45", "2024-01-02T14:30", "2024-01-02T19:20"),
            ("2024-01-03", "2024-01-03T01:00", "2024-01-03T21:15", "2024-01-03T21:15", "2024-01-03T22:00"),
            ("2024-01-04", "2024-01-04T01:00", "2024-01-04T01:00", "2024-01-04T02:00", "2024-01-04T19:20"),
            ("2024-01-05", "2024-01-05T01:00", "2024-01-05T18:00", "2024-01-05T19:20", "2024-01-05T19:20"),
            ("2024-01-08", "2024-01-08T01:00", "2024-01-08T14:30", "2024-01-08T13:45", "2024-01-08T19:20"),
        ],
        breaks=True,
    )  # fmt: skip
    monkeypatch.setattr(mcal, "get_calendar", lambda name: _Calendar(sched))
    cal = _library_sessions("CMEGlobex_Grains")
    day2 = (_us("2024-01-02T01:00"), _us("2024-01-02T19:20"))
    assert _at(cal, "2024-01-02") == [
        (_us("2024-01-02T01:00"), _us("2024-01-02T13:45"), *day2),
        (_us("2024-01-02T14:30"), _us("2024-01-02T19:20"), *day2),
    ]
    # no break (start = end), one at the open, one ending at the close, one reversed: whole days
    for day in ("2024-01-03", "2024-01-04", "2024-01-05", "2024-01-08"):
        whole = (_us(f"{day}T01:00"), int(sched.loc[day, "market_close"].value // 1000))
        assert _at(cal, day) == [(*whole, *whole)], day
    assert cal.opens.size == 6 and np.all(np.diff(cal.opens) > 0)  # sorted by open
    assert np.all(cal.closes[:-1] <= cal.opens[1:])  # disjoint


def test_library_sessions_over_a_short_span_match_the_library(monkeypatch) -> None:
    monkeypatch.setattr(calendars, "SPAN", ("2024-01-02", "2024-01-05"))
    nyse = _library_sessions("XNYS")
    assert nyse.opens.tolist()[:2] == [_us("2024-01-02T14:30"), _us("2024-01-03T14:30")]
    grains = _library_sessions("CMEGlobex_Grains")
    assert _at(grains, "2024-01-03")[1][:2] == (_us("2024-01-03T14:30"), _us("2024-01-03T19:20"))


def _three() -> Sessions:
    opens = np.array([100, 200, 300], dtype=np.int64)
    closes = np.array([150, 250, 350], dtype=np.int64)
    return Sessions(opens, closes, np.arange(3), opens, closes)


def test_locate_finds_the_interval_closing_after_each_time_open_inclusive() -> None:
    ts = np.array([99, 100, 149, 150, 200, 349, 350, 400], dtype=np.int64)
    k, inside = locate(ts, _three())
    assert k.tolist() == [0, 0, 0, 1, 1, 2, 2, 2]
    assert inside.tolist() == [False, True, True, False, True, True, False, False]


def test_the_closed_share_is_the_share_of_times_outside_every_session() -> None:
    assert closed_share(np.array([], dtype=np.int64)) == 0.0
    assert closed_share([]) == 0.0
    wed = _us("2024-01-03T12:00")  # inside globex
    sat = _us("2024-01-06T12:00")  # the weekend
    assert closed_share([wed]) == 0.0
    assert closed_share([sat]) == 1.0
    assert closed_share([wed, sat, sat, wed]) == 0.5
    assert closed_share([sat], "24x7") == 0.0
