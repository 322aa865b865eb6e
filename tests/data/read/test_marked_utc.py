"""Times marked UTC that are a local clock (:mod:`foxhunt.data.read.marked_utc`, session 57):
which times count as marked, ``--tz ZONE --force-tz`` reading their clock in ZONE, the
warnings of ``--tz`` not applied, and the session-edge proof the zone rule asks of a mark.

Bar times are New York's published regular session (09:30-16:00) built with zoneinfo, then
written with a UTC mark: the clock a file that marks New York time as UTC shows."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl
import pytest

from foxhunt import read_bars as api_read_bars
from foxhunt.cli import main
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.marked_utc import UTC_MARK, edges_kept
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError

NEW_YORK = ZoneInfo("America/New_York")
HOLIDAYS = ("2024-02-19", "2024-03-29")  # Presidents' Day, Good Friday


def _session_walls(first: datetime, days: int) -> list[datetime]:
    """New York's 5-minute regular-hours bars from ``first``'s date, as wall-clock times."""
    out = []
    for k in range(days):
        d = first + timedelta(days=k)
        if d.weekday() >= 5 or d.date().isoformat() in HOLIDAYS:
            continue
        out += [d.replace(hour=9, minute=30) + timedelta(minutes=5 * i) for i in range(78)]
    return out


def _write(path: Path, walls: list[datetime], mark: str) -> Path:
    rows = "".join(f"{w:%Y-%m-%dT%H:%M:%S}{mark},180,181,179,180.5,10\n" for w in walls)
    path.write_text("timestamp,open,high,low,close,volume\n" + rows)
    return path


def _tokyo_walls() -> list[datetime]:
    """Four weeks of Tokyo's 5-minute bars, 09:00-11:30 and 12:30-15:00, as wall-clock times."""
    walls = []
    for k in range(28):
        d = datetime(2024, 6, 3) + timedelta(days=k)
        if d.weekday() >= 5:
            continue
        walls += [d.replace(hour=9) + timedelta(minutes=5 * i) for i in range(30)]
        walls += [d.replace(hour=12, minute=30) + timedelta(minutes=5 * i) for i in range(30)]
    return walls


def _new_york(walls: list[datetime]) -> list[datetime]:
    return [w.replace(tzinfo=NEW_YORK).astimezone(UTC) for w in walls]


@pytest.mark.parametrize(
    ("text", "marked"),
    [
        ("2024-03-04T09:30:00Z", True),
        ("2024-03-04T09:30:00.000z", True),
        ("2024-03-04 09:30:00+00:00", True),
        ("2024-03-04 09:30:00-0000", True),
        ("2024-03-04 09:30:00 UTC", True),
        ("2024-03-04 09:30:00 GMT", True),
        ("2024-03-04 09:30:00+01:00", False),
        ("2024-03-04 09:30:00 GMT+2", False),
        ("2024-03-04 09:30:00", False),
        ("2024-03-04", False),
    ],
)
def test_what_counts_as_a_utc_mark(text: str, marked: bool) -> None:
    assert bool(UTC_MARK.search(text)) is marked


@pytest.mark.parametrize("mark", ["Z", "+00:00", " UTC"])
def test_force_tz_reads_a_marked_clock_in_the_zone_across_daylight_saving(
    tmp_path: Path, mark: str
) -> None:
    """From February to April: 09:30 New York is 14:30 UTC, then 13:30 from 10 March."""
    walls = _session_walls(datetime(2024, 2, 1), 90)
    path = _write(tmp_path / "AAPL.csv", walls, mark)
    bars = read_bars(path, options=ReadOptions(tz="America/New_York", force_tz=True))
    assert bars["ts"].to_list() == _new_york(walls)
    assert _new_york(walls)[0] == datetime(2024, 2, 1, 14, 30, tzinfo=UTC)
    assert _new_york(walls)[-1] == datetime(2024, 4, 30, 19, 55, tzinfo=UTC)


def test_a_wrong_mark_is_refused_naming_the_zone_and_force_tz(tmp_path: Path) -> None:
    """Until session 57: "all of them in the pre- and post-market hours", a stock's extended
    hours, where the file is New York's session marked UTC."""
    walls = _session_walls(datetime(2024, 3, 11), 20)  # after the change: no clock rule
    path = _write(tmp_path / "AAPL.csv", walls, "Z")
    with pytest.raises(DataError) as e:
        read_bars(path)
    message = str(e.value)
    assert "with the timestamps marked UTC read as such" in message
    assert "0.0% read as America/New_York" in message
    assert "--tz America/New_York --force-tz reads it so" in message
    assert "pre- and post-market" not in message


def test_tz_alone_is_not_applied_to_marked_times_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    walls = _session_walls(datetime(2024, 3, 11), 20)
    path = _write(tmp_path / "AAPL.csv", walls, "+00:00")
    with caplog.at_level(logging.WARNING), pytest.raises(DataError, match="--force-tz"):
        read_bars(path, options=ReadOptions(tz="America/New_York"))
    assert (
        f"{path}: --tz America/New_York not applied: column 'timestamp' holds times marked UTC; "
        "--tz America/New_York --force-tz reads the clock they show in UTC as America/New_York's"
    ) in caplog.text


def test_times_with_their_own_offset_keep_it_and_refuse_force_tz(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    walls = _session_walls(datetime(2024, 3, 11), 20)
    path = _write(tmp_path / "AAPL.csv", walls, "-04:00")  # New York's summer offset: right
    with caplog.at_level(logging.WARNING):
        bars = read_bars(path, options=ReadOptions(tz="Asia/Tokyo"))
    assert bars["ts"].to_list() == _new_york(walls)
    assert "--tz Asia/Tokyo not applied: column 'timestamp' holds times with their own" in (
        caplog.text
    )
    with pytest.raises(DataError) as e:
        read_bars(path, options=ReadOptions(tz="Asia/Tokyo", force_tz=True))
    assert str(e.value) == (
        f"{path}: --force-tz: column 'timestamp' holds times with their own UTC offset, not "
        "marked UTC: the offset says which clock they keep; drop --force-tz"
    )


def test_force_tz_needs_tz() -> None:
    with pytest.raises(DataError, match="--force-tz needs --tz ZONE"):
        ReadOptions(force_tz=True)


def test_a_parquet_column_typed_utc_is_marked(tmp_path: Path) -> None:
    walls = _session_walls(datetime(2024, 3, 11), 20)
    path = tmp_path / "AAPL.parquet"
    pl.DataFrame(
        {
            "ts": pl.Series(walls, dtype=pl.Datetime("us")).dt.replace_time_zone("UTC"),
            **{c: [180.0] * len(walls) for c in ("open", "high", "low", "close")},
            "volume": [10.0] * len(walls),
        }
    ).write_parquet(path)
    with pytest.raises(DataError, match="--tz America/New_York --force-tz reads it so"):
        read_bars(path)
    forced = read_bars(path, options=ReadOptions(tz="America/New_York", force_tz=True))
    assert forced["ts"].to_list() == _new_york(walls)


def test_right_utc_times_are_read_as_marked(tmp_path: Path) -> None:
    """New York's session written in UTC, as most files marked ``Z`` are: no zone named."""
    walls = _session_walls(datetime(2024, 2, 1), 90)
    utc = [t.replace(tzinfo=None) for t in _new_york(walls)]
    path = _write(tmp_path / "AAPL.csv", utc, "Z")
    assert read_bars(path)["ts"].to_list() == _new_york(walls)


def test_one_day_of_pre_market_bars_is_no_proof_of_a_clock() -> None:
    """14:00-15:25 UTC of one Tuesday: New York's 09:00-10:25, or 14:00-15:25 as New York's
    clock; no pause, no session edge: nothing proves the mark wrong (the extended-hours line
    stands, ``test_inspection_mutants.py``)."""
    ts = pl.Series(
        [datetime(2024, 1, 9, 14, tzinfo=UTC) + timedelta(minutes=5 * i) for i in range(18)],
        dtype=pl.Datetime("us", "UTC"),
    )
    assert not edges_kept(ts, timedelta(minutes=5), "America/New_York", "xnys")


def test_edges_kept_needs_half_the_edges_on_the_calendars() -> None:
    walls = _session_walls(datetime(2024, 3, 11), 20)
    ts = pl.Series(walls, dtype=pl.Datetime("us")).dt.replace_time_zone("UTC")
    five = timedelta(minutes=5)
    assert edges_kept(ts, five, "America/New_York", "xnys")
    assert not edges_kept(ts, five, "UTC", "xnys")  # 09:30 UTC: 05:30 New York, closed
    later = ts + timedelta(minutes=10)  # 09:40-16:05: opens and closes off the calendar's
    assert not edges_kept(later, five, "America/New_York", "xnys")


def test_a_nameless_marked_file_is_told_the_zone_that_keeps_a_market(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``prices.csv`` (no name places it, calendar 24x7) of Tokyo's wall clock marked ``Z``:
    kept, with a warning naming ``--tz Asia/Tokyo --force-tz``."""
    walls = _tokyo_walls()
    (tmp_path / "downloads").mkdir()  # a folder named like a ticker would name the symbol
    path = _write(tmp_path / "downloads" / "prices.csv", walls, "Z")
    code = main(["data", "inspect", str(path), "--json"])
    report = capsys.readouterr().out
    assert code == 0
    assert "its times marked UTC keep no market's hours (calendar 24x7)" in report
    assert "--tz Asia/Tokyo --force-tz reads them so" in report


def test_the_api_takes_force_tz(tmp_path: Path) -> None:
    walls = _session_walls(datetime(2024, 3, 11), 20)
    path = _write(tmp_path / "AAPL.csv", walls, "Z")
    with pytest.raises(DataError, match="tz='America/New_York' force_tz=True reads it so"):
        api_read_bars(str(path))
    bars = api_read_bars(str(path), tz="America/New_York", force_tz=True)
    assert bars["ts"].to_list() == _new_york(walls)


@pytest.mark.parametrize("mark", ["", "Z"])
def test_tokyos_session_under_a_bare_ticker_is_told_tokyo_not_extended_hours(
    tmp_path: Path, mark: str
) -> None:
    """``SONY``'s 09:00-11:30 and 12:30-15:00 Tokyo bars written on Tokyo's clock, naive or
    marked UTC: read as UTC they sit in 05:00-11:00 New York, all inside the pre- and
    post-market hours, and were refused as a stock's extended hours (until session 57), where
    the line names Tokyo's clock."""
    walls = _tokyo_walls()
    (tmp_path / "downloads").mkdir()
    path = _write(tmp_path / "downloads" / "SONY_5m.csv", walls, mark)
    with pytest.raises(DataError) as e:
        read_bars(path)
    force = " --force-tz" if mark else ""
    assert "pre- and post-market" not in str(e.value)
    assert str(e.value).endswith(
        "read in Asia/Tokyo its bars keep calendar xtks's hours and days: --tz Asia/Tokyo"
        f"{force} reads them on it)"
    )


def test_a_guessed_market_is_no_proof_against_a_utc_mark(tmp_path: Path) -> None:
    """B3's 10:00-17:00 São Paulo session (no daylight saving since 2019: 13:00-20:00 UTC all
    year) under a bare ticker, taken for a NYSE stock: its opens keep the UTC clock across New
    York's change, which the clock rule calls local time for naive times. Marked UTC, the mark
    stands: the guess is what may be wrong (a clock refusal naming --force-tz until the rule
    was kept to markets a name places)."""
    walls = []
    for k in range(90):
        d = datetime(2024, 2, 1) + timedelta(days=k)
        if d.weekday() < 5:
            walls += [d.replace(hour=13) + timedelta(minutes=5 * i) for i in range(84)]
    (tmp_path / "downloads").mkdir()
    path = _write(tmp_path / "downloads" / "BVMF_5m.csv", walls, "Z")
    bars = read_bars(path)
    assert bars.height == len(walls)
    naive = _write(tmp_path / "downloads" / "BVMF_5m.csv", walls, "")
    with pytest.raises(DataError, match="the file's clock is likely local time"):
        read_bars(naive)


@pytest.mark.parametrize("written", ["%m/%d/%Y", "%Y%m%d", "%d-%b-%Y"])
def test_tz_for_dates_alone_is_applied_and_not_said_otherwise(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, written: str
) -> None:
    """Daily bars dated ``01/02/2024`` read with ``--tz America/New_York`` start at New York's
    midnight, 05:00 UTC, as they did; until session 59 a warning said ``--tz`` was not applied
    ("holds times with their own zone or UTC offset": a review's find)."""
    days = pl.date_range(pl.date(2024, 1, 2), pl.date(2024, 3, 29), "1d", eager=True)
    rows = [
        f"{d:{written}},4780.25,4781,4779,4780.5,1000" for d in days.filter(days.dt.weekday() <= 5)
    ]
    path = tmp_path / "SPX.csv"
    path.write_text("Date,Open,High,Low,Close,Volume\n" + "\n".join(rows) + "\n")
    with caplog.at_level(logging.WARNING):
        bars = read_bars(path, tz="America/New_York")
    assert bars["ts"][0] == datetime(2024, 1, 2, 5, tzinfo=UTC)
    assert "not applied" not in caplog.text
