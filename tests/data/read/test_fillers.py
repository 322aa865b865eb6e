"""A vendor's filler bars (flat, no volume, in closed hours: Dukascopy's weekends) are dropped
with one warning per file; a flat bar in open hours, one with volume, one of a file without a
volume column and one on a 24x7 calendar are kept."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.market.instrument import Instrument
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.fillers import filler_mask, without_fillers
from foxhunt.data.read.options import ReadOptions

FRIDAY = datetime(2024, 3, 8, 21, 58, tzinfo=UTC)  # 16:58 New York: the FX week's last minutes


def _bars(symbol: str, prices: list[tuple[float, float, float, float, float]]) -> pl.DataFrame:
    n = len(prices)
    o, h, low, c, v = (list(col) for col in zip(*prices, strict=True))
    return pl.DataFrame(
        {
            "ts": [FRIDAY + timedelta(minutes=i) for i in range(n)],
            "symbol": [symbol] * n,
            "open": o,
            "high": h,
            "low": low,
            "close": c,
            "volume": v,
            "__file": [0] * n,
        }
    )


LIVE = (1.1, 1.2, 1.0, 1.15, 5.0)
FLAT = (1.15, 1.15, 1.15, 1.15, 0.0)


def test_only_flat_bars_without_volume_in_closed_hours_are_fillers() -> None:
    # 21:58 and 21:59 are open (Friday before 17:00 New York), 22:00 on closed
    df = _bars(
        "EURUSD", [FLAT, LIVE, FLAT, (1.15, 1.15, 1.15, 1.15, 3.0), (1.1, 1.2, 1.0, 1.1, 0.0)]
    )
    assert df.select(filler_mask(df)).to_series().to_list() == [False, False, True, False, False]
    crypto = df.with_columns(symbol=pl.lit("BTCUSD"))
    assert not crypto.select(filler_mask(crypto)).to_series().any()  # 24x7: never closed
    table = {"EURUSD": Instrument("EURUSD", 1e-5, 1.0, "USD", "spot_fx", "24x7")}
    assert not df.select(filler_mask(df, table)).to_series().any()  # the user's calendar
    nulls = df.with_columns(open=pl.lit(None, dtype=pl.Float64))
    assert not nulls.select(filler_mask(nulls)).to_series().any()  # judged later, not dropped


def test_without_fillers_drops_them_in_files_with_a_volume_and_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    df = _bars("EURUSD", [LIVE, LIVE, LIVE, FLAT, FLAT])  # a live bar in closed hours is kept
    files = [Path("EURUSD.csv")]
    with caplog.at_level(logging.WARNING):
        kept = without_fillers(df, files, [{"volume": "Volume"}], "__file")
    assert kept.height == 3
    assert caplog.messages == [
        "2 flat bars without volume in closed hours in EURUSD.csv (a vendor's fillers, such as "
        "Dukascopy's weekends; first: 2024-03-08 22:01:00+00:00): not bars, dropped"
    ]
    assert without_fillers(df, files, [{"open": "Open"}], "__file").height == 5  # no volume read
    quiet = _bars("EURUSD", [LIVE, LIVE, (1.1, 1.2, 1.0, 1.15, 0.0), FLAT, FLAT, FLAT])
    spelled = [{"volume": "Volume"}]
    assert without_fillers(quiet, files, spelled, "__file").height == 6  # 2 of 6 traded
    assert without_fillers(quiet[1:], files, spelled, "__file").height == 5  # 1 of 5
    assert (
        without_fillers(quiet.with_columns(volume=pl.lit(1.0)), files, spelled, "__file").height
        == 6
    )
    half = _bars("EURUSD", [LIVE, LIVE, LIVE, FLAT, FLAT, FLAT])
    assert without_fillers(half, files, spelled, "__file").height == 3  # 3 of 6: judged


def test_a_dukascopy_file_with_its_weekend_reads_without_it(tmp_path: Path) -> None:
    """Were kept, and 28 % of a week in closed hours was refused, blaming the zone."""
    start = datetime(2024, 3, 4, tzinfo=UTC)  # Monday
    rows = []
    for m in range(0, 7 * 24 * 60, 30):
        t = start + timedelta(minutes=m)
        weekend = (
            (t.weekday() == 4 and t.hour >= 22)
            or t.weekday() == 5
            or (t.weekday() == 6 and t.hour < 21)
        )
        bar = "1.1,1.1,1.1,1.1,0" if weekend else "1.1,1.2,1.0,1.15,12.5"
        rows.append(f"{t:%d.%m.%Y %H:%M:%S}.000,{bar}\n")
    path = tmp_path / "EURUSD_Candlestick_30_M_BID_04.03.2024-10.03.2024.csv"
    path.write_text("Gmt time,Open,High,Low,Close,Volume\n" + "".join(rows))
    bars = read_bars(path, min_bars=1)
    # Monday to Friday 22:00 UTC (17:00 EST), Sunday from 21:00 UTC (17:00 EDT, 10 March)
    assert bars.height == 4 * 48 + 44 + 6
    assert (bars["volume"] > 0).all()


def test_the_symbols_own_calendar_and_the_users_table_decide_what_is_closed() -> None:
    """22:30 UTC on a Wednesday is Globex's daily halt, yet the FX week trades: a flat FX bar
    then is no filler. With a user's 24x7 table nothing is closed."""
    wednesday = datetime(2024, 3, 6, 22, 30, tzinfo=UTC)
    df = _bars("EURUSD", [LIVE, LIVE, FLAT]).with_columns(
        ts=pl.Series([wednesday + timedelta(minutes=i) for i in range(3)])
    )
    assert not df.select(filler_mask(df)).to_series().any()
    friday = _bars("EURUSD", [LIVE, LIVE, LIVE, FLAT, FLAT])  # 22:00 on: closed
    table = {"EURUSD": Instrument("EURUSD", 1e-5, 1.0, "USD", "spot_fx", "24x7")}
    files, spelled = [Path("EURUSD.csv")], [{"volume": "Volume"}]
    assert without_fillers(friday, files, spelled, "__file", table).height == 5
    assert without_fillers(friday, files, spelled, "__file").height == 3


def test_a_volume_of_one_is_traded_and_each_file_is_warned_in_order(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ticks = (1.1, 1.2, 1.0, 1.15, 1.0)  # a tick volume of 1
    a = _bars("EURUSD", [ticks, ticks, ticks, FLAT, FLAT]).with_columns(__file=pl.lit(1))
    b = _bars("GBPUSD", [LIVE, LIVE, LIVE, FLAT, FLAT]).with_columns(__file=pl.lit(0))
    files = [Path("GBPUSD.csv"), Path("EURUSD.csv")]
    spelled = [{"volume": "Volume"}, {"volume": "Volume"}]
    with caplog.at_level(logging.WARNING):
        kept = without_fillers(pl.concat([a, b]), files, spelled, "__file")
    assert kept.height == 6
    assert [m.split(" hours in ")[1].split(" ")[0] for m in caplog.messages] == [
        "GBPUSD.csv",
        "EURUSD.csv",
    ]


def _daily(path: Path, days: list[str], flat: set[str]) -> Path:
    rows = "".join(
        f"{d},100.0,100.0,100.0,100.0,0\n" if d in flat else f"{d},100.0,101.0,99.0,100.5,5000\n"
        for d in days
    )
    path.write_text("Date,Open,High,Low,Close,Volume\n" + rows)
    return path


def test_a_halted_stocks_flat_day_is_kept_and_a_daily_filler_on_a_weekend_dropped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A daily bar's 00:00 UTC was judged as a time: closed hours on the NYSE's calendar, so a
    halted or untraded stock's day (flat, no volume) was dropped as a filler, until session 54.
    Daily bars are judged by their day: Saturday's flat bar goes, Wednesday's stays."""
    days = ["2024-01-08", "2024-01-09", "2024-01-10", "2024-01-11", "2024-01-12", "2024-01-13"]
    path = _daily(tmp_path / "IBM.csv", days, {"2024-01-10", "2024-01-13"})
    with caplog.at_level(logging.WARNING):
        bars = read_bars(path, min_bars=1)
    kept = bars["ts"].dt.strftime("%Y-%m-%d").to_list()
    assert kept == days[:5]
    assert "1 flat bars without volume in closed hours" in caplog.text


def test_weekly_bars_are_not_judged_for_fillers(tmp_path: Path) -> None:
    """A week's bar is stamped by convention (pandas' Sunday): a flat one is kept."""
    days = ["2024-01-07", "2024-01-14", "2024-01-21", "2024-01-28"]
    bars = read_bars(_daily(tmp_path / "IBM.csv", days, {"2024-01-14"}), min_bars=1)
    assert bars.height == 4


def test_an_intraday_filler_on_a_trading_day_is_judged_by_its_hours(tmp_path: Path) -> None:
    """``make mutate`` (session 54): a stock's flat 5-minute bar without volume at 20:00 New York
    on a Wednesday is in closed hours (dropped), though its day trades; the bars of the session
    stay."""
    rows = "".join(
        f"2024-01-10 {h:02d}:{m:02d}:00-05:00,182.2,182.3,182.1,182.25,3000\n"
        for h, m in [(10, 0), (10, 5), (10, 10), (10, 15)]
    )
    path = tmp_path / "IBM.csv"
    path.write_text("Datetime,Open,High,Low,Close,Volume\n" + rows + _flat_at("20:00"))
    bars = read_bars(path, min_bars=1, options=ReadOptions(allow_odd_times=True))
    assert bars.height == 4 and (bars["volume"] > 0).all()


def _flat_at(clock: str) -> str:
    return f"2024-01-10 {clock}:00-05:00,182.25,182.25,182.25,182.25,0\n"


def test_a_24x7_symbol_before_a_stock_leaves_the_stocks_fillers_judged(tmp_path: Path) -> None:
    """The symbols' calendars are judged in turn; a 24x7 one (never closed) skipped, not the
    end of the turn (``make mutate``: ``break`` for ``continue`` kept the stock's Saturday)."""
    days = ["2024-01-08", "2024-01-09", "2024-01-10", "2024-01-11", "2024-01-12", "2024-01-13"]
    _daily(tmp_path / "IBM.csv", days, {"2024-01-13"})
    every = [f"2024-01-{d:02d}" for d in range(6, 14)]
    _daily(tmp_path / "BTCUSD.csv", every, set())
    bars = read_bars(tmp_path, min_bars=1)
    assert bars.filter(pl.col("symbol") == "IBM").height == 5
    assert bars.filter(pl.col("symbol") == "BTCUSD").height == 8


def test_a_symbol_of_one_bar_is_not_judged(tmp_path: Path) -> None:
    """One bar has no interval to tell a day's from a minute's: kept, flat or not."""
    days = ["2024-01-08", "2024-01-09", "2024-01-10"]
    rows = "".join(f"IBM,{d},100.0,101.0,99.0,100.5,5000\n" for d in days)
    rows += "XYZ,2024-01-13,100.0,100.0,100.0,100.0,0\n"  # a Saturday
    path = tmp_path / "stocks.csv"
    path.write_text("Symbol,Date,Open,High,Low,Close,Volume\n" + rows)
    bars = read_bars(path, min_bars=1, options=ReadOptions(allow_odd_times=True))
    assert bars.filter(pl.col("symbol") == "XYZ").height == 1
