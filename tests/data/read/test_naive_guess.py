"""A bare ticker taken for a US stock, with naive times: the zone advice stands (the bars are
read on the NYSE's calendar as the refusal says), and the refusal says what reading them as
UTC would give when they keep another exchange's hours (``bars_market``, ``time_axis``)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl
import pytest

from foxhunt.data.market.bars_market import resolve_bars
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.inspection import inspect_report
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError

BERLIN = ZoneInfo("Europe/Berlin")


def _xetra_file(path: Path) -> Path:
    """5-minute bars of Xetra's 09:00-17:30 Frankfurt session, written as naive UTC times,
    2 April to 17 May 2024: none on Labour Day (1 May, Xetra shut, London open), bars on
    6 May (London's early May bank holiday, Xetra open)."""
    rows, d = [], date(2024, 4, 2)
    while d <= date(2024, 5, 17):
        if d.weekday() < 5 and d != date(2024, 5, 1):
            t = datetime(d.year, d.month, d.day, 9, 0, tzinfo=BERLIN)
            while t < datetime(d.year, d.month, d.day, 17, 30, tzinfo=BERLIN):
                rows.append(t.astimezone(UTC).strftime("%Y-%m-%d %H:%M"))
                t += timedelta(minutes=5)
        d += timedelta(days=1)
    n = len(rows)
    pl.DataFrame(
        {
            "Date": rows,
            "Open": [100.0] * n,
            "High": [101.0] * n,
            "Low": [99.0] * n,
            "Close": [100.0 + (i % 7) / 10 for i in range(n)],
            "Volume": [1000 + i % 13 for i in range(n)],
        }
    ).write_csv(path)
    return path


def test_naive_xetra_bars_of_a_bare_ticker_are_refused_naming_what_utc_gives(
    tmp_path: Path,
) -> None:
    path = _xetra_file(tmp_path / "SAP.csv")
    with pytest.raises(DataError) as refused:
        read_bars(path)
    assert "closed hours of calendar xnys" in str(refused.value)
    assert str(refused.value).endswith(
        "; read as UTC, as written, its bars keep calendar xetr's hours and days: --tz UTC "
        "reads them on it)"
    )
    report = inspect_report(path)
    assert report["verdict"] == "invalid" and report["symbols"][0]["calendar"] == "xnys"
    assert any("SAP (1 symbol) guessed from the name: stock, calendar xnys;" in g
               for g in report["guesses"])  # fmt: skip
    # as the refusal says: --tz UTC reads them on Xetra's calendar (London's has the same
    # hours; its bank holiday with bars, and Labour Day without, tell them apart)
    bars = read_bars(path, options=ReadOptions(tz="UTC"))
    (inst,) = resolve_bars(bars).values()
    assert (inst.calendar, inst.currency) == ("xetr", "EUR")
    utc = inspect_report(path, options=ReadOptions(tz="UTC"))
    assert utc["verdict"] == "valid" and utc["symbols"][0]["calendar"] == "xetr"
