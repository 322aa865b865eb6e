"""One symbol read from several files of different bar intervals (a folder holding Yahoo's
daily ``AAPL.csv`` beside a one-minute ``AAPL_1min.csv``) is refused naming the files and their
intervals: the series was one of minute bars with a bar at every midnight, verdict valid."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError

HEAD = "Datetime,Open,High,Low,Close,Volume\n"


def _write(path: Path, stamps: list[datetime]) -> None:
    path.parent.mkdir(exist_ok=True)
    rows = "".join(
        f"{t:%Y-%m-%dT%H:%M:%SZ},185,186,184,185.5,{i * 7 % 13 + 1}\n" for i, t in enumerate(stamps)
    )
    path.write_text(HEAD + rows)


def _minutes(day: int, count: int, step: int = 1, start: int = 0) -> list[datetime]:
    """One-minute (or ``step``-minute) bars from 15:00 UTC on a January 2024 weekday."""
    t0 = datetime(2024, 1, day, 15, start, tzinfo=UTC)
    return [t0 + timedelta(minutes=step * i) for i in range(count)]


def test_a_daily_file_beside_a_minute_file_of_one_symbol_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "AAPL"
    _write(folder / "AAPL.csv", [datetime(2024, 1, d, 5, tzinfo=UTC) for d in (8, 9, 10, 11)])
    _write(folder / "AAPL_1min.csv", _minutes(9, 60) + _minutes(10, 60))
    with pytest.raises(DataError) as refused:
        read_bars(folder, min_bars=1)
    assert str(refused.value) == (
        f"{folder / 'AAPL.csv'}: symbol 'AAPL': the files hold bars of different intervals "
        "(AAPL.csv (1d), AAPL_1min.csv (1min)), merged into one series: read each interval "
        "apart (a folder or a glob per interval), or --allow-odd-times"
    )
    kept = read_bars(folder, min_bars=1, options=ReadOptions(allow_odd_times=True))
    assert kept.height == 124


def test_ten_minute_bars_beside_one_minute_bars_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "ES"
    _write(folder / "ES_a.csv", _minutes(9, 40))
    tens = _minutes(10, 30, step=10)
    _write(folder / "ES_b.csv", [*tens, tens[-1] + timedelta(minutes=5)])  # mostly 10 apart
    with pytest.raises(DataError, match=r"\(ES_a.csv \(1min\), ES_b.csv \(10min\)\)"):
        read_bars(folder, min_bars=1)


def test_a_quiet_minute_file_is_still_minute_bars(tmp_path: Path) -> None:
    """A month of an illiquid contract: gaps of two and three minutes are the most common, but
    some bars are a minute apart, so its interval is the other file's."""
    folder = tmp_path / "ZB"
    _write(folder / "ZB_jan.csv", _minutes(9, 40))
    quiet = _minutes(10, 30, step=3) + _minutes(11, 2)
    _write(folder / "ZB_feb.csv", quiet)
    assert read_bars(folder, min_bars=1).height == 72


def test_a_short_coarser_file_is_not_judged_unless_daily(tmp_path: Path) -> None:
    """Five bars five minutes apart say little (a file cut short, a quiet hour): read."""
    folder = tmp_path / "NQ"
    _write(folder / "NQ_a.csv", _minutes(9, 40))
    _write(folder / "NQ_b.csv", _minutes(10, 6, step=5))
    assert read_bars(folder, min_bars=1).height == 46


def test_files_of_one_interval_split_by_month_read_as_one_series(tmp_path: Path) -> None:
    folder = tmp_path / "CL"
    _write(folder / "CL_1.csv", _minutes(9, 30))
    _write(folder / "CL_2.csv", _minutes(10, 30))
    assert read_bars(folder, min_bars=1).height == 60


def test_an_interval_column_of_several_intervals_for_one_symbol_is_refused(tmp_path: Path) -> None:
    """A database's dump of klines, ``open_time,symbol,interval,...`` with ``1d`` and ``1m`` rows:
    until session 53 one series of 18 bars, the interval column ignored, verdict valid."""
    days = [f"2024-01-0{d} 00:00:00,BTCUSDT,1d,45000,45100,44970,45070,114600" for d in range(2, 8)]
    minutes = [f"2024-01-10 14:3{m}:00,BTCUSDT,1m,46000,46001,45993,45996,1120" for m in range(6)]
    path = tmp_path / "klines_db_dump.csv"
    path.write_text(
        "open_time,symbol,interval,open,high,low,close,volume\n" + "\n".join(days + minutes) + "\n"
    )
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value) == (
        f"{path}: symbol 'BTCUSDT': column 'interval' gives bars of several intervals (1d, 1m): "
        "foxhunt reads one interval per symbol; write each interval's bars to a file of its own"
    )


def test_an_interval_column_of_one_interval_per_symbol_reads(tmp_path: Path) -> None:
    rows = [f"2024-01-0{d} 00:00:00,BTCUSDT,1d,45000,45100,44970,45070,114600" for d in range(2, 8)]
    rows += [f"2024-01-10 14:3{m}:00,ETHUSDT,1m,2200,2201,2199,2200.5,1120" for m in range(6)]
    path = tmp_path / "klines.csv"
    path.write_text(
        "open_time,symbol,interval,open,high,low,close,volume\n" + "\n".join(rows) + "\n"
    )
    df = read_bars(path, min_bars=1)
    assert df.group_by("symbol").len().sort("symbol").rows() == [("BTCUSDT", 6), ("ETHUSDT", 6)]
