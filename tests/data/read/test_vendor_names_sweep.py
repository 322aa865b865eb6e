"""Symbols from vendors' default download names found by a sweep of plausible vendor files
(:func:`guess_from_name`): a ticker with its market (Yahoo's ``7203.T.csv``, Stooq's
``7203_jp_d.csv``), a site's name or generic words before the ticker (MacroTrends', NSE India's)."""

from __future__ import annotations

import datetime as dt
from datetime import timedelta
from pathlib import Path

import pytest

from foxhunt.data.market.bars_market import resolve_bars
from foxhunt.data.market.instruments import calendar_of
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.vendors import NameGuess, guess_from_name
from foxhunt.errors import DataError

MARKET = "the file name (a ticker and its market)"


@pytest.mark.parametrize(
    ("name", "symbol"),
    [
        ("7203.T.csv", "7203.T"),  # Toyota, Tokyo: was T, AT&T's stock
        ("6758.T.csv", "6758.T"),
        ("0700.HK.csv", "0700.HK"),  # was HK
        ("005930.KS.csv", "005930.KS"),  # was KS
        ("2330.TW.csv", "2330.TW"),  # was TW
        ("600519.SS.csv", "600519.SS"),  # was SS
        ("D05.SI.csv", "D05.SI"),  # was D05
        ("BMW.DE.csv", "BMW.DE"),  # was BMW, a stock on the NYSE's calendar
        ("RY.TO.csv", "RY.TO"),  # was RY
        ("RELIANCE.NS.csv", "RELIANCE.NS"),
        ("BRK-B.TO.csv", "BRK-B.TO"),
        ("7203.T (1).csv", "7203.T"),  # a browser's second download
        ("7203.jp.txt", "7203.JP"),  # Stooq's bulk files: was JP
    ],
)
def test_a_ticker_and_its_market_are_the_symbol(name: str, symbol: str) -> None:
    assert guess_from_name(Path(name)) == NameGuess(symbol, MARKET)


def test_a_ticker_and_its_market_keep_the_names_interval() -> None:
    assert guess_from_name(Path("daily_7203.T.csv")) == NameGuess(
        "7203.T", MARKET, None, timedelta(days=1)
    )
    assert guess_from_name(Path("0700.HK_5min.csv")) == NameGuess(
        "0700.HK", MARKET, None, timedelta(minutes=5)
    )


@pytest.mark.parametrize(
    ("name", "symbol"), [("7203_jp_d.csv", "7203.JP"), ("vod_uk_w.csv", "VOD.UK")]
)
def test_stooqs_download_of_a_ticker_outside_the_us(name: str, symbol: str) -> None:
    """Stooq's ``{ticker}_{market}_{interval}.csv`` (was ``JP``, and ``VOD`` on the NYSE's
    calendar)."""
    assert guess_from_name(Path(name)) == NameGuess(
        symbol, "Stooq's file name (a ticker and its market)"
    )


@pytest.mark.parametrize(
    ("name", "symbol"),
    [
        ("aapl.us.txt", "AAPL"),  # a US listing: the bare ticker, as ever
        ("aapl_us_d.csv", "AAPL"),
        ("VOD.L.csv", "VOD.L"),  # one letter: a share class's shape, kept whole as before
        ("ES.F.csv", "ES.F"),  # Stooq's futures suffix
        ("BRK.B.csv", "BRK.B"),
        ("FDAX_de.csv", "FDAX"),  # a locale, not Stooq's market
        ("ES.c.0.csv", "ES"),  # Databento's continuous ES.c.0
        ("SampleData.csv", "SAMPLEDATA"),  # CamelCase alone: still the name's only word
    ],
)
def test_names_that_read_as_before(name: str, symbol: str) -> None:
    assert guess_from_name(Path(name)) == NameGuess(symbol, "the file name")


def _yahoo(path: Path, start: float) -> None:
    """Yahoo's download of Tokyo 5-minute bars (times with their +09:00 offset)."""
    rows = "".join(
        f"2024-01-04 09:{5 * i:02d}:00+09:00,{start + i},{start + i + 2},{start + i - 2},"
        f"{start + i + 1},{start + i + 1},{10_000 + i}\n"
        for i in range(6)
    )
    path.write_text("Datetime,Open,High,Low,Close,Adj Close,Volume\n" + rows)


def test_two_tokyo_tickers_in_a_folder_are_two_series_off_the_nyse_calendar(
    tmp_path: Path,
) -> None:
    """Both were the symbol ``T`` (AT&T's): refused as one instrument interleaved, and alone
    refused as bars in the NYSE's closed hours."""
    _yahoo(tmp_path / "7203.T.csv", 2700.0)
    _yahoo(tmp_path / "6758.T.csv", 13000.0)
    bars = read_bars(tmp_path)
    assert bars.group_by("symbol").len().sort("symbol").rows() == [("6758.T", 6), ("7203.T", 6)]
    assert bars.filter(bars["symbol"] == "7203.T")["open"][0] == 2700.0
    instruments = resolve_bars(bars)
    assert {s: (i.asset_class, i.calendar) for s, i in instruments.items()} == {
        "6758.T": ("stock", "xtks"),  # an unknown market on 24x7 until session 54
        "7203.T": ("stock", "xtks"),
    }


@pytest.mark.parametrize(
    ("name", "symbol"),
    [
        ("MacroTrends_Data_Download_AAPL.csv", "AAPL"),  # was MACROTRENDS
        ("MacroTrends_Data_Download_MSFT.csv", "MSFT"),
        ("Quote-Equity-RELIANCE-EQ-03-01-2024-to-12-01-2024.csv", "RELIANCE"),  # was QUOTE
        ("MyExport_ES_5min.csv", "ES"),
    ],
)
def test_a_sites_name_and_generic_words_before_the_ticker(name: str, symbol: str) -> None:
    assert guess_from_name(Path(name)).symbol == symbol


@pytest.mark.parametrize(
    ("name", "symbol", "calendar"),
    [
        ("EUREX_FDAX1!, 1D.csv", "FDAX", "eurex"),  # was FDAX1, unknown on 24x7
        ("EUREX_FGBL1!, 1D.csv", "FGBL", "eurex"),
        ("CME_6E1!, 1D.csv", "6E", "cme_fx"),  # was 6E1
        ("CME_SR31!, 1D.csv", "SR3", "cme_rates"),  # was SR31
        ("CME_MINI_ES1!, 5.csv", "ES", "cme_equity"),
        ("@6E#C.csv", "6E", "cme_fx"),
        ("CME_ES2!, 1D.csv", "ES2", "24x7"),  # the second month keeps its number
    ],
)
def test_continuous_futures_of_any_root(name: str, symbol: str, calendar: str) -> None:
    guess = guess_from_name(Path(name))
    assert guess.symbol == symbol
    assert calendar_of(guess.symbol, None) == calendar


@pytest.mark.parametrize(
    ("name", "symbol", "calendar"),
    [
        ("XAU_USD_D.csv", "XAUUSD", "fx_24x5"),  # Oanda's: was XAU, a stock on the NYSE's
        ("XAG_USD_H1.csv", "XAGUSD", "fx_24x5"),
        ("BCO_USD.csv", "BCOUSD", "fx_24x5"),
        ("WTICO_USD.csv", "WTICOUSD", "fx_24x5"),  # was WTICO
        ("JPY=X.csv", "USDJPY", "fx_24x5"),  # Yahoo's dollar rate: was JPY
        ("EUR=X.csv", "USDEUR", "fx_24x5"),
        ("EURUSD=X.csv", "EURUSD", "fx_24x5"),
    ],
)
def test_cfds_and_dollar_rates_named_like_pairs(name: str, symbol: str, calendar: str) -> None:
    guess = guess_from_name(Path(name))
    assert guess.symbol == symbol
    assert calendar_of(guess.symbol, None) == calendar


@pytest.mark.parametrize(
    ("symbol", "calendar"),
    [
        # London: was a US share class on the NYSE's calendar, then (sessions 52-53) 24x7
        ("VOD.L", "xlon"),
        ("SONY.T", "xtks"),
        ("SAP.F", "24x7"),  # Frankfurt's floor: hours of its own, an unknown market
        ("ABC.V", "xtse"),  # the TSX Venture, on Toronto's hours and holidays (session 59)
        ("BRK.B", "xnys"),  # a share class stays a US stock
        ("BRK-B", "xnys"),
        ("BF.B", "xnys"),
    ],
)
def test_a_one_letter_market_outside_the_us_is_no_share_class(symbol: str, calendar: str) -> None:
    assert calendar_of(symbol, None) == calendar


@pytest.mark.parametrize(
    ("name", "interval"),
    [
        ("AAPL_5d_1m.csv", timedelta(minutes=1)),  # yfinance's period, then its interval
        ("AAPL_60d_5m.csv", timedelta(minutes=5)),  # was 60 days: the bars refused as misread
        ("AAPL_10days_1min.csv", timedelta(minutes=1)),
        ("AAPL_7d.csv", None),  # the days downloaded, not a bar of a week
        # a count of M in capitals claims nothing (months or minutes by vendor): the bars are
        # daily (until session 53 two claims that differed, so none); alone, no claim (was 3
        # and 1 minutes: Binance's monthly klines refused as misread)
        ("SPY_6M_daily.csv", timedelta(days=1)),
        ("SPY_3M.csv", None),
        ("BTCUSDT-1M-2024-01.csv", None),
        ("BTCUSDT-1m-2024-01.csv", timedelta(minutes=1)),
        ("ES_5min.csv", timedelta(minutes=5)),
        ("AAPL_1d.csv", timedelta(days=1)),
        ("ES_1min_1min.csv", timedelta(minutes=1)),
    ],
)
def test_a_download_period_beside_the_interval_is_no_claim(
    name: str, interval: timedelta | None
) -> None:
    assert guess_from_name(Path(name)).interval == interval


@pytest.mark.parametrize(
    ("name", "symbol"),
    [  # until session 53 BTC and ETH, the CME futures (cme_crypto's weekdays)
        ("BTC-GBP.csv", "BTCGBP"),
        ("BTC_KRW.csv", "BTCKRW"),
        ("BTC_JPY_bitflyer_1m.csv", "BTCJPY"),
        ("ETH-JPY.csv", "ETHJPY"),
        ("BTC-TRY.csv", "BTCTRY"),
    ],
)
def test_a_crypto_asset_quoted_in_an_exchanges_currency_is_a_pair(name: str, symbol: str) -> None:
    guess = guess_from_name(Path(name))
    assert guess.symbol == symbol
    assert calendar_of(guess.symbol, None) == "24x7"


@pytest.mark.parametrize(
    ("name", "symbol", "interval"),
    [
        ("EURUSDm1.csv", "EURUSD", timedelta(minutes=1)),  # Exness's suffix: was EURUSDM1, 24x7
        ("intraday_extended_5min_AAPL.csv", "AAPL", timedelta(minutes=5)),  # was INTRADAY
        ("history_AAPL.csv", "AAPL", None),
        ("ES_historical.csv", "ES", None),
    ],
)
def test_more_words_of_a_name_that_say_nothing_of_the_symbol(
    name: str, symbol: str, interval: timedelta | None
) -> None:
    guess = guess_from_name(Path(name))
    assert (guess.symbol, guess.interval) == (symbol, interval)


@pytest.mark.parametrize(
    ("name", "symbol"),
    [
        ("gate_BTC_USDT_1m.csv", "BTCUSDT"),  # was GATE, a stock
        ("bybit_BTCUSDT_1m.csv", "BTCUSDT"),
        ("KRW-BTC.csv", "BTCKRW"),  # Upbit's and Bithumb's market first (was KRW)
        ("USDT-ETH.csv", "ETHUSDT"),
        ("ETH-BTC.csv", "ETHBTC"),  # a pair as written stays
    ],
)
def test_an_exchanges_prefix_and_its_market_first_pairs(name: str, symbol: str) -> None:
    assert guess_from_name(Path(name)).symbol == symbol


def test_a_tokyo_stocks_naive_local_times_are_refused_naming_its_zone(tmp_path: Path) -> None:
    """Tokyo's 09:00-11:25 without an offset: read as UTC on 24x7, valid and nine hours off,
    until session 54; on Tokyo's calendar they fall in its closed hours, and the refusal names
    the zone that fits. With that zone they read."""
    rows = "".join(
        f"2024-01-{d} {h:02d}:{m:02d}:00,2700.0,2702.0,2698.0,2701.0,10000\n"
        for d in (10, 11)
        for h in (9, 10)
        for m in range(0, 60, 5)
    )
    path = tmp_path / "7203.T.csv"
    path.write_text("Datetime,Open,High,Low,Close,Volume\n" + rows)
    with pytest.raises(DataError, match=r"the file's clock is likely Asia/Tokyo; --tz Asia/Tokyo"):
        read_bars(path, min_bars=1)
    bars = read_bars(path, min_bars=1, options=ReadOptions(tz="Asia/Tokyo"))
    assert bars["ts"][0] == dt.datetime(2024, 1, 10, 0, 0, tzinfo=dt.UTC)
