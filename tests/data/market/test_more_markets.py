"""The markets added in session 55: Paris, Amsterdam, Zurich, Madrid, Milan, Stockholm, Seoul,
Taipei, Shanghai/Shenzhen, São Paulo, Johannesburg, by listing suffix, by index name and by
their bars' hours (``calendar_fit``). Bar times are built from the exchanges' published hours
and holidays, not from the calendars' sessions."""

from __future__ import annotations

from datetime import date, timedelta
from zoneinfo import ZoneInfo

import pytest
from test_calendar_fit import _session_bars, _weekdays

from foxhunt.data.market.calendar_fit import fit_calendar
from foxhunt.data.market.instruments import infer_instrument

FIVE = timedelta(minutes=5)


@pytest.mark.parametrize(
    ("symbol", "calendar", "currency"),
    [
        ("AIR.PA", "xpar", "EUR"),
        ("ASML.AS", "xams", "EUR"),
        ("NESN.SW", "xswx", "CHF"),
        ("SAN.MC", "xmad", "EUR"),
        ("ENI.MI", "xmil", "EUR"),
        ("VOLV-B.ST", "xsto", "SEK"),
        ("005930.KS", "xkrx", "KRW"),
        ("035720.KQ", "xkrx", "KRW"),
        ("2330.TW", "xtai", "TWD"),
        ("600519.SS", "xshg", "CNY"),
        ("000858.SZ", "xshg", "CNY"),
        ("600519.SH", "xshg", "CNY"),
        ("PETR4.SA", "bvmf", "BRL"),
        ("NPN.JO", "xjse", "ZAR"),
    ],
)
def test_a_listing_suffix_names_its_exchange(symbol: str, calendar: str, currency: str) -> None:
    inst = infer_instrument(symbol)
    assert (inst.asset_class, inst.calendar, inst.currency) == ("stock", calendar, currency)


@pytest.mark.parametrize(
    ("symbol", "calendar"),
    [("^FCHI", "xpar"), ("^AEX", "xams"), ("^SSMI", "xswx"), ("^IBEX", "xmad"),
     ("FTSEMIB", "xmil"), ("^OMX", "xsto"), ("^KS11", "xkrx"), ("^TWII", "xtai"),
     ("^SSEC", "xshg"), ("^BVSP", "bvmf"), ("J203", "xjse")],
)  # fmt: skip
def test_their_indices_are_on_their_calendars(symbol: str, calendar: str) -> None:
    inst = infer_instrument(symbol)
    assert (inst.asset_class, inst.calendar) == ("cash_index", calendar)


def test_seouls_bars_keep_seouls_calendar_not_tokyos() -> None:
    """09:00-15:30 Seoul (UTC+9, as Tokyo) without a lunch break, New Year's Day and the
    Lunar New Year (9-12 February 2024) shut: Tokyo's lunch holds bars, so Tokyo does not fit."""
    seollal = {date(2024, 2, d) for d in (9, 12)}
    days = _weekdays(date(2024, 1, 2), date(2024, 2, 29), seollal)
    ts = _session_bars(days, ZoneInfo("Asia/Seoul"), [(9, 0, 15, 30)], FIVE)
    assert fit_calendar(ts, FIVE).calendar == "xkrx"


def test_shanghais_bars_keep_shanghais_calendar_not_hong_kongs() -> None:
    """09:30-11:30 and 13:00-15:00 Shanghai, shut for the Spring Festival (9-16 February 2024):
    inside Hong Kong's hours (same zone), but 5.5 of its 6.5 hours and without its days."""
    festival = {date(2024, 2, d) for d in (9, 12, 13, 14, 15, 16)}
    days = _weekdays(date(2024, 1, 2), date(2024, 2, 29), festival)
    pieces = [(9, 30, 11, 30), (13, 0, 15, 0)]
    ts = _session_bars(days, ZoneInfo("Asia/Shanghai"), pieces, FIVE)
    assert fit_calendar(ts, FIVE).calendar == "xshg"


def test_seouls_late_opens_and_its_old_close_are_kept() -> None:
    """Seoul opens at 10:00 on the year's first trading day and on the university entrance
    exam's day (which closes at 16:30), and closed at 15:00 until August 2016; the calendar
    was 09:00-15:30 every day, so forecasts targeted the closed 09:00-09:55 and skipped
    15:30-16:25 of the exam day."""
    import numpy as np

    from foxhunt.data.market.calendars import sessions

    seoul = ZoneInfo("Asia/Seoul")
    cal = sessions("xkrx")

    def hours(day: str) -> list[str]:
        at = np.flatnonzero(cal.day == np.datetime64(day, "D").astype(np.int64))
        return [
            np.datetime64(int(t), "us").astype(object).replace(tzinfo=ZoneInfo("UTC")).astimezone(seoul).strftime("%H:%M")
            for i in at
            for t in (cal.opens[i], cal.closes[i])
        ]  # fmt: skip

    assert hours("2018-11-15") == ["10:00", "16:30"]  # the exam day
    assert hours("2019-01-02") == ["10:00", "15:30"]  # the year's first trading day
    assert hours("2015-06-01") == ["09:00", "15:00"]  # before 1 August 2016
    assert hours("2024-06-03") == ["09:00", "15:30"]  # one interval: no lunch break
    assert hours("2024-06-06") == []  # Memorial Day
    assert hours("1996-03-02") == []  # a Saturday session of exchange_calendars': five days a week
    assert hours("1996-03-04") == ["09:30", "15:00"]  # the Monday after it
