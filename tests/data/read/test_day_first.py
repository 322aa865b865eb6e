"""Ambiguous text dates (every value fits ``%d/%m`` and ``%m/%d``): the span decides."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars


def _minute_bars(tmp_path: Path, name: str, start: datetime, days: int, spell: str) -> Path:
    """Hourly bars over ``days`` days, dates spelt with ``spell`` (a strftime format)."""
    lines = ["timestamp,open,high,low,close,volume"]
    t = start
    while t < start + timedelta(days=days):
        lines.append(f"{t.strftime(spell)},100,101,99,100.5,7")
        t += timedelta(hours=1)
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("name", "start", "days", "spell"),
    [
        # 1-12 January spelt day-first: month-first would read 1 Jan .. 1 Dec
        ("BTCUSDT.csv", datetime(2022, 1, 1), 12, "%d/%m/%Y %H:%M"),
        # 2-11 March spelt month-first with dots: the dotted convention (day-first) would
        # give 3 February .. 3 November
        ("ETHUSDT.csv", datetime(2023, 3, 2), 10, "%m.%d.%Y %H:%M"),
    ],
)
def test_the_reading_that_keeps_the_bars_together_wins(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    name: str,
    start: datetime,
    days: int,
    spell: str,
) -> None:
    path = _minute_bars(tmp_path, name, start, days, spell)
    with caplog.at_level(logging.INFO):
        df = read_bars(path)
    assert df["ts"].min() == start.replace(tzinfo=UTC)
    assert df["ts"].max() == (start + timedelta(days=days, hours=-1)).replace(tzinfo=UTC)
    first = "day-first" if spell.startswith("%d") else "month-first"
    assert f"read {first}" in caplog.text
    # dayfirst= (the library's; --ts-format on the command line) still forces the other way
    forced = read_bars(path, dayfirst=not spell.startswith("%d"))["ts"]
    assert forced.max() - forced.min() > timedelta(days=200)


def test_one_date_keeps_the_convention_and_names_the_other_format(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _minute_bars(tmp_path, "BTCUSD.csv", datetime(2022, 2, 3), 1, "%m/%d/%Y %H:%M")
    with caplog.at_level(logging.WARNING):
        df = read_bars(path)
    assert df["ts"].min() == datetime(2022, 2, 3, tzinfo=UTC)  # slash: month-first
    assert "--ts-format '%d/%m/%Y %H:%M'" in caplog.text


def test_two_digit_years_are_this_century_not_the_year_10(tmp_path: Path) -> None:
    path = tmp_path / "SPY.csv"
    path.write_text(
        "Date,Open,High,Low,Close\n01/04/10,1,1,1,1\n01/05/10,1,1,1,1\n01/14/10,1,1,1,1\n"
    )
    df = read_bars(path)
    assert [t.date().isoformat() for t in df["ts"]] == ["2010-01-04", "2010-01-05", "2010-01-14"]


def _daily_bars(tmp_path: Path, name: str, start: datetime, days: int, spell: str) -> Path:
    lines = ["Date,Open,High,Low,Close,Volume"]
    lines += [
        f"{(start + timedelta(days=i)).strftime(spell)},180,182,179,181,1000" for i in range(days)
    ]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("spell", ["%y/%m/%d", "%y-%m-%d", "%y.%m.%d"])
def test_a_two_digit_year_first_is_read_first_when_the_bars_stay_together(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, spell: str
) -> None:
    # 24/01/03 .. 24/01/16: 3-16 January 2024 (Korean and Japanese exports); read year last
    # they were 24 January 2003 .. 2016, one bar a year
    path = _daily_bars(tmp_path, "BTCKRW.csv", datetime(2024, 1, 3), 14, spell)
    with caplog.at_level(logging.INFO):
        df = read_bars(path)
    assert df["ts"].min() == datetime(2024, 1, 3, tzinfo=UTC)
    assert df["ts"].max() == datetime(2024, 1, 16, tzinfo=UTC)
    assert "two-digit year first" in caplog.text


def test_a_two_digit_year_last_stays_last_when_first_would_scatter_the_bars(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # 15/01/24 .. 28/01/24 (day-first, year last): year first would give 2015 .. 2028
    path = _daily_bars(tmp_path, "ETHUSDT.csv", datetime(2024, 1, 15), 14, "%d/%m/%y")
    with caplog.at_level(logging.WARNING):
        df = read_bars(path)
    assert "two-digit year" not in caplog.text  # decided, not a doubt
    assert df["ts"].min() == datetime(2024, 1, 15, tzinfo=UTC)
    assert df["ts"].max() == datetime(2024, 1, 28, tzinfo=UTC)


def test_one_date_keeps_the_year_last_and_names_the_year_first_format(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # every bar on 24/01/03 (a day of minute bars): 24 January 2003 or 3 January 2024
    path = _minute_bars(tmp_path, "BTCUSDT.csv", datetime(2003, 1, 24), 1, "%d/%m/%y %H:%M")
    with caplog.at_level(logging.WARNING):
        df = read_bars(path)
    assert df["ts"].min() == datetime(2003, 1, 24, tzinfo=UTC)
    assert "--ts-format '%y/%m/%d %H:%M' reads it first" in caplog.text
