"""``calendar_fit.zone_fit``: the zone in which a nameless file's naive times keep a market's
hours. Wall-clock times are built from the markets' published hours (the naive values are
what a vendor writing local time would write), never from the calendars' session arrays.

Published hours used: Xetra and Euronext Paris 09:00-17:30 Central European time (neither
shuts in February 2024); CME's equity futures Sunday 17:00 to Friday 16:00 Chicago with an
hour's pause from 16:00 (no CME holiday from 22 January to 9 February 2024); a MetaTrader
broker's server clock is New York's moved 7 hours, and its gold pauses with CME's metals from
17:00 to 18:00 New York (server 00:00-01:00).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import numpy as np
from test_calendar_fit import FIVE, _weekdays

from foxhunt.data.market.calendar_fit import zone_fit

HOUR = timedelta(hours=1)


def _wall(days: list[date], pieces: list[tuple[int, int, int, int, int]], step: timedelta):
    """Naive wall-clock µs (as if UTC) every ``step`` in each piece (h0, m0, h1, m1, day
    offset) of each day."""
    out = []
    for d in days:
        for h0, m0, h1, m1, off in pieces:
            day = d + timedelta(days=off)
            t = datetime(day.year, day.month, day.day, h0, m0, tzinfo=UTC)
            end = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(
                hours=h1, minutes=m1
            )
            while t < end:
                out.append(int(t.timestamp() * 1_000_000))
                t += step
    return np.unique(np.array(out, dtype=np.int64))


FEBRUARY = _weekdays(date(2024, 2, 5), date(2024, 2, 23))
JANUARY = _weekdays(date(2024, 1, 22), date(2024, 2, 9))


def test_equal_hours_go_to_the_earlier_candidate():
    """Frankfurt's and Paris's sessions are the same in February: the tie goes to ``xetr``,
    listed first (a later candidate must score more, not as much)."""
    t = _wall(FEBRUARY, [(9, 0, 17, 30, 0)], FIVE)
    assert zone_fit(t, FIVE) == ("xetr", "Europe/Berlin")


def test_a_later_candidate_that_scores_more_replaces_an_earlier_one():
    """Chicago's wall clock of CME's hours: read in New York they keep the FX week too (23 of
    its 24 hours), but read in Chicago CME's whole day: ``cme_equity`` wins."""
    t = _wall(JANUARY, [(17, 0, 24, 0, -1), (0, 0, 16, 0, 0)], FIVE)
    assert zone_fit(t, FIVE) == ("cme_equity", "America/Chicago")


def test_a_brokers_gold_is_read_on_cmes_hours_in_the_server_clock():
    """MetaTrader's gold, server 01:00-24:00 Monday to Friday (Sunday 18:00 to Friday 17:00 New
    York, pausing from 17:00 to 18:00): read in the server clock it keeps CME's hours, better
    than the FX week's (until session 56 only the FX week was tried in that clock)."""
    t = _wall(JANUARY, [(1, 0, 24, 0, 0)], timedelta(minutes=15))
    assert zone_fit(t, timedelta(minutes=15)) == ("cme_equity", "America/New_York+07:00")


def test_a_coins_naive_hours_across_both_clock_changes_keep_no_market():
    """Every hour from 1 March to 10 November 2024 written as naive times: New York's 02:30 of
    10 March does not exist and its 01:30 of 3 November comes twice; they are read as nothing
    and as the first, not raised, and no market keeps a coin's hours."""
    start = int(datetime(2024, 3, 1, tzinfo=UTC).timestamp() * 1_000_000)
    t = start + np.arange(255 * 24, dtype=np.int64) * 3_600_000_000
    assert zone_fit(t, HOUR) is None


def test_daily_and_zero_intervals_are_not_judged():
    """Daily bars stamped at Xetra's 09:00 open sit inside its session: intraday bars only are
    judged (a daily bar's time is a convention); a zero interval is no interval."""
    opens = _wall(FEBRUARY, [(9, 0, 9, 1, 0)], timedelta(days=1))
    assert zone_fit(opens, timedelta(days=1)) is None
    assert zone_fit(_wall(FEBRUARY, [(9, 0, 17, 30, 0)], FIVE), timedelta(0)) is None


def test_bars_off_every_grid_keep_no_market():
    """Ten-minute bars at 09:05, 09:15, ... of Xetra's session sit on neither its grid (from
    09:00) nor the clock's: no hint (half the interval would put them on one)."""
    t = _wall(FEBRUARY, [(9, 5, 17, 30, 0)], timedelta(minutes=10))
    assert zone_fit(t, timedelta(minutes=10)) is None
    assert zone_fit(t - 300_000_000, timedelta(minutes=10)) == ("xetr", "Europe/Berlin")


def test_bars_that_keep_a_calendar_as_read_name_no_zone():
    """CME's hours written in UTC (Databento's ES under an ``instrument_id``, one week: too
    short to tell CME's calendar from 24x7): as read they keep ``cme_equity`` as well as any
    zone does, so no zone is named (a broker's clock 2 hours off was named, with
    ``--force-tz``, and following it moved every bar)."""
    from zoneinfo import ZoneInfo

    from test_calendar_fit import _session_bars

    chicago = ZoneInfo("America/Chicago")
    days = _weekdays(date(2024, 1, 22), date(2024, 1, 26))
    t = _session_bars(days, chicago, [(0, 0, 16, 0)], FIVE)
    t = np.concatenate(
        [t, _session_bars([d - timedelta(days=1) for d in days], chicago, [(17, 0, 23, 59)], FIVE)]
    )
    assert zone_fit(np.sort(t), FIVE) is None
