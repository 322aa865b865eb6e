"""``foxhunt data inspect`` (data/read/inspection.py) at the edges its mutation run left
untested: the duration format, the zone search's winner and its tie rule, every closed-hours
warning word for word (daily bars, zoned and naive timestamps, the 5 % and "half as many"
boundaries, the calendar the zone search uses, the zone of the file a symbol came from), the
summary of one bar, two bars, gaps off the bar grid and the first gap, 20-hour bars, each
symbol's own calendar and the user's instrument table, the instrument guess lines (six names
shown, the singular), and the report's fields (path, files, guesses, the ``--bar-minutes``
line and its error, empty rows dropped, outliers refused by default, odd times kept only with
``--allow-odd-times``, the features minimum and its boundary).

Frames and files are built inside the tests (never at import: mutmut's forked workers hang
on it).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.market.instrument import Instrument
from foxhunt.data.read.bars import LoadedBars
from foxhunt.data.read.inspection import (
    closed_hours_warning,
    fitting_zones,
    inspect_report,
    instrument_guesses,
    summarize,
)
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.sources.demo import demo_bars

MIN = timedelta(minutes=1)
HOUR = timedelta(hours=1)
TRIED = (
    "no other zone fits its calendar's hours better (tried UTC, America/Chicago, "
    "America/New_York, Europe/London, Europe/Berlin, Asia/Tokyo)"
)
ZONED = "(a market with other hours, or timestamps in the wrong zone)"
DAILY_WHY = (
    "fall on days the calendar does not trade (a market with other days, or dates shifted by "
    "a zone)"
)
GUESSED = "--instruments FILE sets it"
ODD = "--allow-odd-times"


def _t(day: int, hour: int = 0, minute: int = 0) -> datetime:
    """A time in January 2024, UTC (Monday the 8th to Sunday the 14th is a plain week)."""
    return datetime(2024, 1, day, hour, minute, tzinfo=UTC)


def _every(start: datetime, n: int, step: timedelta = 5 * MIN) -> list[datetime]:
    return [start + i * step for i in range(n)]


def _series(times: list[datetime]) -> pl.Series:
    return pl.Series("ts", times, dtype=pl.Datetime("us", "UTC"))


def _loaded(
    series: dict[str, list[datetime]],
    file_of: dict[str, int] | None = None,
    naive: tuple[bool, ...] = (),
    zones: tuple[str, ...] = (),
) -> LoadedBars:
    """Bars as load_bars leaves them: ``series`` per symbol (UTC), each symbol's rows from file
    ``file_of[symbol]`` (file 0 by default) of files a.csv, b.csv, ..."""
    file_of = file_of or {}
    rows = [(t, s, file_of.get(s, 0)) for s, times in series.items() for t in times]
    frame = pl.DataFrame(
        {
            "ts": [t for t, _, _ in rows],
            "symbol": [s for _, s, _ in rows],
            "__file": [f for _, _, f in rows],
        },
        schema={"ts": pl.Datetime("us", "UTC"), "symbol": pl.String, "__file": pl.Int64},
    )
    files = tuple(Path(f"{chr(ord('a') + i)}.csv") for i in range(max(len(naive), 1)))
    return LoadedBars(
        frame=frame,
        files=files,
        spellings=tuple({} for _ in files),
        naive=naive,
        zones=zones,
    )


def _open_6_to_20(ts: pl.Expr) -> pl.Expr:
    """A market open 06:00-20:00 UTC every day: closed before 06:00 and from 20:00."""
    hour = ts.dt.hour()
    return (hour < 6) | (hour >= 20)


def _write(path: Path, series: dict[str, list[datetime]], price: float = 100.0) -> Path:
    """Flat, valid bars (one price, volume 1) with zoned timestamps, as parquet."""
    times = [(t, s) for s, ts in series.items() for t in ts]
    n = len(times)
    pl.DataFrame(
        {
            "ts": [t for t, _ in times],
            "symbol": [s for _, s in times],
            "open": [price] * n,
            "high": [price] * n,
            "low": [price] * n,
            "close": [price] * n,
            "volume": [1] * n,
        },
        schema_overrides={"ts": pl.Datetime("us", "UTC")},
    ).write_parquet(path)
    return path


def _stock_table(tmp_path: Path, symbol: str) -> Path:
    """An instrument table making ``symbol`` a NYSE stock (calendar xnys)."""
    path = tmp_path / "instruments.csv"
    path.write_text(
        "root,tick_size,point_value,currency,asset_class,calendar\n"
        f"{symbol},0.01,1,USD,stock,xnys\n"
    )
    return path


# --- fitting_zones --------------------------------------------------------------------------


def test_the_zone_read_in_comes_first_when_it_fits_as_well_as_any() -> None:
    """Wall-clock Monday 10:00-12:00 read in UTC is open Globex time; read in Chicago
    (16:00-18:00 UTC) too: 0 closed either way, and the zone read in wins the tie."""
    ts = _series(_every(_t(8, 10), 3, HOUR))
    zones, closed = fitting_zones(ts, "UTC")
    assert (zones[0], closed) == ("UTC", 0)


def test_the_zones_with_fewest_closed_bars_come_in_order() -> None:
    """Wall-clock 01:00, 02:00, 14:00, 15:00 read in Chicago (07:00 ... 21:00 UTC); open
    06:00-20:00 UTC: read in Chicago or UTC, London, Berlin 2 closed; New York (06:00, 07:00,
    19:00, 20:00 UTC) and Tokyo (05:00 ... ) 1 closed: New York, the first of them."""
    ts = _series([_t(9, 7), _t(9, 8), _t(9, 20), _t(9, 21)])
    zones, closed = fitting_zones(ts, "America/Chicago", _open_6_to_20)
    assert (zones[0], closed) == ("America/New_York", 1)


# --- closed_hours_warning -------------------------------------------------------------------


def test_no_warning_at_exactly_5_percent_of_the_bars_closed() -> None:
    ts = _series(_every(_t(9, 10), 20))
    s = {"closed_time_bars": 1, "bars": 20}
    assert closed_hours_warning(s, False, "UTC", _open_6_to_20, ts) is None
    s = {"closed_time_bars": 2, "bars": 20}
    assert closed_hours_warning(s, False, "UTC", _open_6_to_20, ts) == (
        f"2 of 20 bars (10%) fall in closed hours {ZONED}"
    )


def test_the_warning_counts_with_thousands_separators_and_is_not_daily_by_default() -> None:
    ts = _series(_every(_t(9, 10), 3))
    s = {"closed_time_bars": 1234, "bars": 5678}
    assert closed_hours_warning(s, False, "UTC", _open_6_to_20, ts) == (
        f"1,234 of 5,678 bars (22%) fall in closed hours {ZONED}"
    )


def test_one_bar_in_closed_hours_is_100_percent() -> None:
    ts = _series([_t(13, 12)])
    s = {"closed_time_bars": 1, "bars": 1}
    assert closed_hours_warning(s, False, "UTC", _open_6_to_20, ts) == (
        f"1 of 1 bars (100%) fall in closed hours {ZONED}"
    )


def test_daily_bars_are_warned_about_days_not_hours() -> None:
    ts = _series(_every(_t(8), 7, timedelta(days=1)))
    s = {"closed_time_bars": 2, "bars": 7}
    assert closed_hours_warning(s, True, "UTC", _open_6_to_20, ts, daily=True) == (
        f"2 of 7 daily bars (29%) {DAILY_WHY}"
    )


def test_a_zone_with_half_the_closed_bars_is_named_using_the_calendar_given() -> None:
    """Naive 01:00, 02:00, 14:00, 15:00 read as UTC: 2 of 4 closed in a market open
    06:00-20:00 UTC; read in New York (06:00, 07:00, 19:00, 20:00 UTC) 1 closed, exactly half:
    named. (On Globex none of them is closed: no zone would be named.)"""
    ts = _series([_t(9, 1), _t(9, 2), _t(9, 14), _t(9, 15)])
    s = {"closed_time_bars": 2, "bars": 4}
    assert closed_hours_warning(s, True, "UTC", _open_6_to_20, ts) == (
        "2 of 4 bars (50%) fall in closed hours; the timestamps fit America/New_York and "
        "Asia/Tokyo alike (1 closed; the bars cannot tell them apart): pass the market's zone, "
        "--tz America/New_York or --tz Asia/Tokyo"
    )  # four bars a day apart fit Tokyo as well (until session 53 New York alone was named)


def test_round_the_clock_bars_fit_no_other_zone() -> None:
    """One bar every hour of a day: every zone puts the same 10 (20:00-05:00) in closed
    hours, so the zone read in stays and the zones tried are listed."""
    ts = _series(_every(_t(9), 24, HOUR))
    s = {"closed_time_bars": 10, "bars": 24}
    assert closed_hours_warning(s, True, "UTC", _open_6_to_20, ts) == (
        f"10 of 24 bars (42%) fall in closed hours; {TRIED}"
    )


# --- summarize ------------------------------------------------------------------------------


def test_one_bar_has_no_interval_and_no_gaps() -> None:
    (s,) = summarize(_loaded({"ES": [_t(9, 15)]}))
    assert s == {
        "symbol": "ES",
        "bars": 1,
        "first": "2024-01-09T15:00:00+00:00",
        "last": "2024-01-09T15:00:00+00:00",
        "interval": None,
        "sessions": 1,
        "session_breaks": 0,
        "intra_session_gaps": 0,
        "largest_gap": None,
        "missing_bars": 0,
        "missing_days": 0,
        "first_missing_day": None,
        "longest_missing_run": None,
        "closed_time_bars": 0,
        "daily": False,
        "calendar": "cme_equity",
        "closed_hours_warning": None,
    }


def test_one_bar_on_a_saturday_is_all_the_bars_in_closed_hours() -> None:
    (s,) = summarize(_loaded({"ES": [_t(13, 15)]}))
    assert (s["bars"], s["closed_time_bars"]) == (1, 1)
    assert s["closed_hours_warning"] == f"1 of 1 bars (100%) fall in closed hours {ZONED}"


def test_a_trading_day_without_a_bar_is_counted_and_named() -> None:
    """A vendor's lost day showed as one more session break (missing bars: 0)."""
    days = [8, 9, 11, 12, 15, 16]  # January 2024: the 10th lost; the 13th-14th a weekend
    (s,) = summarize(_loaded({"ES": [_t(d, 15) for d in days]}))
    assert (s["missing_days"], s["first_missing_day"]) == (1, "2024-01-10")
    (s,) = summarize(_loaded({"ES": [_t(d, 15) for d in (9, 10)]}))
    assert (s["missing_days"], s["first_missing_day"]) == (0, None)


def test_the_longest_run_of_lost_trading_days_is_named_and_a_week_of_them_warned(
    tmp_path: Path,
) -> None:
    """Days the calendar trades without a bar, in a row: a 4-day hole is counted, a 5-day
    one (a week a vendor lost) is a warning naming its first and last day."""
    weekdays = [d for d in range(2, 32) if datetime(2024, 1, d).weekday() < 5]  # CME: MLK too
    four = [d for d in weekdays if not 16 <= d <= 19]
    (s,) = summarize(_loaded({"ES": [_t(d, 15) for d in four]}))
    assert s["longest_missing_run"] == {"days": 4, "first": "2024-01-16", "last": "2024-01-19"}
    assert s["missing_days"] == 4
    r = inspect_report(_write(tmp_path / "four.parquet", {"ES": [_t(d, 15) for d in four]}))
    assert not any("in a row" in w for w in r["warnings"])

    five = [d for d in weekdays if not 16 <= d <= 22]  # the 16th-19th and the 22nd
    path = _write(tmp_path / "five.parquet", {"ES": [_t(d, 15) for d in five]})
    r = inspect_report(path)
    assert r["verdict"] == "suspicious"
    assert (
        "ES: no bars on 5 trading days in a row, 2024-01-16 to 2024-01-22 (calendar cme_equity)"
        in " ".join(r["warnings"])
    )
    gaps = [d for d in weekdays if d not in (9, 16, 17)]  # two holes: the longer is named
    (s,) = summarize(_loaded({"ES": [_t(d, 15) for d in gaps]}))
    assert s["longest_missing_run"] == {"days": 2, "first": "2024-01-16", "last": "2024-01-17"}
    assert (s["missing_days"], s["first_missing_day"]) == (3, "2024-01-09")


def test_two_bars_have_an_interval() -> None:
    (s,) = summarize(_loaded({"ES": [_t(9, 15), _t(9, 15, 5)]}))
    assert (s["interval"], s["last"], s["missing_bars"]) == ("5min", "2024-01-09T15:05:00+00:00", 0)


def test_gaps_count_whole_missing_bars_the_first_gap_included() -> None:
    """5-minute ES bars on Tuesday (08:00-08:57 CT, open) with gaps of 15 (the first one), 13
    and 9 minutes: 2, 1 and 0 whole bars missing."""
    minutes = [0, 15, 20, 25, 38, 43, 52, 57]
    (s,) = summarize(_loaded({"ES": [_t(9, 14, m) for m in minutes]}))
    assert s == {
        "symbol": "ES",
        "bars": 8,
        "first": "2024-01-09T14:00:00+00:00",
        "last": "2024-01-09T14:57:00+00:00",
        "interval": "5min",
        "sessions": 1,
        "session_breaks": 0,
        "intra_session_gaps": 3,
        "largest_gap": "15min",
        "missing_bars": 3,
        "missing_days": 0,
        "first_missing_day": None,
        "longest_missing_run": None,
        "closed_time_bars": 0,
        "daily": False,
        "calendar": "cme_equity",
        "closed_hours_warning": None,
    }


def test_bars_20_hours_apart_are_daily() -> None:
    """FOO1 (unknown: the 24/7 calendar, days in UTC) every 20 h from Monday 00:00."""
    (s,) = summarize(_loaded({"FOO1": _every(_t(8), 5, 20 * HOUR)}))
    assert (s["interval"], s["daily"], s["calendar"]) == ("20h", True, "24x7")
    assert (s["sessions"], s["session_breaks"], s["intra_session_gaps"]) == (4, 3, 0)
    assert (s["closed_time_bars"], s["closed_hours_warning"]) == (0, None)


def test_daily_bars_on_a_weekend_get_the_daily_warning() -> None:
    """ES daily bars at 00:00 UTC Monday to Sunday: Saturday's and Sunday's (Friday and Saturday
    18:00 CT, after the 17:00 roll) are days CME does not trade."""
    (s,) = summarize(_loaded({"ES": _every(_t(8), 7, timedelta(days=1))}))
    assert (s["interval"], s["daily"], s["sessions"], s["session_breaks"]) == ("1d", True, 7, 6)
    assert s["closed_time_bars"] == 2
    assert s["closed_hours_warning"] == f"2 of 7 daily bars (29%) {DAILY_WHY}"


def test_sessions_follow_the_symbols_own_calendar() -> None:
    """FOO1 hourly from Tuesday 23:30 UTC: on its 24/7 calendar (days in UTC) two sessions;
    the user's table makes it a NYSE stock: one trading day (Wednesday, from the 17:00 New
    York roll) and every bar at night, in closed hours."""
    bars = {"FOO1": _every(_t(9, 23, 30), 3, HOUR)}
    (s,) = summarize(_loaded(bars))
    assert (s["calendar"], s["sessions"], s["session_breaks"]) == ("24x7", 2, 1)
    assert (s["closed_time_bars"], s["closed_hours_warning"]) == (0, None)
    table = {"FOO1": Instrument("FOO1", 0.01, 1.0, "USD", "stock", "xnys")}
    (s,) = summarize(_loaded(bars), instruments=table)
    assert (s["calendar"], s["sessions"], s["session_breaks"]) == ("xnys", 1, 0)
    assert s["closed_time_bars"] == 3
    assert s["closed_hours_warning"] == f"3 of 3 bars (100%) fall in closed hours {ZONED}"


def test_the_zone_search_starts_from_the_zone_of_the_symbols_own_file() -> None:
    """FOO1's rows are in the second file, whose naive times were read in Chicago: wall-clock
    01:00, 02:00, 14:00, 15:00 (07:00 ... 21:00 UTC, 2 closed in a market open 06:00-20:00
    UTC); read in New York they put 1 bar in closed hours: named. (Read from UTC, the first
    file's zone, Berlin would be.)"""
    loaded = _loaded(
        {
            "BAR1": _every(_t(9, 10), 3, HOUR),
            "FOO1": [_t(9, 7), _t(9, 8), _t(9, 20), _t(9, 21)],
        },
        file_of={"FOO1": 1},
        naive=(True, True),
        zones=("UTC", "America/Chicago"),
    )
    bar1, foo1 = summarize(loaded, closed=_open_6_to_20)
    assert (bar1["symbol"], bar1["closed_time_bars"], bar1["closed_hours_warning"]) == (
        "BAR1",
        0,
        None,
    )
    assert (foo1["symbol"], foo1["closed_time_bars"]) == ("FOO1", 2)
    assert foo1["closed_hours_warning"] == (
        "2 of 4 bars (50%) fall in closed hours; the timestamps fit America/New_York and "
        "Asia/Tokyo alike (1 closed; the bars cannot tell them apart): pass the market's zone, "
        "--tz America/New_York or --tz Asia/Tokyo"
    )


# --- instrument_guesses ---------------------------------------------------------------------


def _symbols(*names: str) -> list[dict[str, str]]:
    return [{"symbol": n} for n in names]


def test_one_guessed_symbol_is_singular() -> None:
    assert instrument_guesses(_symbols("ES", "AAPL"), None) == [
        f"instrument of AAPL (1 symbol) guessed from the name: stock, calendar xnys; {GUESSED}"
    ]


def test_six_guessed_symbols_are_all_shown() -> None:
    names = [f"FOO{i}" for i in range(1, 7)]
    assert instrument_guesses(_symbols(*names), None) == [
        "instrument of FOO1, FOO2, FOO3, FOO4, FOO5, FOO6 (6 symbols) guessed from the name: "
        f"unknown, calendar 24x7; {GUESSED}"
    ]


def test_seven_guessed_symbols_show_the_first_six() -> None:
    names = [f"FOO{i}" for i in range(1, 8)]
    assert instrument_guesses(_symbols(*names), None) == [
        "instrument of FOO1, FOO2, FOO3, FOO4, FOO5, FOO6, ... (7 symbols) guessed from the "
        f"name: unknown, calendar 24x7; {GUESSED}"
    ]


def test_symbols_in_the_users_table_are_not_guessed() -> None:
    table = {"FOO1": Instrument("FOO1", 0.01, 1.0, "USD", "stock", "xnys")}
    assert instrument_guesses(_symbols("FOO1", "FOO2", "FOO3"), table) == [
        f"instrument of FOO2, FOO3 (2 symbols) guessed from the name: unknown, calendar 24x7; "
        f"{GUESSED}"
    ]


# --- inspect_report -------------------------------------------------------------------------


def test_report_of_a_valid_file_and_the_features_minimum(tmp_path: Path) -> None:
    """210 bars are too few for features (warm-up 200 + horizon 10 + 1 = 211 needed)."""
    path = tmp_path / "bars.parquet"
    pl.concat(
        [demo_bars(210, seed=0, symbol="ES"), demo_bars(211, seed=1, symbol="NQ")]
    ).write_parquet(path)
    r = inspect_report(path)
    assert {k: v for k, v in r.items() if k != "symbols"} == {
        "path": str(path),
        "files": [str(path)],
        "verdict": "valid",
        "valid": True,
        "readable": True,
        "error": None,
        "time_axis": [],
        "warnings": [],
        "guesses": [],
        "features_min_bars": 211,
        "too_short_for_features": ["ES"],
        # the presets' defaults, as training counts them (test_pipeline)
        "training_min_bars": {"demo": 574, "tft-225": 730, "fast": 436},
        "too_short_to_train": {"demo": ["ES", "NQ"], "tft-225": ["ES", "NQ"], "fast": ["ES", "NQ"]},
    }
    assert [(s["symbol"], s["bars"]) for s in r["symbols"]] == [("ES", 210), ("NQ", 211)]


def test_rows_without_prices_are_dropped_even_with_a_time(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A folder with one file whose fourth row has a time but no prices (a vendor's 'null'
    row): not a bar, dropped with a warning naming the file; the bar is missing."""
    folder = tmp_path / "bars"
    folder.mkdir()
    csv = folder / "es.csv"
    rows = [f"2024-01-09 14:{m:02d}:00+00:00,ES,4800,4801,4799,4800,10" for m in (0, 5, 10, 20)]
    rows.insert(3, "2024-01-09 14:15:00+00:00,ES,,,,,")
    csv.write_text("ts,symbol,open,high,low,close,volume\n" + "\n".join(rows) + "\n")
    with caplog.at_level(logging.WARNING):
        r = inspect_report(folder)
    assert (r["verdict"], r["files"], r["error"]) == ("valid", [str(csv)], None)
    (s,) = r["symbols"]
    assert (s["bars"], s["last"], s["intra_session_gaps"], s["missing_bars"]) == (
        4,
        "2024-01-09T14:20:00+00:00",
        1,
        1,
    )
    assert (
        f"1 rows of {csv} hold no value (blank lines, 'null' rows, a footer, the header again; first: row 3): not "
        "bars, dropped"
    ) in caplog.messages


def test_outliers_are_refused_unless_allowed(tmp_path: Path) -> None:
    prices = [1000.0 if i == 10 else 100.0 for i in range(20)]
    path = tmp_path / "es.parquet"
    t = _every(_t(9, 14), 20)
    pl.DataFrame(
        {
            "ts": t,
            "symbol": ["ES"] * 20,
            "open": prices,
            "high": prices,
            "low": prices,
            "close": prices,
            "volume": [1] * 20,
        }
    ).write_parquet(path)
    r = inspect_report(path)
    assert (r["verdict"], r["readable"]) == ("invalid", False)
    assert r["error"].startswith(
        f"{path}: symbol 'ES', column 'close', row 10 (2024-01-09 14:50:00+00:00): close 1000 "
        "after a close of 100"
    )
    assert r["error"].endswith("; --allow-outliers keeps it")
    r = inspect_report(path, allow_outliers=True)  # kept: readable, not valid
    assert (r["verdict"], r["error"], r["readable"]) == ("suspicious", None, True)
    assert r["warnings"] == [
        "ES: kept 1 implausible bar (--allow-outliers; first: 2024-01-09 14:50:00+00:00): a "
        "level shift counts once, where it starts"
    ]


def test_the_users_table_sets_the_calendar_of_summary_time_axis_and_guesses(
    tmp_path: Path,
) -> None:
    """FOO1's 5-minute bars 14:00-15:25 UTC on a Tuesday: on its guessed 24/7 calendar all
    open; as a NYSE stock (the user's table) the 6 before the 14:30 UTC open are closed: 33 %,
    above the time axis's 25 %, refused; the summary warns, and nothing is guessed."""
    path = _write(tmp_path / "foo.parquet", {"FOO1": _every(_t(9, 14), 18)})
    r = inspect_report(path)
    assert (r["verdict"], r["error"], r["time_axis"], r["warnings"]) == ("valid", None, [], [])
    assert r["guesses"] == [
        f"instrument of FOO1 (1 symbol) guessed from the name: unknown, calendar 24x7; {GUESSED}"
    ]
    assert (r["symbols"][0]["calendar"], r["symbols"][0]["closed_time_bars"]) == ("24x7", 0)

    table = _stock_table(tmp_path, "FOO1")
    problem = (  # 09:00-09:30 New York: pre-market bars, named as such
        f"{path}: symbol 'FOO1': 33% of the bars fall in the closed hours of calendar xnys, "
        "all of them in the pre- and post-market hours (04:00-20:00 New York): a file with "
        "extended-hours bars, which the calendar's 09:30-16:00 session does not hold; "
        f"{ODD} keeps them, or drop them before reading"
    )
    warning = f"FOO1: 6 of 18 bars (33%) fall in closed hours {ZONED}"
    r = inspect_report(path, instruments=table)
    assert (r["verdict"], r["readable"], r["error"]) == ("invalid", False, problem)
    assert (r["time_axis"], r["warnings"], r["guesses"]) == ([problem], [warning], [])
    assert (r["symbols"][0]["calendar"], r["symbols"][0]["closed_time_bars"]) == ("xnys", 6)

    r = inspect_report(path, instruments=table, options=ReadOptions(allow_odd_times=True))
    assert (r["verdict"], r["readable"], r["error"]) == ("suspicious", True, None)
    assert (r["time_axis"], r["warnings"]) == ([problem], [f"kept ({ODD}): {problem}", warning])


def test_bar_minutes_buckets_follow_the_users_calendar(tmp_path: Path) -> None:
    """FOO1's 12 five-minute bars 14:30-15:25 UTC: a NYSE stock's hours run from its 09:30 New
    York (14:30 UTC) open, one 60-minute bar; on the guessed 24/7 calendar hours run from
    midnight UTC: 14:00 and 15:00, two."""
    path = _write(tmp_path / "foo.parquet", {"FOO1": _every(_t(9, 14, 30), 12)})
    options = ReadOptions(bar_minutes=60)
    after = "60-minute bars (the table above is of the bars as found)"
    r = inspect_report(path, instruments=_stock_table(tmp_path, "FOO1"), options=options)
    assert r["verdict"] == "valid"
    assert r["guesses"] == [f"--bar-minutes 60: 12 bars become 1 {after}"]
    r = inspect_report(path, options=options)
    assert r["guesses"] == [
        f"instrument of FOO1 (1 symbol) guessed from the name: unknown, calendar 24x7; {GUESSED}",
        f"--bar-minutes 60: 12 bars become 2 {after}",
    ]


def test_bar_minutes_that_the_bars_do_not_divide_name_the_path(tmp_path: Path) -> None:
    path = _write(tmp_path / "es.parquet", {"ES": _every(_t(9, 14), 12)}, price=4800.0)
    r = inspect_report(path, options=ReadOptions(bar_minutes=7))
    assert (r["verdict"], r["guesses"]) == ("invalid", [])
    assert r["error"] == (
        f"{path}: symbol 'ES' has bars 0:05:00 apart; --bar-minutes 7 needs bars that divide K "
        "minutes (a multiple of the bars' interval)"
    )


def _stock_hours_in_utc(ts: pl.Expr) -> pl.Expr:
    """A market open 14:30-21:00 UTC (New York's stock hours in winter)."""
    minute = ts.dt.hour().cast(pl.Int32) * 60 + ts.dt.minute().cast(pl.Int32)
    return (minute < 14 * 60 + 30) | (minute >= 21 * 60)


def test_zones_that_fit_alike_are_all_named() -> None:
    """Naive 10:00-14:00 read as UTC: all closed; read in New York (15:00-19:00 UTC) or in
    Chicago (16:00-20:00 UTC) none. ``data inspect`` named the first of the two (Chicago, an
    hour off for a New York stock) until session 53."""
    ts = _series(_every(_t(9, 10), 5, HOUR))
    assert fitting_zones(ts, "UTC", _stock_hours_in_utc) == (
        ["America/Chicago", "America/New_York"],
        0,
    )
    s = {"closed_time_bars": 5, "bars": 5}
    assert closed_hours_warning(s, True, "UTC", _stock_hours_in_utc, ts) == (
        "5 of 5 bars (100%) fall in closed hours; the timestamps fit America/Chicago and "
        "America/New_York alike (0 closed; the bars cannot tell them apart): pass the market's "
        "zone, --tz America/Chicago or --tz America/New_York"
    )


def test_the_markets_own_zone_is_tried_first(tmp_path: Path) -> None:
    """Hong Kong's naive local 5-minute bars: the warning named Asia/Tokyo (an hour off; Hong
    Kong is not among the city zones) where the refusal named Asia/Hong_Kong, until session 54."""
    from foxhunt.data.read.inspection import inspect_report

    rows = "".join(
        f"2024-01-{d} {h:02d}:{m:02d}:00,300.0,301.0,299.0,300.5,1000\n"
        for d in (10, 11)
        for h, m in [(h, m) for h in (9, 10, 11, 13, 14, 15) for m in range(0, 60, 5)]
        if (h, m) >= (9, 30) and not (h == 11 and m >= 55) and h != 12
    )
    path = tmp_path / "0700.HK.csv"
    path.write_text("Datetime,Open,High,Low,Close,Volume\n" + rows)
    report = inspect_report(path)
    (s,) = report["symbols"]
    assert s["closed_hours_warning"].endswith(
        "the timestamps fit Asia/Hong_Kong (0 closed): pass --tz Asia/Hong_Kong"
    )


def test_a_lunch_break_is_no_gap_and_a_hole_still_is(tmp_path: Path) -> None:
    """Tokyo's 11:30-12:30 lunch: a complete 5-minute file was reported with a gap a day
    (61 gaps, 732 missing bars over a quarter) until session 54; a bar missing at 10:00 still
    counts."""
    from foxhunt.data.read.inspection import inspect_report

    def day(d: str, skip: tuple[int, int] | None = None) -> str:
        slots = [(h, m) for h in range(9, 15) for m in range(0, 60, 5)]
        slots = [s for s in slots if not (11, 30) <= s < (12, 30) and s != skip]
        return "".join(f"2024-01-{d} {h:02d}:{m:02d}:00+09:00,2700,2702,2698,2701,1000\n" for h, m in slots)  # fmt: skip

    path = tmp_path / "7203.T.csv"
    path.write_text("Datetime,Open,High,Low,Close,Volume\n" + day("10") + day("11", (10, 0)))
    (s,) = inspect_report(path)["symbols"]
    assert (s["intra_session_gaps"], s["missing_bars"]) == (1, 1)
