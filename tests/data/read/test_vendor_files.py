"""Vendor files read right as found, or refused with one line naming the flag (issue 27).

Fixtures are cut from the real histdata and Quantiacs files (tests/data/fixtures/real/README.md).
"""

from __future__ import annotations

import logging
import shutil
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.bars import load_bars, read_bars
from foxhunt.data.read.inspection import inspect_report
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.vendors import guess_from_name
from foxhunt.data.read.zones import parse_zone
from foxhunt.errors import DataError

REAL = Path(__file__).parents[1] / "fixtures" / "real"
HISTDATA = REAL / "histdata" / "HISTDATA_COM_ASCII_EURUSD_M12018.zip"
QUANTIACS = REAL / "quantiacs"
MEMBER = "DAT_ASCII_EURUSD_M1_2018.csv"


def test_histdata_zip_reads_right_as_found(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        bars = read_bars(HISTDATA)
    assert bars["symbol"].unique().to_list() == ["EURUSD"]
    assert bars.height == 600
    # 20180101 170000 in histdata's New York time (EST in January) is 22:00 UTC.
    assert bars["ts"][0] == datetime(2018, 1, 1, 22, 0, tzinfo=UTC)
    assert bars["ts"][-1] == datetime(2018, 1, 8, 1, 23, tzinfo=UTC)  # Sun 20:23 EST
    assert bars["open"][0] == 1.20037 and bars["volume"].sum() == 0.0
    assert "symbol EURUSD from histdata's file name; --symbol to change" in caplog.text
    assert "naive timestamps read as America/New_York" in caplog.text


def test_histdata_inspect_valid_on_fx_calendar() -> None:
    report = inspect_report(HISTDATA.parent)
    assert report["valid"], report["error"]
    (s,) = report["symbols"]
    assert (s["symbol"], s["interval"], s["calendar"], s["closed_time_bars"]) == (
        "EURUSD",
        "1min",
        "fx_24x5",
        0,
    )
    assert report["time_axis"] == []
    assert any("histdata" in g for g in report["guesses"])


def test_a_file_inside_a_zip_is_named_through_the_archive(tmp_path: Path) -> None:
    bars = read_bars(HISTDATA / MEMBER)
    assert bars.height == 600
    bad = tmp_path / "HISTDATA_COM_ASCII_EURUSD_M12018.zip"
    text = zipfile.ZipFile(HISTDATA).read(MEMBER).decode().splitlines()
    text[7] = text[7].replace("1.2", "x.2", 1)
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr(MEMBER, "\n".join(text) + "\n")
    with pytest.raises(DataError) as e:
        read_bars(bad)
    assert str(e.value).startswith(f"{bad}/{MEMBER}: column 'open', row 7")


def test_zip_with_many_csvs_reads_each(tmp_path: Path) -> None:
    text = zipfile.ZipFile(HISTDATA).read(MEMBER).decode()
    archive = tmp_path / "fx.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("DAT_ASCII_EURUSD_M1_2018.csv", text)
        z.writestr("DAT_ASCII_GBPUSD_M1_2018.csv", text)
        z.writestr("DAT_ASCII_GBPUSD_M1_2018.txt", "histdata status report, not bars")
    bars = read_bars(archive)
    assert sorted(bars["symbol"].unique().to_list()) == ["EURUSD", "GBPUSD"]
    assert bars.height == 1200


def test_fx_clock_five_hours_off_is_refused_naming_the_zone(tmp_path: Path) -> None:
    """Naive times read as UTC (no zone given, no vendor name): the Sunday bars sit in the
    weekend; the fit names the zone and --tz."""
    plain = tmp_path / "EURUSD.csv"
    with zipfile.ZipFile(HISTDATA) as z:
        plain.write_bytes(z.read(MEMBER))
    with pytest.raises(DataError) as e:
        read_bars(plain)
    msg = str(e.value)
    assert msg.startswith(f"{plain}: symbol 'EURUSD': ")
    # In January New York is UTC-05:00 too (the full year names UTC-05:00: docs/data.md).
    assert "read as UTC," in msg and "0.0% read as America/New_York" in msg
    assert "--tz America/New_York reads it so, or --allow-odd-times" in msg
    assert "\n" not in msg
    # The same with the flag that keeps it: the bars as read.
    kept = read_bars(plain, options=ReadOptions(allow_odd_times=True))
    assert kept["ts"][0] == datetime(2018, 1, 1, 17, 0, tzinfo=UTC)
    # In January every spelling of EST reads it right.
    for tz in ("-05:00", "UTC-5", "Etc/GMT+5", "GMT-05:00"):
        assert read_bars(plain, tz=tz)["ts"][0] == datetime(2018, 1, 1, 22, tzinfo=UTC)


def test_quantiacs_folder_reads_right_as_found(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        bars = read_bars(QUANTIACS)
    assert sorted(bars["symbol"].unique().to_list()) == ["F_CL", "F_DX"]
    cl = bars.filter(pl.col("symbol") == "F_CL")
    assert cl.height == 300
    assert cl["ts"][0] == datetime(1990, 1, 2, tzinfo=UTC)  # 19900102 is a date, not epoch s
    assert cl.row(0)[2:7] == (21800.0, 22890.0, 21790.0, 22890.0, 100943.0)
    dx = bars.filter(pl.col("symbol") == "F_DX")
    assert dx["volume"].is_nan().sum() == 0 and dx["volume"][0] == 0.0  # NaN volume -> 0
    assert "volume NaN or empty (not reported) in 14 rows" in caplog.text
    assert "'DATE' read as yyyymmdd; --ts-format to change" in caplog.text
    report = inspect_report(QUANTIACS)
    assert report["valid"] and {s["interval"] for s in report["symbols"]} == {"1d"}


def test_yyyymmdd_taken_as_epoch_seconds_is_refused() -> None:
    with pytest.raises(DataError) as e:
        read_bars(QUANTIACS / "F_CL.txt", options=ReadOptions(ts_format="epoch-s"))
    msg = str(e.value)
    assert msg.startswith(f"{QUANTIACS / 'F_CL.txt'}: symbol 'F_CL': first bar 1970-08-19")
    assert "before 1980" in msg and "--ts-format" in msg


def test_bar_after_tomorrow_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "ES.csv"
    rows = [f"2099-01-0{d} 00:00,4700,4701,4699,4700,1" for d in range(1, 5)]
    p.write_text("ts,open,high,low,close,volume\n" + "\n".join(rows) + "\n")
    with pytest.raises(DataError, match=r"last bar 2099-01-04 00:00:00\+00:00 is after tomorrow"):
        read_bars(p, options=ReadOptions(tz="UTC"))


def test_non_positive_back_adjusted_price_is_refused_naming_row(tmp_path: Path) -> None:
    lines = (QUANTIACS / "F_CL.txt").read_text().splitlines()
    lines[11] = "19900117,-50.0000,100.0000,-60.0000,10.0000,100,100,0,0,0.0000"
    p = tmp_path / "F_CL.txt"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError) as e:
        read_bars(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}: column ' OPEN', row 10 (1990-01-17 00:00:00+00:00)")
    assert "non-positive price open -50.0" in msg and "back-adjusted" in msg


def test_columns_flag_names_unusual_headers(tmp_path: Path) -> None:
    lines = (QUANTIACS / "F_CL.txt").read_text().splitlines()
    lines[0] = "WHEN, FIRST, TOP, BOTTOM, LAST, QTY, OI, P, R, RINFO"
    p = tmp_path / "F_CL.txt"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"missing column 'open' .*--columns open=COLUMN"):
        read_bars(p)
    cols = ("ts=WHEN", "open=FIRST", "high=TOP", "low=BOTTOM", "close=LAST", "volume=QTY")
    bars = read_bars(p, options=ReadOptions(columns=cols))
    assert bars.equals(read_bars(QUANTIACS / "F_CL.txt"))
    with pytest.raises(DataError, match=r"--columns ts=DATE: no column 'DATE' \(columns: WHEN"):
        read_bars(p, options=ReadOptions(columns=("ts=DATE",)))
    with pytest.raises(DataError, match="not FIELD=COLUMN"):
        ReadOptions(columns=("ts",))


def test_symbol_flag(tmp_path: Path) -> None:
    bars = read_bars(QUANTIACS / "F_CL.txt", options=ReadOptions(symbol="CL"))
    assert bars["symbol"].unique().to_list() == ["CL"]
    p = tmp_path / "x.csv"
    p.write_text("ts,symbol,open,high,low,close\n2024-01-02 00:00,ES,1,1,1,1\n")
    with pytest.raises(DataError, match="has a symbol column 'symbol'; --symbol is for"):
        read_bars(p, options=ReadOptions(symbol="NQ"))


def test_quantconnect_minute_stamps(tmp_path: Path) -> None:
    p = tmp_path / "spy.csv"
    rows = [
        f"20240102 {9 + (30 + i) // 60:02d}:{(30 + i) % 60:02d},470,471,469,470,5" for i in range(5)
    ]
    p.write_text("\n".join(rows) + "\n")
    bars = read_bars(p, options=ReadOptions(tz="America/New_York"))
    assert bars["ts"][0] == datetime(2024, 1, 2, 14, 30, tzinfo=UTC)
    assert bars["symbol"][0] == "SPY" and bars.height == 5


def test_interval_disagreeing_with_the_file_name_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "ES_5min_bars.csv"
    rows = [f"2024-01-02 14:{30 + i}:00,4700,4701,4699,4700,1" for i in range(6)]
    p.write_text("ts,open,high,low,close,volume\n" + "\n".join(rows) + "\n")
    with pytest.raises(DataError, match="bars are 1min apart but the file name says 5min"):
        read_bars(p, tz="UTC")
    assert read_bars(p, options=ReadOptions(tz="UTC", allow_odd_times=True)).height == 6


def test_stock_bars_mostly_in_closed_hours_are_never_valid(tmp_path: Path) -> None:
    """A quarter of the bars in the calendar's closed hours is too many, zone or not."""
    p = tmp_path / "AAPL.csv"
    rows = [f"2024-01-0{2 + i // 10} 0{i % 10}:00:00,180,181,179,180,1" for i in range(30)]
    p.write_text("ts,open,high,low,close,volume\n" + "\n".join(rows) + "\n")
    report = inspect_report(p, tz="UTC")
    assert not report["valid"]
    assert "of the bars fall in the closed hours of calendar xnys" in report["error"]


def test_zone_spellings() -> None:
    assert parse_zone("-05:00").offset_minutes == -300
    assert parse_zone("UTC-5").name == "UTC-05:00"
    assert parse_zone("+0530").offset_minutes == 330
    assert parse_zone("Etc/GMT+5").offset_minutes is None
    with pytest.raises(DataError, match="offsets run from -12:00 to \\+14:00"):
        parse_zone("UTC+15")
    with pytest.raises(DataError, match="unknown time zone 'Mars/Base'"):
        parse_zone("Mars/Base")
    p = load_bars(HISTDATA, tz="+05:30").frame["ts"][0]
    assert p == datetime(2018, 1, 1, 11, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "symbol", "tz", "minutes"),
    [
        ("HISTDATA_COM_ASCII_XAUUSD_M12018.zip", "XAUUSD", "America/New_York", 1),
        ("DAT_ASCII_SPXUSD_M1_2018.csv", "SPXUSD", "America/New_York", 1),
        ("F_CL.txt", "F_CL", None, None),
        ("ESZ4.GLBX_5min_bars_20241001.csv", "ESZ4", None, 5),
        ("gbpusd-m1-bid-2012.csv", "GBPUSD", None, 1),
        ("btc-perp-20211231-20220201_1m.csv", "BTC-PERP", None, 1),
    ],
)
def test_names(name: str, symbol: str, tz: str | None, minutes: int | None) -> None:
    g = guess_from_name(Path(name))
    assert (g.symbol, g.tz) == (symbol, tz)
    assert (g.interval.total_seconds() / 60 if g.interval else None) == minutes


def test_bar_minutes_aggregates_within_trading_days() -> None:
    one = read_bars(HISTDATA)
    five = read_bars(HISTDATA, options=ReadOptions(bar_minutes=5))
    # Labels are bucket open times on a 5-minute grid from the session open (17:00 New York).
    assert five["ts"][0] == datetime(2018, 1, 1, 22, 0, tzinfo=UTC)
    first = one.filter(pl.col("ts") < datetime(2018, 1, 1, 22, 5, tzinfo=UTC))
    row = five.row(0, named=True)
    assert row["open"] == first["open"][0] and row["close"] == first["close"][-1]
    assert row["high"] == first["high"].max() and row["low"] == first["low"].min()
    # Causal: a bucket holds only bars from its label to label + 5 minutes.
    assert (five["ts"].dt.minute() % 5 == 0).all()
    # The Friday close and Sunday open stay in their own trading days.
    friday_last = five.filter(pl.col("ts") < datetime(2018, 1, 7, tzinfo=UTC))["ts"][-1]
    assert friday_last == datetime(2018, 1, 5, 21, 55, tzinfo=UTC)
    buckets = one.select(pl.col("ts").dt.truncate("5m")).unique().height
    assert five.height == buckets == 123
    with pytest.raises(DataError, match="--bar-minutes 7 needs bars that divide"):
        read_bars(QUANTIACS / "F_CL.txt", options=ReadOptions(bar_minutes=7))


def test_inspect_cli_on_histdata(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from foxhunt.cli import main

    folder = tmp_path / "histdata"
    folder.mkdir()
    shutil.copy(HISTDATA, folder)
    assert main(["data", "inspect", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "EURUSD" in out and "verdict: valid" in out and "fx_24x5" in out
    assert "guess:" in out and "--symbol to change" in out
    assert main(["data", "inspect", str(folder), "--tz", "UTC"]) == 2
    out = capsys.readouterr().out
    assert "verdict: invalid" in out and "--tz America/New_York" in out


@pytest.mark.parametrize(
    ("symbol", "asset_class", "calendar"),
    [
        ("XAUUSD", "metals", "fx_24x5"),
        ("SPXUSD", "cash_index", "fx_24x5"),
        ("NSXUSD", "cash_index", "fx_24x5"),
        ("BCOUSD", "energy", "fx_24x5"),
        ("F_CL", "unknown", "xnys"),  # a US future: the NYSE's days (fx_24x5 until session 54)
        ("F_FB", "unknown", "fx_24x5"),  # any other
        ("EURUSD", "spot_fx", "fx_24x5"),
    ],
)
def test_vendor_symbols_get_a_fitting_calendar(
    symbol: str, asset_class: str, calendar: str
) -> None:
    from foxhunt.data.market.instruments import resolve

    inst = resolve(symbol, warn=False)
    assert (inst.asset_class, inst.calendar) == (asset_class, calendar)


def test_inspect_names_instrument_guesses() -> None:
    report = inspect_report(QUANTIACS)
    line = next(g for g in report["guesses"] if g.startswith("instrument of"))
    assert "F_CL, F_DX (2 symbols)" in line and "--instruments FILE" in line


def test_histdata_clock_is_new_york_time_with_daylight_saving() -> None:
    """In July the FX week still closes at 16:59 file time: New York (EDT), not a fixed EST."""
    july = REAL / "histdata-july" / "HISTDATA_COM_ASCII_EURUSD_M12018.zip"
    bars = read_bars(july)
    assert bars["ts"][0] == datetime(2018, 7, 13, 19, 0, tzinfo=UTC)  # 15:00 EDT


def test_a_zone_the_user_gives_is_kept_and_the_better_one_named(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """--tz -05:00 (histdata's documented EST) on July bars: the user's zone is read (a run
    trained with --tz reads its later files the same way), with one warning naming New York;
    a zone that also puts over a quarter of the bars in closed hours is still refused."""
    july = REAL / "histdata-july" / "HISTDATA_COM_ASCII_EURUSD_M12018.zip"
    with caplog.at_level(logging.WARNING):
        bars = read_bars(july, tz="-05:00")
    assert bars["ts"][0] == datetime(2018, 7, 13, 20, 0, tzinfo=UTC)  # 15:00 read as EST
    warned = [r.getMessage() for r in caplog.records if "kept as given" in r.getMessage()]
    assert len(warned) == 1
    assert "read as UTC-05:00" in warned[0] and "likely America/New_York" in warned[0]
    with pytest.raises(DataError, match="33.3% of the bars fall in the closed hours"):
        read_bars(HISTDATA, tz="UTC")  # the Sunday open read 5 hours early


def test_a_kept_zone_makes_the_verdict_suspicious_not_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--tz -05:00 on July bars reads (exit 0: train takes the same flag) but is not "valid":
    the verdict says suspicious and lists the kept zone; so does a problem kept with
    --allow-odd-times. The same file as found is valid."""
    from foxhunt.cli import main

    july = REAL / "histdata-july"
    report = inspect_report(july, tz="-05:00")
    assert (report["verdict"], report["valid"], report["readable"]) == ("suspicious", False, True)
    # The fixture's 240 bars straddle the Friday close: read as EST, its last hour is closed.
    kept, closed = report["warnings"]
    assert kept.startswith("--tz -05:00 kept as given: ") and "likely America/New_York" in kept
    assert closed.startswith("EURUSD: 60 of 240 bars (25%) fall in closed hours")
    assert main(["data", "inspect", str(july), "--tz", "-05:00"]) == 0
    out = capsys.readouterr().out
    assert "verdict: suspicious - 2 warnings above" in out and "verdict: valid" not in out
    assert main(["data", "inspect", str(july)]) == 0
    assert "verdict: valid" in capsys.readouterr().out
    plain = tmp_path / "EURUSD.csv"  # New York times read as UTC: refused, or kept with the flag
    with zipfile.ZipFile(HISTDATA) as z:
        plain.write_bytes(z.read(MEMBER))
    assert inspect_report(plain)["verdict"] == "invalid"
    kept = inspect_report(plain, options=ReadOptions(allow_odd_times=True))
    assert (kept["verdict"], kept["readable"]) == ("suspicious", True)
    assert kept["warnings"][0].startswith("kept (--allow-odd-times): ")


def test_pandas_frame_indexed_by_symbol_and_ts() -> None:
    """A (symbol, ts) MultiIndex is what pandas users hold: read as columns, not refused."""
    import foxhunt
    from foxhunt.data.sources.demo import demo_bars

    flat = demo_bars(300, seed=1)
    indexed = flat.to_pandas().set_index(["symbol", "ts"])
    got = foxhunt.read_bars(indexed)
    want = foxhunt.read_bars(flat)
    assert got["close"].tolist() == want["close"].to_list()
    assert got["symbol"].unique().tolist() == ["ES"]


def test_the_users_instrument_table_sets_the_calendar_judged(tmp_path: Path) -> None:
    """FOO looks like a stock (NYSE hours), so Globex-hours bars are refused; the user's table
    saying it trades on CME equity hours makes the same file read."""
    from foxhunt.data.market.instrument import Instrument
    from foxhunt.data.sources.demo import demo_bars

    p = tmp_path / "bars.csv"
    demo_bars(220, seed=5).with_columns(symbol=pl.lit("FOO")).write_csv(p)
    with pytest.raises(DataError, match="closed hours of calendar xnys"):
        read_bars(p)
    table = {"FOO": Instrument("FOO", 0.25, 50.0, "USD", "equity_index", "cme_equity")}
    assert read_bars(p, instruments=table).height == 220
