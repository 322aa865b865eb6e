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
