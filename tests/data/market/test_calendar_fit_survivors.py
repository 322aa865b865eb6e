"""Edges of ``calendar_fit`` and ``bars_market`` that the mutation run showed unguarded.

As in ``test_calendar_fit``, bar times are built from the markets' published hours and
holidays (zoneinfo, written out here), never from the calendars' session arrays.

Published closures used (2024): NYSE 1 Jan, 15 Jan (Martin Luther King Day), 19 Feb, 29 Mar,
27 May, 19 Jun (Juneteenth), 4 Jul, 2 Sep (Labor Day); Tokyo 1-3 Jan, 8 Jan, 12 Feb, 23 Feb;
the NSE none in February. Toronto trades on Martin Luther King Day.
"""

from __future__ import annotations

from datetime import date, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl
import pytest
from test_calendar_fit import FIVE, NY, TOKYO, _daily, _frame, _session_bars, _us_stock, _weekdays

from foxhunt.data.market.bars_market import fitted_calendars, resolve_bars, with_calendars
from foxhunt.data.market.calendar_fit import closed_in, fit_calendar
from foxhunt.data.market.instrument import Instrument

ONE_DAY = timedelta(days=1)
HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)
JAN_2_TO_12 = _weekdays(date(2024, 1, 2), date(2024, 1, 12))  # 9 NYSE days, no holiday
NYSE_H1 = {date(2024, 1, d) for d in (1, 15)} | {date(2024, 2, 19), date(2024, 3, 29)}


def _tokyo_daily(start: date, end: date, skip: set[date]) -> np.ndarray:
    return _daily(_weekdays(start, end, skip))


# ---------------------------------------------------------------- daily bars


def test_only_holidays_between_the_first_and_last_bar_count():
    """Guards the span of weekdays searched for holidays: it runs from the first bar's day to
    the last bar's, both included, and no further."""
    # Tokyo's 8 January lies between the first two bars (5 and 9 January), 12 February between
    # the last two (9 and 13 February): both count, two holidays take Tokyo's calendar.
    days = _tokyo_daily(date(2024, 1, 5), date(2024, 2, 13), {date(2024, 1, 8), date(2024, 2, 12)})
    fit = fit_calendar(days, ONE_DAY)
    assert fit is not None and (fit.calendar, fit.score, fit.closed) == ("xtks", 1.0, 0.0)
    assert fit.bars == 26
    # Bars to Thursday 22 February lack only 12 February inside; the Emperor's Birthday
    # (Friday 23 February, after the last bar) is no missing bar: one holiday, the weekdays'.
    days = _tokyo_daily(date(2024, 1, 9), date(2024, 2, 22), {date(2024, 2, 12)})
    fit = fit_calendar(days, ONE_DAY)
    assert fit is not None and fit.calendar == "fx_24x5"
    assert fit.score == pytest.approx(32 / 33)  # 32 of the 33 weekdays have a bar


def test_a_holiday_counts_only_where_it_lacks_a_bar_and_the_exchange_shuts():
    """Guards what a holiday is: a weekday the exchange does not trade AND that has no bar. A
    weekday gap the exchange trades is no holiday, nor is a holiday that has a bar."""
    # Tokyo bars lacking Coming of Age Day (8 Jan) and 16 January, a Tokyo trading day: one
    # holiday, one gap in the file: not enough to tell Tokyo.
    days = _tokyo_daily(date(2024, 1, 4), date(2024, 1, 22), {date(2024, 1, 8), date(2024, 1, 16)})
    fit = fit_calendar(days, ONE_DAY)
    assert fit is not None and fit.calendar == "fx_24x5"
    assert fit.score == pytest.approx(11 / 13)
    # 114 daily bars, 20 June to 27 November, on every weekday but Labor Day: the one on 4 July
    # (a stray bar, under 1 % closed for the NYSE) is no missing holiday, Labor Day alone is.
    days = _daily(_weekdays(date(2024, 6, 20), date(2024, 11, 27), {date(2024, 9, 2)}))
    assert days.size == 114
    fit = fit_calendar(days, ONE_DAY)
    assert fit is not None and fit.calendar == "fx_24x5"
    assert fit.score == pytest.approx(114 / 115)


def test_a_stray_bar_on_a_holiday_is_tolerated_and_reported_as_closed():
    """Guards the daily score and closed share where the last bar falls on a day the exchange
    shuts (Juneteenth, which some feeds still print): the NYSE is chosen, its score is the
    share of its trading days with a bar (all of them: 1.0, the holiday not counted among
    them) scaled by the share of bars not closed (117 of 118, since session 55's penalty) and
    ``closed`` is the one bar in 118."""
    skip = NYSE_H1 | {date(2024, 5, 27)}
    days = _daily(_weekdays(date(2024, 1, 2), date(2024, 6, 19), skip))
    assert days.size == 118
    fit = fit_calendar(days, ONE_DAY)
    assert fit is not None and fit.calendar == "xnys"
    assert fit.score == pytest.approx(117 / 118, rel=1e-12)
    assert fit.closed == pytest.approx(1 / 118, rel=1e-12)
    assert fit.bars == 118


def test_daily_thresholds_bars_needed_and_closed_days():
    """Guards the daily thresholds: ten bars (:data:`MIN_DAILY_BARS`) are judged, and a
    candidate with over 1 % of the bars on its closed days is refused (weekday bars with two
    Saturday bars in 67 are no calendar's: they stay on ``24x7``)."""
    ten = _daily(_weekdays(date(2024, 1, 1), date(2024, 1, 12)))
    assert ten.size == 10
    fit = fit_calendar(ten, ONE_DAY)
    assert fit is not None and fit.calendar == "fx_24x5" and fit.score == 1.0
    saturdays = _daily([date(2024, 1, 6), date(2024, 2, 3)])
    weekdays = _daily(_weekdays(date(2024, 1, 1), date(2024, 3, 29)))
    assert fit_calendar(np.concatenate([weekdays, saturdays]), ONE_DAY) is None


def test_daily_bars_outside_the_calendars_span_fit_nothing_without_error():
    """Guards the empty and open-ended cases of the trading-day share: the calendars are
    precomputed for 1985-2060, so daily bars of 1980 (none of 24x7's days among them) and bars
    running into 2061 (past its last day) fit no calendar and raise nothing."""
    old = _daily([date(1980, 1, 1) + timedelta(days=i) for i in range(60)])
    assert fit_calendar(old, ONE_DAY) is None
    late = _daily([date(2060, 12, 10) + timedelta(days=i) for i in range(40)])
    assert fit_calendar(late, ONE_DAY) is None


# ---------------------------------------------------------------- intraday bars


def test_intraday_thresholds_are_inclusive():
    """Guards :data:`ALIGNED_MIN` and :data:`SPAN_MIN` as least shares: exactly 90 % of the
    bars on the grid fits, one more off-grid bar does not; a median day spanning exactly 80 %
    of the NYSE's 390 minutes (09:30-14:42) fits, a minute less does not."""
    on_grid = _session_bars(JAN_2_TO_12, NY, [(9, 30, 16, 0)], FIVE)  # 702 bars
    off_grid = _session_bars(JAN_2_TO_12, NY, [(9, 32, 16, 0)], FIVE)  # 2 minutes late
    fit = fit_calendar(np.concatenate([on_grid, off_grid[:78]]), FIVE)  # 702 of 780: 0.9
    assert fit is not None and (fit.calendar, fit.score, fit.bars) == ("xnys", 1.0, 780)
    assert fit_calendar(np.concatenate([on_grid, off_grid[:79]]), FIVE) is None
    fit = fit_calendar(_session_bars(JAN_2_TO_12, NY, [(9, 30, 14, 42)], MINUTE), MINUTE)
    assert fit is not None and fit.calendar == "xnys"
    assert fit.score == pytest.approx(312 / 390)
    assert fit_calendar(_session_bars(JAN_2_TO_12, NY, [(9, 30, 14, 41)], MINUTE), MINUTE) is None


def test_a_last_bar_overhanging_the_close_spans_the_day_once():
    """Guards the cap on a day's span: yfinance's hourly NYSE bars (09:30 ... 15:30, the last
    ending at 16:30, after the close) span the day once, no more: the score is 1.0."""
    days = _weekdays(date(2024, 1, 2), date(2024, 3, 28), NYSE_H1)
    fit = fit_calendar(_session_bars(days, NY, [(9, 30, 16, 0)], HOUR), HOUR)
    assert fit is not None and fit.calendar == "xnys"
    assert fit.score == 1.0 and fit.closed == 0.0


def test_hourly_bars_from_the_nses_0915_open_keep_its_calendar():
    """Guards the bar grid as times since the session's open: the NSE opens 09:15 IST (03:45
    UTC), so its hourly bars sit a quarter past the hour and twice the open is no whole
    hour. February 2024 has no NSE holiday."""
    days = _weekdays(date(2024, 2, 1), date(2024, 2, 29))
    ts = _session_bars(days, ZoneInfo("Asia/Kolkata"), [(9, 15, 15, 30)], HOUR)
    assert ts.size == 21 * 7
    fit = fit_calendar(ts, HOUR)
    assert fit is not None and (fit.calendar, fit.score, fit.closed) == ("xnse", 1.0, 0.0)


def test_bar_times_may_come_in_any_order_with_repeats():
    """Guards ``bars``: the distinct bar times, whatever their order and repeats (a file with
    a third of its rows twice, shuffled fits as the sorted one does)."""
    ts = _us_stock()
    shuffled = np.random.default_rng(0).permutation(np.concatenate([ts, ts[::3]]))
    fit = fit_calendar(shuffled, FIVE)
    assert fit == fit_calendar(ts, FIVE)
    assert fit is not None and fit.calendar == "xnys" and fit.bars == ts.size


def test_any_positive_interval_is_judged_and_a_zero_one_is_not():
    """Guards the interval's lower bound: a zero interval fits nothing; the finest positive
    one (1 µs) is judged like any other (every time on its grid, 389 minutes and 1 µs of the
    390-minute day spanned, less the longest hole between two bars beyond one interval, a
    minute less 1 µs: since session 56 a day's span leaves out its longest hole)."""
    ts = _session_bars(JAN_2_TO_12, NY, [(9, 30, 16, 0)], MINUTE)
    assert fit_calendar(ts, timedelta(0)) is None
    fit = fit_calendar(ts, timedelta(microseconds=1))
    assert fit is not None and fit.calendar == "xnys"
    assert fit.score == pytest.approx((388 * 60_000_000 + 2) / (390 * 60_000_000), abs=1e-12)


def test_closed_in_is_the_share_of_bars_outside_the_calendar():
    """Guards :func:`closed_in` exactly: the share of intraday bars in closed hours, of daily
    bars on closed days (by trading day, not clock time: midnight-UTC daily bars are not
    'closed hours'), 0.0 for weekly bars (not judged, whatever their stamp) and for none."""
    on = _session_bars(JAN_2_TO_12, NY, [(9, 30, 16, 0)], FIVE)  # 702
    evening = _session_bars(JAN_2_TO_12, NY, [(16, 0, 17, 0)], FIVE)  # 108 after the close
    assert closed_in(np.concatenate([on, evening]), FIVE, "xnys") == pytest.approx(108 / 810)
    assert closed_in(on, FIVE, "xnys") == 0.0
    saturday = _session_bars([date(2024, 1, 6)], NY, [(10, 0, 10, 5)], FIVE)
    assert closed_in(saturday, FIVE, "xnys") == 1.0  # a single bar is judged
    weekdays = _daily(_weekdays(date(2024, 1, 1), date(2024, 3, 29)))  # 65, 4 NYSE holidays
    assert closed_in(weekdays, ONE_DAY, "xnys") == pytest.approx(4 / 65)
    assert closed_in(weekdays, ONE_DAY, "fx_24x5") == 0.0
    sundays = _daily([date(2024, 1, 7) + timedelta(weeks=i) for i in range(10)])
    assert closed_in(sundays, timedelta(days=7), "xnys") == 0.0
    assert closed_in(sundays, ONE_DAY, "xnys") == 1.0
    none = np.array([], dtype=np.int64)
    assert closed_in(none, FIVE, "xnys") == 0.0
    assert closed_in(none, ONE_DAY, "xnys") == 0.0


# ---------------------------------------------------------------- bars_market


def _tokyo_bars() -> np.ndarray:
    skip = {date(2024, 1, d) for d in (2, 3, 8)}
    days = _weekdays(date(2024, 1, 4), date(2024, 1, 31), skip)
    return _session_bars(days, TOKYO, [(9, 0, 11, 30), (12, 30, 15, 0)], FIVE)


def test_a_users_table_entry_is_never_refitted():
    """Guards the table's reach through ``resolve_bars``, ``fitted_calendars`` and the name's
    guess: ``MSFT1H`` (a name placing it nowhere) with NYSE bars takes ``xnys`` without a
    table, but a table's entry keeps its calendar (24x7) and currency."""
    bars = _frame("MSFT1H", _us_stock())
    assert fitted_calendars(bars) == {"MSFT1H": "xnys"}
    mine = Instrument("MSFT1H", 0.01, 1.0, "EUR", "unknown", "24x7")
    table = {"MSFT1H": mine}
    assert fitted_calendars(bars, table) == {}
    assert resolve_bars(bars, table) == {"MSFT1H": mine}


def test_names_that_place_a_symbol_keep_its_calendar_whatever_its_bars():
    """Guards which names the bars may overrule: only a bare ticker taken for a US stock
    (``JNK``) or a name placing nothing. An ETF of the list (QQQ), a spot FX pair, a US class
    share (``BRK.B``) and a London listing keep their calendars with Tokyo's bars."""
    ts = _tokyo_bars()
    bars = pl.concat([_frame(s, ts) for s in ("QQQ", "EURUSD", "BRK.B", "VOD.L", "JNK")])
    assert fitted_calendars(bars) == {"JNK": "xtks"}
    got = {s: i.calendar for s, i in resolve_bars(bars).items()}
    assert got == {
        "QQQ": "xnys",
        "EURUSD": "fx_24x5",
        "BRK.B": "xnys",
        "VOD.L": "xlon",
        "JNK": "xtks",
    }


def test_a_us_guess_yields_only_beyond_a_quarter_of_its_bars_outside():
    """Guards :data:`LEFT_GUESS` as inclusive: Toronto's 5-minute bars for four days from
    Martin Luther King Day put exactly a quarter outside the NYSE, and ``XYZ`` keeps the US
    guess; for three days (a third outside) its bars give it Toronto's calendar."""
    days = _weekdays(date(2024, 1, 15), date(2024, 1, 18))
    four = _session_bars(days, ZoneInfo("America/Toronto"), [(9, 30, 16, 0)], FIVE)
    assert closed_in(four, FIVE, "xnys") == 0.25
    assert fitted_calendars(_frame("XYZ", four)) == {}
    three = four[: 3 * 78]
    assert fitted_calendars(_frame("XYZ", three)) == {"XYZ": "xtse"}


def test_the_weekday_rule_replaces_a_name_placing_nothing_and_a_us_guess():
    """Guards the weekday rule among a US guess's moves: FX-week bars (Sunday 17:00 to Friday
    17:00 New York) give a name placing nothing ``fx_24x5``, and since session 56 a bare ticker
    too (``CABLE``: no stock trades 24-hour days; until then it kept the NYSE and the time
    axis refused its bars)."""
    days = _weekdays(date(2023, 12, 4), date(2024, 1, 26))
    evenings = [d - timedelta(days=1) for d in days]
    ts = np.concatenate(
        [
            _session_bars(days, NY, [(0, 0, 17, 0)], FIVE),
            _session_bars(evenings, NY, [(17, 0, 23, 55)], FIVE),
        ]
    )
    bars = pl.concat([_frame("XYZ", ts), _frame("PRICES", ts)])
    assert fitted_calendars(bars) == {"PRICES": "fx_24x5", "XYZ": "fx_24x5"}


def test_three_distinct_bar_times_are_the_fewest_judged():
    """Guards the least bars ``bars_calendar`` judges: three distinct times (four-hour bars at
    09:30 and 13:30 on 2 January, one at 09:30 on the 3rd: 81 % of the median day) decide a
    nameless symbol's calendar; two do not."""
    ts = np.concatenate(
        [
            _session_bars([date(2024, 1, 2)], NY, [(9, 30, 16, 0)], timedelta(hours=4)),
            _session_bars([date(2024, 1, 3)], NY, [(9, 30, 9, 35)], FIVE),
        ]
    )
    assert ts.size == 3
    assert fitted_calendars(_frame("PRICES", ts)) == {"PRICES": "xnys"}
    assert fitted_calendars(_frame("PRICES", ts[:2])) == {}


def test_with_calendars_returns_the_table_unchanged_without_fits():
    """Guards :func:`with_calendars`' no-fit case (``data inspect`` with nothing fitted): the
    user's table comes back as it was, None stays None."""
    table = {"MSFT1H": Instrument("MSFT1H", 0.01, 1.0, "EUR", "unknown", "24x7")}
    assert with_calendars(table, {}) == table
    assert with_calendars(None, {}) is None
    got = with_calendars(table, {"prices": "xnys"})
    assert got["MSFT1H"] == table["MSFT1H"]
    assert (got["PRICES"].calendar, got["PRICES"].currency) == ("xnys", "USD")


# ------------------------------------------------- one candidate (a name's extended hours)


def test_a_single_candidate_is_judged_as_among_many():
    """``fit_calendar`` over one calendar (an ETF's ``xnys_ext``, since session 56 in place of
    ``keeps``): session bars keep ``xnys``, not the extended hours (a third of their day);
    weekly and zero intervals keep nothing."""
    session = _us_stock()
    fit = fit_calendar(session, FIVE, ("xnys",))
    assert fit is not None and fit.calendar == "xnys"
    assert fit_calendar(session, FIVE, ("xnys_ext",)) is None
    assert fit_calendar(session, timedelta(0), ("xnys",)) is None
    tuesdays = _daily(_weekdays(date(2024, 1, 9), date(2024, 3, 26))[::5])
    assert fit_calendar(tuesdays, timedelta(days=7), ("xnys", "fx_24x5")) is None
