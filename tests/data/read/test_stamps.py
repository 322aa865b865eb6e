"""Bars stamped at their end (foxhunt.data.read.stamps, ``--stamps``).

TradeStation, MultiCharts, NinjaTrader and IQFeed stamp a bar at its end: read as starts,
every bar is an interval late and nothing else looks wrong. The sessions' edges give them
away; ``--stamps end`` reads them as their start.
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
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.stamps import StampFit, stamp_fit, to_bar_starts
from foxhunt.errors import DataError

NEW_YORK = ZoneInfo("America/New_York")
CHICAGO = ZoneInfo("America/Chicago")
FIVE = timedelta(minutes=5)


def _stock_days(first: date, days: int) -> list[datetime]:
    """5-minute bar starts 09:30-15:55 New York on NYSE trading days of January 2024."""
    closed = {date(2024, 1, 1), date(2024, 1, 15)}  # New Year, Martin Luther King Day
    out = []
    for k in range(days):
        d = first + timedelta(days=k)
        if d.weekday() >= 5 or d in closed:
            continue
        start = datetime(d.year, d.month, d.day, 9, 30, tzinfo=NEW_YORK)
        out += [(start + FIVE * i).astimezone(UTC) for i in range(78)]
    return out


STARTS = _stock_days(date(2024, 1, 2), 30)  # 21 trading days: 20 opens and 20 closes inside


def _write(path: Path, stamps: list[datetime]) -> Path:
    rows = "".join(f"{t:%Y-%m-%d %H:%M:%S}+00:00,185,186,184,185.5,10\n" for t in stamps)
    path.write_text("timestamp,open,high,low,close,volume\n" + rows)
    return path


def test_end_stamped_stock_bars_are_refused_naming_the_flag(tmp_path: Path) -> None:
    path = _write(tmp_path / "AAPL.csv", [t + FIVE for t in STARTS])
    with pytest.raises(DataError) as e:
        read_bars(path)
    assert str(e.value) == (
        f"{path}: symbol 'AAPL': bars stamped at their end: 20 of 20 sessions open one bar (5min) "
        "after calendar xnys's open and 20 of 20 end with a bar at its close (stamped at their "
        "start, they would open at the open and end a bar before the close); --stamps end reads "
        "them so, or --allow-odd-times"
    )
    bars = read_bars(path, options=ReadOptions(stamps="end"))
    assert bars["ts"].to_list() == STARTS


def test_start_stamped_bars_are_read_without_a_word(tmp_path: Path) -> None:
    assert read_bars(_write(tmp_path / "AAPL.csv", STARTS))["ts"].to_list() == STARTS


def test_a_closing_auction_bar_at_the_close_is_not_an_end_stamp(tmp_path: Path) -> None:
    """Start stamps with a 16:00 bar (the closing cross, some vendors): the closes sit at the
    close, but the opens at the open: start stamps."""
    closes = [t + FIVE for t in STARTS if t.astimezone(NEW_YORK).strftime("%H:%M") == "15:55"]
    ts = pl.Series("ts", sorted(STARTS + closes), dtype=pl.Datetime("us", "UTC"))
    fit = stamp_fit(ts, FIVE, "xnys")
    assert fit is not None and fit.at_close == 20 and fit.at_open == 20
    assert not fit.end_stamped


def test_globex_minute_bars_end_stamped() -> None:
    """ES 1-minute bars of three weeks of Globex sessions, 17:00-16:00 Chicago, stamped 17:01 ..
    16:00: caught by the CME equity calendar's opens and closes."""
    stamps = []
    for k in range(19):
        day = date(2024, 1, 21) + timedelta(days=k)  # a Sunday; no holiday to 9 February
        if day.weekday() in (4, 5):  # no session opens on Friday or Saturday evening
            continue
        open_ = datetime(day.year, day.month, day.day, 17, tzinfo=CHICAGO).astimezone(UTC)
        stamps += [open_ + timedelta(minutes=m) for m in range(23 * 60)]
    starts = pl.Series("ts", stamps, dtype=pl.Datetime("us", "UTC"))
    minute = timedelta(minutes=1)
    fit = stamp_fit(starts, minute, "cme_equity")
    assert fit is not None and not fit.end_stamped and fit.at_open == fit.opens
    fit = stamp_fit(starts + minute, minute, "cme_equity")
    assert fit is not None and fit.end_stamped
    assert (fit.after_open, fit.at_close) == (fit.opens, fit.closes)


def test_a_market_that_never_closes_has_no_edges() -> None:
    ts = pl.Series("ts", STARTS, dtype=pl.Datetime("us", "UTC"))
    assert stamp_fit(ts, FIVE, "24x7") is None


def test_end_stamps_need_ten_edges_of_each_kind_or_four_that_all_agree() -> None:
    def fit(opens: int, closes: int) -> StampFit:
        return StampFit(opens, 0, opens, closes, 0, closes)

    assert fit(10, 10).end_stamped and fit(9, 10).end_stamped and fit(10, 9).end_stamped
    assert fit(4, 4).end_stamped and not fit(3, 10).end_stamped and not fit(10, 3).end_stamped
    assert not StampFit(9, 0, 8, 9, 0, 9).end_stamped  # one open not where end stamps put it
    assert not StampFit(9, 0, 9, 9, 0, 8).end_stamped
    assert not StampFit(9, 1, 9, 9, 0, 9).end_stamped  # one where start stamps put it
    assert not StampFit(9, 0, 9, 9, 1, 9).end_stamped
    assert StampFit(10, 1, 5, 10, 1, 5).end_stamped  # half and a tenth: the edges
    assert not StampFit(10, 2, 5, 10, 1, 5).end_stamped
    assert not StampFit(10, 1, 5, 10, 2, 5).end_stamped
    assert not StampFit(10, 1, 4, 10, 1, 5).end_stamped
    assert not StampFit(10, 1, 5, 10, 1, 4).end_stamped


def test_to_bar_starts_moves_each_symbol_by_its_interval_and_leaves_daily_bars() -> None:
    t0 = datetime(2024, 1, 2, 15, tzinfo=UTC)
    frame = pl.DataFrame(
        {
            "ts": [t0, t0 + FIVE, t0 + 2 * FIVE, t0, t0 + timedelta(hours=1), t0, t0 + timedelta(days=1)],
            "symbol": ["ES", "ES", "ES", "NQ", "NQ", "SPY", "SPY"],
        }
    )  # fmt: skip
    moved = to_bar_starts(frame, "a.csv")["ts"].to_list()
    hour = timedelta(hours=1)
    assert moved == [t0 - FIVE, t0, t0 + FIVE, t0 - hour, t0, t0, t0 + timedelta(days=1)]
    with pytest.raises(DataError, match=r"^a.csv: symbol 'GC' has one bar time: --stamps end"):
        to_bar_starts(pl.DataFrame({"ts": [t0, t0], "symbol": ["GC", "GC"]}), "a.csv")


def test_a_short_last_bar_starts_where_the_bar_before_ended() -> None:
    """TradeStation's hourly stock bars end 10:30 ... 15:30, then 16:00 for the last half hour:
    that bar starts at 15:30 (it was moved to 15:00, on top of the bar before)."""
    ends = [datetime(2018, 2, d, h, 30, tzinfo=NEW_YORK) for d in (1, 2) for h in range(10, 16)]
    ends += [datetime(2018, 2, d, 16, tzinfo=NEW_YORK) for d in (1, 2)]
    frame = pl.DataFrame({"ts": ends, "symbol": "SPY"}).with_columns(
        pl.col("ts").dt.convert_time_zone("UTC")
    )
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=3)  # any file order
    moved = to_bar_starts(shuffled, "SPY.csv")
    assert moved["ts"].to_list() == [
        t - timedelta(hours=1) if t.minute else t - timedelta(minutes=30) for t in shuffled["ts"]
    ]
    starts = moved.sort("ts")["ts"].dt.convert_time_zone("America/New_York").dt.strftime("%H:%M")
    assert starts.to_list()[:7] == ["09:30", "10:30", "11:30", "12:30", "13:30", "14:30", "15:30"]
    repeated = pl.DataFrame({"ts": [ends[0], ends[1], ends[1]], "symbol": "SPY"})
    assert to_bar_starts(repeated, "SPY.csv")["ts"].n_unique() == 2  # a repeat stays one


def test_the_flag_is_checked_and_stored_as_given(tmp_path: Path) -> None:
    import argparse

    from foxhunt.commands.options import read_flags

    with pytest.raises(SystemExit):  # argparse: invalid choice
        main(["data", "inspect", str(_write(tmp_path / "AAPL.csv", STARTS)), "--stamps", "mid"])
    assert read_flags(argparse.Namespace(stamps="end")) == {"stamps": "end"}  # train stores it
    assert read_flags(argparse.Namespace(stamps=None)) == {}
    with pytest.raises(DataError, match="--stamps must be start or end, got 'middle'"):
        ReadOptions(stamps="middle")


def test_inspect_names_the_flag_and_reads_right_with_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "AAPL.csv", [t + FIVE for t in STARTS])
    assert main(["data", "inspect", str(path), "--json"]) == 2
    assert "--stamps end" in json.loads(capsys.readouterr().out)["error"]
    assert main(["data", "inspect", str(path), "--json", "--stamps", "end"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "valid"


def test_the_api_names_its_keyword_and_reads_with_it(tmp_path: Path) -> None:
    import foxhunt

    path = _write(tmp_path / "AAPL.csv", [t + FIVE for t in STARTS])
    with pytest.raises(DataError, match=r"; stamps='end' reads them so, or allow_odd_times=True$"):
        foxhunt.read_bars(path)
    assert foxhunt.read_bars(path, stamps="end")["ts"].to_list() == STARTS


def test_start_stamps_sit_at_the_open_and_a_bar_before_the_close() -> None:
    """The counts of start-stamped Globex bars: every open at the calendar's open, every close
    an interval before its close, none where end stamps would sit."""
    stamps = []
    for k in range(19):
        day = date(2024, 1, 21) + timedelta(days=k)
        if day.weekday() in (4, 5):
            continue
        open_ = datetime(day.year, day.month, day.day, 17, tzinfo=CHICAGO).astimezone(UTC)
        stamps += [open_ + timedelta(minutes=m) for m in range(23 * 60)]
    ts = pl.Series("ts", stamps, dtype=pl.Datetime("us", "UTC"))
    fit = stamp_fit(ts, timedelta(minutes=1), "cme_equity")
    assert fit == StampFit(
        opens=14, at_open=14, after_open=0, closes=14, before_close=14, at_close=0
    )


def test_bars_twenty_hours_apart_are_dated_and_stay() -> None:
    t0 = datetime(2024, 1, 2, tzinfo=UTC)
    frame = pl.DataFrame(
        {"ts": [t0 + k * timedelta(hours=20) for k in range(3)], "symbol": ["ES"] * 3}
    )
    assert to_bar_starts(frame, "a.csv")["ts"].to_list() == frame["ts"].to_list()
    hours = pl.DataFrame(
        {"ts": [t0 + k * timedelta(hours=19) for k in range(3)], "symbol": ["ES"] * 3}
    )
    assert to_bar_starts(hours, "a.csv")["ts"][0] == t0 - timedelta(hours=19)


def test_a_row_without_a_symbol_keeps_its_time() -> None:
    """A row with no symbol (validation names it later) or a symbol with no time (a footer) is
    left as it is; the others move."""
    t0 = datetime(2024, 1, 2, 15, tzinfo=UTC)
    frame = pl.DataFrame(
        {
            "ts": [t0, t0 + FIVE, t0 + 2 * FIVE, None],
            "symbol": ["ES", "ES", None, "FOOTER"],
        }
    )
    moved = to_bar_starts(frame, "a.csv")["ts"].to_list()
    assert moved == [t0 - FIVE, t0, t0 + 2 * FIVE, None]


def test_one_bar_time_is_refused_with_the_whole_reason() -> None:
    t0 = datetime(2024, 1, 2, tzinfo=UTC)
    with pytest.raises(DataError) as e:
        to_bar_starts(pl.DataFrame({"ts": [t0], "symbol": ["GC"]}), "a.csv")
    assert str(e.value) == (
        "a.csv: symbol 'GC' has one bar time: --stamps end moves bars by their interval, which "
        "one bar does not give"
    )


def test_a_few_sessions_all_end_stamped_are_a_doubt_not_a_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three sessions of end stamps (two opens and two closes inside the file) read an interval
    late with verdict valid until session 53: now a warning of the report, the bars read."""
    three = _stock_days(date(2024, 1, 2), 3)
    path = _write(tmp_path / "AAPL.csv", [t + FIVE for t in three])
    assert read_bars(path)["ts"].to_list() == [t + FIVE for t in three]
    assert main(["data", "inspect", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "suspicious"
    assert report["warnings"] == [
        f"{path}: symbol 'AAPL': bars perhaps stamped at their end: 2 of 2 sessions open one bar "
        "(5min) after calendar xnys's open and 2 of 2 end with a bar at its close, too few "
        "sessions to tell (4 of each decide); --stamps end reads them so"
    ]
    assert main(["data", "inspect", str(_write(tmp_path / "MSFT.csv", three)), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "valid"


def test_a_doubt_of_end_stamps_needs_every_edge_to_agree() -> None:
    assert StampFit(2, 0, 2, 2, 0, 2).maybe_end_stamped
    assert StampFit(3, 0, 3, 3, 0, 3).maybe_end_stamped
    assert StampFit(1, 0, 1, 1, 0, 1).maybe_end_stamped
    assert not StampFit(4, 0, 4, 4, 0, 4).maybe_end_stamped  # four decide: a refusal
    assert not StampFit(0, 0, 0, 2, 0, 2).maybe_end_stamped  # no open inside the file
    assert not StampFit(2, 0, 1, 2, 0, 2).maybe_end_stamped
    assert not StampFit(2, 0, 2, 2, 0, 1).maybe_end_stamped
    assert not StampFit(2, 1, 2, 2, 0, 2).maybe_end_stamped
    assert not StampFit(2, 0, 2, 2, 1, 2).maybe_end_stamped
