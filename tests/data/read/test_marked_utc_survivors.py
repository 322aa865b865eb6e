"""Mutation survivors of :mod:`foxhunt.data.read.marked_utc` (session 58): what counts as marked
UTC (dates with an offset, a date and a time column, only the first 64 values), the file read on
``--force-tz``'s clock counting as naive there, the epoch warning's words, and the share of
session edges :func:`~foxhunt.data.read.marked_utc.edges_kept` asks of a zone.

Each test names the bug it catches. Mutants judged equivalent (no test can tell them apart)
are listed in the session's report, not here."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from tests.data.read.test_marked_utc import _new_york, _session_walls, _write

from foxhunt.data.read.bars import load_bars, read_bars
from foxhunt.data.read.marked_utc import edges_kept
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError

FIVE = timedelta(minutes=5)
NEW_YORK_FORCED = ReadOptions(tz="America/New_York", force_tz=True)


def _refusal(path: Path, column: str) -> str:
    return (
        f"{path}: --force-tz: column '{column}' holds times with their own UTC offset, not "
        "marked UTC: the offset says which clock they keep; drop --force-tz"
    )


def test_dates_written_with_their_offset_are_not_marked(tmp_path: Path) -> None:
    """Tokyo's daily bars as yfinance writes them (``2024-01-04 00:00:00+09:00``) are read as
    dates: ``--force-tz`` is refused for them (their offset is not a UTC mark). Catches dates
    counted as marked (``return True`` for dates): the dates would be re-read on Tokyo's clock
    as if their offset said UTC."""
    days = [datetime(2024, 1, 4) + timedelta(days=k) for k in range(40)]
    rows = "".join(f"{d:%Y-%m-%d} 00:00:00+09:00,1,2,0.5,1.5,10\n" for d in days if d.weekday() < 5)
    path = tmp_path / "7203.csv"
    path.write_text("timestamp,open,high,low,close,volume\n" + rows)
    with pytest.raises(DataError) as e:
        read_bars(path, options=ReadOptions(tz="Asia/Tokyo", force_tz=True))
    assert str(e.value) == _refusal(path, "timestamp")


def test_a_date_and_a_time_column_with_an_offset_are_not_marked(tmp_path: Path) -> None:
    """A date column beside a time column written with New York's offset (``09:30:00-04:00``):
    read right, and ``--force-tz`` refused. Catches a column the file does not type as text
    (here ``date+time``, no column of the file) counted as marked: the offset would be dropped
    and the clock read again in ``--tz``'s zone."""
    walls = _session_walls(datetime(2024, 3, 11), 20)  # after the change: New York is -04:00
    rows = "".join(f"{w:%Y-%m-%d},{w:%H:%M:%S}-04:00,180,181,179,180.5,10\n" for w in walls)
    path = tmp_path / "AAPL.csv"
    path.write_text("date,time,open,high,low,close,volume\n" + rows)
    assert read_bars(path)["ts"].to_list() == _new_york(walls)
    with pytest.raises(DataError) as e:
        read_bars(path, options=NEW_YORK_FORCED)
    assert str(e.value) == _refusal(path, "date+time")


def test_only_the_first_64_times_decide_a_mark(tmp_path: Path) -> None:
    """New York's clock marked ``Z``, its 65th time written with an offset (the same clock
    reading, 10:50-04:00 being 14:50 UTC): the first 64 times decide, the file is marked and
    ``--force-tz`` reads it. Catches the whole column read to decide (``head(None)``): one
    later value written otherwise refused the whole file."""
    walls = _session_walls(datetime(2024, 3, 11), 20)
    path = _write(tmp_path / "AAPL.csv", walls, "Z")
    lines = path.read_text().splitlines(keepends=True)
    w = walls[64]
    lines[65] = lines[65].replace(
        f"{w:%Y-%m-%dT%H:%M:%S}Z", f"{w - timedelta(hours=4):%Y-%m-%dT%H:%M:%S}-04:00"
    )
    assert lines[65].startswith("2024-03-11T10:50:00-04:00,")
    path.write_text("".join(lines))
    bars = read_bars(path, options=NEW_YORK_FORCED)
    assert bars.height == len(walls)
    assert bars["ts"].to_list()[:64] == _new_york(walls)[:64]


def test_force_tz_makes_the_file_naive_in_the_zone(tmp_path: Path) -> None:
    """Hourly bars of New York's clock marked ``Z`` across the autumn change, 01:00 written twice
    (the hour New York repeats): read with ``--tz America/New_York --force-tz`` they are naive
    times of that zone, and the duplicate is told as that repeated hour. Catches the file left
    not naive after ``--force-tz`` (``naive=False``, ``None`` or left out): the duplicate's
    message said nothing of the repeated hour, and the later checks took the re-read times
    for times still marked UTC."""
    hours = [datetime(2024, 10, 28) + timedelta(hours=h) for h in range(24 * 10)]
    twice = datetime(2024, 11, 3, 1)
    rows = [h for h in hours for _ in range(2 if h == twice else 1)]
    (tmp_path / "downloads").mkdir()
    path = tmp_path / "downloads" / "prices.csv"
    path.write_text(
        "timestamp,open,high,low,close,volume\n"
        + "".join(
            f"{h:%Y-%m-%dT%H:%M:%S}Z,{i},{i + 1},{i - 1},{i},10\n"
            for i, h in enumerate(rows, start=100)
        )
    )
    with pytest.raises(DataError) as e:
        read_bars(path, options=NEW_YORK_FORCED)
    assert str(e.value).endswith(
        "2024-11-03 01:00 happens twice in America/New_York (the hour repeated when daylight "
        "saving ends), and naive times cannot say which; write the times in UTC or with their "
        "offset"
    )
    loaded = load_bars(path, options=NEW_YORK_FORCED)  # what the time-axis checks are given
    assert loaded.naive == (True,)
    assert loaded.marked == (False,)


def test_tz_alone_for_epoch_times_says_they_count_in_utc(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Epoch seconds of New York's session given ``--tz`` without ``--force-tz``: read as the
    instants they count, with the warning that says so word for word. Catches the warning's
    words changed (``counted in utc``)."""
    walls = _session_walls(datetime(2024, 3, 11), 20)
    rows = "".join(f"{int(t.timestamp())},180,181,179,180.5,10\n" for t in _new_york(walls))
    path = tmp_path / "AAPL.csv"
    path.write_text("timestamp,open,high,low,close,volume\n" + rows)
    with caplog.at_level(logging.WARNING):
        bars = read_bars(path, options=ReadOptions(tz="America/New_York"))
    assert bars["ts"].to_list() == _new_york(walls)
    assert (
        f"{path}: --tz America/New_York not applied: column 'timestamp' holds epoch times, "
        "counted in UTC; --tz America/New_York --force-tz reads the clock they show in UTC as "
        "America/New_York's (a file or feed that marks local times as UTC; MetaTrader 5's "
        "copy_rates counts its server's clock)"
    ) in caplog.messages


def _trimmed(first: int, last: int) -> pl.Series:
    """Four weeks of New York's session marked UTC, each day's bars ``first`` to ``last``
    (0: 09:30, 77: 15:55)."""
    walls = _session_walls(datetime(2024, 3, 11), 28)
    kept = [w for w in walls if first <= (w.hour * 60 + w.minute - 570) // 5 <= last]
    return pl.Series(kept, dtype=pl.Datetime("us")).dt.replace_time_zone("UTC")


def test_opens_alone_on_the_calendar_are_half_the_edges_and_enough() -> None:
    """Sessions 09:30-15:45 (a file short of each day's last bars): every open a bar after
    closed time, no close a bar before it; half the edges is enough. Catches the opens' bar
    before taken after (``t + step``) or not at all (``None``), and "at least half" made
    "more than half"."""
    assert edges_kept(_trimmed(0, 75), FIVE, "America/New_York", "xnys")


def test_closes_alone_on_the_calendar_are_half_the_edges_and_enough() -> None:
    """Sessions 09:40-15:55 (a file short of each day's first bars): every close a bar before
    closed time, no open; half the edges is enough. Catches the closes' bar after taken before
    (``t - step``) or not at all (``None``), and "at least half" made "more than half"."""
    assert edges_kept(_trimmed(2, 77), FIVE, "America/New_York", "xnys")


def test_bars_stamped_at_their_end_keep_no_edge() -> None:
    """New York's session stamped at the bars' ends (09:35-16:00): the bar before each open,
    09:30, is open, and each close, 16:00, is itself closed: no edge kept. Catches the bar
    before an open taken a hair more than one bar back (``* 1000001.0``: 09:29:59.9997, closed):
    every open a bar late would count as kept, and half the edges pass."""
    assert not edges_kept(_trimmed(0, 77) + FIVE, FIVE, "America/New_York", "xnys")


def test_tz_for_dates_written_with_an_offset_is_applied_and_not_warned_of(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Tokyo's daily bars written ``2024-01-04 00:00:00+09:00`` are dates, each the local
    midnight in ``--tz``'s zone: ``--tz Asia/Tokyo`` is applied, and the warning that said it
    was not (a zone or offset of their own) is gone."""
    days = [datetime(2024, 1, 4) + timedelta(days=k) for k in range(40)]
    rows = "".join(f"{d:%Y-%m-%d} 00:00:00+09:00,1,2,0.5,1.5,10\n" for d in days if d.weekday() < 5)
    path = tmp_path / "7203.csv"
    path.write_text("timestamp,open,high,low,close,volume\n" + rows)
    with caplog.at_level(logging.WARNING):
        bars = read_bars(path, options=ReadOptions(tz="Asia/Tokyo"))
    assert not [r for r in caplog.records if "not applied" in r.getMessage()]
    assert bars["ts"][0] == datetime(2024, 1, 3, 15, tzinfo=UTC)  # Tokyo's midnight


@pytest.mark.parametrize("ts_format", ["epoch-s", "%s"])
def test_epochs_read_with_ts_format_count_as_marked_utc(tmp_path: Path, ts_format: str) -> None:
    """``--ts-format epoch-s`` names what a guessed epoch is: counted in UTC. With ``--tz ZONE
    --force-tz`` the clock they show is read in ZONE (it was refused as "times with their own
    UTC offset", and ``--tz`` alone warned of an offset the file does not have)."""
    walls = _session_walls(datetime(2024, 3, 4), 5)
    epochs = [int(w.replace(tzinfo=UTC).timestamp()) for w in walls]
    path = tmp_path / "AAPL.csv"
    path.write_text(
        "time,open,high,low,close,volume\n" + "".join(f"{e},180,181,179,180.5,10\n" for e in epochs)
    )
    forced = ReadOptions(tz="America/New_York", force_tz=True, ts_format=ts_format)
    assert read_bars(path, options=forced)["ts"].to_list() == _new_york(walls)
