"""calendar.py by hand: clock minutes and trading days on each calendar's clock, the quarterly
expiry across year ends, the known-future features at their boundary clock times, the session
lookup at the edges of the precomputed span (a close is exclusive), bar-time projection from an
open, at the span's end and beyond it, naive datetimes read as UTC whatever the machine's zone,
and the interval of bars with ties, duplicates and several symbols."""

from __future__ import annotations

import math
import os
import time as time_module
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl
import pytest

from foxhunt.data.market import calendar as calendar_module
from foxhunt.data.market.calendar import (
    bars_interval,
    clock_minutes,
    closed_day,
    closed_time,
    days_to_quarterly_expiry,
    future_timestamps,
    infer_interval,
    interval_text,
    is_open,
    known_features,
    project_bar_times,
    project_bar_times_us,
    session_bar_times,
    session_minutes,
    session_progress,
    trading_date,
    trading_day_starts_us,
)
from foxhunt.data.market.calendars import CALENDARS, CalendarSpec, Sessions

FIVE = timedelta(minutes=5)
DAY_US = 86_400_000_000
HOUR = timedelta(hours=1)
CT = ZoneInfo("America/Chicago")
NO_BARS = "^need at least two distinct timestamps to infer the bar interval$"


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def us(*args: int) -> int:
    """µs since the epoch of a UTC wall time."""
    return (utc(*args) - utc(1970, 1, 1)) // timedelta(microseconds=1)


def epoch_day(d: date) -> int:
    return (d - date(1970, 1, 1)).days


def column(expr, ts: list[datetime]) -> list:
    """``expr(pl.col("ts"))`` over the UTC times ``ts``, as a list."""
    frame = pl.DataFrame({"ts": pl.Series(ts, dtype=pl.Datetime("us", "UTC"))})
    return frame.select(expr(pl.col("ts"))).to_series().to_list()


@pytest.fixture
def local_zone_not_utc() -> Iterator[None]:
    """The process's local time zone set to UTC+9 (no DST), restored afterwards."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "JST-9"
    time_module.tzset()
    try:
        yield
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time_module.tzset()


# --- clock minutes, session minutes, trading dates ------------------------------------------


def test_clock_minutes_count_seconds_on_each_calendars_clock() -> None:
    ts = [utc(2024, 1, 3, 14, 30, 30), utc(2024, 7, 3, 13, 30, 30), utc(2024, 1, 4, 5, 59, 59)]
    # Chicago: CST = UTC-6 in January, CDT = UTC-5 in July.
    assert column(clock_minutes, ts) == [510.5, 510.5, 23 * 60.0 + 59.0 + 59.0 / 60.0]
    # New York: 09:30:30 EST / EDT, and 00:59:59 EST.
    assert column(lambda c: clock_minutes(c, "xnys"), ts) == [
        570.5,
        570.5,
        0 * 60.0 + 59.0 + 59.0 / 60.0,
    ]
    assert column(lambda c: clock_minutes(c, "24x7"), ts) == [870.5, 810.5, 359.0 + 59 / 60]


def test_session_minutes_count_from_the_17_00_ct_open() -> None:
    ts = [
        utc(2024, 1, 3, 23, 0),  # 17:00 CT: the open
        utc(2024, 1, 3, 14, 30),  # 08:30 CT
        utc(2024, 1, 3, 22, 30),  # 16:30 CT: in the halt
        utc(2024, 1, 4, 0, 0, 30),  # 18:00:30 CT
    ]
    assert column(session_minutes, ts) == [0.0, 930.0, 1410.0, 60.5]


def test_trading_dates_roll_at_each_calendars_roll_time() -> None:
    globex = [
        utc(2024, 1, 7, 22, 59, 59),  # Sunday 16:59:59 CT: still Sunday
        utc(2024, 1, 7, 23, 0),  # Sunday 17:00 CT: Monday's session
        utc(2024, 1, 5, 22, 0),  # Friday 16:00 CT
        utc(2024, 1, 6, 12, 0),  # Saturday
        utc(2024, 7, 7, 22, 0),  # Sunday 17:00 CDT
    ]
    assert column(trading_date, globex) == [
        date(2024, 1, 7),
        date(2024, 1, 8),
        date(2024, 1, 5),
        date(2024, 1, 6),
        date(2024, 7, 8),
    ]
    # 24x7 rolls at midnight UTC, whatever the Chicago date is.
    utc_days = [utc(2024, 1, 4, 2, 0), utc(2024, 1, 3, 23, 59, 59), utc(2024, 1, 4, 0, 0)]
    assert column(lambda c: trading_date(c, "24x7"), utc_days) == [
        date(2024, 1, 4),
        date(2024, 1, 3),
        date(2024, 1, 4),
    ]
    # NYSE rolls at 17:00 New York, Eurex at 23:00 Berlin.
    assert column(
        lambda c: trading_date(c, "xnys"), [utc(2024, 1, 5, 21, 59), utc(2024, 1, 5, 22, 30)]
    ) == [date(2024, 1, 5), date(2024, 1, 6)]
    assert column(
        lambda c: trading_date(c, "eurex"), [utc(2024, 1, 3, 21, 59, 59), utc(2024, 1, 3, 22, 0)]
    ) == [date(2024, 1, 3), date(2024, 1, 4)]


def test_closed_day_reads_the_calendars_own_trading_day() -> None:
    ts = [
        utc(2024, 1, 5, 21, 0),  # Friday 16:00 New York: Friday
        utc(2024, 1, 5, 22, 30),  # Friday 17:30 New York: Saturday's, not traded
        utc(2024, 12, 25, 15, 0),  # Christmas
        utc(2061, 1, 8, 12, 0),  # a Saturday outside the span: not judged
    ]
    assert column(lambda c: closed_day(c, "xnys"), ts) == [False, True, True, False]
    # Globex reads the Friday 22:30 UTC bar as Friday's (16:30 CT), and has no holidays.
    assert column(closed_day, ts) == [False, False, False, False]


# --- trading day starts ---------------------------------------------------------------------


def test_day_starts_of_int32_days_as_trading_date_gives_them() -> None:
    days = pl.Series([date(2024, 1, 10), date(2060, 12, 31)]).cast(pl.Int32).to_numpy()
    assert days.dtype == np.int32
    roll, opens = trading_day_starts_us(days, "xnys")
    assert roll.tolist() == [us(2024, 1, 9, 22), us(2060, 12, 30, 22)]
    # The last day of the span trades: it opens at 09:30 New York like any Friday.
    assert opens.tolist() == [us(2024, 1, 10, 14, 30), us(2060, 12, 31, 14, 30)]
    assert roll.dtype == opens.dtype == np.int64


@pytest.mark.parametrize(
    ("roll", "day", "want"),
    [
        (time(17, 30, 15), date(2024, 1, 10), (2024, 1, 9, 22, 30, 15)),  # EST
        (time(17, 30, 15), date(2024, 7, 10), (2024, 7, 9, 21, 30, 15)),  # EDT
        # 01:30 happens twice on 2024-11-03 in New York: the day begins at the first (EDT).
        (time(1, 30), date(2024, 11, 4), (2024, 11, 3, 5, 30)),
    ],
)
def test_a_roll_off_the_hour_counts_its_minutes_and_seconds(
    monkeypatch: pytest.MonkeyPatch, roll: time, day: date, want: tuple[int, ...]
) -> None:
    name = f"test_roll_{roll:%H%M%S}"
    monkeypatch.setitem(CALENDARS, name, CalendarSpec("America/New_York", roll, 5, "", 24.0))
    got_roll, _ = trading_day_starts_us(np.array([epoch_day(day)]), name)
    assert got_roll.tolist() == [us(*want)]


def test_a_roll_inside_the_spring_forward_gap_still_starts_its_day_in_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 02:30 does not exist in New York on 2024-03-10 (02:00 EST -> 03:00 EDT).
    name = "test_roll_023000"
    monkeypatch.setitem(CALENDARS, name, CalendarSpec("America/New_York", time(2, 30), 5, "", 24.0))
    days = [date(2024, 3, 10), date(2024, 3, 11), date(2024, 3, 12)]
    roll, _ = trading_day_starts_us(np.array([epoch_day(d) for d in days]), name)
    assert roll[0] == us(2024, 3, 9, 7, 30)  # 02:30 EST
    assert roll[2] == us(2024, 3, 11, 6, 30)  # 02:30 EDT
    # The day of the gap begins before its first timestamp (03:00 EDT), after the day before.
    assert roll[0] < roll[1] <= us(2024, 3, 10, 7, 0)


def test_a_calendar_without_sessions_opens_every_day_at_its_roll(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    empty = np.empty(0, dtype=np.int64)
    monkeypatch.setattr(calendar_module, "sessions", lambda name: Sessions(*[empty] * 5))
    roll, opens = trading_day_starts_us(np.array([epoch_day(date(2024, 1, 10))]), "globex")
    assert roll.tolist() == opens.tolist() == [us(2024, 1, 9, 23)]


def test_daily_bars_on_a_calendar_without_sessions_just_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No trading day to judge by: no day is skipped (and none is an index error)."""
    empty = np.empty(0, dtype=np.int64)
    monkeypatch.setattr(calendar_module, "sessions", lambda name: Sessions(*[empty] * 5))
    saturday = us(2024, 1, 6, 21)
    got = project_bar_times_us(np.array([saturday]), 2, DAY_US, "globex")
    assert got.tolist() == [[saturday + DAY_US, saturday + 2 * DAY_US]]


# --- the session lookup at the span's edges -------------------------------------------------


def test_the_last_session_of_the_span_is_open_until_its_exclusive_close() -> None:
    # Globex's last session: Thursday 2060-12-30 17:00 CT to Friday 2060-12-31 16:00 CT.
    assert is_open(utc(2060, 12, 30, 23, 0))
    assert is_open(utc(2060, 12, 31, 21, 59))
    assert not is_open(utc(2060, 12, 31, 22, 0))  # the close is exclusive
    assert not is_open(utc(2061, 1, 5, 15, 0))  # beyond the span: closed
    ts = [utc(2060, 12, 31, 21, 59), utc(2060, 12, 31, 22, 0), utc(2061, 1, 5, 15, 0)]
    assert column(closed_time, ts) == [False, True, True]
    assert column(session_progress, ts) == [1379 / 1380, 1.0, 1.0]


def test_session_progress_is_one_outside_a_trading_day() -> None:
    ts = [
        utc(2024, 1, 7, 23, 0),  # Sunday 17:00 CT: Monday's open
        utc(2024, 1, 3, 14, 30),  # Wednesday 08:30 CT
        utc(2024, 1, 3, 22, 0),  # Wednesday 16:00 CT: the close
        utc(2024, 1, 6, 12, 0),  # Saturday
        utc(2024, 1, 7, 22, 59),  # Sunday 16:59 CT
    ]
    assert column(session_progress, ts) == [0.0, 930 / 1380, 1.0, 1.0, 1.0]
    # New York's cash session: 09:30 to 16:00, so 12:45 is half way; Saturday is outside.
    assert column(
        lambda c: session_progress(c, "xnys"), [utc(2024, 1, 3, 17, 45), utc(2024, 1, 6, 15)]
    ) == [0.5, 1.0]


# --- the quarterly expiry -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("day", "days"),
    [
        (date(2024, 1, 3), 72),  # -> Fri 2024-03-15 (March 1st is a Friday)
        (date(2024, 3, 15), 0),
        (date(2024, 3, 16), 97),  # -> Fri 2024-06-21
        (date(2024, 6, 1), 20),  # June 1st is a Saturday -> the 21st
        (date(2024, 9, 1), 19),  # September 1st is a Sunday -> the 20th
        (date(2024, 9, 21), 90),  # -> Fri 2024-12-20
        (date(2024, 12, 20), 0),
        (date(2024, 12, 21), 90),  # -> Fri 2025-03-21, across the year end
        (date(2024, 12, 23), 88),
        (date(2025, 6, 21), 90),  # -> Fri 2025-09-19
        (date(2025, 9, 20), 90),  # -> Fri 2025-12-19
        (date(2025, 12, 20), 90),  # -> Fri 2026-03-20 (March 1st is a Sunday)
    ],
)
def test_days_to_the_next_quarterly_third_friday(day: date, days: int) -> None:
    got = pl.select(days_to_quarterly_expiry(pl.lit(day))).item()
    assert got == float(days)


# --- known-future features ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ts", "minutes", "flags"),
    [
        # (asia, europe, us, us open hour) on the CT clock; January: CT = UTC-6.
        (utc(2024, 1, 3, 7, 59), 119, (1.0, 0.0, 0.0, 0.0)),
        (utc(2024, 1, 3, 8, 0), 120, (0.0, 1.0, 0.0, 0.0)),
        (utc(2024, 1, 3, 14, 30), 510, (0.0, 0.0, 1.0, 1.0)),
        (utc(2024, 1, 3, 15, 30), 570, (0.0, 0.0, 1.0, 0.0)),
        (utc(2024, 1, 3, 18, 0), 720, (0.0, 0.0, 1.0, 0.0)),
        (utc(2024, 1, 3, 21, 0), 900, (0.0, 0.0, 0.0, 0.0)),
        (utc(2024, 1, 3, 22, 59), 1019, (0.0, 0.0, 0.0, 0.0)),
        (utc(2024, 1, 3, 23, 0), 1020, (1.0, 0.0, 0.0, 0.0)),
    ],
)
def test_world_session_flags_and_clock_angle_at_their_boundaries(
    ts: datetime, minutes: int, flags: tuple[float, ...]
) -> None:
    row = pl.DataFrame({"ts": [ts]}).select(known_features(pl.col("ts"))).row(0, named=True)
    got = tuple(row[f"known__{k}"] for k in ("is_asia", "is_europe", "is_us", "is_us_open_hour"))
    assert got == flags
    angle = 2 * math.pi * minutes / 1440
    assert row["known__tod_sin"] == pytest.approx(math.sin(angle), rel=1e-9, abs=1e-12)
    assert row["known__tod_cos"] == pytest.approx(math.cos(angle), rel=1e-9, abs=1e-12)


def test_known_features_of_another_calendar_read_its_own_clock_and_day() -> None:
    # Sunday 2024-01-07 23:30 UTC: 24x7's Sunday (day 6 of 7), 23.5 h into its UTC day; on
    # Globex it would be 17:30 CT in Monday's session. The world-session flags stay on CT.
    ts = utc(2024, 1, 7, 23, 30)
    row = pl.DataFrame({"ts": [ts]}).select(known_features(pl.col("ts"), "24x7")).row(0, named=True)
    angle = 2 * math.pi * 1410 / 1440
    assert row["known__tod_sin"] == pytest.approx(math.sin(angle), rel=1e-9)
    assert row["known__tod_cos"] == pytest.approx(math.cos(angle), rel=1e-9)
    assert row["known__dow_sin"] == pytest.approx(math.sin(2 * math.pi * 6 / 7), rel=1e-9)
    assert row["known__dow_cos"] == pytest.approx(math.cos(2 * math.pi * 6 / 7), rel=1e-9)
    assert row["known__session_progress"] == pytest.approx(23.5 / 24, rel=1e-12)
    assert row["known__is_asia"] == 1.0 and row["known__is_us"] == 0.0
    assert row["known__days_to_expiry"] == pytest.approx(68 / 91, rel=1e-12)  # -> 2024-03-15
    globex = pl.DataFrame({"ts": [ts]}).select(known_features(pl.col("ts"))).row(0, named=True)
    assert globex["known__dow_sin"] == 0.0 and globex["known__dow_cos"] == 1.0  # Monday
    assert globex["known__session_progress"] == pytest.approx(30 / 1380, rel=1e-12)
    assert globex["known__days_to_expiry"] == pytest.approx(67 / 91, rel=1e-12)


# --- projecting bar times -------------------------------------------------------------------


def test_a_step_from_an_open_that_lands_on_the_close_goes_to_the_next_open() -> None:
    # From Monday's open (Sunday 17:00 CT) 23 h lands on Monday 16:00 CT, the exclusive close.
    got = project_bar_times(pl.Series([utc(2024, 1, 7, 23, 0)]), 2, timedelta(hours=23))
    assert got.row(0) == (utc(2024, 1, 8, 23, 0), utc(2024, 1, 9, 23, 0))


def test_projection_at_the_end_of_the_span_and_beyond_it() -> None:
    # The next-to-last session's last bar goes to the last session's open.
    assert future_timestamps(utc(2060, 12, 30, 21, 55), 2, FIVE) == [
        utc(2060, 12, 30, 23, 0),
        utc(2060, 12, 30, 23, 5),
    ]
    # From the last open, a step onto the last close and on: past the span, just step.
    assert future_timestamps(utc(2060, 12, 30, 23, 0), 2, timedelta(hours=23)) == [
        utc(2060, 12, 31, 22, 0),
        utc(2061, 1, 1, 21, 0),
    ]
    assert future_timestamps(utc(2060, 12, 31, 21, 55), 3, FIVE) == [
        utc(2060, 12, 31, 22, 0),
        utc(2060, 12, 31, 22, 5),
        utc(2060, 12, 31, 22, 10),
    ]


def test_far_future_projection_keeps_every_microsecond() -> None:
    # µs since the epoch in 2300 exceed 2**53: a float would drop the last microsecond.
    start = datetime(2300, 1, 1, 0, 0, 0, 1, tzinfo=UTC)
    got = project_bar_times(pl.Series([start]), 2, timedelta(minutes=1), "24x7")
    assert got.schema == {"step1": pl.Datetime("us", "UTC"), "step2": pl.Datetime("us", "UTC")}
    assert got.row(0) == (start + timedelta(minutes=1), start + timedelta(minutes=2))


def test_the_smallest_positive_interval_is_one_microsecond() -> None:
    t0 = us(2024, 1, 6, 12)
    got = project_bar_times_us(np.array([t0], dtype=np.int64), 3, 1, "24x7")
    assert got.tolist() == [[t0 + 1, t0 + 2, t0 + 3]]
    frame = project_bar_times(pl.Series([utc(2024, 1, 3, 15)]), 1, timedelta(microseconds=1))
    assert frame.row(0) == (datetime(2024, 1, 3, 15, 0, 0, 1, tzinfo=UTC),)  # Globex open


@pytest.mark.parametrize(
    ("interval", "message"),
    [
        (timedelta(0), "^interval must be positive, got 0:00:00$"),
        (-FIVE, "^interval must be positive, got -1 day, 23:55:00$"),
    ],
)
def test_a_non_positive_interval_is_refused_in_its_own_words(
    interval: timedelta, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        project_bar_times(pl.Series([utc(2024, 1, 3, 15)]), 2, interval)


def test_daily_bars_skip_the_days_their_own_calendar_does_not_trade() -> None:
    # Thursday 17:30 New York belongs to NYSE's Friday; a day later it is Saturday's, then
    # Sunday's; Sunday 17:30 is Monday's. On Globex, Friday 16:30 CT is still Friday, and
    # Sunday 16:30 CT is still Sunday.
    start = utc(2024, 1, 4, 22, 30)
    assert future_timestamps(start, 2, timedelta(days=1), "xnys") == [
        utc(2024, 1, 7, 22, 30),
        utc(2024, 1, 8, 22, 30),
    ]
    assert future_timestamps(start, 2, timedelta(days=1)) == [
        utc(2024, 1, 5, 22, 30),
        utc(2024, 1, 8, 22, 30),
    ]


def test_daily_bars_beyond_the_span_just_step() -> None:
    """Days outside the precomputed span are not judged: once every one of them counted as
    closed, the skip loop ran out and a daily bar moved 11 days per step."""
    day = timedelta(days=1)
    assert future_timestamps(utc(2061, 1, 4, 21), 3, day) == [
        utc(2061, 1, 5, 21),
        utc(2061, 1, 6, 21),
        utc(2061, 1, 7, 21),
    ]
    assert future_timestamps(utc(1984, 12, 20, 21), 3, day, "xnys") == [
        utc(1984, 12, 21, 21),
        utc(1984, 12, 22, 21),  # a Saturday, before the span: not judged
        utc(1984, 12, 23, 21),
    ]


def test_weekly_bars_keep_their_weekday() -> None:
    """A weekly bar stamped on a Saturday lands on Saturdays: skipping closed days cannot
    help it (it moved 11 weeks per step), so bars of a week or more just step."""
    week = timedelta(days=7)
    assert future_timestamps(utc(2024, 1, 6, 0), 3, week) == [
        utc(2024, 1, 13, 0),
        utc(2024, 1, 20, 0),
        utc(2024, 1, 27, 0),
    ]
    # Monday 22:30 UTC is Tuesday's trading day on Globex: a week later, the same
    monday = utc(2024, 1, 8, 22, 30)
    assert future_timestamps(monday, 2, week) == [monday + week, monday + 2 * week]


# --- naive and aware datetimes --------------------------------------------------------------


def test_aware_datetimes_in_another_zone_are_read_as_their_instant() -> None:
    halt = datetime(2024, 1, 3, 16, 30, tzinfo=CT)  # 22:30 UTC: the daily halt
    assert not is_open(halt)
    assert is_open(datetime(2024, 1, 3, 9, 0, tzinfo=CT))
    got = future_timestamps(datetime(2024, 1, 3, 15, 50, tzinfo=CT), 2, FIVE)
    assert got == [utc(2024, 1, 3, 21, 55), utc(2024, 1, 3, 23, 0)]


@pytest.mark.usefixtures("local_zone_not_utc")
def test_naive_datetimes_mean_utc_whatever_the_local_zone() -> None:
    assert not is_open(datetime(2024, 1, 3, 22, 30))  # 16:30 CT: the halt
    assert is_open(datetime(2024, 1, 3, 15, 0))  # 09:00 CT
    got = future_timestamps(datetime(2024, 1, 3, 21, 50), 2, FIVE)
    assert got == [utc(2024, 1, 3, 21, 55), utc(2024, 1, 3, 23, 0)]
    bars = session_bar_times("2024-01-03", HOUR)
    assert bars[0] == utc(2024, 1, 2, 23, 0)
    assert {b.utcoffset() for b in bars} == {timedelta(0)}  # UTC, not the local zone


def test_session_bar_times_take_a_datetime_as_well_as_a_string() -> None:
    bars = session_bar_times(datetime(2024, 1, 3), HOUR)
    assert bars == [utc(2024, 1, 2, 23, 0) + k * HOUR for k in range(23)]
    assert bars == session_bar_times("2024-01-03", HOUR)


# --- the bar interval -----------------------------------------------------------------------


def test_infer_interval_needs_two_distinct_timestamps() -> None:
    with pytest.raises(ValueError, match=NO_BARS):
        infer_interval([utc(2024, 1, 3, 15)])
    with pytest.raises(ValueError, match=NO_BARS):
        infer_interval([utc(2024, 1, 3, 15)] * 4)  # zero gaps are not an interval
    with pytest.raises(ValueError, match=NO_BARS):
        infer_interval(pl.Series([utc(2024, 1, 3, 15), utc(2024, 1, 3, 14)]))  # only negative


def test_infer_interval_ignores_zero_and_negative_gaps_and_ties_go_to_the_smaller() -> None:
    t0 = utc(2024, 1, 3, 15)
    duplicates = [t0, t0, t0, t0 + FIVE, t0 + 2 * FIVE]  # gaps 0, 0, 5, 5
    assert infer_interval(duplicates) == FIVE
    tie = [t0 + k * FIVE for k in (0, 1, 2, 4, 6)]  # gaps 5, 5, 10, 10
    assert infer_interval(tie) == FIVE
    assert infer_interval(pl.Series(tie)) == FIVE
    backwards = [t0, t0 + 2 * HOUR, t0 + HOUR, t0 + 3 * HOUR, t0 + 5 * HOUR]  # 2h, -1h, 2h, 2h
    assert infer_interval(backwards) == 2 * HOUR


def _bars(symbol: str, step: timedelta, n: int, offset: timedelta = timedelta(0)) -> pl.DataFrame:
    t0 = utc(2024, 1, 2) + offset
    return pl.DataFrame({"symbol": [symbol] * n, "ts": [t0 + k * step for k in range(n)]})


def test_bars_interval_counts_each_symbols_interval() -> None:
    # Two hourly symbols outvote one five-minute symbol.
    frame = pl.concat([_bars("A", HOUR, 4), _bars("B", HOUR, 3), _bars("C", FIVE, 30)])
    assert bars_interval(frame) == HOUR
    # Symbols are judged apart: interleaved, their times are a minute apart.
    shifted = pl.concat([_bars("A", HOUR, 4), _bars("B", HOUR, 4, timedelta(minutes=1))])
    assert bars_interval(shifted) == HOUR
    # A tie goes to the smaller interval.
    assert bars_interval(pl.concat([_bars("A", HOUR, 3), _bars("B", FIVE, 3)])) == FIVE
    assert bars_interval(_bars("A", HOUR, 1)) is None


def test_a_symbol_with_a_single_bar_does_not_stop_the_count() -> None:
    # Group order is arbitrary: however the single-bar symbols fall, the hourly one counts.
    for i in range(12):
        single = [_bars(f"S{i}_{j}", HOUR, 1) for j in range(5)]
        frame = pl.concat([*single, _bars(f"H{i}", HOUR, 3)])
        assert bars_interval(frame) == HOUR


MINUTE = timedelta(minutes=1)


def _spaced(gaps: list[int], unit: timedelta = MINUTE) -> list[datetime]:
    t = [utc(2024, 1, 3, 14, 30)]
    for g in gaps:
        t.append(t[-1] + g * unit)
    return t


def test_an_illiquid_series_of_minutes_is_minutes_not_its_modal_gap() -> None:
    """Bars only in the minutes that traded, 2-5 minutes apart (3 the most common, under half):
    1 minute, their common divisor (until session 53 3 minutes, and a file named ``_1min``
    refused as misread)."""
    gaps = [3] * 9 + [2] * 5 + [4] * 3 + [5] * 3
    assert infer_interval(_spaced(gaps)) == MINUTE


def test_a_modal_gap_holding_half_the_gaps_or_dividing_the_others_stays() -> None:
    # TradeStation's hourly stock bars: five an hour apart, then 30 minutes to 16:00
    assert infer_interval(_spaced([60, 60, 60, 60, 60, 30] * 5)) == HOUR
    # a plurality whose other common gaps are its multiples (quiet five-minute bars)
    assert infer_interval(_spaced([5] * 4 + [10] * 3 + [15] * 3)) == FIVE
    # a stray print off the grid, under 5 % of the gaps, divides nothing
    assert infer_interval(_spaced([5] * 10 + [10] * 9 + [15] * 9 + [2] * 1)) == FIVE
    # half the gaps exactly: the modal gap stays (the others are no multiple of it)
    assert infer_interval(_spaced([60, 60, 60, 45, 45, 15])) == HOUR
    # monthly bars, 1 February .. 1 July (29-31 days, 30 the smaller of two modes, under half):
    # months, not the day that divides them
    days = timedelta(days=1)
    assert infer_interval(_spaced([29, 31, 30, 31, 30], days)) == 30 * days


def test_intervals_are_named_in_their_largest_whole_unit() -> None:
    got = [
        interval_text(timedelta(days=1)),
        interval_text(timedelta(days=2)),
        interval_text(timedelta(hours=20)),
        interval_text(timedelta(hours=1)),
        interval_text(timedelta(hours=36)),
        interval_text(timedelta(minutes=90)),
        interval_text(timedelta(minutes=5)),
        interval_text(timedelta(minutes=1)),
        interval_text(timedelta(seconds=90)),
        interval_text(timedelta(seconds=1)),
    ]
    assert got == ["1d", "2d", "20h", "1h", "36h", "90min", "5min", "1min", "90s", "1s"]
