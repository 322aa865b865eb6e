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


def test_a_nameless_file_of_naive_local_times_is_told_its_markets_zone(tmp_path: Path) -> None:
    """Tokyo's 09:00-11:30 and 12:30-15:00 written without a zone under a name that places
    nothing: read as UTC they keep no calendar (24x7, valid and silent until session 55); read
    in Asia/Tokyo they keep Tokyo's. A warning says so; --tz Asia/Tokyo reads them on it."""
    rows, d = [], date(2024, 1, 4)
    tokyo_shut = {date(2024, 1, 8), date(2024, 2, 12), date(2024, 2, 23)}
    while d <= date(2024, 2, 29):
        if d.weekday() < 5 and d not in tokyo_shut:
            for h0, m0, h1, m1 in ((9, 0, 11, 30), (12, 30, 15, 0)):
                t = datetime(d.year, d.month, d.day, h0, m0)
                while t < datetime(d.year, d.month, d.day, h1, m1):
                    rows.append(t.strftime("%Y-%m-%d %H:%M"))
                    t += timedelta(minutes=5)
        d += timedelta(days=1)
    n = len(rows)
    path = tmp_path / "TOYOTA_5m.csv"
    pl.DataFrame(
        {"Date": rows, "Open": [2700.0] * n, "High": [2710.0] * n, "Low": [2690.0] * n,
         "Close": [2700.0 + i % 11 for i in range(n)], "Volume": [100 + i % 17 for i in range(n)]}
    ).write_csv(path)  # fmt: skip
    report = inspect_report(path)
    assert report["verdict"] == "suspicious" and report["symbols"][0]["calendar"] == "24x7"
    assert report["warnings"] == [
        f"{path}: symbol 'TOYOTA': its naive times read as UTC keep no market's hours (calendar "
        "24x7); read in Asia/Tokyo they keep calendar xtks's: --tz Asia/Tokyo reads them so"
    ]
    told = inspect_report(path, options=ReadOptions(tz="Asia/Tokyo"))
    assert told["verdict"] == "valid" and told["symbols"][0]["calendar"] == "xtks"


def test_a_nameless_metatrader_export_is_told_the_brokers_clock(tmp_path: Path) -> None:
    """A MetaTrader export (headerless ``2024.03.04,00:00,...``) of a broker's symbol that
    names no pair: its server clock is New York's moved 7 hours (the FX week from Monday 00:00
    to Friday 23:45), across the US clock change of 10 March. Read as UTC or in New York they
    keep no calendar; until session 56 nothing was said. The warning names the broker clock,
    and ``--tz America/New_York+07:00`` reads them on ``fx_24x5``."""
    lines, d = [], date(2024, 2, 26)
    while d <= date(2024, 3, 22):
        if d.weekday() < 5:  # the server's Monday 00:00 is Sunday 17:00 in New York
            t = datetime(d.year, d.month, d.day)
            for i in range(96):
                lines.append(
                    f"{t:%Y.%m.%d,%H:%M},2030.5,2031.5,2029.5,{2030 + i % 5 / 10:.2f},{40 + i % 9}"
                )
                t += timedelta(minutes=15)
        d += timedelta(days=1)
    path = tmp_path / "SPOTGOLD15.csv"
    path.write_text("\n".join(lines) + "\n")
    report = inspect_report(path)
    assert report["verdict"] == "suspicious" and report["symbols"][0]["calendar"] == "24x7"
    assert report["warnings"] == [
        f"{path}: symbol 'SPOTGOLD15': its naive times read as UTC keep no market's hours "
        "(calendar 24x7); read in America/New_York+07:00 they keep calendar fx_24x5's: --tz "
        "America/New_York+07:00 reads them so"
    ]
    told = inspect_report(path, options=ReadOptions(tz="America/New_York+07:00"))
    assert told["verdict"] == "valid" and told["symbols"][0]["calendar"] == "fx_24x5"
    assert told["symbols"][0]["closed_time_bars"] == 0


def _naive_csv(path: Path, rows: list[str], level: float, tick: float) -> Path:
    """Bars at naive times ``rows`` around ``level``, closes a few ``tick`` apart."""
    n = len(rows)
    pl.DataFrame(
        {"Date": rows, "Open": [level] * n, "High": [level + 12 * tick] * n,
         "Low": [level - 12 * tick] * n, "Close": [level + (i % 7) * tick for i in range(n)],
         "Volume": [100] * n}
    ).write_csv(path)  # fmt: skip
    return path


def test_a_bare_tickers_naive_fx_week_is_told_the_zone_that_keeps_it(tmp_path: Path) -> None:
    """Hourly FX-week bars written in New York's wall clock under a bare ticker (``EURO``): as
    UTC they keep no calendar, and each zone kept the NYSE's hours no better, so the refusal
    named none (session 56's sweep). It now names the zone in which the bars keep a calendar,
    the fewest closed: New York (Chicago's clock, an hour off, leaves one closed hour a week)."""
    ny = ZoneInfo("America/New_York")
    rows, d = [], date(2023, 9, 3)  # a Sunday; New York's clocks change twice before April
    while d <= date(2024, 4, 19):
        for h in range(24):
            t = datetime(d.year, d.month, d.day, h, tzinfo=ny)
            sunday_open = d.weekday() == 6 and h >= 17
            if sunday_open or (d.weekday() < 4) or (d.weekday() == 4 and h < 17):
                rows.append(t.strftime("%Y-%m-%d %H:%M"))
        d += timedelta(days=1)
    path = _naive_csv(tmp_path / "EURO_1h.csv", rows, 1.09, 0.0001)
    with pytest.raises(DataError) as refused:
        read_bars(path)
    assert str(refused.value).endswith(
        "; read in America/New_York its bars keep calendar fx_24x5's hours and days: --tz "
        "America/New_York reads them on it)"
    )
    # the clock rule, judging the NYSE's sessions across the clock changes, said "the file's
    # clock is likely local time" beside it: the NYSE is not the market, not said
    assert "clock is likely" not in str(refused.value)
    (inst,) = resolve_bars(read_bars(path, options=ReadOptions(tz="America/New_York"))).values()
    assert (inst.calendar, inst.asset_class) == ("fx_24x5", "unknown")


def test_a_us_stocks_session_in_new_yorks_wall_clock_keeps_the_zone_rules_advice(
    tmp_path: Path,
) -> None:
    """``AAPL``'s 09:35-16:00 bars (stamped at their end) in New York's wall clock, naive:
    read as UTC another exchange's hours may keep them, but in New York they keep the NYSE's,
    the name's market: the zone rule's line stands, and no other calendar is named (a version
    of session 56's zone line dropped it for another market's)."""
    ny = ZoneInfo("America/New_York")
    rows = []
    for day in (8, 9, 10, 11, 12):
        t = datetime(2024, 1, day, 9, 35, tzinfo=ny)
        while t <= datetime(2024, 1, day, 16, 0, tzinfo=ny):
            rows.append(t.strftime("%Y-%m-%d %H:%M"))
            t += timedelta(minutes=5)
    path = _naive_csv(tmp_path / "AAPL.csv", rows, 185.0, 0.1)
    with pytest.raises(DataError) as refused:
        read_bars(path)
    assert "the file's clock is likely America/New_York" in str(refused.value)
    assert "its bars keep calendar" not in str(refused.value)


def test_a_us_stocks_extended_hours_in_new_yorks_wall_clock_are_told_new_york(
    tmp_path: Path,
) -> None:
    """FirstRate's ``MSFT`` 04:00-20:00 bars in New York's wall clock, naive: read as UTC they
    keep ICE's index futures' hours, which the refusal named (``--tz UTC``) until session 60;
    in New York they keep the NYSE's extended hours, the name's own market, named first."""
    ny = ZoneInfo("America/New_York")
    rows = []
    for day in (4, 5, 6, 7, 8, 11, 12):
        t = datetime(2024, 3, day, 4, 0, tzinfo=ny)
        while t < datetime(2024, 3, day, 20, 0, tzinfo=ny):
            rows.append(t.strftime("%Y-%m-%d %H:%M"))
            t += timedelta(minutes=5)
    path = _naive_csv(tmp_path / "MSFT.csv", rows, 400.0, 0.05)
    with pytest.raises(DataError) as refused:
        read_bars(path)
    assert str(refused.value).endswith(
        "; read in America/New_York its bars keep calendar xnys_ext's hours and days: --tz "
        "America/New_York reads them on it)"
    )
    (inst,) = resolve_bars(read_bars(path, options=ReadOptions(tz="America/New_York"))).values()
    assert (inst.calendar, inst.asset_class) == ("xnys_ext", "stock")
