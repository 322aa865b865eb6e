"""A MetaTrader file too short for the clock rule (:func:`foxhunt.data.read.clock_zones.
server_clock_line`): five weeks of 4-hour FX bars on the brokers' New York + 7 h clock have 10
session edges, under the 20 that decide, and were read 2-3 hours late as UTC with the verdict
``valid``. Its name (MetaTrader 4's History Center) or its ``<DATE>`` columns (MetaTrader 5)
now make it ``suspicious``, naming ``--tz``; ``--tz`` given says which clock, and silences it."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from foxhunt.data.read.inspection import inspect_report
from foxhunt.data.read.options import ReadOptions

BROKER = "America/New_York+07:00"


def _h4_weeks(weeks: int, start: datetime = datetime(2018, 2, 26)) -> list[datetime]:
    """The FX week on the broker's clock from a Monday: Monday 00:00 to Friday 20:00, every
    4 hours."""
    return [
        start + timedelta(days=7 * w + d, hours=h)
        for w in range(weeks)
        for d in range(5)
        for h in range(0, 24, 4)
    ]


def _written(path: Path, head: str, row: str, weeks: int, start: datetime) -> Path:
    """``head``, then ``row`` formatted for each bar (``t``: its time, ``i``: its number)."""
    rows = [row.format(t=t, i=1000 + i) for i, t in enumerate(_h4_weeks(weeks, start))]
    path.write_text(head + "".join(rows))
    return path


def _mt4(path: Path, weeks: int, start: datetime = datetime(2018, 2, 26)) -> Path:
    row = "{t:%Y.%m.%d},{t:%H:%M},1.2300,1.2330,1.2290,1.2320,{i}\n"
    return _written(path, "", row, weeks, start)


def _mt5(path: Path, weeks: int, volume: int = 0) -> Path:
    """MetaTrader 5's export; ``volume`` 0 (FX: the tick volume is read) or a real volume (the
    tick volume then an ignored column)."""
    head = "<DATE>\t<TIME>\t<OPEN>\t<HIGH>\t<LOW>\t<CLOSE>\t<TICKVOL>\t<VOL>\t<SPREAD>\n"
    row = "{t:%Y.%m.%d}\t{t:%H:%M:%S}\t1.2300\t1.2330\t1.2290\t1.2320\t{i}\t" + f"{volume}\t5\n"
    return _written(path, head, row, weeks, datetime(2018, 2, 26))


def _mt5_traded(path: Path, weeks: int) -> Path:
    return _mt5(path, weeks, volume=7)


def _finam(path: Path, weeks: int) -> Path:
    """Finam's export: angle brackets too, but Moscow time and no tick volume or spread."""
    head = "<TICKER>,<PER>,<DATE>,<TIME>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>\n"
    row = "EURUSD,240,{t:%Y%m%d},{t:%H%M%S},1.2300,1.2330,1.2290,1.2320,{i}\n"
    return _written(path, head, row, weeks, datetime(2018, 2, 26))


def _clock_warnings(report: dict) -> list[str]:
    return [w for w in report["warnings"] if "server clock" in w]


@pytest.mark.parametrize(
    ("write", "name", "sign"),
    [
        (_mt4, "EURUSD240.csv", "its name is MetaTrader's"),
        (_mt5, "EURUSD_H4.csv", "its <DATE> <TIME> columns are MetaTrader 5's"),
        (_mt5_traded, "EURUSD_H4.csv", "its <DATE> <TIME> columns are MetaTrader 5's"),
    ],
)
def test_a_short_metatrader_file_read_as_utc_is_suspicious_naming_the_brokers_clock(
    tmp_path: Path, write, name: str, sign: str
) -> None:
    report = inspect_report(write(tmp_path / name, 5))
    assert report["readable"] and report["verdict"] == "suspicious"
    (line,) = _clock_warnings(report)
    assert line == (
        f"{tmp_path / name}: symbol 'EURUSD': naive times read as UTC, but {sign}, whose times "
        f"are its broker's server clock (often {BROKER}: UTC+2, UTC+3 in New York's summer); "
        f"8 session edges are too few to tell the clock (20 decide): --tz {BROKER} reads them "
        "on that clock, --tz UTC as they are read"
    )


@pytest.mark.parametrize("tz", [BROKER, "UTC"])
def test_a_zone_given_says_which_clock_and_nothing_is_warned(tmp_path: Path, tz: str) -> None:
    report = inspect_report(_mt4(tmp_path / "EURUSD240.csv", 5), options=ReadOptions(tz=tz))
    assert report["readable"] and not _clock_warnings(report)


def test_another_vendors_short_file_is_not_told_of_metatrader(tmp_path: Path) -> None:
    path = tmp_path / "EURUSD_4h.csv"
    rows = [f"{t:%Y-%m-%d %H:%M},1.23,1.233,1.229,1.232,1\n" for t in _h4_weeks(5)]
    path.write_text("time,open,high,low,close,volume\n" + "".join(rows))
    assert not _clock_warnings(inspect_report(path))
    assert not _clock_warnings(inspect_report(_finam(tmp_path / "finam_EURUSD.csv", 5)))


def test_a_year_of_such_bars_is_the_clock_rules_to_judge(tmp_path: Path) -> None:
    """Enough session edges across New York's clock changes: the clock rule refuses the file
    naming the clock (as before)."""
    report = inspect_report(_mt4(tmp_path / "EURUSD240.csv", 40, datetime(2017, 9, 4)))
    assert report["verdict"] == "invalid" and BROKER in report["error"]
    assert not _clock_warnings(report)
