"""The time-axis checks (data/read/time_axis.py) at edges its session-41 mutation run left
untested: the extended-hours test's window (weekdays, 04:00 and 20:00 New York), the share at
which it speaks, bars exactly five days apart, a weekly symbol before another symbol, the clock
rule on zoned timestamps, and the clock line's words for one zone.

Frames are built inside the tests (never at import: mutmut's forked workers hang on it).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl
import pytest
from tests.data.read.test_time_axis_mutants import _examine

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.clock_fit import ClockFit
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.time_axis import _clock_line, _extended_hours
from foxhunt.errors import DataError

NEW_YORK = ZoneInfo("America/New_York")


def _ny(day: int, hour: int, minute: int = 0) -> datetime:
    """A time in New York on a day of January 2024 (1 January was a Monday)."""
    return datetime(2024, 1, day, hour, minute, tzinfo=NEW_YORK).astimezone(UTC)


@pytest.mark.parametrize(
    ("when", "inside"),
    [
        ((5, 10), True),  # Friday 10:00
        ((6, 10), False),  # Saturday
        ((2, 4), True),  # 04:00: the pre-market opens
        ((2, 3, 59), False),
        ((2, 19, 45), True),  # the last quarter-hour of the post-market
        ((2, 19, 59), True),
        ((2, 20), False),  # 20:00: closed
    ],
)
def test_extended_hours_are_weekdays_from_4_to_20_new_york(
    when: tuple[int, ...], inside: bool
) -> None:
    regular = [_ny(3, 10), _ny(3, 12)]  # a Wednesday's session
    ts = pl.Series("ts", [*regular, _ny(*when)], dtype=pl.Datetime("us", "UTC"))
    assert _extended_hours(ts) is inside


def test_a_quarter_of_the_bars_outside_the_session_is_still_read(tmp_path: Path) -> None:
    """Two pre-market bars of eight (25 %): not over the limit, read without a word."""
    stamps = [_ny(2, 8, 30), _ny(2, 9)] + [
        _ny(2, 9, 30) + timedelta(minutes=30 * i) for i in range(6)
    ]
    rows = "".join(f"{t:%Y-%m-%d %H:%M:%S}+00:00,185,186,184,185.5,10\n" for t in stamps)
    path = tmp_path / "AAPL.csv"
    path.write_text("timestamp,open,high,low,close,volume\n" + rows)
    assert read_bars(path, min_bars=1)["ts"].to_list() == stamps


def test_bars_five_days_apart_are_not_judged_by_their_day() -> None:
    """Every fifth day from a Monday: two in seven fall on a weekend; a week's bar is stamped
    by convention, so nothing is said."""
    days = [datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=5 * i) for i in range(14)]
    assert _examine({"ES": days}, naive=(False,)).problems == ()
    assert _examine({"ES": days[::2]}, naive=(False,)).problems == ()  # ten days apart


def test_a_weekly_symbol_does_not_end_the_checks_of_the_next(tmp_path: Path) -> None:
    weekly = [datetime(2024, 1, 7, tzinfo=UTC) + timedelta(weeks=i) for i in range(5)]
    old = [datetime(1975, 1, 2, 15, tzinfo=UTC) + timedelta(minutes=i) for i in range(5)]
    found = _examine({"AAA": weekly, "ZZZ": old}, naive=(False,))
    assert len(found.problems) == 1 and "symbol 'ZZZ': first bar 1975-01-02" in found.problems[0]


def test_timestamps_with_their_offset_are_never_searched_for_a_clock(tmp_path: Path) -> None:
    """Regular-hours bars whose New York times carry -03:00 (no New York offset): the file says
    its offset, and the clock rule stays silent, as the zone rule does; marked UTC (+00:00),
    the sessions that keep 09:30 on the UTC clock across daylight saving are New York's clock
    (session 57: until then times marked UTC were never searched either)."""
    stamps = []
    for k in range(90):
        d = datetime(2024, 2, 1, 9, 30, tzinfo=NEW_YORK) + timedelta(days=k)
        if d.weekday() >= 5 or d.date().isoformat() in ("2024-02-19", "2024-03-29"):
            continue
        stamps += [(d + timedelta(minutes=5 * i)).replace(tzinfo=UTC) for i in range(78)]
    rows = "".join(f"{t:%Y-%m-%d %H:%M:%S}-03:00,5000,5001,4999,5000.5,10\n" for t in stamps)
    path = tmp_path / "ES.csv"
    path.write_text("timestamp,open,high,low,close,volume\n" + rows)
    assert read_bars(path)["ts"].to_list() == [t + timedelta(hours=3) for t in stamps]
    path.write_text(path.read_text().replace("-03:00,", "+00:00,"))
    with pytest.raises(DataError) as e:
        read_bars(path)
    assert str(e.value) == (
        f"{path}: symbol 'ES': the sessions open at 09:30 on the file's clock; with the "
        "timestamps marked UTC read as such, 58% of the session opens and closes fall at their "
        "usual minute of America/Chicago time across the daylight-saving changes, 100% read as "
        "America/Chicago or America/New_York: the file's clock is likely local time; --tz "
        "America/Chicago --force-tz or --tz America/New_York --force-tz (the same "
        "daylight-saving dates: the one the vendor writes) reads it so, or --allow-odd-times"
    )
    forced = ReadOptions(tz="America/New_York", force_tz=True)
    assert read_bars(path, options=forced)["ts"].to_list() == [
        t.replace(tzinfo=NEW_YORK).astimezone(UTC) for t in stamps
    ]


def test_the_clock_line_of_one_zone_names_it_alone() -> None:
    fit = ClockFit("UTC", 0.6, ("America/New_York",), 1.0, 120, "America/New_York", "09:30")
    assert _clock_line("a.csv: symbol 'AAPL'", fit) == (
        "a.csv: symbol 'AAPL': the sessions open at 09:30 on the file's clock; with the naive "
        "timestamps read as UTC, 60% of the session opens and closes fall at their usual minute "
        "of America/New_York time across the daylight-saving changes, 100% read as "
        "America/New_York: the file's clock is likely local time; --tz America/New_York reads it "
        "so, or --allow-odd-times"
    )
