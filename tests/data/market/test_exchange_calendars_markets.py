"""The markets added in session 59 from ``exchange_calendars`` (Tel Aviv, Jakarta, Riyadh,
Bangkok, Kuala Lumpur, Wellington, Mexico, Istanbul and Europe's smaller exchanges), Tel Aviv's
Sunday-Thursday week until January 2026, and Singapore's lunch and half days.

Session times are written out from the exchanges' published hours (UTC on named dates), not
read back from the calendars."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl
import pytest
from test_calendar_fit import _session_bars

from foxhunt.data.market.calendar import closed_day, is_open, known_features
from foxhunt.data.market.calendar_fit import fit_calendar
from foxhunt.data.market.calendars import sessions
from foxhunt.data.market.instruments import infer_instrument

FIVE = timedelta(minutes=5)
JERUSALEM = ZoneInfo("Asia/Jerusalem")


def _utc_hours(calendar: str, day: str) -> list[tuple[str, str]]:
    """The calendar's intervals on trading day ``day``, as (open, close) ``HH:MM`` UTC."""
    cal = sessions(calendar)
    at = np.flatnonzero(cal.day == np.datetime64(day, "D").astype(np.int64))

    def hm(us: int) -> str:
        return datetime.fromtimestamp(int(us) / 1e6, UTC).strftime("%H:%M")

    return [(hm(cal.opens[i]), hm(cal.closes[i])) for i in at]


@pytest.mark.parametrize(
    ("symbol", "calendar", "currency"),
    [
        ("TEVA.TA", "xtae", "ILS"),
        ("LUMI.TA", "xtae", "ILS"),
        ("BBCA.JK", "xidx", "IDR"),
        ("WALMEX.MX", "xmex", "MXN"),
        ("THYAO.IS", "xist", "TRY"),
        ("PTT.BK", "xbkk", "THB"),
        ("1155.KL", "xkls", "MYR"),
        ("FPH.NZ", "xnze", "NZD"),
        ("PKO.WA", "xwar", "PLN"),
        ("PKO.PL", "xwar", "PLN"),  # Stooq's Warsaw
        ("NOKIA.HE", "xhel", "EUR"),
        ("NOVO-B.CO", "xcse", "DKK"),
        ("EQNR.OL", "xosl", "NOK"),
        ("OMV.VI", "xwbo", "EUR"),
        ("CEZ.PR", "xpra", "CZK"),
        ("OTP.BD", "xbud", "HUF"),
        ("OTP.HU", "xbud", "HUF"),  # Stooq's Budapest
        ("OPAP.AT", "asex", "EUR"),
        ("EDP.LS", "xlis", "EUR"),
        ("ABI.BR", "xbru", "EUR"),
        ("RYA.IR", "xdub", "EUR"),
        ("6488.TWO", "xtai", "TWD"),  # Taipei's OTC market: TWSE's days and hours
    ],
)
def test_a_listing_suffix_names_its_exchange(symbol: str, calendar: str, currency: str) -> None:
    """Until session 59 each was an unknown market on ``24x7`` (no currency)."""
    inst = infer_instrument(symbol)
    assert (inst.asset_class, inst.calendar, inst.currency) == ("stock", calendar, currency)


@pytest.mark.parametrize(
    ("symbol", "calendar"),
    [("^TA125.TA", "xtae"), ("^JKSE", "xidx"), ("^MXX", "xmex"), ("XU100.IS", "xist"),
     ("^KLSE", "xkls"), ("^NZ50", "xnze"), ("WIG20.WA", "xwar"),
     ("^OMXH25", "xhel"), ("^OMXC25", "xcse"), ("PSI20.LS", "xlis"), ("^BFX", "xbru"),
     ("^ISEQ", "xdub")],
)  # fmt: skip
def test_their_indices_are_on_their_calendars(symbol: str, calendar: str) -> None:
    inst = infer_instrument(symbol)
    assert (inst.asset_class, inst.calendar) == ("cash_index", calendar)


def test_tel_aviv_trades_sunday_to_thursday_until_2026_then_monday_to_friday() -> None:
    """TASE's week was Sunday-Thursday until Sunday 4 January 2026 (09:59-15:40 on Sundays,
    17:15 Monday-Thursday, Israel time), Monday-Friday from 5 January (13:50 on Fridays)."""
    assert _utc_hours("xtae", "2024-03-10") == [("07:59", "13:40")]  # a Sunday, UTC+2
    assert _utc_hours("xtae", "2024-03-07") == [("07:59", "15:15")]  # Thursday
    assert _utc_hours("xtae", "2024-03-08") == []  # Friday
    assert _utc_hours("xtae", "2024-06-09") == [("06:59", "12:40")]  # a summer Sunday, UTC+3
    assert _utc_hours("xtae", "2026-01-04") == [("07:59", "13:40")]  # the last Sunday
    assert _utc_hours("xtae", "2026-01-09") == [("07:59", "11:50")]  # the first Friday
    assert _utc_hours("xtae", "2026-01-11") == []  # a Sunday of the new week


def test_a_sunday_bar_of_tel_aviv_is_inside_its_calendar() -> None:
    """A bar of Sunday 10 March 2024, 10:00 Tel Aviv, is open; a Friday's is not; a daily bar
    of that Sunday is on a trading day (until session 59 the ``xc:`` sessions dropped
    Sundays: every Sunday bar of a Tel Aviv stock was in closed hours)."""
    assert is_open(datetime(2024, 3, 10, 10, tzinfo=JERUSALEM), "xtae")
    assert not is_open(datetime(2024, 3, 8, 10, tzinfo=JERUSALEM), "xtae")
    days = pl.Series("ts", [datetime(2024, 3, 10, tzinfo=UTC), datetime(2024, 3, 8, tzinfo=UTC)])
    assert pl.select(closed_day(pl.lit(days), "xtae")).to_series().to_list() == [False, True]


def test_tel_avivs_day_of_week_counts_from_sunday() -> None:
    """Sunday is the first day of Tel Aviv's week (phase 0) and Thursday its fifth (phase 4 of
    5); it was Tuesday's phase (Sunday = 6, period 5). The NYSE's Monday stays phase 0."""
    ts = [datetime(2024, 3, 10, 9, tzinfo=UTC), datetime(2024, 3, 14, 9, tzinfo=UTC)]
    frame = pl.DataFrame({"ts": ts}).select(known_features(pl.col("ts"), "xtae"))
    phase = np.arctan2(frame["known__dow_sin"], frame["known__dow_cos"]) % (2 * np.pi)
    assert np.allclose(phase, [0.0, 4 * 2 * np.pi / 5])
    # from Monday 5 January 2026 the week runs Monday to Friday: Monday 0 .. Friday 4 (a
    # fixed Sunday start gave Friday Sunday's phase and kept Thursday last: a review's find)
    ts26 = [datetime(2026, 1, d, 9, tzinfo=UTC) for d in (1, 4, 5, 8, 9)]
    frame = pl.DataFrame({"ts": ts26}).select(known_features(pl.col("ts"), "xtae"))
    phase = np.arctan2(frame["known__dow_sin"], frame["known__dow_cos"]) % (2 * np.pi)
    assert np.allclose(phase, [i * 2 * np.pi / 5 for i in (4, 0, 0, 3, 4)])  # Thu, Sun, Mon ..
    monday = pl.DataFrame({"ts": [datetime(2024, 3, 11, 15, tzinfo=UTC)]})
    nyse = monday.select(known_features(pl.col("ts"), "xnys"))
    assert (nyse["known__dow_sin"][0], nyse["known__dow_cos"][0]) == pytest.approx((0.0, 1.0))


def test_tel_avivs_bars_keep_its_calendar() -> None:
    """Five-minute bars Sunday to Thursday, 10:00-15:40 on Sundays and 10:00-17:15 on the
    other days, Israel time (no holiday in January-February 2024): Tel Aviv's, where no other
    calendar has Sundays; daily bars of those days too."""
    tz, days, d = JERUSALEM, [], date(2024, 1, 7)
    while d <= date(2024, 2, 29):
        if d.weekday() in (6, 0, 1, 2, 3):
            days.append(d)
        d += timedelta(days=1)
    sundays = [x for x in days if x.weekday() == 6]
    others = [x for x in days if x.weekday() != 6]
    ts = np.sort(
        np.r_[
            _session_bars(sundays, tz, [(10, 0, 15, 40)], FIVE),
            _session_bars(others, tz, [(10, 0, 17, 15)], FIVE),
        ]
    )
    assert fit_calendar(ts, FIVE).calendar == "xtae"
    daily = np.array(
        [int(datetime(x.year, x.month, x.day, tzinfo=UTC).timestamp() * 1e6) for x in days]
    )
    assert fit_calendar(daily, timedelta(days=1)).calendar == "xtae"


def test_jakartas_bars_keep_its_calendar_not_singapores_an_hour_off() -> None:
    """Five-minute bars of February 2025 in Jakarta's hours (09:00-12:00 and 13:30-15:50, on
    Fridays 09:00-11:30 and 14:00-15:50, UTC+7): Jakarta's calendar. Before it was tried, they
    fitted none, and the advice named Singapore's read an hour off (its lunch since 2017 is
    12:00-13:00 UTC+8: a review's find)."""
    tz = ZoneInfo("Asia/Jakarta")
    days = [date(2025, 2, d) for d in range(3, 29) if date(2025, 2, d).weekday() < 5]
    fridays = [x for x in days if x.weekday() == 4]
    others = [x for x in days if x.weekday() != 4]
    ts = np.sort(
        np.r_[
            _session_bars(others, tz, [(9, 0, 12, 0), (13, 30, 15, 50)], FIVE),
            _session_bars(fridays, tz, [(9, 0, 11, 30), (14, 0, 15, 50)], FIVE),
        ]
    )
    assert fit_calendar(ts, FIVE).calendar == "xidx"


def test_singapores_lunch_since_november_2017() -> None:
    """SGX took its lunch back on 13 November 2017: 09:00-12:00 and 13:00-17:00 Singapore
    (UTC+8); before, one session 09:00-17:00."""
    assert _utc_hours("xses", "2024-03-06") == [("01:00", "04:00"), ("05:00", "09:00")]
    assert _utc_hours("xses", "2017-11-13") == [("01:00", "04:00"), ("05:00", "09:00")]
    assert _utc_hours("xses", "2017-11-10") == [("01:00", "09:00")]
    assert not is_open(datetime(2024, 3, 6, 12, 30, tzinfo=ZoneInfo("Asia/Singapore")), "xses")


@pytest.mark.parametrize(
    "day",
    [
        "2024-12-24",  # Christmas Eve
        "2024-12-31",  # New Year's Eve
        "2024-02-09",  # the Lunar New Year's eve (10 February 2024)
        "2021-02-11",  # the Lunar New Year's eve (12 February 2021)
    ],
)
def test_singapores_eves_are_half_days(day: str) -> None:
    """09:00-12:00 Singapore; the library traded them to 17:00."""
    assert _utc_hours("xses", day) == [("01:00", "04:00")]
    cal = sessions("xses")
    at = np.flatnonzero(cal.day == np.datetime64(day, "D").astype(np.int64))
    assert (cal.day_close[at] == cal.closes[at]).all()  # the day ends at noon


def test_a_day_before_a_weekend_eve_is_a_full_day() -> None:
    """Christmas Eve 2022 was a Saturday: Friday 23 December traded the full day."""
    assert _utc_hours("xses", "2022-12-23") == [("01:00", "04:00"), ("05:00", "09:00")]


def test_jakarta_bangkok_and_kuala_lumpur_break_for_lunch() -> None:
    """IDX 09:00-12:00 and 13:30-15:50 Monday-Thursday, 09:00-11:30 and 14:00-15:50 on Friday
    (Jakarta, UTC+7); SET 10:00-12:30 and 14:30-16:30 (Bangkok, UTC+7); Bursa Malaysia
    09:00-12:30 and 14:30-17:00 (Kuala Lumpur, UTC+8)."""
    assert _utc_hours("xidx", "2024-03-07") == [("02:00", "05:00"), ("06:30", "08:50")]
    assert _utc_hours("xidx", "2024-03-08") == [("02:00", "04:30"), ("07:00", "08:50")]
    assert _utc_hours("xbkk", "2024-03-06") == [("03:00", "05:30"), ("07:30", "09:30")]
    assert _utc_hours("xkls", "2024-03-06") == [("01:00", "04:30"), ("06:30", "09:00")]


@pytest.mark.parametrize(
    ("calendar", "day", "hours"),
    [
        ("xmex", "2024-03-06", [("14:30", "21:00")]),  # 08:30-15:00 Mexico City
        ("xist", "2024-03-06", [("07:00", "15:00")]),  # 10:00-18:00 Istanbul
        ("xnze", "2024-03-06", [("21:00", "03:45")]),  # 10:00-16:45 Wellington, the day before in UTC
        ("xwar", "2024-03-06", [("08:00", "16:00")]),  # 09:00-17:00 Warsaw
        ("xhel", "2024-03-06", [("08:00", "16:30")]),  # 10:00-18:30 Helsinki
        ("xosl", "2024-03-06", [("08:00", "15:20")]),  # 09:00-16:20 Oslo
        ("xdub", "2024-03-06", [("08:00", "16:28")]),  # 08:00-16:28 Dublin
    ],
)  # fmt: skip
def test_the_new_markets_hours(calendar: str, day: str, hours: list[tuple[str, str]]) -> None:
    assert _utc_hours(calendar, day) == hours


@pytest.mark.slow  # builds Tel Aviv's sessions from exchange_calendars: 3.7 s
def test_sessions_cached_before_sundays_were_kept_are_not_read(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache written by session 58's ``xc:`` sessions (Sundays dropped, under the key ending
    ``_weekdays``) is not taken for the new ones: Tel Aviv's Sunday is a trading day."""
    from importlib import metadata

    from foxhunt.data.market import calendars
    from foxhunt.data.market.session_cache import cache_path

    sunday = np.datetime64("2024-03-10", "D").astype(np.int64)
    current = sessions("xtae")
    keep = (current.day + 3) % 7 != 6  # as session 58 built them
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path))
    old = cache_path(f"xc:XTAE_xc{metadata.version('exchange_calendars')}_weekdays", calendars.SPAN)
    old.parent.mkdir(parents=True)
    np.savez(old, **{f: a[keep] for f, a in zip(current._fields, current, strict=True)})
    calendars.sessions.cache_clear()
    try:
        assert sunday in calendars.sessions("xtae").day
    finally:
        calendars.sessions.cache_clear()
