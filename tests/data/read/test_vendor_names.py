"""Symbols and claimed intervals from vendors' file names (:func:`guess_from_name`), and the
instruments those symbols resolve to."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from foxhunt.data.market.bars_market import resolve_bars
from foxhunt.data.market.instruments import infer_instrument, lookup, resolve
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.vendors import NameGuess, guess_from_name
from foxhunt.errors import DataError


def _minutes(minutes: float | None) -> timedelta | None:
    return None if minutes is None else timedelta(minutes=minutes)


@pytest.mark.parametrize(
    ("name", "symbol", "minutes"),
    [
        ("NASDAQ_AAPL, 5.csv", "AAPL", 5),
        ("BINANCE_BTCUSDT, 60.csv", "BTCUSDT", 60),
        ("CME_MINI_ES1!, 5.csv", "ES", 5),  # the exchange holds a '_'; ES1! is the front month
        ("COMEX_GC2!, 240.csv", "GC2", 240),  # as ES2! is ES2: only 1! gives the root
        ("NASDAQ_AAPL, 1D.csv", "AAPL", 1440),
        ("FX_IDC_EURUSD, 30S.csv", "EURUSD", 0.5),
        ("BYBIT_BTCUSDT.P, 1W.csv", "BTCUSDT.P", None),  # a week: no claim
        ("NYSE_BRK.B, 1M.csv", "BRK.B", None),  # 1M is a month, not a minute
        ("NASDAQ_MSFT, 15_3f2a1.csv", "MSFT", 15),  # a download suffix
        # a stock exchange outside the US: Yahoo's market after the ticker, so its calendar
        # (until session 54 dropped: VOD the NYSE's, 7203 an unknown market on 24x7)
        ("LSE_VOD, 60.csv", "VOD.L", 60),
        ("TSE_7203, 1D.csv", "7203.T", 1440),
        ("HKEX_700, 5.csv", "0700.HK", 5),  # Yahoo's four digits
        ("XETR_BMW, 1D.csv", "BMW.DE", 1440),
        ("NSE_RELIANCE, 5.csv", "RELIANCE.NS", 5),
        ("ASX_BHP, 1D.csv", "BHP.AX", 1440),
        ("TSX_RY, 1D.csv", "RY.TO", 1440),
        # since session 59: TradingView's prefixes of the other markets with a calendar here
        ("TASE_TEVA, 5.csv", "TEVA.TA", 5),
        ("IDX_BBCA, 5.csv", "BBCA.JK", 5),
        ("KRX_005930, 1D.csv", "005930.KS", 1440),
        ("SSE_600519, 1D.csv", "600519.SS", 1440),
        ("BMFBOVESPA_PETR4, 1D.csv", "PETR4.SA", 1440),
        ("SIX_NESN, 1D.csv", "NESN.SW", 1440),
        ("EUREX_FDAX1!, 1D.csv", "FDAX", 1440),  # a future's front month keeps its root
        # make mutate (session 54): a unit alone is one of it; 0 claims nothing; only a code of
        # digits on Hong Kong is padded
        ("NASDAQ_AAPL, D.csv", "AAPL", 1440),
        ("NASDAQ_AAPL, 0.csv", "AAPL", None),
        ("HKEX_ABC, 5.csv", "ABC.HK", 5),
    ],
)
def test_tradingview_export_names(name: str, symbol: str, minutes: float | None) -> None:
    assert guess_from_name(Path(name)) == NameGuess(
        symbol, "TradingView's file name", None, _minutes(minutes)
    )


@pytest.mark.parametrize(
    ("name", "symbol", "minutes"),
    [
        ("BTC-USDT-SWAP.csv", "BTC-USDT-SWAP", None),
        ("BTC-USDT-SWAP_okx_1m.csv", "BTC-USDT-SWAP", 1),
        ("eth_usd_perp.csv", "ETH-USD-PERP", None),
    ],
)
def test_a_perpetual_with_its_quote_keeps_both(name: str, symbol: str, minutes: int | None) -> None:
    guess = guess_from_name(Path(name))
    assert (guess.symbol, guess.interval) == (symbol, _minutes(minutes))
    # a crypto perpetual on the 24x7 calendar, not CME's Bitcoin future
    assert lookup(guess.symbol) is None
    inst = resolve(guess.symbol, warn=False)
    assert (inst.asset_class, inst.calendar) == ("crypto", "24x7")


@pytest.mark.parametrize(
    ("name", "symbol", "calendar"),
    [
        ("CHRIS-CME_CL1.csv", "CL", "cme_energy"),
        ("CHRIS-CME_ES1.csv", "ES", "cme_equity"),
        ("CHRIS-ICE_B1.csv", "BRN", "ice_europe"),  # ICE's Brent: B
        ("CHRIS-ICE_T1.csv", "ICE_T", "24x7"),  # ICE's WTI: unknown, not AT&T's stock T
        ("CHRIS-CME_CL2.csv", "CL2", None),  # the second month keeps its number
    ],
)
def test_quandl_continuous_futures_names(name: str, symbol: str, calendar: str | None) -> None:
    guess = guess_from_name(Path(name))
    assert guess == NameGuess(symbol, "Quandl's file name (CHRIS continuous futures)")
    if calendar is not None:
        assert resolve(symbol, warn=False).calendar == calendar


@pytest.mark.parametrize(
    ("name", "symbol", "minutes"),
    [
        ("WIKI-SPY.csv", "SPY", None),  # Quandl's WIKI prices: the data set, then the ticker
        ("EOD-AAPL.csv", "AAPL", None),
        ("NYSE_IBM.csv", "IBM", None),
        ("CME_ES_5min.csv", "ES", 5),
        ("BINANCE_BTCUSDT_1m.csv", "BTCUSDT", 1),
        ("CFE_VX.csv", "VX", None),
        ("ICE.csv", "ICE", None),  # the exchange's own stock
        ("ICE_2024.csv", "ICE", None),  # a year after it names no symbol
        ("ICE_BRN.csv", "BRN", None),  # a futures exchange, then a built-in root
        ("OANDA_EUR_USD.csv", "EURUSD", None),
        # after a futures exchange only a built-in root is taken: as before, the exchange's word
        ("ICE_T.csv", "ICE", None),  # ICE's WTI, never AT&T's T (as CHRIS-ICE_T1 is ICE_T)
        ("ICE_B.csv", "ICE", None),
        ("CME_MINI_ES.csv", "CME", None),  # TradingView's exchange, without its interval
        ("CME_Group.csv", "CME", None),  # the exchange's own stock
        ("ICE_US_Equity.csv", "ICE", None),
        ("CME_2024-01.csv", "CME", None),
        ("CBOE_stock.csv", "CBOE", None),  # no ticker in capitals after it
        # a name in small letters, its ticker too (the venue's name until session 54: the
        # crypto pairs were stocks BINANCE, COINBASE, KAIKO refused as out of NYSE's hours)
        ("nyse_ibm.csv", "IBM", None),
        ("binance_btcusdt_1m.csv", "BTCUSDT", 1),
        ("coinbase_btc-usd.csv", "BTCUSD", None),
        ("kaiko_cbse_btc-usd_1m.json", "BTCUSD", 1),  # Kaiko's code of Coinbase after it
        ("ccxt_binance_BTC_USDT_1m.csv", "BTCUSDT", 1),  # the library, then the venue
        ("ccxt_ETH_USDT_5m.csv", "ETHUSDT", 5),  # (the symbol CCXT until session 57)
        ("ice_t.csv", "ICE", None),
    ],
)
def test_an_exchange_or_data_set_before_the_symbol_is_no_symbol(
    name: str, symbol: str, minutes: int | None
) -> None:
    """Were ``WIKI``, ``EOD``, ``NYSE``, ``CME``, ``BINANCE`` and ``CFE``: a stock on NYSE's
    calendar, whatever the file held."""
    guess = guess_from_name(Path(name))
    assert (guess.symbol, guess.interval) == (symbol, _minutes(minutes))


@pytest.mark.parametrize(("name", "contract"), [("ESH2018", "ESH18"), ("CLZ1999", "CLZ99")])
def test_a_contract_with_a_four_digit_year_is_its_root_and_contract(
    tmp_path: Path, name: str, contract: str
) -> None:
    """Quandl's ``CME/ESH2018`` saved as ``ESH2018.csv``: the symbol ESH2018 until session 58,
    an unknown beside its root's other contracts."""
    path = tmp_path / f"{name}.csv"
    path.write_text(
        "Date,Open,High,Low,Close,Volume\n"
        "2017-12-01,26.0,26.5,25.5,26.25,1000\n2017-12-04,26.25,26.75,26.0,26.5,1200\n"
    )
    bars = read_bars(path, min_bars=1)
    assert bars["symbol"].unique().to_list() == [contract[:2]]
    assert bars["contract"].unique().to_list() == [contract]


def test_cboe_cfe_history_names_give_the_root_and_the_contract(tmp_path: Path) -> None:
    assert guess_from_name(Path("CFE_F15_VX.csv")) == NameGuess("VXF15", "Cboe CFE's file name")
    path = tmp_path / "CFE_F15_VX.csv"
    path.write_text(
        "Trade Date,Futures,Open,High,Low,Close,Settle,Change,Total Volume,EFP,Open Interest\n"
        "2013-01-02,F (Jan 2015),16.8,16.8,15.5,15.6,15.65,0.0,97535,0,115156\n"
        "2013-01-03,F (Jan 2015),15.75,16.0,15.3,15.9,15.95,0.3,59683,0,120663\n"
    )
    bars = read_bars(path, min_bars=1)
    assert bars["symbol"].unique().to_list() == ["VX"]
    assert bars["contract"].unique().to_list() == ["VXF15"]


@pytest.mark.parametrize(
    ("name", "symbol", "minutes"),
    [
        ("daily_MSFT.csv", "MSFT", 1440),
        ("daily_adjusted_MSFT.csv", "MSFT", 1440),
        ("weekly_MSFT.csv", "MSFT", None),
        ("monthly_adjusted_MSFT.csv", "MSFT", None),
        ("intraday_5min_MSFT.csv", "MSFT", 5),
        ("intraday_60min_IBM.csv", "IBM", 60),
        ("daily_EUR_USD.csv", "EURUSD", 1440),  # what follows the period reads as ever
        ("fx_daily_EURUSD.csv", "EURUSD", 1440),  # FX_DAILY: the symbol FX until session 58
        ("fx_intraday_60min_EURUSD.csv", "EURUSD", 60),
        ("fx_weekly_GBP_JPY.csv", "GBPJPY", None),
        ("digital_currency_daily_BTC_USD.csv", "BTCUSD", 1440),
    ],
)
def test_a_leading_period_is_no_symbol(name: str, symbol: str, minutes: int | None) -> None:
    guess = guess_from_name(Path(name))
    assert (guess.symbol, guess.interval) == (symbol, _minutes(minutes))


@pytest.mark.parametrize("name", ["FX_daily_prices.csv", "FX_daily_2024.csv", "fx_rates_daily.csv"])
def test_an_fx_word_before_no_pair_stays_the_names_word(name: str) -> None:
    """Alpha Vantage's ``fx_daily_`` is taken off only before a pair: ``FX_daily_prices`` was
    ``PRICES`` in an intermediate version, and is ``FX`` as before."""
    assert guess_from_name(Path(name)).symbol == "FX"


@pytest.mark.parametrize("ticker", ["AAPL", "MSFT", "BRK-B", "CL", "HE"])
def test_a_us_listing_resolves_as_the_bare_ticker(ticker: str) -> None:
    """Stooq's and EODHD's ``AAPL.US``: the stock ``AAPL`` on xnys (as ``QQQ.US`` was already
    the ETF ``QQQ``), never a future's root (CL.US is Colgate-Palmolive, not crude oil) nor an
    unknown on 24x7."""
    listed = f"{ticker}.US"
    assert lookup(listed) is None
    for got in (infer_instrument(listed), resolve(listed, warn=False)):
        assert got == infer_instrument(ticker)
        assert (got.asset_class, got.calendar) == ("stock", "xnys")


def test_a_stooq_file_with_its_ticker_column_is_a_us_stock(tmp_path: Path) -> None:
    path = tmp_path / "aapl.us.txt"
    path.write_text(
        "<TICKER>,<PER>,<DATE>,<TIME>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>,<OPENINT>\n"
        "AAPL.US,5,20240102,153500,185.00,185.02,184.90,184.91,3226,0\n"
        "AAPL.US,5,20240102,154000,184.91,184.94,184.88,184.92,2345,0\n"
    )
    bars = read_bars(path)
    assert bars["symbol"].unique().to_list() == ["AAPL.US"]
    inst = resolve_bars(bars)["AAPL.US"]
    assert (inst.root, inst.asset_class, inst.calendar) == ("AAPL", "stock", "xnys")


def test_a_tradingview_file_reads_its_symbol_from_the_name(tmp_path: Path) -> None:
    start = int(datetime(2024, 1, 2, 14, 30, tzinfo=UTC).timestamp())
    path = tmp_path / "CME_MINI_ES1!, 5.csv"
    path.write_text(
        "time,open,high,low,close,Volume\n"
        + "".join(f"{start + 300 * i},4770.25,4771.00,4769.75,4770.50,100\n" for i in range(3))
    )
    assert read_bars(path)["symbol"].unique().to_list() == ["ES"]


@pytest.mark.parametrize(
    ("name", "guess"),
    [
        ("btc-perp-2022.csv", NameGuess("BTC-PERP", "the file name")),
        (
            "btc-perp-20211231-20220201_1m.csv",
            NameGuess("BTC-PERP", "the file name", None, timedelta(minutes=1)),
        ),
        ("BTC-USD.csv", NameGuess("BTCUSD", "the file name (a pair)")),
        (
            "eth_usdt_1m.csv",
            NameGuess("ETHUSDT", "the file name (a pair)", None, timedelta(minutes=1)),
        ),
        ("ES1!.csv", NameGuess("ES", "the file name (a continuous contract)")),
        (
            "ES1!_15min.csv",
            NameGuess("ES", "the file name (a continuous contract)", None, timedelta(minutes=15)),
        ),
        ("ES2!.csv", NameGuess("ES2", "the file name")),
        ("@NQ#C.csv", NameGuess("NQ", "the file name (a continuous contract)")),
        (
            "HISTDATA_COM_ASCII_EURUSD_M12018.zip",
            NameGuess("EURUSD", "histdata's file name", "America/New_York", timedelta(minutes=1)),
        ),
        (
            "DAT_ASCII_EURUSD_M1_2018.csv",
            NameGuess("EURUSD", "histdata's file name", "America/New_York", timedelta(minutes=1)),
        ),
        ("EUR_USD Historical Data.csv", NameGuess("EURUSD", "the file name (a pair)")),
        ("US 500 Futures Historical Data.csv", NameGuess("ES", "Investing.com's file name")),
        ("AAPL Historical Data.csv", NameGuess("AAPL", "Investing.com's file name")),
        (
            "ESZ4.GLBX_5min_bars_20241001.csv",
            NameGuess("ESZ4", "the file name", None, timedelta(minutes=5)),
        ),
        ("F_CL.txt", NameGuess("F_CL", "Quantiacs' file name (F_ROOT)")),
        ("ES_FUT_daily.csv.gz", NameGuess("ES", "the file name", None, timedelta(days=1))),
        ("daily.csv", NameGuess("DAILY", "the file name", None, timedelta(days=1))),
        ("data/part-0.csv", NameGuess("PART", "the file name")),  # no folder names a symbol
        ("aapl.us.txt", NameGuess("AAPL", "the file name")),
        ("AAPL.US_5m.csv", NameGuess("AAPL", "the file name", None, timedelta(minutes=5))),
    ],
)
def test_names_that_read_as_before(name: str, guess: NameGuess) -> None:
    """Regression guard: names the rules above must leave as they were."""
    assert guess_from_name(Path(name)) == guess


def test_names_as_before_resolve_as_before() -> None:
    """Regression guard: a bare root is still the future, a bare ticker still a stock."""
    assert resolve("CL", warn=False).calendar == "cme_energy"
    assert resolve("ES.F", warn=False).root == "ES"  # Stooq's futures suffix: the future
    assert (resolve("AAPL", warn=False).root, resolve("AAPL", warn=False).calendar) == (
        "AAPL",
        "xnys",
    )
    assert resolve("BTC-PERP", warn=False).asset_class == "crypto"
    assert resolve("BRK.B", warn=False).asset_class == "stock"
    assert resolve("SPY.US", warn=False) == infer_instrument("SPY")  # an ETF, as before


@pytest.mark.parametrize(
    ("path", "symbol", "how"),
    [
        ("ES/2024-01.csv", "ES", "the name of the folder 'ES'"),
        ("NQ/2024/01.csv", "NQ", "the name of the folder 'NQ'"),
        ("ES_2024.zip/2024-01.csv", "ES", "the name of the zip archive 'ES_2024.zip'"),
        ("EUR_USD/20240102.csv", "EURUSD", "the name of the folder 'EUR_USD'"),
    ],
)
def test_a_file_named_for_its_date_takes_its_folders_symbol(
    path: str, symbol: str, how: str
) -> None:
    """Monthly downloads in a folder named for the symbol: the symbol was the date's year
    (``2024``, a 24x7 unknown instrument), or ``01`` and ``02`` two symbols."""
    guess = guess_from_name(Path("/x") / path)
    assert (guess.symbol, guess.how) == (symbol, how)


@pytest.mark.parametrize("path", ["data/2024-01.csv", "tmp/2024/01.csv", "2024-01.csv"])
def test_a_dated_file_in_a_folder_that_names_no_symbol_asks_for_it(path: str) -> None:
    with pytest.raises(DataError) as refused:
        guess_from_name(Path("/") / path)
    assert str(refused.value) == (
        f"{Path('/') / path}: no symbol column, and the file name says nothing of the symbol (a "
        "date, a part of a dataset, a generic name); pass --symbol (or name the folder for the "
        "symbol)"
    )


@pytest.mark.parametrize(
    ("path", "symbol", "how"),
    [  # were the symbols 0A1B2C..., PART, DATA, CHUNK, PART1, PRICES
        ("ds/symbol=ES/0a1b2c3d4e5f60718293a4b5c6d7e8f9-0.parquet", "ES", "the partition folder 'symbol=ES'"),
        ("BTC-PERP/year=2022/0a1b2c3d4e5f60718293a4b5c6d7e8f9-0.parquet", "BTC-PERP", "the name of the folder 'BTC-PERP'"),
        ("F_ES.parquet/part-00000-1f2e3d4c-5b6a-7980-a1b2-c3d4e5f6a7b8-c000.snappy.parquet", "F_ES", "the name of the folder 'F_ES.parquet'"),
        ("F_ES/part-0.parquet", "F_ES", "the name of the folder 'F_ES'"),
        ("AAPL/data.csv", "AAPL", "the name of the folder 'AAPL'"),
        ("AAPL/chunk_001.csv", "AAPL", "the name of the folder 'AAPL'"),
        ("bars.zip/BTC-PERP/part1.csv", "BTC-PERP", "the name of the folder 'BTC-PERP'"),
        ("AAPL/ohlcv-1m.csv", "AAPL", "the name of the folder 'AAPL'"),
        ("prices_ES.csv", "ES", "the file name"),
        ("ABCDEF1.csv", "ABCDEF1", "the file name"),  # letters a-f and digits: no uuid
    ],
)  # fmt: skip
def test_a_part_of_a_dataset_takes_its_folders_symbol(path: str, symbol: str, how: str) -> None:
    """pandas' ``partition_cols``, pyarrow's ``write_to_dataset``, Spark's ``part-00000-...``
    and generic names (``data.csv``) said nothing of the symbol and were read as one."""
    guess = guess_from_name(Path("/x") / path)
    assert (guess.symbol, guess.how) == (symbol, how)


def test_a_folder_of_monthly_files_reads_as_one_symbol(tmp_path: Path) -> None:
    folder = tmp_path / "ES"
    folder.mkdir()
    for month, day in (("01", 2), ("02", 1)):
        (folder / f"2024-{month}.csv").write_text(
            "ts,open,high,low,close,volume\n"
            + "".join(
                f"2024-{month}-{day:02d} 14:3{i}:00,4700,4701,4699,4700,1\n" for i in range(3)
            )
        )
    bars = read_bars(folder, min_bars=1)
    assert bars["symbol"].unique().to_list() == ["ES"] and bars.height == 6


@pytest.mark.parametrize(
    ("name", "minutes"),
    [
        ("ES_H24.csv", None),  # March 2024's contract: MetaTrader has no 24-hour timeframe
        ("NQ_M24.csv", None),  # June 2024's
        ("GC_H4.csv", 240),  # MetaTrader's 4 hours (a one-digit year stays ambiguous)
        ("CL_Z23_5min.csv", 5),
        ("EURUSD_M5.csv", 5),  # no futures root before it: MetaTrader's 5 minutes
        ("XAUUSD_H4.csv", 240),
        ("ES_24h.csv", None),  # a 24-hour session, not a bar a day (was "the name says 1d")
        ("ES_24h_1min.csv", 1),  # the next word says the interval
        ("NQ_24hr_5m.csv", 5),
        ("BTC_12h.csv", 720),
    ],
)
def test_only_metatraders_timeframes_claim_an_interval(name: str, minutes: float | None) -> None:
    """``ES_H24.csv`` holding 1-minute bars was refused: "the file name says 1d"."""
    assert guess_from_name(Path(name)).interval == _minutes(minutes)


@pytest.mark.parametrize(
    ("name", "symbol", "minutes"),
    [
        ("EURUSD1.csv", "EURUSD", 1),
        ("EURUSD60.csv", "EURUSD", 60),
        ("XAUUSD240.csv", "XAUUSD", 240),  # a CFD quoted like a pair
        ("USDJPY1440.csv", "USDJPY", 1440),
        ("BTCUSD5.csv", "BTCUSD", 5),
    ],
)
def test_metatrader_4_history_center_names(name: str, symbol: str, minutes: int) -> None:
    """MetaTrader 4 exports ``EURUSD1.csv``: the pair, then the period in minutes; read as the
    symbol ``EURUSD1`` the bars were an unknown instrument on a 24x7 calendar, their clock never
    checked."""
    guess = guess_from_name(Path(name))
    assert guess == NameGuess(
        symbol, "MetaTrader 4's file name (pair and minutes)", None, _minutes(minutes)
    )
    calendar = "24x7" if symbol.startswith("BTC") else "fx_24x5"
    assert resolve(guess.symbol, warn=False).calendar == calendar


@pytest.mark.parametrize("name", ["AAPL60.csv", "ES1.csv", "EURUSD7.csv", "ABCDEF1.csv"])
def test_other_names_ending_in_digits_are_no_metatrader_period(name: str) -> None:
    assert "MetaTrader" not in guess_from_name(Path(name)).how


@pytest.mark.parametrize(
    ("symbol", "root"),
    [
        ("ES1 Index", "ES"),  # Bloomberg's generic tickers
        ("CL1 Comdty", "CL"),
        ("GC2 Comdty", "GC"),
        ("ESc1", "ES"),  # Refinitiv's continuation RIC
        ("ES1!", "ES"),  # TradingView's continuous contracts
        ("CME_MINI:ES1!", "ES"),
        ("6E1!", "6E"),
        ("/ES", "ES"),  # thinkorswim
        ("/ESH18", "ES"),
        ("ESH2018", "ES"),  # a contract with its four-digit year
    ],
)
def test_vendors_continuous_and_contract_names_resolve_to_their_future(
    symbol: str, root: str
) -> None:
    """Were unknown instruments on a 24x7 calendar: a New York clock read as UTC stayed valid."""
    inst = resolve(symbol, warn=False)
    assert inst.root == root and inst.calendar.startswith("cme_")


@pytest.mark.parametrize("symbol", ["ESC1", "CC1", "TY1 Comdty", "ESPN", "ESH2318"])
def test_names_that_only_look_continuous_stay_unresolved(symbol: str) -> None:
    """A capital ``C`` is no RIC continuation, a root no future has stays unknown, a stock
    that starts with a root stays a stock, a year outside 1900-2099 is no contract year."""
    assert lookup(symbol) is None


@pytest.mark.parametrize(
    "name", ["F_ES_2008.txt", "F_ES-2008.txt", "F_ES_daily.txt", "F_ES_1990s.txt", "F_ES.txt"]
)
def test_a_quantiacs_name_with_more_after_the_root_keeps_the_root(name: str) -> None:
    """``F_ES_2008.txt`` was the symbol ``F`` (Ford's stock, on the NYSE's calendar), and
    ``F_ES_1990s.txt`` claimed bars 1,990 seconds apart."""
    guess = guess_from_name(Path(name))
    assert guess.symbol == "F_ES"
    assert guess.interval == (timedelta(days=1) if "daily" in name else None)


@pytest.mark.parametrize(
    ("symbol", "calendar", "currency"),
    [
        ("N225", "xtks", "JPY"),
        ("^N225", "xtks", "JPY"),
        ("NK225", "xtks", "JPY"),
        ("HSI", "xhkg", "HKD"),
        ("FTSE", "xlon", "GBP"),
        ("^GDAXI", "xetr", "EUR"),
        ("NIFTY", "xnse", "INR"),
        ("STI", "xses", "SGD"),
        ("^AXJO", "xasx", "AUD"),
        ("^GSPTSE", "xtse", "CAD"),
        ("SPX", "xnys", ""),
    ],
)
def test_cash_indices_keep_their_own_markets_hours(
    symbol: str, calendar: str, currency: str
) -> None:
    """Were stocks on the NYSE's calendar (or unknown on 24x7: ``NK225`` in Tokyo time read 9
    hours off, valid)."""
    inst = resolve(symbol, warn=False)
    assert (inst.asset_class, inst.calendar, inst.currency) == ("cash_index", calendar, currency)


@pytest.mark.parametrize(
    ("symbol", "kind", "currency"),
    [
        ("EURUSDm", "spot_fx", "USD"),  # MetaTrader brokers' suffixes after the pair
        ("GBPUSD_i", "spot_fx", "USD"),
        ("EURUSD+", "spot_fx", "USD"),
        ("USDJPY.raw", "spot_fx", "JPY"),
        ("XAUUSD.pro", "metals", "USD"),
        ("XAUUSDm", "metals", "USD"),
        ("US500", "cash_index", "USD"),  # brokers' index CFDs
        ("NAS100", "cash_index", "USD"),
        ("GER40", "cash_index", "EUR"),
        ("UK100", "cash_index", "GBP"),
        ("JP225", "cash_index", "JPY"),
        ("USA500", "cash_index", "USD"),  # Dukascopy's USA500.IDX/USD (was unknown, 24x7)
    ],
)
def test_broker_symbols_trade_through_the_fx_week(symbol: str, kind: str, currency: str) -> None:
    """Were unknown on a 24x7 calendar (their broker clock never checked)."""
    inst = resolve(symbol, warn=False)
    assert (inst.asset_class, inst.calendar, inst.currency) == (kind, "fx_24x5", currency)


@pytest.mark.parametrize("symbol", ["EURUSDX", "ESM", "AAPL"])
def test_other_suffixes_are_no_broker_pair(symbol: str) -> None:
    assert resolve(symbol, warn=False).calendar != "fx_24x5"


@pytest.mark.parametrize(
    ("name", "symbol", "asset_class", "calendar"),
    [
        ("^GSPC.csv", "^GSPC", "cash_index", "xnys"),  # was refused: no symbol in the name
        ("^N225_daily.csv", "^N225", "cash_index", "xtks"),
        ("CO1 Comdty.csv", "CO", "energy", "ice_europe"),  # Bloomberg's Brent: was CO1, 24x7
        ("ES1 Index.csv", "ES", "equity_index", "cme_equity"),
        ("XX1 Comdty.csv", "XX1", "unknown", "24x7"),  # no built-in root: as before
        ("BRK-A.csv", "BRK-A", "stock", "xnys"),  # a share class: was BRK, both classes one
        ("BRK.B_daily.csv", "BRK.B", "stock", "xnys"),
    ],
)
def test_yahoo_indices_bloomberg_generics_and_share_classes(
    name: str, symbol: str, asset_class: str, calendar: str
) -> None:
    guess = guess_from_name(Path(name))
    assert guess.symbol == symbol
    inst = resolve(guess.symbol, warn=False)
    assert (inst.asset_class, inst.calendar) == (asset_class, calendar)


@pytest.mark.parametrize(
    ("name", "symbol"),
    [
        ("Download Data - STOCK_US_ARCX_SPY.csv", "SPY"),
        ("Download Data - INDEX_US_S&P US_SPX.csv", "SPX"),  # the market holds a space and &
        ("Download Data - FUTURE_US_XNYM_CLK14.csv", "CLK14"),  # split into CL + CLK14 later
        ("Download Data - FUND_US_ARCX_QQQ.csv", "QQQ"),
    ],
)
def test_marketwatch_names_give_the_last_field(name: str, symbol: str) -> None:
    assert guess_from_name(Path(name)) == NameGuess(symbol, "MarketWatch's file name")


def test_a_cqg_name_is_the_exchanges_contract(tmp_path: Path) -> None:
    """CQG's ``F.US.EPH14`` is the March 2014 E-mini S&P (was the stock F)."""
    assert guess_from_name(Path("F.US.EPH14.csv")).symbol == "ESH14"
    assert guess_from_name(Path("F.US.CLE.csv")).symbol == "CL"
    path = tmp_path / "F.US.EPH14.csv"
    path.write_text(
        "Date,Open,High,Low,Close,Volume\n"
        + "".join(f"2014-01-{d:02d},1800,1810,1790,1805,1000\n" for d in (2, 3, 6, 7, 8, 9))
    )
    bars = read_bars(path, min_bars=1)
    assert bars["symbol"].unique().to_list() == ["ES"]
    assert bars["contract"].unique().to_list() == ["ESH14"]


@pytest.mark.parametrize("name", ["HistoricalData_1530403200000.csv", "HistoricalPrices.csv"])
def test_a_sites_name_for_every_download_is_no_symbol(tmp_path: Path, name: str) -> None:
    """Nasdaq.com's and the WSJ's download names were read as symbols (on a 24/7 calendar)."""
    with pytest.raises(DataError, match=rf"'{name}' is the site's name for every download"):
        guess_from_name(tmp_path / "downloads" / name)
    assert guess_from_name(tmp_path / "SPY" / name).symbol == "SPY"  # the folder says it


@pytest.mark.parametrize(
    ("name", "symbol"),
    [("ES 06-18.Last.txt", "ESM18"), ("6E 03-24.Last.txt", "6EH24"), ("CL 12-14.txt", "CLZ14")],
)
def test_ninjatraders_contract_names_keep_the_contract(name: str, symbol: str) -> None:
    """The contract was lost (``ES 06-18`` read as ``ES``, no contract)."""
    guess = guess_from_name(Path(name))
    assert guess == NameGuess(symbol, "NinjaTrader's file name (root, month-year)")


def test_a_name_like_ninjatraders_without_a_futures_root_is_left() -> None:
    assert guess_from_name(Path("AAPL 06-18.txt")).symbol == "AAPL"


@pytest.mark.parametrize(
    ("name", "symbol"),
    [("ES-2014H.csv", "ESH14"), ("ES2014H.csv", "ESH14"), ("CL_2020Z.txt", "CLZ20"),
     ("6E-2019M.csv", "6EM19"), ("AAPL-2014H.csv", "AAPL"), ("ES-2014.csv", "ES")],
)  # fmt: skip
def test_norgates_and_csis_contract_names_keep_the_contract(name: str, symbol: str) -> None:
    """Root, year, month code (``ES-2014H``): read as ``ES`` with no contract until session 57,
    so a folder of one future's contracts collided as duplicate bars of one day, told to name a
    time column."""
    assert guess_from_name(Path(name)).symbol == symbol


def test_a_folder_of_daily_contracts_is_told_of_the_roll(tmp_path: Path) -> None:
    days = "".join(f"2014011{d},1800,1801,1799,1800.5,10\n" for d in range(3, 8))
    for name in ("ES-2014H.csv", "ES-2014M.csv"):
        (tmp_path / name).write_text("Date,Open,High,Low,Close,Volume\n" + days)
    with pytest.raises(DataError) as e:
        read_bars(tmp_path, min_bars=1)
    assert "the files ES-2014H.csv and ES-2014M.csv both hold bars of 'ES' at this time (a " in (
        str(e.value)
    )
    assert "time of day" not in str(e.value)


def test_sites_names_read_through_a_browsers_copy_number(tmp_path: Path) -> None:
    """``(1)`` of a second download: MarketWatch's symbol was ``AAPL (1)`` on a 24/7 calendar,
    and Nasdaq's and the WSJ's names were symbols again."""
    marketwatch = Path("Download Data - STOCK_US_XNAS_AAPL (1).csv")
    assert guess_from_name(marketwatch).symbol == "AAPL"
    for name in ("HistoricalPrices (1).csv", "HistoricalData_1530403200000 (2).csv"):
        with pytest.raises(DataError, match="is the site's name for every download"):
            guess_from_name(tmp_path / "downloads" / name)


@pytest.mark.parametrize("folder", ["home/u/data", "home/u/stocks/data", "tmp"])
def test_a_sites_name_takes_no_symbol_from_a_folder_further_up(tmp_path: Path, folder: str) -> None:
    """``/home/u/data/HistoricalPrices.csv`` was symbol ``U`` (the folder above ``data``)."""
    with pytest.raises(DataError, match="is the site's name for every download"):
        guess_from_name(tmp_path / folder / "HistoricalPrices.csv")


def test_a_cqg_name_with_an_interval_is_still_cqgs() -> None:
    guess = guess_from_name(Path("F.US.EPH14_5min.csv"))
    assert (guess.symbol, guess.interval) == ("ESH14", timedelta(minutes=5))


@pytest.mark.parametrize(
    ("path", "symbol", "how"),
    [  # until session 53 each took its folder's name: a folder of such stocks was one series
        ("ashares/600519.csv", "600519", "the file name (a ticker of digits)"),
        ("jp/7203_1d.csv", "7203", "the file name (a ticker of digits)"),
        ("jp/7203_kabutan.csv", "7203", "the file name (a ticker of digits)"),  # was KABUTAN
        ("kr/005930_daily.csv", "005930", "the file name (a ticker of digits)"),
        ("600519/2024-01.csv", "600519", "the name of the folder '600519'"),
        # China's markets after the ticker (were SH and XSHG, NYSE stocks)
        ("jq/600000.XSHG.csv", "600000.XSHG", "the file name (a ticker and its market)"),
        ("ts/600519.SH.csv", "600519.SH", "the file name (a ticker and its market)"),
        ("ts/430047.BJ.csv", "430047.BJ", "the file name (a ticker and its market)"),
        # dates and a dataset's numbered parts are no tickers
        ("ES/202401.csv", "ES", "the name of the folder 'ES'"),
        ("ES/2024.csv", "ES", "the name of the folder 'ES'"),
        ("ES/part-00000.parquet", "ES", "the name of the folder 'ES'"),
        ("ES/01.csv", "ES", "the name of the folder 'ES'"),
        ("x/7203_jp_d.csv", "7203.JP", "Stooq's file name (a ticker and its market)"),
        # after a generic word, five or six digits (until session 54 the folder's name, or a
        # later word: UTF8); four after a word may number a part, a date is no ticker
        ("kr/data_005930_20240115.csv", "005930", "the file name (a ticker of digits)"),
        ("kr/data_005930_utf8.csv", "005930", "the file name (a ticker of digits)"),
        ("cn/prices_600519.csv", "600519", "the file name (a ticker of digits)"),
        ("ES/data_0001.csv", "ES", "the name of the folder 'ES'"),
        ("ES/data_202401.csv", "ES", "the name of the folder 'ES'"),
    ],
)
def test_a_ticker_of_digits_is_the_symbol(path: str, symbol: str, how: str) -> None:
    guess = guess_from_name(Path("/x") / path)
    assert (guess.symbol, guess.how) == (symbol, how)


def test_a_folder_of_stocks_named_by_digits_is_one_series_each(tmp_path: Path) -> None:
    folder = tmp_path / "ashares"
    folder.mkdir()
    for code, price in (("600000", 9.8), ("601988", 3.9)):
        rows = "".join(
            f"2024-01-0{d},{price},{price + 0.1},{price - 0.1},{price},30120\n" for d in (2, 3, 4)
        )
        (folder / f"{code}.csv").write_text("date,open,high,low,close,volume\n" + rows)
    df = read_bars(folder)
    assert df.group_by("symbol").len().sort("symbol").rows() == [("600000", 3), ("601988", 3)]


@pytest.mark.parametrize(
    ("path", "symbol"),
    [  # until session 53 the interval's partition folder was the symbol (INTERVAL, FREQ)
        ("l1/symbol=BTCUSDT/interval=1m/part-0.parquet", "BTCUSDT"),
        ("l2/symbol=BTCUSDT/timeframe=1m/part-0.parquet", "BTCUSDT"),
        ("l6/ticker=AAPL/freq=1min/part-0.parquet", "AAPL"),
        ("ES/exchange=CME/part-0.parquet", "ES"),
        ("sym=NQH4/date=2024-01-03/part-0.parquet", "NQH4"),
    ],
)
def test_a_partition_folder_of_another_key_is_passed_over(path: str, symbol: str) -> None:
    assert guess_from_name(Path("/x") / path).symbol == symbol


@pytest.mark.parametrize(
    ("name", "symbol"),
    [
        ("EUR.USD_IDEALPRO.csv", "EURUSD"),  # Interactive Brokers' pair and its FX venue
        ("EUR.USD.csv", "EURUSD"),
        ("gbp.jpy_5m.csv", "GBPJPY"),
        ("XAU.USD_1h.csv", "XAUUSD"),  # a CFD quoted like a pair
        ("BTC.USDT.csv", "BTCUSDT"),
        # a share class or a market after the dot is no pair
        ("BRK.B.csv", "BRK.B"),
        ("VOD.L.csv", "VOD.L"),
        ("SAP.DE_5m.csv", "SAP.DE"),
        ("RDS.A.csv", "RDS.A"),
        ("AAPL.US.csv", "AAPL"),
    ],
)
def test_a_pair_written_with_a_dot_is_the_pair(name: str, symbol: str) -> None:
    """IB writes its pairs ``EUR.USD``: the file name was read as ``EUR`` until session 56 (a
    folder of ``EUR.USD`` and ``EUR.GBP`` was one symbol), a bare ticker on the NYSE."""
    assert guess_from_name(Path(name)).symbol == symbol
