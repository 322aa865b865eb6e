"""Symbols from file names as vendors and datasets name them (:func:`guess_from_name`): a
vendor's name before a Yahoo index or a ticker of digits, a MetaTrader broker's suffix after the
pair, Kraken's pair codes, bitcoincharts' market names (Kaggle's bitcoin history), Interactive
Brokers' ``ib_``; and the interval a count written apart from its unit claims (Kaggle's
``1-min``, Dukascopy's ``1_Hour`` and ``5_M``)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from foxhunt.data.market.instruments import resolve
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.vendors import guess_from_name

MINUTE = timedelta(minutes=1)


@pytest.mark.parametrize(
    ("name", "symbol"),
    [
        ("yahoo_^GSPC.csv", "^GSPC"),  # was YAHOO, a stock
        ("stooq_^spx_d.csv", "^SPX"),  # was STOOQ
        ("stooq_7203_jp_d.csv", "7203.JP"),  # was STOOQ
        ("yahoo_7203.T.csv", "7203.T"),  # was YAHOO
        ("yahoo_GC=F.csv", "GC"),  # was YAHOO
        ("ib_ES.csv", "ES"),  # Interactive Brokers: was IB, a stock
        ("IB_ES_1min.csv", "ES"),
        ("ibkr_AAPL.csv", "AAPL"),  # was IBKR
    ],
)
def test_a_vendors_name_before_the_ticker_is_no_symbol(name: str, symbol: str) -> None:
    assert guess_from_name(Path(name)).symbol == symbol


@pytest.mark.parametrize("name", ["NYSE_2024.csv", "nyse_2024.csv"])
def test_a_year_after_a_venue_is_no_ticker(name: str) -> None:
    """The venue's word stays the symbol, as before (the year is no ticker of digits)."""
    assert guess_from_name(Path(name)).symbol == "NYSE"


@pytest.mark.parametrize(
    ("name", "symbol"),
    [
        ("EURUSDm.csv", "EURUSD"),  # Exness: was EURUSDM
        ("EURUSDc.csv", "EURUSD"),  # was EURUSDC
        ("EURUSDM.csv", "EURUSD"),  # the known suffixes in capitals too
        ("EURUSDPRO.csv", "EURUSD"),
        ("XAUUSDm.csv", "XAUUSD"),  # was XAUUSDM
        ("BTCUSDm.csv", "BTCUSD"),  # was BTCUSDM, unknown
        ("US30m.csv", "US30"),  # was US30M, unknown
        ("EURUSD.a.csv", "EURUSD"),  # the pair already: kept
        ("EURUSD.pro.csv", "EURUSD"),
        ("EURUSD-ECN.csv", "EURUSD"),
        ("EURUSD_i.csv", "EURUSD"),
        ("EURUSD.r.csv", "EURUSD"),
        ("EURUSD#.csv", "EURUSD"),
    ],
)
def test_a_metatrader_brokers_suffix_is_no_part_of_the_pair(name: str, symbol: str) -> None:
    assert guess_from_name(Path(name)).symbol == symbol


def test_a_brokers_suffix_keeps_the_names_interval() -> None:
    guess = guess_from_name(Path("XAUUSDm_M5.csv"))
    assert (guess.symbol, guess.interval) == ("XAUUSD", timedelta(minutes=5))


@pytest.mark.parametrize("name", ["BTCUSDC.csv", "BTCUSDT.csv", "AAPLm.csv"])
def test_a_capital_after_a_crypto_pair_is_its_quote(name: str) -> None:
    """Bitcoin in USDC is no BTCUSD with a broker's ``C``; a stock's ``m`` is no pair's."""
    assert guess_from_name(Path(name)).symbol == Path(name).stem.upper()


@pytest.mark.parametrize(
    ("name", "symbol", "interval"),
    [
        ("XXBTZUSD.csv", "XBTUSD", None),  # was XXBTZUSD, unknown on 24x7
        ("XETHZUSD.csv", "ETHUSD", None),
        ("XXRPZUSD_5m.csv", "XRPUSD", timedelta(minutes=5)),
        ("XETHXXBT.csv", "ETHXBT", None),
        ("kraken_XXBTZUSD_1m.csv", "XBTUSD", MINUTE),
        ("XBTUSD_1.csv", "XBTUSD", MINUTE),  # Kraken's OHLCVT download: minutes after the pair
        ("XBTEUR_1440.csv", "XBTEUR", timedelta(days=1)),
        ("XXBTZUSD_60.csv", "XBTUSD", timedelta(hours=1)),
    ],
)
def test_krakens_pair_codes(name: str, symbol: str, interval: timedelta | None) -> None:
    guess = guess_from_name(Path(name))
    assert (guess.symbol, guess.interval) == (symbol, interval)
    inst = resolve(symbol, warn=False)
    assert (inst.asset_class, inst.calendar) == ("crypto", "24x7")


def test_a_number_after_a_pair_claims_minutes_for_krakens_codes_only() -> None:
    """``EURUSD_1.csv`` may be a part's number: no claim."""
    assert guess_from_name(Path("EURUSD_1.csv")).interval is None


@pytest.mark.parametrize(
    ("name", "symbol"),
    [
        ("bitstampUSD_1-min_data_2012-01-01_to_2021-03-31.csv", "BTCUSD"),  # was BITSTAMPUSD
        ("coinbaseUSD_1-min_data_2014-12-01_to_2019-01-09.csv", "BTCUSD"),
        ("bitflyerJPY_1-min_data_2017-07-04_to_2018-06-27.csv", "BTCJPY"),
        ("krakenEUR.csv", "BTCEUR"),  # bitcoincharts' own dump
    ],
)
def test_bitcoincharts_markets_are_bitcoin(name: str, symbol: str) -> None:
    guess = guess_from_name(Path(name))
    assert guess.symbol == symbol
    assert resolve(symbol, warn=False).asset_class == "crypto"


@pytest.mark.parametrize(
    ("name", "interval"),
    [
        ("bitstampUSD_1-min_data_2012-01-01_to_2021-03-31.csv", MINUTE),
        ("EURUSD_Candlestick_1_Hour_BID_01.01.2020-31.12.2020.csv", timedelta(hours=1)),
        ("EURUSD_Candlestick_4_Hours_ASK_01.01.2020-31.12.2020.csv", timedelta(hours=4)),
        ("EURUSD_Candlestick_1_M_BID_01.01.2020-31.12.2020.csv", MINUTE),
        ("AUDCAD_Candlestick_5_m_BID_01.06.2015-06.06.2015.csv", timedelta(minutes=5)),
        ("EURUSD_Candlestick_1_D_BID_01.01.2020-31.12.2020.csv", timedelta(days=1)),
        ("AAPL 5 min.csv", timedelta(minutes=5)),
        ("SPY_1_M.csv", None),  # a month or a minute: no claim outside Dukascopy's name
        ("AAPL_60_days.csv", None),  # a download's period
    ],
)
def test_a_count_apart_from_its_unit_claims_the_interval(
    name: str, interval: timedelta | None
) -> None:
    assert guess_from_name(Path(name)).interval == interval


def _write(path: Path, step: timedelta, n: int = 30) -> Path:
    rows = [
        f"2024-01-03 {14 + (i * step).seconds // 3600:02d}:{(i * step).seconds // 60 % 60:02d}:00,"
        f"1.1010,1.1015,1.1005,1.1012,{10 + i}"
        for i in range(n)
    ]
    path.write_text("timestamp,open,high,low,close,volume\n" + "\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize(
    ("name", "symbol", "step"),
    [
        ("EURUSDm.csv", "EURUSD", MINUTE),
        ("XXBTZUSD.csv", "XBTUSD", MINUTE),
        ("bitstampUSD_1-min_data_2012-01-01_to_2021-03-31.csv", "BTCUSD", MINUTE),
        ("EURUSD_Candlestick_5_M_BID_01.01.2024-31.01.2024.csv", "EURUSD", 5 * MINUTE),
    ],
)
def test_the_bars_read_carry_the_symbol(
    tmp_path: Path, name: str, symbol: str, step: timedelta
) -> None:
    bars = read_bars(_write(tmp_path / name, step), min_bars=1)
    assert set(bars["symbol"].to_list()) == {symbol}
    assert len(bars) == 30


@pytest.mark.parametrize(
    ("name", "symbol", "interval"),
    [
        # a word in small letters before a currency is bitcoincharts' only for its exchanges
        ("ethUSD_1m.csv", "ETHUSD", MINUTE),  # was BTCUSD in the review of session 60
        ("ltcUSD.csv", "LTCUSD", None),
        ("eurUSD.csv", "EURUSD", None),
        ("usdJPY.csv", "USDJPY", None),
        ("coinbaseUSD.csv", "BTCUSD", None),
        # a year before the unit is no count of it; a month neither
        ("BTC_2021_minute_data.csv", "BTC", MINUTE),  # was 2021 minutes, refused
        ("ES_2022_minutes.csv", "ES", None),
        ("NQ_2020-12_minutes.csv", "NQ", None),  # was 12 minutes
        ("EURUSD_2019_min.csv", "EURUSD", None),
        # nothing but an interval or a word after a venue: the venue's word, not a ticker
        ("IBKR_H1.csv", "IBKR", timedelta(hours=1)),  # Interactive Brokers' stock: was H1
        ("ibkr_daily.csv", "IBKR", timedelta(days=1)),
        ("binance_15m.csv", "BINANCE", timedelta(minutes=15)),  # was 15M
        ("polygon_data.csv", "POLYGON", None),  # was the folder's name
        # Kraken's minutes end its name; a unit after the count is the count's
        ("XBTUSD_1_Hour.csv", "XBTUSD", timedelta(hours=1)),  # was 1 minute, refused
        ("XBTUSD_1_day.csv", "XBTUSD", timedelta(days=1)),
        ("XBTUSD-PERP.csv", "XBTUSD-PERP", None),  # was XBTUSD, spot
        ("XBTUSD-PERP_1m.csv", "XBTUSD-PERP", MINUTE),
        # the second review: a count after a year, Kraken's minutes before a year, exchanges
        ("ES_2020_1_min.csv", "ES", MINUTE),  # was no claim
        ("ES_2020-12_1_min.csv", "ES", MINUTE),
        ("BTCUSD_2021-2022_1_hour.csv", "BTCUSD", timedelta(hours=1)),
        ("XBTUSD_5_2021.csv", "XBTUSD", timedelta(minutes=5)),  # was no claim
        ("coinfloorGBP.csv", "BTCGBP", None),  # was COINFLOORGBP
        ("korbitKRW.csv", "BTCKRW", None),
    ],
)
def test_the_reviews_names_read_as_before_the_new_rules(
    name: str, symbol: str, interval: timedelta | None
) -> None:
    guess = guess_from_name(Path("/home/u/data") / name)
    assert (guess.symbol, guess.interval) == (symbol, interval)
