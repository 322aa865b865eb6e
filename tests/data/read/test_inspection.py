"""foxhunt data inspect: summary fields, gap detection, verdicts and exit codes."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import polars as pl
import pytest

from foxhunt.cli import main
from foxhunt.data.read.resample import aggregate_bars
from foxhunt.data.sources.demo import demo_bars


def _json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out)


def test_valid_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "es.parquet"
    demo_bars(1000, seed=0).write_parquet(path)
    assert main(["data", "inspect", str(path), "--json"]) == 0
    r = _json(capsys)
    assert r["valid"] and r["error"] is None
    (s,) = r["symbols"]
    assert (s["symbol"], s["bars"], s["interval"]) == ("ES", 1000, "5min")
    assert s["first"] == "2024-01-01T23:00:00+00:00"
    assert s["sessions"] == 4 and s["session_breaks"] == 3
    assert s["intra_session_gaps"] == 0 and s["closed_time_bars"] == 0
    assert main(["data", "inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "verdict: valid" in out and "1,000" in out


def test_gaps_and_invalid_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = demo_bars(600, seed=1)
    b = pl.concat([b.head(100), b.slice(103)])  # 3 bars missing inside a session
    b = b.with_columns(
        pl.when(pl.int_range(pl.len()) == 50)
        .then(pl.col("low") - 100)
        .otherwise(pl.col("high"))
        .alias("high")
    )  # row 50: high below the body
    path = tmp_path / "bad.csv"
    b.write_csv(path)
    assert main(["data", "inspect", str(path), "--json"]) == 2
    r = _json(capsys)
    assert not r["valid"] and "column 'high', row 50" in r["error"]
    s = r["symbols"][0]
    assert (s["intra_session_gaps"], s["missing_bars"], s["largest_gap"]) == (1, 3, "20min")
    assert main(["data", "inspect", str(path)]) == 2
    out = capsys.readouterr().out
    assert "verdict: invalid" in out and "missing bars" in out


def test_unreadable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.parquet"
    assert main(["data", "inspect", str(missing), "--json"]) == 2
    assert _json(capsys)["valid"] is False
    assert main(["data", "inspect", str(missing)]) == 2
    assert "no such file" in capsys.readouterr().err


def test_closed_hours_names_the_zone_that_fits(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Chicago wall-clock times written without a zone: inspect names America/Chicago."""
    from foxhunt.data.read.bars import load_bars
    from foxhunt.data.read.inspection import summarize

    bars = demo_bars(3000, seed=0, symbol="ES")
    local = pl.col("ts").dt.convert_time_zone("America/Chicago").dt.replace_time_zone(None)
    bars.with_columns(local.dt.strftime("%Y-%m-%d %H:%M:%S")).write_csv(tmp_path / "ES.csv")
    with caplog.at_level(logging.WARNING):
        (s,) = summarize(load_bars(tmp_path / "ES.csv"))
    assert s["closed_time_bars"] > 150
    assert "pass --tz America/Chicago" in s["closed_hours_warning"]
    assert "taken as UTC" in caplog.text
    (s,) = summarize(load_bars(tmp_path / "ES.csv", tz="America/Chicago"))
    # ES follows the CME equity calendar: the demo generator's bars in the MLK Day 2024 early
    # close (48 five-minute bars) are closed time; no warning at 1.6 %.
    assert s["calendar"] == "cme_equity"
    assert s["closed_time_bars"] == 48 and s["closed_hours_warning"] is None


def test_bar_minutes_is_checked_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "es.parquet"
    demo_bars(1000, seed=0).write_parquet(path)
    assert main(["data", "inspect", str(path), "--json", "--bar-minutes", "15"]) == 0
    r = _json(capsys)
    (line,) = [g for g in r["guesses"] if g.startswith("--bar-minutes 15:")]
    assert "1,000 bars become" in line and "15-minute bars" in line
    # 5-minute bars cannot make 7-minute ones: the same refusal as features and train
    assert main(["data", "inspect", str(path), "--json", "--bar-minutes", "7"]) == 2
    r = _json(capsys)
    assert r["verdict"] == "invalid" and "--bar-minutes 7" in r["error"]


def test_a_volume_read_past_makes_the_verdict_suspicious(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No volume column the reader knows, but one named like a volume (IQFeed's TotalVolume):
    every volume is 0, which only a log line said; the verdict was valid."""
    bars = demo_bars(300, seed=0).drop("symbol")
    path = tmp_path / "ES.csv"
    bars.rename({"volume": "TotalVolume"}).write_csv(path)
    assert main(["data", "inspect", str(path), "--json"]) == 0
    r = _json(capsys)
    assert r["verdict"] == "suspicious"
    assert r["warnings"] == [
        f"{path}: no volume read (every volume 0), but column 'TotalVolume' was read past; "
        "--columns volume=TotalVolume reads it if it is each bar's volume"
    ]
    bars.rename({"volume": "NumberOfTrades"}).write_csv(path)
    assert main(["data", "inspect", str(path), "--json"]) == 0
    assert _json(capsys)["verdict"] == "valid"  # no column named like a volume


def test_dates_that_read_both_ways_make_the_verdict_suspicious(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One day of ``05/03/2018`` (5 March, a cTrader export) read month-first as 3 May with a
    verdict of valid: the doubt was a log line only. Several days decide by their span."""
    rows = "".join(f"05/03/2018 10:{m:02d}:00,1.2,1.21,1.19,1.2,5\n" for m in range(30))
    path = tmp_path / "BTCUSD.csv"
    path.write_text("Time,Open,High,Low,Close,Volume\n" + rows)
    assert main(["data", "inspect", str(path), "--json"]) == 0
    r = _json(capsys)
    assert r["verdict"] == "suspicious"
    assert r["warnings"] == [
        f"{path}: the dates of 'Time' read both day-first and month-first over the same span: "
        "read as %m/%d/%Y %H:%M:%S; --ts-format '%d/%m/%Y %H:%M:%S' reads them the other way"
    ]
    days = "".join(
        f"{d:02d}/03/2018 {h}:00:00,1.2,1.21,1.19,1.2,5\n" for d in range(1, 13) for h in (10, 11)
    )
    path.write_text("Time,Open,High,Low,Close,Volume\n" + days)
    assert main(["data", "inspect", str(path), "--json"]) == 0
    assert _json(capsys)["verdict"] == "valid"  # 12 days day-first, 11 months month-first


def test_symbols_of_different_intervals_make_the_verdict_suspicious(tmp_path: Path) -> None:
    """1-hour NQ beside 5-minute ES read as valid, while train refuses them together."""
    from foxhunt.data.read.inspection import inspect_report

    demo_bars(600, seed=1, symbol="ES").write_parquet(tmp_path / "ES.parquet")
    hourly = aggregate_bars(demo_bars(3600, seed=2, symbol="NQ"), 60)
    hourly.write_parquet(tmp_path / "NQ.parquet")
    report = inspect_report(tmp_path)
    assert report["verdict"] == "suspicious"
    assert (
        "symbols of different bar intervals: NQ 1-hour, the others mostly 5-minute: train "
        "refuses them together; --bar-minutes K aggregates them to one interval"
    ) in report["warnings"]
    (tmp_path / "NQ.parquet").unlink()
    assert inspect_report(tmp_path)["verdict"] == "valid"


def test_a_bar_off_the_grid_of_the_others_makes_the_verdict_suspicious(tmp_path: Path) -> None:
    """One 5-minute bar at 00:02:30 among 300 on the grid: a gap of "0 missing bars", verdict
    valid. A stock's hourly bars opening at 09:30 then 10:00 are a grid of their own."""
    from datetime import timedelta

    from foxhunt.data.read.inspection import inspect_report

    bars = demo_bars(300, seed=1, symbol="ES")
    stray = bars.with_columns(
        pl.when(pl.int_range(pl.len()) == 150)
        .then(pl.col("ts") + timedelta(seconds=150))
        .otherwise(pl.col("ts"))
        .alias("ts")
    )
    stray.write_parquet(tmp_path / "ES.parquet")
    report = inspect_report(tmp_path / "ES.parquet")
    assert report["verdict"] == "suspicious"
    (line,) = [w for w in report["warnings"] if "off the" in w]
    first = stray["ts"][150].isoformat()
    assert line == (
        f"ES: 1 bar off the 5-minute grid of the others (first {first}): a stray print or a "
        "second feed merged in"
    )
    bars.write_parquet(tmp_path / "clean.parquet")
    assert inspect_report(tmp_path / "clean.parquet")["verdict"] == "valid"


def test_hourly_stock_bars_opening_at_half_past_are_no_strays() -> None:
    from datetime import UTC, datetime, timedelta

    from foxhunt.data.read.inspection import _off_grid

    days = [datetime(2024, 1, 2, tzinfo=UTC) + timedelta(days=d) for d in range(30)]
    stamps = [d + timedelta(hours=14, minutes=30) for d in days]  # 09:30 New York
    stamps += [d + timedelta(hours=h) for d in days for h in range(15, 21)]  # 10:00 .. 15:00
    frame = pl.DataFrame({"symbol": ["AAPL"] * len(stamps), "ts": sorted(stamps)})
    assert _off_grid(frame) == []
    assert len(_off_grid(frame.head(0))) == 0


def test_a_two_digit_year_that_reads_first_or_last_makes_the_verdict_suspicious(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One day of ``24/01/03`` minute bars: 24 January 2003 or 3 January 2024, over the same
    span; read year last, and the report says how to read it first."""
    rows = "".join(f"24/01/03 10:{m:02d}:00,1.2,1.21,1.19,1.2,5\n" for m in range(30))
    path = tmp_path / "BTCUSD.csv"
    path.write_text("Time,Open,High,Low,Close,Volume\n" + rows)
    assert main(["data", "inspect", str(path), "--json"]) == 0
    r = _json(capsys)
    assert r["verdict"] == "suspicious"
    assert r["warnings"] == [
        f"{path}: the dates of 'Time' read both year first and last over the same span: "
        "read as %d/%m/%y %H:%M:%S; --ts-format '%y/%m/%d %H:%M:%S' reads them the other way"
    ]


def test_bars_built_from_quotes_count_their_prints_with_no_volume_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A quote file's volume column is read past and each bar counts its prints: the warning
    that every volume is 0 was false for it (Dukascopy's ``askVolume``, MetaTrader's empty
    ``<VOLUME>``)."""
    path = tmp_path / "EURUSD.csv"
    path.write_text(
        "time,bid,ask,askVolume\n"
        + "".join(f"2024-03-04 15:0{m}:30,1.08,1.0801,3\n" for m in range(3))
    )
    assert main(["data", "inspect", str(path), "--bar-minutes", "1", "--json"]) == 0
    r = _json(capsys)
    assert r["verdict"] == "valid", r["warnings"]
    assert not any("no volume read" in w for w in r["warnings"])


def test_a_local_time_column_without_its_offset_makes_the_verdict_suspicious(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Dukascopy's ``Local time`` written without its ``GMT+0200``: read as UTC with verdict
    valid until session 53, hours off."""
    rows = "".join(f"2024-01-03 16:{m:02d}:00,1.0945,1.0946,1.0944,1.0945,5\n" for m in range(30))
    path = tmp_path / "EURUSD.csv"
    path.write_text("Local time,Open,High,Low,Close,Volume\n" + rows)
    assert main(["data", "inspect", str(path), "--json"]) == 0
    r = _json(capsys)
    assert r["verdict"] == "suspicious"
    assert r["warnings"] == [
        f"{path}: column 'Local time' holds local times without their offset: read as UTC; "
        "--tz ZONE names their clock"
    ]
    assert main(["data", "inspect", str(path), "--tz", "Europe/Zurich", "--json"]) == 0
    assert _json(capsys)["verdict"] == "valid"
