"""Names taken for a stock or a CME crypto future whose bars keep no exchange's hours but the FX
week's or every day's (``bars_market``, ``calendar_fit.round_the_clock``, ``on_calendar``).

``CABLE_1m.csv`` of the FX week, ``DOGE_1h.csv`` or ``BTC_1h.csv`` of a coin's 24/7 bars were
refused until session 56 (74-83 % of their bars in the NYSE's or CME's closed hours). Bar times
are built from the published hours (zoneinfo), never from the calendars' session arrays:
the FX week is Sunday 17:00 to Friday 17:00 New York; CME's crypto futures trade Sunday 17:00
to Friday 16:00 Chicago with an hour's pause from 16:00 each day (no CME holiday falls between
22 January and 9 February 2024).
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl
import pytest
from test_calendar_fit import FIVE, NY, _daily, _frame, _session_bars, _weekdays

from foxhunt.data.market.bars_market import bars_calendar, fitted_calendars, resolve_bars
from foxhunt.data.market.calendar_fit import closed_in, round_the_clock
from foxhunt.data.market.instrument import Instrument
from foxhunt.data.market.instruments import on_calendar
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.inspection import instrument_guesses

CHICAGO = ZoneInfo("America/Chicago")
TORONTO = ZoneInfo("America/Toronto")
HOUR = timedelta(hours=1)
ONE_DAY = timedelta(days=1)
DAYS = _weekdays(date(2024, 1, 22), date(2024, 2, 9))


def _fx_week(step: timedelta = FIVE, days: list[date] = DAYS) -> np.ndarray:
    evenings = [d - ONE_DAY for d in days]
    return np.concatenate(
        [
            _session_bars(days, NY, [(0, 0, 17, 0)], step),
            _session_bars(evenings, NY, [(17, 0, 23, 59)], step),
        ]
    )


def _cme_crypto(step: timedelta = HOUR) -> np.ndarray:
    evenings = [d - ONE_DAY for d in DAYS]
    return np.concatenate(
        [
            _session_bars(DAYS, CHICAGO, [(0, 0, 16, 0)], step),
            _session_bars(evenings, CHICAGO, [(17, 0, 23, 59)], step),
        ]
    )


def _every_hour(days: int = 21) -> np.ndarray:
    start = int(datetime(2024, 1, 22, tzinfo=UTC).timestamp() * 1e6)
    return start + np.arange(days * 24, dtype=np.int64) * 3_600_000_000


def _every_day(start: date, n: int, skip_weekday: int | None = None) -> np.ndarray:
    days = [start + timedelta(days=i) for i in range(n)]
    return _daily([d for d in days if d.weekday() != skip_weekday])


def _ts(t: np.ndarray) -> pl.Series:
    return pl.Series(t).cast(pl.Datetime("us", "UTC"))


def test_bars_through_the_weekends_fill_the_clock_and_the_fx_week_does_not():
    assert round_the_clock(_every_hour(), HOUR)
    # three FX weeks fill 18 of the 20 days from the first bar to the last (0.9), one all of
    # them: none is in the FX week's weekend
    assert not round_the_clock(_fx_week(), FIVE)
    assert not round_the_clock(_fx_week(FIVE, DAYS[:5]), FIVE)
    assert not round_the_clock(_cme_crypto(), HOUR)
    assert round_the_clock(_every_day(date(2024, 1, 1), 60), ONE_DAY)
    assert not round_the_clock(_every_day(date(2024, 1, 1), 60, skip_weekday=5), ONE_DAY)
    assert not round_the_clock(_daily(_weekdays(date(2024, 1, 1), date(2024, 3, 1))), ONE_DAY)
    assert not round_the_clock(_every_day(date(2024, 1, 1), 9), ONE_DAY)  # too few to judge
    assert not round_the_clock(_every_hour(), timedelta(days=7))


def test_a_bare_ticker_of_fx_week_bars_is_an_unknown_on_fx_24x5_with_its_prices_tick():
    bars = _frame("CABLE", _fx_week())
    assert fitted_calendars(bars) == {"CABLE": "fx_24x5"}
    got = resolve_bars(bars)["CABLE"]
    # _frame's prices step by 0.25; no stock's 0.01, no USD
    assert got == Instrument("CABLE", 0.25, 1.0, "", "unknown", "fx_24x5")
    # naive times, no --tz: a zone cannot turn a stock's hours into 24-hour days
    assert bars_calendar("CABLE", _ts(_fx_week()), naive=True) == "fx_24x5"


def test_naive_times_of_a_us_guess_move_to_no_exchange():
    """Toronto's hours over three days from Martin Luther King Day: zoned, its bars give a
    bare ticker Toronto's calendar; naive (read as UTC, no --tz), they keep the NYSE guess and
    its zone advice."""
    days = _weekdays(date(2024, 1, 15), date(2024, 1, 17))
    t = _session_bars(days, TORONTO, [(9, 30, 16, 0)], FIVE)
    assert bars_calendar("XYZ", _ts(t)) == "xtse"
    assert bars_calendar("XYZ", _ts(t), naive=True) is None


def test_a_coins_bars_give_a_bare_ticker_24x7_and_the_crypto_class(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bars = pl.concat([_frame("DOGE", _every_hour()), _frame("BTC", _every_hour())])
    assert fitted_calendars(bars) == {"BTC": "24x7", "DOGE": "24x7"}
    with caplog.at_level(logging.WARNING):
        got = resolve_bars(bars)
    assert got["DOGE"] == Instrument("DOGE", 0.25, 1.0, "", "crypto", "24x7")
    # BTC is CME's bitcoin future by name (5 BTC a contract): its bars make it the coin
    assert got["BTC"] == Instrument("BTC", 0.25, 1.0, "", "crypto", "24x7")
    said = [r.getMessage() for r in caplog.records]
    assert (
        "symbol 'BTC' is not in the instrument table: treated as crypto (tick 0.25, point value "
        "1, currency unknown, calendar 24x7, the hours and days its bars keep); pass "
        "--instruments FILE to set it"
    ) in said


def test_cme_hours_keep_the_future_and_so_do_a_contract_and_the_users_table():
    assert closed_in(_cme_crypto(), HOUR, "cme_crypto") == 0.0
    assert fitted_calendars(_frame("BTC", _cme_crypto())) == {}
    assert resolve_bars(_frame("BTC", _cme_crypto()))["BTC"].asset_class == "crypto_future"
    assert fitted_calendars(_frame("BTCH4", _every_hour())) == {}
    mine = {"BTC": Instrument("BTC", 5.0, 5.0, "USD", "crypto_future", "cme_crypto")}
    assert fitted_calendars(_frame("BTC", _every_hour()), mine) == {}
    assert resolve_bars(_frame("BTC", _every_hour()), mine)["BTC"] is mine["BTC"]


def test_daily_bars_move_a_us_guess_to_no_rule_but_a_crypto_root_to_24x7():
    """Daily bars on every weekday, US holidays too (an FX pair's), stay on the NYSE: their days
    cannot tell a pair from a stock; so do bars on every day (a stock's carried over the
    weekend, refused by the time axis), which make a crypto future's root a coin."""
    weekdays = _daily(_weekdays(date(2024, 1, 1), date(2024, 6, 28)))
    assert closed_in(weekdays, ONE_DAY, "xnys") > 0.01
    assert fitted_calendars(_frame("FX", weekdays)) == {}
    every = _every_day(date(2024, 1, 1), 90)
    assert fitted_calendars(_frame("MSFT", every)) == {}
    assert fitted_calendars(_frame("ETH", every)) == {"ETH": "24x7"}
    assert fitted_calendars(_frame("ETH", weekdays)) == {}


def test_on_calendar_reclassifies_only_stocks_and_crypto_futures_moved_to_a_rule():
    stock = Instrument("SONY", 0.01, 1.0, "USD", "stock", "xnys")
    assert on_calendar(stock, "xtks") == Instrument("SONY", 0.01, 1.0, "JPY", "stock", "xtks")
    prices = np.array([1.26998, 1.26999, 1.27066])
    assert on_calendar(stock, "fx_24x5", prices) == Instrument(
        "SONY", 1e-5, 1.0, "", "unknown", "fx_24x5"
    )
    assert on_calendar(stock, "24x7") == Instrument("SONY", 1e-8, 1.0, "", "crypto", "24x7")
    assert on_calendar(stock, "fx_24x5").tick_size == 0.01
    unknown = Instrument("PRICES", 0.5, 1.0, "", "unknown", "24x7")
    assert on_calendar(unknown, "fx_24x5") == Instrument(
        "PRICES", 0.5, 1.0, "", "unknown", "fx_24x5"
    )


def test_data_inspect_names_the_class_the_bars_gave():
    line = "BTC (1 symbol) guessed from the name: crypto, calendar 24x7, the hours and days"
    assert line in instrument_guesses([{"symbol": "BTC"}], None, {"BTC": "24x7"})[0]
    assert instrument_guesses([{"symbol": "BTC"}], None, {}) == []
    cable = instrument_guesses([{"symbol": "CABLE"}], None, {"CABLE": "fx_24x5"})[0]
    assert "guessed from the name: unknown, calendar fx_24x5" in cable


def test_a_coins_hourly_file_named_eth_is_read_not_refused(tmp_path: Path) -> None:
    t = _every_hour()
    n = t.size
    path = tmp_path / "ETH_1h.csv"
    pl.DataFrame(
        {
            "timestamp": t // 1000,
            "open": 3000.0 + np.arange(n) % 7,
            "high": 3010.0 + np.arange(n) % 7,
            "low": 2990.0 + np.arange(n) % 7,
            "close": 3001.5 + np.arange(n) % 7,
            "volume": 5.0 + np.arange(n) % 3,
        }
    ).write_csv(path)
    bars = read_bars(path)
    assert bars.height == n and bars["symbol"].unique().to_list() == ["ETH"]
    assert resolve_bars(bars)["ETH"].calendar == "24x7"


def _as_utc(t: np.ndarray, zone: ZoneInfo) -> np.ndarray:
    """Bar times ``t`` (µs UTC) written as ``zone``'s wall clock and read back as UTC."""
    return np.array(
        [
            int(datetime.fromtimestamp(x / 1e6, zone).replace(tzinfo=UTC).timestamp() * 1_000_000)
            for x in t
        ],
        dtype=np.int64,
    )


@pytest.mark.parametrize("weeks", [1, 2, 3])
@pytest.mark.parametrize("zone", ["America/New_York", "Europe/Berlin", "Asia/Tokyo"])
def test_the_fx_week_misread_in_any_zone_is_no_coins(weeks: int, zone: str) -> None:
    """The sweep's ``EURO_1h_ny.csv`` (New York's wall clock written without a zone): 1-3 weeks
    of it scored 24x7 from the first bar to the last at 0.9 or more, and a bare ticker was read
    as a coin, valid (forecasts into the weekend). Read in any zone the FX week breaks 48 hours
    every weekend, and a week of it holds no Saturday or no Sunday. New York's or Tokyo's
    clock puts hours of bars in the FX weekend (the zone advice stays); Berlin's, an hour off,
    keeps the FX week but for its first hour."""
    days = _weekdays(date(2024, 1, 22), date(2024, 1, 22) + timedelta(weeks * 7 - 3))
    wall = np.sort(_as_utc(_fx_week(HOUR, days), ZoneInfo(zone)))
    assert not round_the_clock(wall, HOUR)
    kept = {"America/New_York": None, "Europe/Berlin": "fx_24x5", "Asia/Tokyo": None}[zone]
    assert bars_calendar("EURO", _ts(wall), naive=True) == kept


def test_a_coins_weekend_alone_or_with_one_outage_fills_the_clock() -> None:
    weekend = _every_hour(2) + 5 * 86_400_000_000  # Saturday 27 and Sunday 28 January
    assert round_the_clock(weekend, HOUR)
    five_weeks = _every_hour(35)
    cut = (five_weeks < five_weeks[100]) | (five_weeks > five_weeks[100] + 40 * 3_600_000_000)
    assert round_the_clock(five_weeks[cut], HOUR)  # one 41-hour outage in five weeks
    # a break of 36 hours every week (Tuesday's 03:00 bar, then Wednesday's 15:00): no day
    # without bars, the median day whole, but a break a week is a market's, not an outage
    hour = (five_weeks // 3_600_000_000) % (7 * 24)  # hours since Thursday 00:00
    weekly = five_weeks[(hour < 5 * 24 + 4) | (hour >= 6 * 24 + 15)]
    assert not round_the_clock(weekly, HOUR)
    assert round_the_clock(five_weeks[(hour < 5 * 24 + 4) | (hour >= 6 * 24 + 14)], HOUR)  # 35 h


def test_the_edges_of_round_the_clock() -> None:
    """One outage in exactly four weeks (first bar to last) is allowed; ten daily bars are the
    fewest judged; a 24x7 score of exactly 0.9 passes (18 of 20 days, two single days missing:
    a daily bar's gap of two days is no weekend's break); hourly bars from Saturday 01:00 find
    Saturday without its midnight bar; 4-hour bars span their day to the last bar's end; a
    zero interval is none."""
    day = 86_400_000_000
    four_weeks = _every_hour(28)
    four_weeks = np.r_[four_weeks, four_weeks[0] + 28 * day]
    outage = (four_weeks < four_weeks[300]) | (four_weeks > four_weeks[300] + 40 * 3_600_000_000)
    assert four_weeks[outage][-1] - four_weeks[outage][0] == 28 * day
    assert round_the_clock(four_weeks[outage], HOUR)
    assert round_the_clock(_every_day(date(2024, 1, 1), 10), ONE_DAY)
    every = _every_day(date(2024, 1, 1), 20)
    two_missing = np.delete(every, [3, 10])  # Thursday 4 and Thursday 11 January
    assert round_the_clock(two_missing, ONE_DAY)
    saturday_on = _every_hour(14)[24 * 5 + 1 : 24 * 12]  # Saturday 01:00 to Friday 23:00
    assert round_the_clock(saturday_on, HOUR)  # Saturday found without its midnight bar
    four_hourly = _every_hour(35)[::4]
    one_day_gone = four_hourly[(four_hourly < four_hourly[60]) | (four_hourly >= four_hourly[66])]
    assert round_the_clock(one_day_gone, timedelta(hours=4))  # 34 of 35 days, spans whole
    assert not round_the_clock(_every_hour(), timedelta(0))


def test_a_week_of_fx_or_cme_hours_moves_a_bare_ticker_to_no_stock():
    """One week: ``CABLE``'s FX week on ``fx_24x5``, ``OIL``'s CME hours on ``cme_equity``
    (refused as the NYSE's until session 56: within a week ``24x7`` scored as well). Neither
    is a stock: ``unknown``, the tick of the prices."""
    week = DAYS[:5]
    cme = np.concatenate(
        [
            _session_bars(week, CHICAGO, [(0, 0, 16, 0)], FIVE),
            _session_bars([d - ONE_DAY for d in week], CHICAGO, [(17, 0, 23, 59)], FIVE),
        ]
    )
    bars = pl.concat([_frame("CABLE", _fx_week(FIVE, week)), _frame("OIL", cme)])
    assert fitted_calendars(bars) == {"CABLE": "fx_24x5", "OIL": "cme_equity"}
    got = resolve_bars(bars)
    assert got["OIL"] == Instrument("OIL", 0.25, 1.0, "", "unknown", "cme_equity")


def _days_of(calendar: str, first: date, last: date) -> list[date]:
    from foxhunt.data.market.calendar import sessions

    days = np.unique(sessions(calendar).day)
    lo, hi = (np.datetime64(d, "D").astype(np.int64) for d in (first, last))
    return [date.fromordinal(date(1970, 1, 1).toordinal() + int(d)) for d in days if lo <= d <= hi]


def test_quantiacs_futures_outside_the_us_take_the_days_their_bars_keep():
    """Quantiacs' ``F_AX`` (the DAX future) is no US future: it was put on the weekday rule's
    ``fx_24x5``, whose days hold Christmas and New Year's Day, so its forecasts targeted them.
    Its bars, which lack Xetra's holidays, now place it; weekdays alone keep ``fx_24x5``, and
    a US code (``F_ES``) keeps the NYSE's calendar by its name."""
    xetra = _days_of("xetr", date(2012, 1, 2), date(2014, 12, 31))
    assert date(2013, 12, 25) not in xetra and date(2013, 12, 23) in xetra
    fitted = bars_calendar("F_AX", _ts(_daily(xetra)))
    assert fitted in ("xetr", "eurex")
    instrument = resolve_bars(_frame("F_AX", _daily(xetra)))["F_AX"]
    assert (instrument.calendar, instrument.currency) == (fitted, "USD")  # values in USD
    every_weekday = _weekdays(date(2012, 1, 2), date(2014, 12, 31))
    assert bars_calendar("F_AX", _ts(_daily(every_weekday))) in (None, "fx_24x5")
    assert bars_calendar("F_ES", _ts(_daily(xetra))) is None  # named: the NYSE's
