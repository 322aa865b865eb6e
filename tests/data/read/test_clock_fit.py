"""Local times read as UTC, seen at daylight saving (foxhunt.data.read.clock_fit).

Regular-hours bars written in New York time fall, read as UTC, in hours Globex is open: the
closed-hours rule cannot see them. Across a daylight-saving change their sessions move by an
hour in Chicago time, which the exchange's never do: refused, the zones that keep them named.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl
import pytest

from foxhunt.cli import main
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.clock_fit import ClockFit, clock_fits, session_edges
from foxhunt.data.read.clock_zones import CITY_ZONES, ZoneFit, zone_fits
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError

NEW_YORK = ZoneInfo("America/New_York")
HOLIDAYS = (date(2024, 2, 19), date(2024, 3, 29))
"""Presidents' Day (CME equity closes at noon) and Good Friday (closed)."""


def _regular_hours(first: date, days: int, zone: ZoneInfo = NEW_YORK) -> list[datetime]:
    """5-minute bars 09:30-16:00 in ``zone`` on weekdays (UTC datetimes)."""
    out = []
    for k in range(days):
        d = first + timedelta(days=k)
        if d.weekday() >= 5 or d in HOLIDAYS:
            continue
        start = datetime(d.year, d.month, d.day, 9, 30, tzinfo=zone)
        out += [(start + timedelta(minutes=5 * i)).astimezone(UTC) for i in range(78)]
    return out


def _write(path: Path, stamps: list[datetime], clock: ZoneInfo | None) -> Path:
    """A naive-timestamp CSV: the stamps on ``clock``'s wall (None: UTC's)."""
    rows = "".join(
        f"{(t.astimezone(clock) if clock else t):%Y-%m-%d %H:%M:%S},5000,5001,4999,5000.5,10\n"
        for t in stamps
    )
    path.write_text("timestamp,open,high,low,close,volume\n" + rows)
    return path


# Feb 1 - Apr 30 2024: the US changes on 10 March, Europe's on 31 March.
SPRING = _regular_hours(date(2024, 2, 1), 90)


def _fit(stamps: list[datetime], read_in: str = "UTC", calendar: str = "cme_equity") -> ClockFit:
    ts = pl.Series("ts", stamps, dtype=pl.Datetime("us", "UTC"))
    fit = clock_fits(ts, timedelta(minutes=5), read_in, calendar, CITY_ZONES)
    assert fit is not None
    return fit


def test_new_york_times_read_as_utc_are_refused_naming_both_us_zones(tmp_path: Path) -> None:
    path = _write(tmp_path / "ES.csv", SPRING, NEW_YORK)
    with pytest.raises(DataError) as e:
        read_bars(path)
    message = str(e.value)
    assert message.startswith(
        f"{path}: symbol 'ES': the sessions open at 09:30 on the file's clock"
    )
    # 26 sessions before the change (10 March), 36 after: read as UTC, the later ones
    # open and close an hour earlier in Chicago time (71 of 122 edges held)
    assert "read as UTC, 58% of the session opens and closes" in message
    assert "100% read as America/Chicago or America/New_York" in message
    assert message.endswith(
        "--tz America/Chicago or --tz America/New_York (the same daylight-saving dates: the one "
        "the vendor writes) reads it so, or --allow-odd-times"
    )
    bars = read_bars(path, options=ReadOptions(tz="America/New_York"))
    assert bars["ts"].to_list() == SPRING


def test_the_same_bars_written_in_utc_are_read_without_a_word(tmp_path: Path) -> None:
    bars = read_bars(_write(tmp_path / "ES.csv", SPRING, None))
    assert bars["ts"].to_list() == SPRING


def test_the_calendars_closed_hours_break_the_tie_for_a_stock(tmp_path: Path) -> None:
    """AAPL (NYSE): New York times read as Chicago close an hour late, in closed hours; only
    New York is named."""
    fit = _fit(SPRING, calendar="xnys")
    assert fit.best == ("UTC",) and not fit.clearly_better  # Tokyo keeps them too, but later
    assert fit.exchange_zone == "America/New_York"
    wall = [t.astimezone(NEW_YORK).replace(tzinfo=UTC) for t in SPRING]  # NY times read as UTC
    fit = _fit(wall, calendar="xnys")
    assert fit.best == ("America/New_York",) and fit.clearly_better


def test_berlin_times_are_told_from_new_york_times() -> None:
    """Europe changes three weeks later: Berlin keeps the sessions, New York does not."""
    berlin = ZoneInfo("Europe/Berlin")
    stamps = _regular_hours(date(2024, 2, 1), 90, berlin)
    wall = [t.astimezone(berlin).replace(tzinfo=UTC) for t in stamps]
    fit = _fit(wall, calendar="eurex")
    assert fit.best == ("Europe/London", "Europe/Berlin") or fit.best == ("Europe/Berlin",)
    assert fit.clearly_better and fit.best_share == 1.0
    assert fit.usual_open == "09:30"


def test_a_zone_the_user_gives_is_kept_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path / "ES.csv", SPRING, NEW_YORK)
    bars = read_bars(path, options=ReadOptions(tz="UTC"))
    assert bars.height == len(SPRING)
    assert "--tz UTC kept as given" in caplog.text
    assert "the sessions open at 09:30 on the file's clock" in caplog.text


def test_odd_times_are_kept_on_request(tmp_path: Path) -> None:
    path = _write(tmp_path / "ES.csv", SPRING, NEW_YORK)
    bars = read_bars(path, options=ReadOptions(allow_odd_times=True))
    assert bars.height == len(SPRING)


def test_no_daylight_saving_change_no_claim() -> None:
    """February only: New York times and UTC times keep the sessions alike."""
    stamps = _regular_hours(date(2024, 1, 8), 50)
    wall = [t.astimezone(NEW_YORK).replace(tzinfo=UTC) for t in stamps]
    fit = _fit(wall)
    assert "UTC" in fit.best and not fit.clearly_better


def test_a_market_that_never_closes_has_no_sessions_to_keep() -> None:
    ts = pl.Series("ts", SPRING, dtype=pl.Datetime("us", "UTC"))
    assert clock_fits(ts, timedelta(minutes=5), "UTC", "24x7", CITY_ZONES) is None


def test_too_few_sessions_say_nothing() -> None:
    ts = pl.Series("ts", SPRING[: 78 * 9], dtype=pl.Datetime("us", "UTC"))  # 9 days: 16 edges
    assert clock_fits(ts, timedelta(minutes=5), "UTC", "cme_equity", CITY_ZONES) is None


def test_session_edges_are_the_bars_beside_a_pause() -> None:
    day = datetime(2024, 1, 2, 14, 30, tzinfo=UTC)
    stamps = [day + timedelta(minutes=m) for m in (0, 1, 2, 31, 32, 60, 90)]
    edges = session_edges(pl.Series("t", stamps), timedelta(minutes=1))
    opens = edges.filter(pl.col("open"))["t"].to_list()
    closes = edges.filter(~pl.col("open"))["t"].to_list()
    # pauses of 29, 28 (< 30 min) and 30 min: only the 30-minute ones split sessions
    assert opens == [stamps[6]] and closes == [stamps[5]]
    hourly = [day + timedelta(hours=h) for h in (0, 1, 3, 4)]
    edges = session_edges(pl.Series("t", hourly), timedelta(hours=1))  # pause: 2 intervals
    assert edges["t"].to_list() == [hourly[2], hourly[1]]


def test_sparse_sessions_without_a_regular_open_say_nothing() -> None:
    """Bars at a different minute each day: no zone holds half the edges at one minute."""
    stamps = []
    for k, d in enumerate(range(60)):
        day = date(2024, 2, 1) + timedelta(days=d)
        if day.weekday() >= 5:
            continue
        start = datetime(day.year, day.month, day.day, 14, 0, tzinfo=UTC) + timedelta(
            minutes=(k * 37) % 300
        )
        stamps += [start + timedelta(minutes=5 * i) for i in range(6)]
    fit = _fit(stamps)
    assert fit.best_share < 0.5 and not fit.clearly_better


def test_the_sessions_outvote_a_zone_that_only_moves_a_holiday(tmp_path: Path) -> None:
    """New York times with a Good Friday session read as UTC: the closed hours alone prefer
    Tokyo (nine hours on moves Good Friday's bars into Monday's Asian hours); the session edges
    say New York or Chicago, and that is what the refusal names."""
    good_friday = datetime(2024, 3, 29, 9, 30, tzinfo=NEW_YORK)
    holiday = [(good_friday + timedelta(minutes=5 * i)).astimezone(UTC) for i in range(78)]
    stamps = sorted(SPRING + holiday)
    with pytest.raises(DataError) as e:
        read_bars(_write(tmp_path / "ES.csv", stamps, NEW_YORK))
    assert "Asia/Tokyo" not in str(e.value)
    assert "--tz America/Chicago or --tz America/New_York" in str(e.value)


def test_a_zone_that_moves_the_sessions_is_vetoed() -> None:
    from foxhunt.data.read.time_axis import _clock_vetoes

    fit = ClockFit("UTC", 0.9, ("UTC",), 0.9, 100, "America/Chicago", "13:30",
                   (("UTC", 0.9), ("Asia/Tokyo", 0.9), ("Europe/Berlin", 0.7)))  # fmt: skip
    assert fit.breaks_sessions("Europe/Berlin")  # 20 of 100 edges moved
    assert not fit.breaks_sessions("Asia/Tokyo") and not fit.breaks_sessions("UTC-05:00")
    assert _clock_vetoes(fit, "Europe/Berlin") and not _clock_vetoes(fit, "Asia/Tokyo")
    assert not _clock_vetoes(None, "Europe/Berlin")
    few = ClockFit("UTC", 0.9, ("UTC",), 0.9, 20, "America/Chicago", "13:30",
                   (("UTC", 0.9), ("Europe/Berlin", 0.7)))  # fmt: skip
    assert not few.breaks_sessions("Europe/Berlin")  # 4 edges: fewer than MIN_MOVED


def test_inspect_calls_the_file_invalid_and_valid_with_the_zone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "ES.csv", SPRING, NEW_YORK)
    assert main(["data", "inspect", str(path), "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "invalid" and "on the file's clock" in report["error"]
    assert main(["data", "inspect", str(path), "--json", "--tz", "America/New_York"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "valid"


def test_a_session_on_a_holiday_is_no_clock_fault(tmp_path: Path) -> None:
    """UTC bars with a Good Friday session (a vendor's, or a CFD's): its 78 bars fall where the
    calendar is closed, one day of 63. No zone is a better clock for one day (the closed hours
    alone named Tokyo, moving them into Monday's Asian hours): read as written."""
    good_friday = datetime(2024, 3, 29, 9, 30, tzinfo=NEW_YORK)
    holiday = [(good_friday + timedelta(minutes=5 * i)).astimezone(UTC) for i in range(78)]
    stamps = sorted(SPRING + holiday)
    bars = read_bars(_write(tmp_path / "ES.csv", stamps, None))
    assert bars["ts"].to_list() == stamps
    ts = pl.Series("ts", stamps, dtype=pl.Datetime("us", "UTC"))
    fit = zone_fits(ts, "UTC", "cme_equity")
    assert (fit.best, fit.closed_days, fit.days) == ("Asia/Tokyo", 1, 63)
    assert not fit.spread and not fit.clearly_better


def test_closed_bars_on_one_day_in_twenty_are_spread() -> None:
    def fit(closed_days: int, days: int) -> ZoneFit:
        return ZoneFit("UTC", 0.01, "Asia/Tokyo", 0.0, closed_days=closed_days, days=days)

    assert fit(1, 6).clearly_better and fit(5, 100).clearly_better  # a week of FX; one in 20
    assert not fit(4, 100).spread and not fit(4, 100).clearly_better  # four holidays
    assert ZoneFit("UTC", 0.01, "Asia/Tokyo", 0.0).clearly_better  # not counted: no veto


def test_twenty_edges_are_enough_and_eighteen_are_not() -> None:
    """11 sessions: 10 opens and 10 closes inside the file (its first open and last close are
    not edges): exactly MIN_EDGES; 10 sessions: 18."""
    eleven = _regular_hours(date(2024, 1, 2), 15)  # 2-16 January: 11 weekdays
    assert len(eleven) == 11 * 78
    ts = pl.Series("ts", eleven, dtype=pl.Datetime("us", "UTC"))
    fit = clock_fits(ts, timedelta(minutes=5), "UTC", "cme_equity", CITY_ZONES)
    assert fit is not None and fit.edges == 20
    assert (
        clock_fits(ts.head(10 * 78), timedelta(minutes=5), "UTC", "cme_equity", CITY_ZONES) is None
    )


def test_every_zone_tried_is_kept_with_its_share() -> None:
    wall = [t.astimezone(NEW_YORK).replace(tzinfo=UTC) for t in SPRING]
    fit = _fit(wall)
    assert [z for z, _ in fit.shares] == ["UTC", *CITY_ZONES[1:]]
    assert dict(fit.shares)["UTC"] == fit.share and dict(fit.shares)["America/Chicago"] == 1.0


def test_a_time_one_zone_skips_is_dropped_for_that_zone_only() -> None:
    """Sessions 02:30-04:00 on the file's clock, every day of 1-20 March 2024: 02:30 on 10 March
    does not exist in Chicago or New York (null there), but read as UTC it is an edge like the
    others (02:30 UTC is still winter in Chicago): 19 opens (9 at 20:30 Chicago time, 10 at
    21:30) and 19 closes (10 at 21:55, 9 at 22:55): 20 of 38 held; 20 of 37 had the null in the
    Chicago column dropped the edge for UTC too."""
    stamps = []
    for d in range(1, 21):
        start = datetime(2024, 3, d, 2, 30, tzinfo=UTC)
        stamps += [start + timedelta(minutes=5 * i) for i in range(18)]
    fit = _fit(stamps, calendar="globex")
    assert fit.edges == 38 and dict(fit.shares)["UTC"] == 20 / 38


def test_fewest_closed_keeps_a_lone_zone_and_counts_every_bar() -> None:
    from foxhunt.data.read.clock_fit import _fewest_closed

    ts = pl.Series("ts", SPRING[:3], dtype=pl.Datetime("us", "UTC"))
    assert _fewest_closed(ts, "UTC", "xnys", ["America/Chicago"]) == ("America/Chicago",)
    # three bars at 09:30-09:40 New York: read as Chicago, 08:30 is before the NYSE opens; the
    # second bar alone (odd index) tells UTC-05:00 (09:35 New York) from UTC-04:00 (08:35)
    wall = [t.astimezone(NEW_YORK).replace(tzinfo=UTC) for t in SPRING[:3]]
    ts = pl.Series("ts", [wall[0] - timedelta(hours=1), wall[1], wall[2] + timedelta(hours=9)])
    ts = ts.cast(pl.Datetime("us", "UTC"))
    assert _fewest_closed(ts, "UTC", "xnys", ["UTC-05:00", "UTC-04:00"]) == ("UTC-05:00",)


def test_held_share_of_no_edges_is_zero_and_of_one_is_whole() -> None:
    from foxhunt.data.read.clock_fit import _held_share

    empty = pl.DataFrame({"open": [], "z": []}, schema={"open": pl.Boolean, "z": pl.Int32})
    assert _held_share(empty, "z") == 0.0
    assert _held_share(pl.DataFrame({"open": [True], "z": [570]}), "z") == 1.0
    two_kinds = pl.DataFrame({"open": [True, True, True, False], "z": [570, 570, 630, 960]})
    assert _held_share(two_kinds, "z") == 0.75  # 2 opens at 570 and the close, of 4


def test_breaks_sessions_at_its_bounds() -> None:
    def fit(share: float, held: float, edges: int) -> ClockFit:
        return ClockFit("UTC", share, ("UTC",), share, edges, "America/Chicago", "13:30",
                        (("UTC", share), ("Europe/Berlin", held)))  # fmt: skip

    assert fit(0.75, 0.5, 24).breaks_sessions("Europe/Berlin")  # 6 edges moved exactly
    assert not fit(0.75, 0.5, 23).breaks_sessions("Europe/Berlin")
    assert fit(0.1, 0.0, 60).breaks_sessions("Europe/Berlin")  # a gain of exactly MIN_GAIN
    assert not fit(0.9, 0.85, 200).breaks_sessions("Europe/Berlin")  # 10 moved, gain 0.05


def test_a_long_file_is_sampled_to_break_the_tie() -> None:
    """One-minute regular-hours bars in New York time read as UTC, February to April: 24,180
    bars, more than the tie-break's sample of 20,000 (its step a whole number of bars, 1):
    still both US zones."""
    minute_bars = []
    for t in SPRING[::78]:  # each session's open
        minute_bars += [t + timedelta(minutes=m) for m in range(390)]
    wall = [t.astimezone(NEW_YORK).replace(tzinfo=UTC) for t in minute_bars]
    ts = pl.Series("ts", wall, dtype=pl.Datetime("us", "UTC"))
    fit = clock_fits(ts, timedelta(minutes=1), "UTC", "cme_equity", CITY_ZONES)
    assert len(minute_bars) == 24_180 and fit is not None
    assert fit.best == ("America/Chicago", "America/New_York") and fit.clearly_better


def test_bars_past_a_few_early_closes_rule_no_zone_out() -> None:
    """Regular hours in Chicago time (08:30-15:00), October to December 2024, trading on
    through the CME's early closes (12:15 the day after Thanksgiving and on Christmas Eve), as a
    CFD does. Read as New York, those two days' bars end an hour sooner, fewer closed: that is
    no reason to name New York alone, the file's own clock being Chicago's."""
    chicago = ZoneInfo("America/Chicago")
    closed = {date(2024, 11, 28), date(2024, 12, 25)}  # Thanksgiving, Christmas
    stamps = []
    for k in range(92):
        d = date(2024, 10, 1) + timedelta(days=k)
        if d.weekday() >= 5 or d in closed:
            continue
        start = datetime(d.year, d.month, d.day, 8, 30, tzinfo=chicago)
        stamps += [(start + timedelta(minutes=5 * i)).astimezone(UTC) for i in range(78)]
    wall = [t.astimezone(chicago).replace(tzinfo=UTC) for t in stamps]
    fit = _fit(wall)
    assert fit.best == ("America/Chicago", "America/New_York") and fit.clearly_better


def _fx_weekend(t: datetime) -> bool:
    """New York's FX weekend: Friday 17:00 to Sunday 17:00."""
    ny = t.astimezone(NEW_YORK)
    return (
        (ny.weekday() == 4 and ny.hour >= 17)
        or ny.weekday() == 5
        or (ny.weekday() == 6 and ny.hour < 17)
    )


def _fx_week_grid(hours: int, weeks: int, first: date = date(2017, 9, 3)) -> list[datetime]:
    """The FX week on a UTC grid of ``hours``-hour bars: every bar open somewhere in its span
    (New York's Sunday 17:00 to Friday 17:00), as Dukascopy and MetaTrader's UTC servers write
    them: the 20:00 bar holds the 21:00 or 22:00 UTC open, in summer and winter alike."""
    start = datetime.combine(first, datetime.min.time(), UTC)
    grid = [start + timedelta(hours=hours * k) for k in range(weeks * 7 * 24 // hours)]
    span = timedelta(hours=hours) - timedelta(minutes=1)
    return [t for t in grid if not (_fx_weekend(t) and _fx_weekend(t + span))]


@pytest.mark.parametrize("hours", [2, 4])
def test_a_coarse_utc_grid_holds_the_fx_weeks_edges_and_is_read_without_a_word(
    tmp_path: Path, hours: int
) -> None:
    """A year of 4-hour (and 2-hour) FX bars in UTC: the week's first bar starts at 20:00 both
    in summer and in winter, so its minute of New York's day moves by an hour; the rule named
    New York + 7 h and refused the file, and that advice moved every bar 6-7 hours."""
    stamps = _fx_week_grid(hours, 40)
    assert (
        clock_fits(pl.Series(stamps), timedelta(hours=hours), "UTC", "fx_24x5", CITY_ZONES) is None
    )
    path = _write(tmp_path / "EURUSD.csv", stamps, None)
    bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == stamps


def test_a_coarse_grid_on_the_brokers_clock_read_as_utc_is_still_refused(tmp_path: Path) -> None:
    """The same bars on New York + 7 h (the week opens at 00:00 on that clock), read as UTC: the
    week's first bar starts hours after the open, which no span holds."""
    broker = [
        (t.astimezone(NEW_YORK) + timedelta(hours=7)).replace(tzinfo=UTC)
        for t in _fx_week_grid(1, 40)
        if (t.astimezone(NEW_YORK) + timedelta(hours=7)).hour % 4 == 0
    ]
    fit = clock_fits(
        pl.Series(broker),
        timedelta(hours=4),
        "UTC",
        "fx_24x5",
        CITY_ZONES + ("America/New_York+07:00",),
    )
    assert fit is not None and fit.clearly_better and "America/New_York+07:00" in fit.best


def test_london_bars_of_three_hours_read_as_utc_are_still_told_londons_clock(
    tmp_path: Path,
) -> None:
    """ICE Brent (01:00-23:00 London) in 3-hour bars on London's wall clock, read as UTC: an
    edge bar holds the open as read, but London's clock holds it as well, so the minutes
    still decide (an intermediate version was silent: every summer an hour off, valid)."""
    import numpy as np

    from foxhunt.data.market.calendars import sessions

    london, cal = ZoneInfo("Europe/London"), sessions("ice_europe")
    walls, day = [], datetime(2022, 9, 1)
    while day < datetime(2023, 9, 1):
        for k in range(8):
            wall = day + timedelta(hours=3 * k)
            begin = int(wall.replace(tzinfo=london).timestamp() * 1e6)
            i = min(np.searchsorted(cal.closes, begin, side="right"), cal.closes.size - 1)
            if cal.opens[i] < begin + 3 * 3_600_000_000 and cal.closes[i] > begin:
                walls.append(wall.replace(tzinfo=UTC))  # London's wall, written as is
        day += timedelta(days=1)
    path = _write(tmp_path / "BRN.csv", walls, None)
    with pytest.raises(
        DataError, match=r"the file's clock is likely local time; --tz Europe/London"
    ):
        read_bars(path, min_bars=1)
