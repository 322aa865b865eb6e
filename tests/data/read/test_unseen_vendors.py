"""Vendors' files swept in session 59: each read right where it was misread or refused."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.inspection import inspect_report
from foxhunt.data.read.lean import day_millis
from foxhunt.data.read.vendors import guess_from_name

_SIERRA_ROWS = (
    "Date, Time, Open, High, Low, Last, Volume, NumberOfTrades, BidVolume, AskVolume\n"
    "2018/1/2, 08:00:00, 12950.0, 12960.5, 12948.0, 12955.0, 120, 80, 60, 60\n"
    "2018/1/2, 08:01:00, 12955.0, 12958.0, 12950.5, 12952.0, 95, 60, 50, 45\n"
)


@pytest.mark.parametrize(
    ("name", "root", "contract"),
    [
        ("FDAX-201803-EUREX.txt", "FDAX", "FDAXH18"),
        ("ZN-201806-CBOT.txt", "ZN", "ZNM18"),
        ("ES-202412-CME.txt", "ES", "ESZ24"),
    ],
)
def test_sierra_charts_contract_names_keep_the_contract(
    tmp_path: Path, name: str, root: str, contract: str
) -> None:
    """Sierra Chart's ``ROOT-YYYYMM-EXCHANGE`` (its CQG, Rithmic and TT symbols): the root and
    the contract month (until session 59 the root alone: two months in a folder collided)."""
    path = tmp_path / name
    path.write_text(_SIERRA_ROWS)
    bars = read_bars(path, min_bars=1, tz="Europe/Berlin")
    assert bars["symbol"].to_list() == [root, root]
    assert bars["contract"].to_list() == [contract, contract]
    assert bars["ts"][0] == datetime(2018, 1, 2, 7, 0, tzinfo=UTC)


def test_an_unknown_root_in_sierras_form_is_no_contract() -> None:
    """Only a built-in root is read as a contract (``XYZ-202403-EUREX`` keeps its own word)."""
    assert guess_from_name(Path("XYZ-202403-EUREX.txt")).symbol == "XYZ"


@pytest.mark.parametrize(
    ("name", "symbol", "minutes"),
    [
        ("tBTCUSD_1m.csv", "BTCUSD", 1),
        ("tETHUSD.csv", "ETHUSD", None),
        ("bitfinex_tBTCUSD_1h.csv", "BTCUSD", 60),
        ("tBTCUST.csv", "BTCUSDT", None),  # Bitfinex's UST is Tether
        ("tEURUSD.csv", "EURUSD", None),
    ],
)
def test_bitfinexs_trading_pair_names_lose_their_t(
    name: str, symbol: str, minutes: int | None
) -> None:
    """Bitfinex writes a trading pair ``tBTCUSD``: the pair is ``BTCUSD`` (until session 59
    ``TBTCUSD``, an unknown instrument)."""
    guess = guess_from_name(Path(name))
    assert guess.symbol == symbol
    assert guess.interval == (None if minutes is None else timedelta(minutes=minutes))


def test_a_t_before_a_word_that_is_no_pair_stays() -> None:
    assert guess_from_name(Path("trades.csv")).symbol == "TRADES"
    assert guess_from_name(Path("tAAPL.csv")).symbol == "TAAPL"


def test_bitfinex_candles_read_as_their_pair(tmp_path: Path) -> None:
    path = tmp_path / "tBTCUSD_1m.csv"
    path.write_text(
        "MTS,OPEN,CLOSE,HIGH,LOW,VOLUME\n"
        "1704067200000,42280,42300,42310,42270,1.5\n"
        "1704067260000,42300,42290,42320,42285,2.1\n"
    )
    bars = read_bars(path, min_bars=1)
    assert bars["symbol"].to_list() == ["BTCUSD", "BTCUSD"]
    assert bars["close"].to_list() == [42300.0, 42290.0]
    assert bars["ts"][1] == datetime(2024, 1, 1, 0, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("2018-Jan-02", datetime(2018, 1, 2, tzinfo=UTC)),
        ("2018-January-02", datetime(2018, 1, 2, tzinfo=UTC)),
        ("2018-Dec-31 09:30:00", datetime(2018, 12, 31, 9, 30, tzinfo=UTC)),
    ],
)
def test_a_year_first_date_with_its_month_named_reads(
    tmp_path: Path, written: str, expected: datetime
) -> None:
    """``2018-Jan-02`` (``yyyy-mmm-dd``): until session 59 refused as an unparsable
    timestamp, read only with ``--ts-format '%Y-%b-%d'``."""
    path = tmp_path / "SPY.csv"
    path.write_text(f"Date,Open,High,Low,Close,Volume\n{written},267.84,268.81,267.40,268.77,866\n")
    bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == [expected]
    assert bars["open"].to_list() == [267.84]


def test_naive_times_read_as_utc_are_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A file without a zone: one line says its times were read as UTC (until session 59 a
    warning and a guess line said it twice)."""
    path = tmp_path / "ES.csv"
    path.write_text(
        "Date,Time,Open,High,Low,Close,Volume\n"
        "2024-01-02,15:00,4700,4701,4699,4700.5,10\n"
        "2024-01-02,15:01,4700.5,4702,4700,4701,12\n"
    )
    with caplog.at_level(logging.INFO):
        read_bars(path, min_bars=1)
    said = [m for m in caplog.messages if "naive timestamps" in m and "UTC" in m]
    assert said == [f"naive timestamps in {path} taken as UTC; pass --tz ZONE if they are local"]


def _lean_zip(folder: Path, rows: str) -> Path:
    """QuantConnect LEAN's minute file of 2 January 2024, zipped as LEAN stores it."""
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "20240102_trade.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("20240102_spy_minute_trade.csv", rows)
    return path


def test_leans_milliseconds_since_midnight_read_on_the_day_its_name_holds(tmp_path: Path) -> None:
    """LEAN's minute bars, ``34200000`` (09:30 New York) in ``20240102_trade.zip``: read as that
    day's naive times (until session 59 refused: "no --ts-format reads it")."""
    rows = (
        "34200000,4721600,4722500,4719000,4721000,120000\n"
        "34260000,4721000,4723000,4720500,4722800,90000\n"
        "34320000,4722800,4724000,4722000,4723500,85000\n"
    )
    path = _lean_zip(tmp_path / "spy", rows)
    bars = read_bars(path, min_bars=1, tz="America/New_York")
    assert bars["ts"].to_list() == [datetime(2024, 1, 2, 14, m, tzinfo=UTC) for m in (30, 31, 32)]
    assert bars["symbol"].to_list() == ["SPY"] * 3
    assert bars["volume"].to_list() == [120000.0, 90000.0, 85000.0]


def test_clocks_of_a_day_in_a_dated_file_are_no_milliseconds(tmp_path: Path) -> None:
    """Whole-hour ``HHMMSS`` clocks (``100000`` is 10:00) stay clocks, never milliseconds."""
    lf = pl.LazyFrame({"t": [90000, 100000, 110000]})
    assert day_millis(lf, pl.col("t"), tmp_path / "20240102.csv") is None
    lf = pl.LazyFrame({"t": [34200000, 34260000]})
    assert day_millis(lf, pl.col("t"), tmp_path / "spy.csv") is None  # no date in the name


def test_refinitivs_exchange_date_and_continuous_rics_read(tmp_path: Path) -> None:
    """Eikon's export: ``Exchange Date`` newest first, named by its RIC ``LCOc1`` (Brent's
    front month): until session 59 refused as missing 'ts', and named ``LCOC1``."""
    path = tmp_path / "LCOc1.csv"
    path.write_text(
        "Exchange Date,Close,Net,%Chg,Open,Low,High,Volume,Turnover - USD,Flow\n"
        "04-Jan-2024,77.59,-0.66,-0.84%,78.24,77.10,78.87,312345,,\n"
        "03-Jan-2024,78.25,2.36,3.11%,75.95,75.62,78.47,401234,,\n"
    )
    bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == [datetime(2024, 1, d, tzinfo=UTC) for d in (3, 4)]
    assert bars["symbol"].to_list() == ["BRN", "BRN"]
    assert bars["close"].to_list() == [78.25, 77.59]


@pytest.mark.parametrize(
    ("name", "symbol"),
    [("ESc1.csv", "ES"), ("TYc2.csv", "ZN2"), ("CLc1_daily.csv", "CL"), ("ESC1.csv", "ESC1")],
)
def test_refinitivs_continuous_rics_are_their_roots(name: str, symbol: str) -> None:
    assert guess_from_name(Path(name)).symbol == symbol


_FINNHUB = (
    '{"c":[185.64,184.25],"h":[188.44,185.88],"l":[183.885,183.43],"o":[187.15,184.22],'
    '"s":"ok","t":[1704171600,1704258000],"v":[82488674,58414460]}'
)
_DERIBIT = (
    '{"jsonrpc":"2.0","result":{"volume":[10.1,12.2],"ticks":[1704067200000,1704067260000],'
    '"status":"ok","open":[42280.0,42290.0],"low":[42270.0,42285.0],"high":[42310.0,42320.0],'
    '"cost":[427000,516000],"close":[42290.0,42300.0]},"usIn":1,"usOut":2,"testnet":false}'
)


@pytest.mark.parametrize(
    ("name", "text", "symbol", "times", "closes"),
    [
        (
            "AAPL_finnhub.json",
            _FINNHUB,
            "AAPL",
            [datetime(2024, 1, 2, 5, tzinfo=UTC), datetime(2024, 1, 3, 5, tzinfo=UTC)],
            [185.64, 184.25],
        ),
        (
            "BTC-PERPETUAL_1m.json",
            _DERIBIT,
            "BTC-PERPETUAL",  # Deribit's perpetual, not CME's bitcoin future BTC
            [datetime(2024, 1, 1, 0, 0, tzinfo=UTC), datetime(2024, 1, 1, 0, 1, tzinfo=UTC)],
            [42290.0, 42300.0],
        ),
    ],
)
def test_json_bars_written_one_list_per_field_read(
    tmp_path: Path, name: str, text: str, symbol: str, times: list[datetime], closes: list[float]
) -> None:
    """Finnhub's and TradingView's ``{"t": [...], "o": [...], ...}``, Deribit's chart data:
    until session 59 refused as an object with no list of bar records."""
    path = tmp_path / name
    path.write_text(text)
    bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == times
    assert bars["symbol"].to_list() == [symbol, symbol]
    assert bars["close"].to_list() == closes


def test_dotted_dates_of_one_day_read_day_first_without_doubt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Dukascopy's ``Gmt time`` of one day, ``02.01.2020 00:00:00.000``: dotted dates are
    written day-first (until session 59 a warning, verdict suspicious, named the month-first
    reading of 1 February); slashed ones keep their doubt."""
    path = tmp_path / "EURUSD_Candlestick_1_M_BID_02.01.2020-02.01.2020.csv"
    path.write_text(
        "Gmt time,Open,High,Low,Close,Volume\n"
        "02.01.2020 00:00:00.000,1.12117,1.12135,1.12110,1.12130,123.45\n"
        "02.01.2020 00:01:00.000,1.12130,1.12140,1.12120,1.12125,98.7\n"
    )
    with caplog.at_level(logging.WARNING):
        bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == [datetime(2020, 1, 2, 0, m, tzinfo=UTC) for m in (0, 1)]
    assert not [m for m in caplog.messages if "day-first" in m]
    assert inspect_report(path)["verdict"] == "valid"
