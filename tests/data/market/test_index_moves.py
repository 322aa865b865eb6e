"""A cash index of the lists (``SPX``, ``DAX``) whose bars keep its future's or a CFD's hours is
read on them, in its own currency (``bars_market.INDEX_MOVES``, ``instruments.on_calendar``).

Until session 56 ``DAX_5m.csv`` of FDAX's hours or ``SPX_5m.csv`` of the E-mini's were refused
as 59-73 % in the cash market's closed hours. Bar times are built from the published hours
(zoneinfo), never from the calendars' session arrays: CME's equity futures trade Sunday 17:00
to Friday 16:00 Chicago with an hour's pause from 16:00, and stop at 12:00 on Presidents' Day
(19 February 2024); Eurex's index futures 01:10-22:00 Frankfurt (no Eurex holiday falls
between 5 February and 22 March 2024); a broker's index CFD through the FX week (Sunday 17:00
to Friday 17:00 New York).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl
from test_calendar_fit import FIVE, NY, _frame, _session_bars, _weekdays

from foxhunt.data.market.bars_market import bars_calendar, fitted_calendars, resolve_bars
from foxhunt.data.market.instrument import Instrument
from foxhunt.data.market.instruments import on_calendar

CHICAGO = ZoneInfo("America/Chicago")
BERLIN = ZoneInfo("Europe/Berlin")
ONE_DAY = timedelta(days=1)
DAYS = _weekdays(date(2024, 2, 5), date(2024, 3, 22))


def _globex() -> np.ndarray:
    t = np.concatenate(
        [
            _session_bars(DAYS, CHICAGO, [(0, 0, 16, 0)], FIVE),
            _session_bars([d - ONE_DAY for d in DAYS], CHICAGO, [(17, 0, 23, 59)], FIVE),
        ]
    )
    stop = datetime(2024, 2, 19, 12, tzinfo=CHICAGO).timestamp() * 1e6
    evening = datetime(2024, 2, 19, 17, tzinfo=CHICAGO).timestamp() * 1e6
    return np.sort(t[(t < stop) | (t >= evening)])


def _fx_week() -> np.ndarray:
    return np.concatenate(
        [
            _session_bars(DAYS, NY, [(0, 0, 17, 0)], FIVE),
            _session_bars([d - ONE_DAY for d in DAYS], NY, [(17, 0, 23, 59)], FIVE),
        ]
    )


def test_an_index_of_futures_or_cfd_hours_is_read_on_them_in_its_currency():
    bars = pl.concat(
        [
            _frame("SPX", _globex()),
            _frame("DAX", _session_bars(DAYS, BERLIN, [(1, 10, 22, 0)], FIVE)),
            _frame("NDX", _fx_week()),
        ]
    )
    assert fitted_calendars(bars) == {"DAX": "eurex", "NDX": "fx_24x5", "SPX": "cme_equity"}
    got = resolve_bars(bars)
    assert (got["SPX"].asset_class, got["SPX"].calendar) == ("cash_index", "cme_equity")
    assert (got["DAX"].calendar, got["DAX"].currency) == ("eurex", "EUR")


def test_an_index_of_its_cash_hours_or_of_cash_hours_read_off_keeps_its_exchange():
    cash = _session_bars(DAYS, NY, [(9, 30, 16, 0)], FIVE)
    assert fitted_calendars(_frame("SPX", cash)) == {}
    # five hours off (New York's wall clock read as UTC): 6.5 of the 23 hours, no future's day
    off = cash + 5 * 3_600_000_000
    assert bars_calendar("SPX", pl.Series(off).cast(pl.Datetime("us", "UTC"))) is None


def test_an_index_moves_to_no_other_exchanges_cash_hours():
    """``SPX`` with Tokyo's session (09:00-11:30, 12:30-15:00): a stock's hours of another
    market are no future's or CFD's of the index, whatever a nameless file would take."""
    shut = {date(2024, 2, 12), date(2024, 2, 23), date(2024, 3, 20)}  # Tokyo's holidays
    days = _weekdays(date(2024, 2, 5), date(2024, 3, 22), shut)
    tokyo = _session_bars(days, ZoneInfo("Asia/Tokyo"), [(9, 0, 11, 30), (12, 30, 15, 0)], FIVE)
    assert fitted_calendars(_frame("PRICES", tokyo)) == {"PRICES": "xtks"}
    assert fitted_calendars(_frame("SPX", tokyo)) == {}


def test_a_users_table_and_a_stock_are_not_moved_to_a_futures_calendar():
    mine = {"SPX": Instrument("SPX", 0.01, 1.0, "USD", "cash_index", "xnys")}
    assert fitted_calendars(_frame("SPX", _globex()), mine) == {}
    # SPY, an ETF of the lists, moves only to the extended hours: a day of 23 hours is no ETF's
    assert fitted_calendars(_frame("SPY", _globex())) == {}


def test_on_calendar_keeps_an_index_currency_and_gives_the_extended_hours_dollars():
    spx = Instrument("SPX", 0.01, 1.0, "USD", "cash_index", "xnys")
    assert on_calendar(spx, "cme_equity") == Instrument(
        "SPX", 0.01, 1.0, "USD", "cash_index", "cme_equity"
    )
    stock = Instrument("EMINI", 0.01, 1.0, "USD", "stock", "xnys")
    assert on_calendar(stock, "cme_equity").currency == ""
    assert on_calendar(stock, "xnys_ext").currency == "USD"


def test_a_single_week_of_futures_hours_moves_the_index():
    """The sweep's one-week files (yfinance keeps a week of 1-minute bars): within a week no
    weekend lacks bars, so ``24x7`` scores about as well as the futures' calendar, and the
    margin a nameless file needs refused ``SPX_1wk_5m.csv`` and ``DAX_1wk_5m.csv`` until
    session 56; for a name placed elsewhere ``24x7`` is no choice, and no margin applies."""
    week = DAYS[5:10]  # Monday 12 to Friday 16 February
    globex = np.concatenate(
        [
            _session_bars(week, CHICAGO, [(0, 0, 16, 0)], FIVE),
            _session_bars([d - ONE_DAY for d in week], CHICAGO, [(17, 0, 23, 59)], FIVE),
        ]
    )
    monday_to_thursday = _session_bars(week[:4], BERLIN, [(1, 10, 22, 0)], FIVE)
    bars = pl.concat([_frame("SPX", globex), _frame("DAX", monday_to_thursday)])
    assert fitted_calendars(bars) == {"DAX": "eurex", "SPX": "cme_equity"}
    # a nameless file of the same bars keeps 24x7: its bars cannot tell
    assert fitted_calendars(_frame("PRICES", globex)) == {}


def test_a_week_with_a_day_missing_still_moves_without_a_margin():
    """One FX week without its Wednesday (a gap in the file): ``fx_24x5`` holds bars on 4 of
    its 5 days (0.8), ``24x7`` on 5 of 6 from the first bar to the last (0.83). A name placed
    elsewhere moves on its own fit, not by beating ``24x7``: the CFD index ``NDX`` and the bare
    ticker ``CABLE`` go to the FX week."""
    week = [d for d in DAYS[5:10] if d.weekday() != 2]
    fx = np.concatenate(
        [
            _session_bars(week, NY, [(0, 0, 17, 0)], FIVE),
            _session_bars([d - ONE_DAY for d in week], NY, [(17, 0, 23, 59)], FIVE),
        ]
    )
    bars = pl.concat([_frame("NDX", fx), _frame("CABLE", fx)])
    assert fitted_calendars(bars) == {"CABLE": "fx_24x5", "NDX": "fx_24x5"}


def test_an_ftse_future_of_ices_hours_is_read_on_them():
    """ICE Futures Europe's FTSE 100 future trades 01:00-21:00 London on the LSE's days: until
    session 56 ``FTSE_5m.csv`` of those hours went on ``eurex`` (00:10-21:00 London), and a
    forecast from Wednesday 20:55 targeted Thursday 00:10-00:55, before the open (the LSE
    shuts on no day from 5 February to 22 March 2024)."""
    london = ZoneInfo("Europe/London")
    bars = _frame("FTSE", _session_bars(DAYS, london, [(1, 0, 21, 0)], FIVE))
    assert fitted_calendars(bars) == {"FTSE": "ice_europe_index"}
    assert resolve_bars(bars)["FTSE"].currency == "GBP"
