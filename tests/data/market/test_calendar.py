"""Globex calendar: open hours, future bar times across halts/weekends/DST, known features."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from foxhunt.data.market.calendar import (
    KNOWN_FEATURES,
    closed_hours_share,
    closed_time,
    future_timestamps,
    infer_interval,
    is_open,
    known_features,
    project_bar_times,
    project_bar_times_us,
    session_bar_times,
)
from foxhunt.data.market.calendars import CALENDARS

FIVE = timedelta(minutes=5)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_is_open() -> None:
    assert is_open(utc(2024, 1, 3, 15, 0))  # Wed 09:00 CT
    assert not is_open(utc(2024, 1, 3, 22, 30))  # Wed 16:30 CT, daily halt
    assert not is_open(utc(2024, 1, 6, 12, 0))  # Saturday
    assert not is_open(utc(2024, 1, 7, 22, 59))  # Sunday 16:59 CT
    assert is_open(utc(2024, 1, 7, 23, 0))  # Sunday 17:00 CT opens Monday's session
    assert not is_open(utc(2024, 1, 5, 22, 0))  # Friday 16:00 CT
    assert is_open(datetime(2024, 1, 3, 15, 0))  # naive means UTC


def test_future_timestamps_skip_halt_and_weekend() -> None:
    got = future_timestamps(utc(2024, 1, 3, 21, 50), 3, FIVE)  # Wed 15:50 CT
    assert got == [utc(2024, 1, 3, 21, 55), utc(2024, 1, 3, 23, 0), utc(2024, 1, 3, 23, 5)]
    got = future_timestamps(utc(2024, 1, 5, 21, 55), 2, FIVE)  # Fri's last bar
    assert got == [utc(2024, 1, 7, 23, 0), utc(2024, 1, 7, 23, 5)]  # Sunday 17:00 CT


def test_future_timestamps_across_dst() -> None:
    # US DST starts Sunday 2024-03-10: 17:00 CT is 22:00 UTC after the change (23:00 before).
    got = future_timestamps(utc(2024, 3, 8, 21, 55), 1, FIVE)
    assert got == [utc(2024, 3, 10, 22, 0)]
    bars = session_bar_times("2024-03-11", FIVE)
    assert bars[0] == utc(2024, 3, 10, 22, 0) and bars[-1] == utc(2024, 3, 11, 20, 55)
    assert len(bars) == 276


def test_known_features_values() -> None:
    ts = [utc(2024, 1, 3, 14, 30), utc(2024, 1, 7, 23, 0), utc(2024, 3, 15, 14, 30)]
    df = pl.DataFrame({"ts": ts}).with_columns(pl.col("ts").dt.cast_time_unit("us"))
    out = df.select(known_features(pl.col("ts")))
    assert tuple(out.columns) == KNOWN_FEATURES
    wed, sun, expiry = out.rows(named=True)
    # Wed 08:30 CT: US session, its first hour; clock angle 510/1440 of a day.
    assert wed["known__is_us"] == 1.0 and wed["known__is_us_open_hour"] == 1.0
    assert wed["known__is_asia"] == 0.0 and wed["known__is_europe"] == 0.0
    assert wed["known__session_progress"] == pytest.approx((510 + 1440 - 1020) / 1380)
    assert wed["known__dow_sin"] == pytest.approx(math.sin(2 * math.pi * 2 / 5))  # Wed = 2 of 0..4
    # Sunday 17:00 CT belongs to Monday's session: day index 0, progress 0, Asia.
    assert sun["known__dow_sin"] == pytest.approx(0.0) and sun["known__dow_cos"] == 1.0
    assert sun["known__session_progress"] == 0.0 and sun["known__is_asia"] == 1.0
    # 2024-03-15 is the March quarterly expiry (third Friday).
    assert expiry["known__days_to_expiry"] == 0.0
    assert wed["known__days_to_expiry"] == pytest.approx(
        (datetime(2024, 3, 15) - datetime(2024, 1, 3)).days / 91
    )


def test_closed_time_and_interval() -> None:
    ts = [utc(2024, 1, 3, 22, 30), utc(2024, 1, 6, 12, 0), utc(2024, 1, 3, 15, 0)]
    df = pl.DataFrame({"ts": ts})
    assert df.select(closed_time(pl.col("ts"))).to_series().to_list() == [True, True, False]
    bars = session_bar_times("2024-01-03", FIVE)
    assert infer_interval(bars[:10] + bars[20:]) == FIVE
    with pytest.raises(ValueError):
        infer_interval(bars[:1])


def test_daily_bars_keep_their_clock_time_over_weekends() -> None:
    # Daily bars stamped at the cash close, 15:00 CT = 21:00 UTC in winter.
    got = future_timestamps(utc(2024, 1, 4, 21, 0), 3, timedelta(days=1))  # Thursday
    assert got == [utc(2024, 1, 5, 21, 0), utc(2024, 1, 8, 21, 0), utc(2024, 1, 9, 21, 0)]
    # Stamped at 00:00 UTC (18:00 CT the evening before, Globex's next trading day).
    got = future_timestamps(utc(2024, 1, 5, 0, 0), 2, timedelta(days=1))  # Friday's session
    assert got == [utc(2024, 1, 8, 0, 0), utc(2024, 1, 9, 0, 0)]  # Monday's, Tuesday's


@settings(max_examples=60, deadline=None)
@given(
    minutes=st.integers(0, 366 * 24 * 12 - 1).map(lambda k: 5 * k),
    step=st.sampled_from([5, 15, 30, 60]),
)
def test_intraday_projection_is_the_next_open_grid_time(minutes: int, step: int) -> None:
    """Brute force: from an open bar on the interval's grid, each scheduled bar is the first
    later grid time (every ``step`` minutes, aligned to 17:00 CT) at which Globex is open."""
    start = utc(2024, 1, 1) + timedelta(minutes=minutes)
    start -= timedelta(minutes=minutes % step)
    interval = timedelta(minutes=step)
    assume(is_open(start))
    got = project_bar_times(pl.Series([start]), 4, interval).row(0)
    want, t = [], start
    while len(want) < 4:
        t += interval
        if is_open(t):
            want.append(t)
    assert list(got) == want


# --- calendars from the library and the rules (issue 12) -------------------------------------


def test_cme_equity_holidays_and_early_closes() -> None:
    # Thanksgiving 2024: equity futures close early at 12:00 CT, reopen 17:00 CT.
    assert is_open(utc(2024, 11, 28, 17, 55), "cme_equity")
    assert not is_open(utc(2024, 11, 28, 18, 30), "cme_equity")
    got = future_timestamps(utc(2024, 11, 28, 17, 55), 2, FIVE, "cme_equity")
    assert got == [utc(2024, 11, 28, 23, 0), utc(2024, 11, 28, 23, 5)]
    # Christmas: closed all day; the Globex rule without holidays would have opened it.
    assert not is_open(utc(2024, 12, 25, 15, 0), "cme_equity")
    assert is_open(utc(2024, 12, 25, 15, 0))  # default "globex": the old behaviour
    got = future_timestamps(utc(2024, 12, 24, 17, 55), 1, FIVE, "cme_equity")
    assert got == [utc(2024, 12, 25, 23, 0)]


def test_daily_bars_skip_exchange_holidays() -> None:
    got = future_timestamps(utc(2024, 12, 23, 21, 0), 3, timedelta(days=1), "xnys")
    assert got == [utc(2024, 12, 24, 21, 0), utc(2024, 12, 26, 21, 0), utc(2024, 12, 27, 21, 0)]


def test_spot_fx_is_24x5_new_york() -> None:
    assert is_open(utc(2024, 1, 5, 21, 59), "fx_24x5")  # Friday 16:59 New York
    assert not is_open(utc(2024, 1, 5, 22, 0), "fx_24x5")  # Friday 17:00 New York
    assert is_open(utc(2024, 1, 7, 22, 0), "fx_24x5")  # Sunday 17:00 New York
    assert is_open(utc(2024, 1, 3, 22, 30), "fx_24x5")  # no daily halt
    got = future_timestamps(utc(2024, 1, 5, 21, 55), 2, FIVE, "fx_24x5")
    assert got == [utc(2024, 1, 7, 22, 0), utc(2024, 1, 7, 22, 5)]


def test_ice_europe_trades_01_to_23_london_on_the_librarys_days() -> None:
    """ICE Futures Europe (Brent) on London's clock: the library keeps its hours on New York's,
    an hour early between the two daylight-saving changes (2024-03-10 .. 03-31)."""
    assert is_open(utc(2024, 3, 20, 1, 0), "ice_europe")  # 01:00 London (GMT)
    assert is_open(utc(2024, 3, 20, 22, 59), "ice_europe")  # 22:59 London
    assert not is_open(utc(2024, 3, 20, 0, 30), "ice_europe")  # the library: 00:00 UTC open
    assert not is_open(utc(2024, 3, 20, 23, 0), "ice_europe")
    assert is_open(utc(2024, 7, 1, 0, 0), "ice_europe")  # 01:00 London (BST)
    assert not is_open(utc(2024, 7, 1, 22, 0), "ice_europe")  # 23:00 London (BST)
    assert not is_open(utc(2024, 3, 29, 12, 0), "ice_europe")  # Good Friday
    assert not is_open(utc(2024, 12, 25, 12, 0), "ice_europe")
    got = future_timestamps(utc(2024, 3, 28, 22, 55), 1, FIVE, "ice_europe")
    assert got == [utc(2024, 4, 1, 0, 0)]  # Easter Monday trades; 01:00 London (BST)


def test_eurex_asian_hours_from_december_2018_and_no_24_or_31_december() -> None:
    """The library opens Eurex at 08:00 every year and on 24 and 31 December until 12:30: a
    FDAX file of today's hours (from 01:10 Frankfurt) was a third closed, and forecasts
    targeted 24 December."""
    assert not is_open(utc(2018, 12, 7, 0, 30), "eurex")  # 01:30 CET, before the change
    assert is_open(utc(2018, 12, 10, 0, 10), "eurex")  # 01:10 CET, the first Asian session
    assert not is_open(utc(2018, 12, 10, 0, 9), "eurex")
    assert is_open(utc(2019, 6, 3, 23, 10), "eurex")  # 01:10 CEST
    for day in (24, 31):
        assert not is_open(utc(2018, 12, day, 9, 0), "eurex")
        assert not is_open(utc(2021, 12, day, 9, 0), "eurex")
    got = future_timestamps(utc(2018, 12, 21, 20, 55), 2, FIVE, "eurex")  # Friday 21:55 CET
    assert got == [utc(2018, 12, 27, 0, 10), utc(2018, 12, 27, 0, 15)]  # Thursday 01:10 CET


def test_ice_softs_trade_by_day_on_ice_us_days() -> None:
    """Coffee closes at 13:30 New York: forecasts from Friday's last bars targeted 13:30-13:39
    on ice_us's 20:00-18:00 day."""
    assert is_open(utc(2024, 3, 20, 7, 30), "ice_softs")  # 03:30 EDT
    assert not is_open(utc(2024, 3, 20, 7, 29), "ice_softs")
    assert not is_open(utc(2024, 3, 20, 18, 0), "ice_softs")  # 14:00 EDT
    assert not is_open(utc(2024, 3, 29, 12, 0), "ice_softs")  # Good Friday
    got = future_timestamps(utc(2024, 3, 22, 17, 55), 1, FIVE, "ice_softs")  # Fri 13:55 EDT
    assert got == [utc(2024, 3, 25, 7, 30)]  # Monday 03:30 EDT


def test_ice_us_is_the_librarys() -> None:
    assert is_open(utc(2024, 3, 20, 14, 0), "ice_us")  # 10:00 New York
    assert not is_open(utc(2024, 3, 29, 14, 0), "ice_us")  # Good Friday
    assert not is_open(utc(2024, 3, 23, 14, 0), "ice_us")  # Saturday


def test_crypto_never_closes() -> None:
    got = future_timestamps(utc(2024, 1, 5, 23, 59), 3, timedelta(minutes=1), "24x7")
    assert got == [utc(2024, 1, 6, 0, 0), utc(2024, 1, 6, 0, 1), utc(2024, 1, 6, 0, 2)]
    got = future_timestamps(utc(2024, 1, 5, 21, 0), 2, timedelta(days=1), "24x7")
    assert got == [utc(2024, 1, 6, 21, 0), utc(2024, 1, 7, 21, 0)]  # weekends included
    weekend = pl.Series([utc(2024, 1, 6, 12, 0), utc(2024, 1, 7, 12, 0)])
    assert closed_hours_share(weekend, "24x7") == 0.0
    assert closed_hours_share(weekend) == 1.0  # Globex: both closed


@pytest.mark.slow
def test_known_features_finite_for_every_calendar() -> None:
    ts = pl.datetime_range(utc(2024, 12, 20), utc(2025, 1, 3), "7m", eager=True)
    df = pl.DataFrame({"ts": ts})
    for name in CALENDARS:
        out = df.select(known_features(pl.col("ts"), name)).to_numpy()
        assert np.isfinite(out).all(), name
        progress = df.select(known_features(pl.col("ts"), name)[4]).to_series()
        assert progress.min() >= 0.0 and progress.max() <= 1.0


def test_project_bar_times_is_vectorised_and_matches_one_by_one() -> None:
    ts = pl.datetime_range(utc(2024, 11, 25), utc(2024, 12, 31), "37m", eager=True)
    for name in ("cme_equity", "cme_grains", "fx_24x5", "24x7"):
        many = project_bar_times(ts, 3, FIVE, name)
        for i in (0, 77, 501, len(ts) - 1):
            assert list(many.row(i)) == future_timestamps(ts[i], 3, FIVE, name)


@pytest.mark.parametrize("calendar", ["globex", "cme_equity", "eurex", "xnys", "fx_24x5", "24x7"])
@pytest.mark.parametrize("minutes", [1, 5, 60, 1440])
def test_projection_in_microseconds_is_the_frames(calendar: str, minutes: int) -> None:
    """The live forecaster's numpy projection and the frame every other path uses agree."""
    rng = np.random.default_rng(minutes)
    start = int(datetime(2015, 1, 1, tzinfo=UTC).timestamp()) * 1_000_000
    last = start + rng.integers(0, 10 * 365 * 1440, 200) * 60_000_000  # on the minute
    frame = project_bar_times(
        pl.Series(last, dtype=pl.Int64).cast(pl.Datetime("us", "UTC")),
        9,
        timedelta(minutes=minutes),
        calendar,
    )
    got = project_bar_times_us(last, 9, minutes * 60_000_000, calendar)
    assert got.shape == (200, 9) and got.dtype == np.int64
    np.testing.assert_array_equal(got, frame.select(pl.all().dt.epoch("us")).to_numpy())
    assert (np.diff(np.column_stack([last, got]), axis=1) > 0).all()  # strictly later, each
    with pytest.raises(ValueError, match="interval must be positive"):
        project_bar_times_us(last, 9, 0, calendar)


def test_a_halt_inside_a_bar_makes_no_bar_of_its_reopen() -> None:
    """CME equity futures halted 15:15-15:30 CT until 2021: the hourly bar after 15:00 is 17:00
    (the reopen at 15:30 lies inside the 15:00 bar), where the schedule put a bar at 15:30 and
    every later one a bar early; five-minute bars still step into the reopen."""
    from zoneinfo import ZoneInfo

    from foxhunt.data.market.calendar import future_timestamps

    chicago = ZoneInfo("America/Chicago")

    def clock(last: datetime, minutes: int) -> list[str]:
        times = future_timestamps(last, 4, timedelta(minutes=minutes), "cme_equity")
        return [t.astimezone(chicago).strftime("%a %H:%M") for t in times]

    wednesday = datetime(2018, 10, 17, 15, tzinfo=chicago)
    assert clock(wednesday, 60) == ["Wed 17:00", "Wed 18:00", "Wed 19:00", "Wed 20:00"]
    assert clock(wednesday, 5) == ["Wed 15:05", "Wed 15:10", "Wed 15:30", "Wed 15:35"]
    friday = datetime(2018, 10, 19, 15, tzinfo=chicago)
    assert clock(friday, 60)[0] == "Sun 17:00"
