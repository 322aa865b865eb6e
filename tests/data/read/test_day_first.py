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


def test_slash_dates_read_day_first_when_month_first_would_spread_them_over_months(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # 1-12 January spelt day-first: month-first would read 1 Jan .. 1 Dec
    path = _minute_bars(tmp_path, "BTCUSDT.csv", datetime(2022, 1, 1), 12, "%d/%m/%Y %H:%M")
    with caplog.at_level(logging.INFO):
        df = read_bars(path)
    assert df["ts"].min() == datetime(2022, 1, 1, tzinfo=UTC)
    assert df["ts"].max() == datetime(2022, 1, 12, 23, tzinfo=UTC)
    assert "read day-first" in caplog.text
    # the convention is still what --ts-format or dayfirst= override
    assert read_bars(path, dayfirst=False)["ts"].max().month == 12


def test_dotted_dates_read_month_first_when_day_first_would_spread_them(tmp_path: Path) -> None:
    # 2-11 March spelt month-first with dots: the dotted convention (day-first) would give
    # 3 February .. 3 November
    path = _minute_bars(tmp_path, "ETHUSDT.csv", datetime(2023, 3, 2), 10, "%m.%d.%Y %H:%M")
    df = read_bars(path)
    assert df["ts"].min() == datetime(2023, 3, 2, tzinfo=UTC)
    assert df["ts"].max() == datetime(2023, 3, 11, 23, tzinfo=UTC)


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
