"""The calendar a symbol's bars keep (``calendar_fit``), and its use for symbols no name places.

The bar times are built here from the markets' published hours and holidays (zoneinfo, written
out), not from the calendars' sessions, so a fit that agrees is evidence, not an echo.
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl
import pytest

from foxhunt.data.market.bars_market import fitted_calendars, resolve_bars
from foxhunt.data.market.calendar_fit import _intraday_score, fit_calendar
from foxhunt.data.market.instrument import Instrument

NY = ZoneInfo("America/New_York")
TOKYO = ZoneInfo("Asia/Tokyo")
FIVE = timedelta(minutes=5)
US_HOLIDAYS_2024 = {date(2024, 1, 1), date(2024, 1, 15), date(2024, 2, 19), date(2024, 3, 29)}


def _weekdays(start: date, end: date, skip: set[date] = frozenset()) -> list[date]:
    days, d = [], start
    while d <= end:
        if d.weekday() < 5 and d not in skip:
            days.append(d)
        d += timedelta(days=1)
    return days


def _session_bars(
    days: list[date], zone: ZoneInfo, pieces: list[tuple[int, int, int, int]], step: timedelta
) -> np.ndarray:
    """µs UTC of bars every ``step`` from each piece's open (h, m) to before its close (h, m),
    local wall time in ``zone``."""
    out = []
    for d in days:
        for h0, m0, h1, m1 in pieces:
            t = datetime(d.year, d.month, d.day, h0, m0, tzinfo=zone)
            end = datetime(d.year, d.month, d.day, h1, m1, tzinfo=zone)
            while t < end:
                out.append(int(t.astimezone(UTC).timestamp() * 1_000_000))
                t += step
    return np.array(out, dtype=np.int64)


def _us_stock(skip: set[date] = US_HOLIDAYS_2024, step: timedelta = FIVE) -> np.ndarray:
    days = _weekdays(date(2024, 1, 2), date(2024, 3, 28), skip)
    return _session_bars(days, NY, [(9, 30, 16, 0)], step)


def test_a_us_stocks_five_minute_bars_keep_the_nyses_calendar():
    fit = fit_calendar(_us_stock(), FIVE)
    assert fit is not None and fit.calendar == "xnys"
    assert fit.closed == 0.0 and fit.score == pytest.approx(1.0)
    # the neutral calendar covers 6.5 of 24 hours on 5 of 7 days
    assert fit.neutral_score == pytest.approx(6.5 / 24 * 5 / 7, rel=0.05)


def test_bars_on_a_us_holiday_that_toronto_trades_are_torontos():
    # Same hours (09:30-16:00 New York time); bars on Martin Luther King Day, which the NYSE
    # closes and the TSX trades, none on New Year's Day, Family Day (19 February, Toronto's
    # and Presidents' Day in New York) and Good Friday.
    toronto = {date(2024, 1, 1), date(2024, 2, 19), date(2024, 3, 29)}
    fit = fit_calendar(_us_stock(skip=toronto), FIVE)
    assert fit is not None and fit.calendar == "xtse"


def test_hourly_bars_on_the_sessions_or_the_clocks_grid_fit_and_others_do_not():
    """yfinance's hourly bars start at the 09:30 open (the session's grid); IB's start on the
    hour after a half bar at 09:30 (the clock's grid); bars at a quarter past neither: they
    cannot be projected on a grid of the calendar, and span too little of a longer day."""
    days = _weekdays(date(2024, 1, 2), date(2024, 3, 28), US_HOLIDAYS_2024)
    hour = timedelta(hours=1)
    yahoo = _session_bars(days, NY, [(9, 30, 16, 0)], hour)
    assert fit_calendar(yahoo, hour).calendar == "xnys"
    ib = _session_bars(days, NY, [(9, 30, 10, 0), (10, 0, 16, 0)], hour)
    assert fit_calendar(ib, hour).calendar == "xnys"
    quarter = _session_bars(days, NY, [(10, 15, 16, 0)], hour)
    assert fit_calendar(quarter, hour) is None


def test_tokyos_bars_with_their_lunch_break_keep_tokyos_calendar():
    # TSE hours until 5 November 2024: 09:00-11:30 and 12:30-15:00 JST; 2-3 January are
    # holidays, 8 January is Coming of Age Day, 12 February a substitute holiday, 23 February
    # the Emperor's Birthday.
    skip = {date(2024, 1, d) for d in (2, 3, 8)} | {date(2024, 2, 12), date(2024, 2, 23)}
    days = _weekdays(date(2024, 1, 4), date(2024, 2, 29), skip)
    ts = _session_bars(days, TOKYO, [(9, 0, 11, 30), (12, 30, 15, 0)], FIVE)
    fit = fit_calendar(ts, FIVE)
    assert fit is not None and fit.calendar == "xtks"


def test_bars_every_hour_of_every_day_stay_on_24x7():
    start = datetime(2024, 1, 1, tzinfo=UTC)
    ts = np.array(
        [int((start + i * FIVE).timestamp() * 1_000_000) for i in range(12 * 24 * 21)],
        dtype=np.int64,
    )
    assert fit_calendar(ts, FIVE) is None


def test_the_fx_week_without_holidays_is_fx_24x5():
    # Sunday 17:00 to Friday 17:00 New York, bars through Christmas and New Year's Day
    days = _weekdays(date(2023, 12, 4), date(2024, 1, 26))
    ts = _session_bars(days, NY, [(0, 0, 17, 0)], FIVE)
    evenings = [d - timedelta(days=1) for d in days]
    ts = np.sort(np.concatenate([ts, _session_bars(evenings, NY, [(17, 0, 23, 55)], FIVE)]))
    fit = fit_calendar(ts, FIVE)
    assert fit is not None and fit.calendar == "fx_24x5"


def test_naive_new_york_bars_read_as_utc_fit_no_calendar():
    # 09:30-16:00 written without a zone and read as UTC: 05:30-12:00 New York in summer
    days = _weekdays(date(2024, 6, 3), date(2024, 7, 31), {date(2024, 6, 19), date(2024, 7, 4)})
    ts = _session_bars(days, ZoneInfo("UTC"), [(9, 30, 16, 0)], FIVE)
    assert fit_calendar(ts, FIVE) is None


def _daily(days: list[date]) -> np.ndarray:
    return np.array(
        [int(datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp() * 1e6) for d in days],
        dtype=np.int64,
    )


def test_daily_bars_on_the_nyses_days_are_the_nyses_and_weekdays_alone_are_fx_24x5():
    one_day = timedelta(days=1)
    nyse = _weekdays(date(2024, 1, 2), date(2024, 3, 28), US_HOLIDAYS_2024)
    assert fit_calendar(_daily(nyse), one_day).calendar == "xnys"
    weekdays = _weekdays(date(2024, 1, 1), date(2024, 3, 29))
    assert fit_calendar(_daily(weekdays), one_day).calendar == "fx_24x5"
    # too few to judge, and weekly bars are not judged
    assert fit_calendar(_daily(nyse[:9]), one_day) is None
    assert fit_calendar(_daily(nyse[::5]), timedelta(days=7)) is None


def test_two_days_of_intraday_bars_are_needed():
    one = _us_stock()[:78]  # 2 January's 78 bars
    assert fit_calendar(one, FIVE) is None
    assert fit_calendar(_us_stock()[: 2 * 78], FIVE).calendar == "xnys"


def _frame(symbol: str, ts: np.ndarray) -> pl.DataFrame:
    n = ts.size
    return pl.DataFrame(
        {
            "ts": pl.Series(ts).cast(pl.Datetime("us", "UTC")),
            "symbol": [symbol] * n,
            "open": np.full(n, 100.0),
            "high": np.full(n, 100.5),
            "low": np.full(n, 99.5),
            "close": np.full(n, 100.25),
            "volume": np.full(n, 10.0),
        }
    )


def test_a_symbol_no_name_places_takes_the_calendar_its_bars_keep(caplog):
    bars = pl.concat([_frame("MSFT1H", _us_stock()), _frame("PRICES", _us_stock())])
    with caplog.at_level(logging.WARNING):
        got = resolve_bars(bars)
    assert {s: i.calendar for s, i in got.items()} == {"MSFT1H": "xnys", "PRICES": "xnys"}
    assert got["MSFT1H"].asset_class == "unknown"
    assert "calendar xnys, the hours and days its bars keep" in caplog.text


def test_names_tables_and_crypto_keep_their_calendars():
    ts = _us_stock()
    bars = pl.concat([_frame(s, ts) for s in ("AAPL", "ES", "BTCUSD", "EURUSD", "MYIDX", "^FOO")])
    table = {"MYIDX": Instrument("MYIDX", 0.25, 5.0, "USD", "unknown", "24x7")}
    got = resolve_bars(bars, table)
    assert got["AAPL"].calendar == "xnys"  # a stock ticker: from its name
    assert got["ES"].calendar == "cme_equity"  # built-in futures
    assert got["BTCUSD"].calendar == "24x7"  # crypto trades every day, whatever its bars
    assert got["EURUSD"].calendar == "fx_24x5"
    assert got["MYIDX"].calendar == "24x7"  # the user's table wins
    assert got["^FOO"].calendar == "xnys"  # another market's index: its bars say
    assert fitted_calendars(bars, table) == {"^FOO": "xnys"}


def test_data_inspect_shows_the_fitted_calendar(tmp_path):
    from foxhunt.data.read.inspection import inspect_report

    frame = _frame("X", _us_stock()[: 78 * 10]).drop("symbol")
    path = tmp_path / "MSFT1H.csv"
    frame.with_columns(pl.col("ts").dt.strftime("%Y-%m-%dT%H:%M:%S%:z")).write_csv(path)
    report = inspect_report(path)
    (summary,) = report["symbols"]
    assert summary["symbol"] == "MSFT1H" and summary["calendar"] == "xnys"
    assert summary["missing_days"] == 0  # on 24x7 the weekends were days without bars
    assert any("calendar xnys, the hours and days its bars keep" in g for g in report["guesses"]), (
        report["guesses"]
    )


def test_a_bare_ticker_of_tokyos_hours_is_read_as_tokyos(tmp_path):
    """``JNK`` (1-5 letters: taken for a US stock) with Tokyo's day session in correct UTC
    was refused as all in the NYSE's closed hours; its bars keep Tokyo's calendar."""
    from foxhunt.data.read.bars import read_bars

    skip = {date(2024, 1, d) for d in (2, 3, 8)}
    days = _weekdays(date(2024, 1, 4), date(2024, 1, 31), skip)
    ts = _session_bars(days, TOKYO, [(9, 0, 11, 30), (12, 30, 15, 0)], FIVE)
    path = tmp_path / "JNK.csv"
    _frame("JNK", ts).drop("symbol").write_csv(path)
    bars = read_bars(path)
    assert bars.height == ts.size
    (inst,) = resolve_bars(bars).values()
    assert (inst.asset_class, inst.calendar, inst.currency) == ("stock", "xtks", "JPY")


def test_a_bare_ticker_keeps_the_nyse_unless_its_bars_leave_it():
    """A US guess is overruled only where the time axis would refuse the bars (over a quarter
    outside the NYSE): daily bars on all weekdays (two US holidays among them) stay the
    NYSE's, though London's calendar has no closed day among them."""
    one_day = timedelta(days=1)
    weekdays = _weekdays(date(2023, 1, 3), date(2023, 3, 3))
    bars = _frame("AAPL", _daily(weekdays))
    assert fitted_calendars(bars) == {}
    assert fit_calendar(_daily(weekdays), one_day).calendar == "fx_24x5"


def test_daily_bars_need_two_of_an_exchanges_holidays_to_take_its_calendar():
    """Twelve January bars lacking Tokyo's Coming of Age Day alone are the weekdays', not
    Tokyo's: one missing day is as likely a gap in the file. A second holiday tells."""
    one_day = timedelta(days=1)
    days = _weekdays(date(2024, 1, 4), date(2024, 1, 22), {date(2024, 1, 8)})
    assert len(days) == 12
    assert fit_calendar(_daily(days), one_day).calendar == "fx_24x5"
    tokyo = {date(2024, 1, 8), date(2024, 2, 12), date(2024, 2, 23)}
    days = _weekdays(date(2024, 1, 4), date(2024, 2, 29), tokyo)
    assert fit_calendar(_daily(days), one_day).calendar == "xtks"


def test_a_daily_history_from_before_1985_is_judged_on_its_bars_inside_the_span():
    """Calendars are precomputed from 1985: bars before it were closed on every calendar, so a
    nameless daily file from 1983 stayed on 24x7 and was forecast on weekends."""
    days = _weekdays(date(1983, 1, 3), date(1990, 12, 31))
    assert fit_calendar(_daily(days), timedelta(days=1)).calendar == "fx_24x5"


BERLIN = ZoneInfo("Europe/Berlin")
CHICAGO = ZoneInfo("America/Chicago")


def test_bars_on_a_holiday_of_a_market_of_the_same_hours_tell_the_two_apart():
    """Xetra and London trade the same UTC hours; Xetra's bars on London's August bank holiday
    (26 August 2024) are under 1 % of the bars (1 day of 130), so London's calendar still fits,
    but its score pays for them: Xetra's (London's came first in the list, and won, before the
    penalty)."""
    days = _weekdays(date(2024, 6, 3), date(2024, 11, 29))
    ts = _session_bars(days, BERLIN, [(9, 0, 17, 30)], FIVE)
    t, iv = np.unique(ts), int(FIVE / timedelta(microseconds=1))
    london = _intraday_score(t, iv, "xlon")
    assert london is not None and london.closed == pytest.approx(1 / 130)
    assert london.score == pytest.approx(1 - 1 / 130)
    fit = fit_calendar(ts, FIVE)
    assert fit is not None and fit.calendar == "xetr" and fit.closed == 0.0


def test_a_candidate_with_over_one_percent_of_its_bars_closed_is_no_fit():
    """5-minute bars from 08:30, an hour before the NYSE's open: 12 of 90 bars a day closed
    (13 %); the extended hours' 04:00-20:00 day they span too little of: nothing fits."""
    days = _weekdays(date(2024, 1, 2), date(2024, 3, 28), US_HOLIDAYS_2024)
    early = _session_bars(days, NY, [(8, 30, 16, 0)], FIVE)
    assert fit_calendar(early, FIVE) is None


def test_a_closing_auctions_print_at_the_close_is_no_bar_in_closed_hours():
    """5-minute bars 09:30-15:55 and a 16:00 print each day: 1 bar in 79 (1.3 %) at the close,
    which made every calendar fail (24x7, forecasts at 16:05) until session 55."""
    days = _weekdays(date(2024, 1, 2), date(2024, 3, 28), US_HOLIDAYS_2024)
    ts = np.sort(np.concatenate([_us_stock(), _session_bars(days, NY, [(16, 0, 16, 1)], FIVE)]))
    fit = fit_calendar(ts, FIVE)
    assert fit is not None and fit.calendar == "xnys" and fit.closed == 0.0


def test_cbots_grains_keep_their_two_sessions():
    """19:00-07:45 and 08:30-13:20 Chicago: inside ICE Europe's 01:00-23:00 London day (83 % of
    it), whose calendar was chosen until grains were a candidate (a forecast from 13:15 then
    targeted 13:20-14:05, when grains are shut)."""
    days = _weekdays(date(2024, 1, 2), date(2024, 2, 28), {date(2024, 1, 15), date(2024, 2, 19)})
    evenings = [d - timedelta(days=1) for d in days]
    ts = np.sort(
        np.concatenate(
            [
                _session_bars(evenings, CHICAGO, [(19, 0, 23, 59)], FIVE),
                _session_bars(days, CHICAGO, [(0, 0, 7, 45), (8, 30, 13, 20)], FIVE),
            ]
        )
    )
    fit = fit_calendar(ts, FIVE)
    assert fit is not None and fit.calendar == "cme_grains"


def test_a_bare_tickers_daily_bars_of_xetras_days_are_xetras(tmp_path):
    """``BMW.csv`` (1-5 letters: a US guess) with Xetra's trading days of 2024: 7 of its 253
    bars fall on US holidays (2.8 %), never the quarter that moves intraday bars, so until
    session 55 it stayed on the NYSE's calendar (forecasts skipping Thanksgiving, targeting
    Christmas Eve). Daily bars have no hours to misread: over 1 % on US holidays moves them."""
    from foxhunt.data.read.bars import read_bars

    xetra_shut = {date(2024, 1, 1), date(2024, 3, 29), date(2024, 4, 1), date(2024, 5, 1),
                  date(2024, 12, 24), date(2024, 12, 25), date(2024, 12, 26), date(2024, 12, 31)}  # fmt: skip
    days = _weekdays(date(2024, 1, 2), date(2024, 12, 30), xetra_shut)
    path = tmp_path / "BMW.csv"
    _frame("BMW", _daily(days)).drop("symbol").write_csv(path)
    (inst,) = resolve_bars(read_bars(path)).values()
    assert (inst.calendar, inst.currency) == ("xetr", "EUR")


def test_a_bare_tickers_23_hour_days_are_a_futures_calendars():
    """``EMINI`` (a US guess) with CME Globex's Sunday-Friday 17:00-16:00 Chicago days: 72 % of
    its bars outside the NYSE's hours; a 23-hour day is a future's, not a stock exchange's."""
    from foxhunt.data.market.bars_market import bars_calendar

    chicago = ZoneInfo("America/Chicago")
    days = _weekdays(date(2024, 1, 2), date(2024, 2, 28), {date(2024, 1, 15), date(2024, 2, 19)})
    evenings = [d - timedelta(days=1) for d in days]
    ts = np.sort(
        np.concatenate(
            [
                _session_bars(evenings, chicago, [(17, 0, 23, 59)], FIVE),
                _session_bars(days, chicago, [(0, 0, 16, 0)], FIVE),
            ]
        )
    )
    series = pl.Series(ts).cast(pl.Datetime("us", "UTC"))
    assert bars_calendar("EMINI", series) == "cme_equity"


def test_bars_at_both_ends_of_a_long_session_do_not_span_it():
    """B3's index futures trade 09:00-18:25 São Paulo (12:00-21:25 UTC): across the FX week's
    17:00 New York roll their day's first and last bars sat at both ends of its session, which
    they seemed to span, and a nameless file went on ``fx_24x5`` (forecasts through the night).
    A day's span leaves out its longest hole: 9 hours 25 of 24, no fit."""
    days = _weekdays(date(2024, 3, 4), date(2024, 3, 28))
    ts = _session_bars(days, ZoneInfo("America/Sao_Paulo"), [(9, 0, 18, 25)], timedelta(minutes=1))
    assert fit_calendar(ts, timedelta(minutes=1)) is None


def test_a_lunch_break_the_calendar_keeps_is_no_hole():
    """Tokyo's 09:00-11:30 and 12:30-15:00 (2024): the hour between its two sessions is the
    calendar's own break, not a hole in the day, and the last bar ends the day exactly: the
    day is spanned whole, the score exactly 1 (two days, no holiday: the median of two spans
    is their mean, so the last day's counts)."""
    days = _weekdays(date(2024, 2, 5), date(2024, 2, 6))
    ts = _session_bars(days, TOKYO, [(9, 0, 11, 30), (12, 30, 15, 0)], FIVE)
    fit = fit_calendar(ts, FIVE)
    assert fit is not None and (fit.calendar, fit.score, fit.closed) == ("xtks", 1.0, 0.0)
