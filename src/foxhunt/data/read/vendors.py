"""What a bar file's name says: its symbol, its vendor's clock and its bar interval.

A file without a symbol column takes its symbol from its name; some vendors' names say more:

* histdata.com: ``HISTDATA_COM_ASCII_EURUSD_M12018.zip`` holding
  ``DAT_ASCII_EURUSD_M1_2018.csv`` -> symbol ``EURUSD``, 1-minute bars, timestamps in
  New York time (:data:`HISTDATA_TZ`: the data shows daylight saving, whatever the site says);
* Quantiacs: ``F_CL.txt`` -> symbol ``F_CL`` (Quantiacs' own futures roots, not always the
  exchange's: F_AD is the Australian dollar);
* Investing.com: ``US 500 Futures Historical Data.csv`` -> ``ES`` for the common futures
  (:data:`~foxhunt.data.read.investing.INVESTING_NAMES`; any other such name is refused: pass ``--symbol``), daily bars;
* TradingView's export, ``EXCHANGE_SYMBOL, INTERVAL``: ``NASDAQ_AAPL, 5.csv`` -> ``AAPL``,
  5-minute bars (``CME_MINI_ES1!, 5.csv`` -> ``ES``; intervals in minutes, ``30S``, ``1D``;
  ``1W`` and ``1M``, a month, claim none);
* Quandl's (Nasdaq Data Link's) continuous futures, ``CHRIS-CME_CL1.csv`` -> ``CL`` (its
  exchange, root and contract number: ``CHRIS-CME_CL2`` is ``CL2``; ICE's Brent ``CHRIS-ICE_B1``
  is ``BRN``; a root not in the built-in table keeps its exchange, ``CHRIS-ICE_T1`` is
  ``ICE_T``, unknown, never the stock ``T``);
* an exchange's or a data set's name before a ticker in capitals is no symbol: ``NYSE_IBM.csv``
  -> ``IBM``, Quandl's ``WIKI-SPY.csv`` -> ``SPY``; after a futures exchange only a built-in
  root (``CME_ES_5min.csv`` -> ``ES``; ``ICE_T.csv`` stays ``ICE``, never AT&T's ``T``); Cboe's
  ``CFE_F15_VX.csv`` -> ``VX``, contract ``VXF15`` (were ``NYSE``, ``WIKI``, ``CFE``); a vendor's
  name (``yahoo_^GSPC``, ``stooq_7203_jp_d``, Interactive Brokers' ``ib_ES``) likewise;
* NinjaTrader's ``ES 06-18.Last.txt`` -> ``ES``, contract ``ESM18``; Norgate's and CSI's
  ``ES-2014H.csv`` -> ``ES``, contract ``ESH14``; Sierra Chart's ``FDAX-201803-EUREX`` ->
  ``FDAX``, contract ``FDAXH18``; Bitfinex's ``tBTCUSD`` -> ``BTCUSD``
  (:mod:`foxhunt.data.read.contract_names`);
* MarketWatch's ``Download Data - STOCK_US_ARCX_SPY.csv`` -> ``SPY`` (were ``STOCK``, ``INDEX``,
  ``FUTURE``); CQG's ``F.US.EPH14.csv`` -> ``ES``, contract ``ESH14`` (was ``F``, a stock); a
  site's name for every download (Nasdaq.com's ``HistoricalData_1530403200000.csv``, the WSJ's
  ``HistoricalPrices.csv``) takes the symbol of the folder it is in, else is refused: pass
  ``--symbol``; a browser's copy number (``AAPL (1)``) is read past there;
* a leading period is no symbol (Alpha Vantage's ``daily_MSFT.csv``,
  ``monthly_adjusted_MSFT.csv``, ``intraday_5min_MSFT.csv`` -> ``MSFT``);
* a pair written with a separator: ``EUR_USD`` -> ``EURUSD``, ``BTC-USD`` -> ``BTCUSD``; as a
  venue spells it (:mod:`foxhunt.data.read.pair_names`): Kraken's ``XXBTZUSD`` -> ``XBTUSD``,
  bitcoincharts' (Kaggle's) ``bitstampUSD_1-min_data_...`` -> ``BTCUSD``, a MetaTrader broker's
  ``EURUSDm`` -> ``EURUSD``;
* a ticker and its market outside the US (:data:`MARKET_SUFFIXES`) is both: Yahoo's
  ``7203.T.csv`` -> ``7203.T`` (was ``T``, AT&T's stock), ``BMW.DE.csv`` -> ``BMW.DE`` (was
  ``BMW``); Stooq's ``7203_jp_d.csv`` and ``7203.jp.txt`` -> ``7203.JP``; a US listing is its
  bare ticker (``aapl.us.txt``, ``aapl_us_d.csv`` -> ``AAPL``);
* a continuous-futures code: ``ES1!`` (TradingView), ``@ES#`` (IQFeed, TradeStation) -> ``ES``;
* otherwise the stem's first run of letters and digits that is no generic word (``prices_ES``,
  NSE's ``Quote-Equity-RELIANCE-EQ-03-01-2024-to-12-01-2024`` -> ``RELIANCE``) nor a name in
  CamelCase (``MacroTrends_Data_Download_AAPL`` -> ``AAPL``), upper-cased (``ES_FUT_small`` ->
  ``ES``), a perpetual keeping its marker and quote (``btc-perp-2022.csv`` -> ``BTC-PERP``,
  OKX's ``BTC-USDT-SWAP.csv`` -> ``BTC-USDT-SWAP``).

An interval token in the name (``5min``, ``1m``, ``m1``, ``H1``, ``D1``, ``daily``, ``1_Hour``:
:mod:`foxhunt.data.read.name_intervals`) is what the file claims to hold; the time-axis check
(:mod:`foxhunt.data.read.time_axis`) compares it with the bars. Every such guess can be
overridden (``--symbol``, ``--tz``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

from foxhunt.data.market.futures import FUTURES
from foxhunt.data.market.instruments import (
    CFD_BASES,
    CRYPTO,
    CRYPTO_QUOTES,
    FIAT,
    cqg_symbol,
    futures_root,
)
from foxhunt.data.read.compressed import uncompressed_name
from foxhunt.data.read.contract_names import (
    bitfinex_pair,
    cfe_name,
    contract_name,
    ric_root,
)
from foxhunt.data.read.investing import HISTORICAL_DATA, INVESTING_NAMES
from foxhunt.data.read.name_intervals import TOKEN, name_interval
from foxhunt.data.read.pair_names import (
    MT4_HISTORY,
    PAIR,
    bitcoincharts_market,
    broker_pair,
    is_pair,
    kraken_pair,
    pair_first,
    stable_pair,
)
from foxhunt.data.read.tradingview import TRADINGVIEW, tradingview_name
from foxhunt.errors import DataError

HISTDATA_TZ = "America/New_York"
"""histdata.com's clock. Its site (and our data README) say EST without daylight saving, but the
2018 files keep New York's clock with daylight saving: the FX week opens at 17:00 and closes at
16:59 in January and July alike, and the US payrolls release (08:30 New York) is the largest
1-minute EURUSD range of the morning at 08:30 in February, March, July and August. Read as
UTC-05:00, 0.5 % of the bars would fall outside the FX week; as New York time, none."""

_HISTDATA = re.compile(
    r"^(?:HISTDATA_COM_)?(?:DAT_)?(?:ASCII|MT|NT|XLSX|EXCEL)_([A-Z0-9]+)_(M1|T)_?(\d{4})",
    re.IGNORECASE,
)
_QUANTIACS = re.compile(r"^F_([A-Z0-9]{1,4})(?=$|[-_. ])")
"""Quantiacs' ``F_ES.txt``, also with more after the root (``F_ES_2008.txt``: was the symbol
``F``, Ford's stock)."""
_CONTINUOUS = re.compile(r"^(?:([A-Za-z0-9]{1,5}?)1!|@([A-Za-z0-9]{1,5})#C?)(?![A-Za-z0-9])")
"""A front-month continuous-futures code: TradingView ``ES1!``, IQFeed/TradeStation ``@ES#``,
``@ES#C`` (``ES2!``, the second month, keeps its number: ``ES2``); roots of four letters or
with a digit too (``FDAX1!``, ``6E1!``, ``SR31!``: were ``FDAX1``, ``6E1``, ``SR31``)."""
_TICKER = re.compile(r"^[A-Za-z0-9.\-]{1,6}$")
_MARKETWATCH = re.compile(r"^download data - [a-z]+_[a-z]{2}_.*_([^_]+)$", re.IGNORECASE)
"""MarketWatch's export name, ``Download Data - {KIND}_{COUNTRY}_{MARKET}_{SYMBOL}``:
``Download Data - STOCK_US_ARCX_SPY.csv`` -> ``SPY``, ``... - FUTURE_US_XNYM_CLK14`` -> ``CLK14``
(its market may hold spaces and ``&``: ``INDEX_US_S&P US_SPX``)."""
_COPY = re.compile(r"\s*\(\d+\)$")
"""A browser's numbering of a second download of one name: ``AAPL (1).csv``."""
_SITE_NAMES = re.compile(r"^(historical ?data|historical ?prices)(_\d+)?$", re.IGNORECASE)
"""A site's name for every download, whatever the symbol: Nasdaq.com's
``HistoricalData_1530403200000.csv``, the Wall Street Journal's ``HistoricalPrices.csv``."""
_CHRIS = re.compile(r"^CHRIS[-_]([A-Z]+)_([A-Z0-9]+?)(\d{1,2})$", re.IGNORECASE)
"""Quandl's continuous futures ``CHRIS/CME_CL1`` saved as ``CHRIS-CME_CL1``: exchange, root,
contract number."""
_PREFIXED = re.compile(r"^([A-Za-z]+)[-_](\^?[A-Za-z0-9][A-Za-z0-9.=]*)(?:$|[-_ ])")
"""An exchange's or a data set's name, then a ticker: ``NYSE_IBM``, ``CME_ES_5min``, Cboe's
``CFE_VX``, Quandl's ``WIKI-SPY`` and ``EOD-AAPL`` (the symbol is the ticker); in small letters
only after a name in small letters (``binance_btcusdt_1m``, the venue's name until session 54;
``CBOE_stock`` is Cboe's); Yahoo's index, ``yahoo_^GSPC``, and a ticker of digits,
``stooq_7203_jp_d`` (were ``YAHOO``, ``STOOQ``), though no year (``NYSE_2024``)."""
_FUTURES_VENUES = frozenset(
    {"CME", "CBOT", "NYMEX", "COMEX", "CFE", "ICE", "ICEUS", "ICEEU", "EUREX"}
)
"""Futures exchanges: the ticker after them must be a built-in futures root (``CME_ES``); any
other stays the exchange's word, as CHRIS's unknown roots do (``ICE_T`` is not AT&T's ``T``,
TradingView's ``CME_MINI_ES`` not ``MINI``, ``CME_Group`` the exchange's own stock)."""
_OTHER_VENUES = frozenset(
    {"NYSE", "NASDAQ", "AMEX", "ARCA", "BATS", "CBOE", "LSE", "XETRA", "SGX", "HKEX", "ASX",
     "NSE", "BSE", "BINANCE", "COINBASE", "KRAKEN", "BITSTAMP", "BITFINEX", "OANDA", "FXCM",
     "WIKI", "EOD", "GATE", "GATEIO", "OKX", "BYBIT", "KUCOIN", "HUOBI", "HTX", "MEXC", "GEMINI",
     "BITFLYER", "UPBIT", "BITHUMB", "DERIBIT", "BITMEX", "KAIKO", "CRYPTOCOM", "BITGET",
     "CBSE", "BNCE", "KRKN", "BFNX", "STMP", "GMNI", "OKEX", "HUOB", "CCXT", "POLYGON", "TIINGO",
     "YAHOO", "YFINANCE", "STOOQ", "KIBOT", "FIRSTRATE", "FIRSTRATEDATA", "NORGATE", "DUKASCOPY",
     "ALPACA", "DATABENTO", "IQFEED", "BARCHART", "EODHD", "FINNHUB", "TWELVEDATA", "ALPHAVANTAGE",
     "INTRINIO", "IB", "IBKR", "TWS"}
)  # fmt: skip
"""Stock and crypto exchanges, FX brokers, Quandl's ``WIKI`` and ``EOD`` data sets, Kaiko's
codes of crypto exchanges (``kaiko_cbse_btc-usd_1m``: Coinbase), the ccxt library's name
(``ccxt_binance_BTC_USDT_1m``: BTCUSDT, the symbol ``CCXT`` until session 57) and data vendors'
(``tiingo_aapl_1min``, ``polygon_AAPL``: the vendor's name until session 60); a name that is
nothing after them is theirs (``IBKR_H1``: Interactive Brokers' stock, ``binance_15m``)."""
_CHRIS_ROOTS = {("ICE", "B"): "BRN"}
"""CHRIS's exchange and root -> the built-in root, where they differ (ICE's Brent is ``B``)."""
_PERIOD_PREFIX = re.compile(
    r"^(fx_|digital_currency_|crypto_)?(?:intraday_\d+min|daily|weekly|monthly)(?:_adjusted)?_"
    r"(?=[A-Za-z0-9])",
    re.IGNORECASE,
)
"""A period before the symbol, as Alpha Vantage names its downloads (``daily_MSFT``,
``fx_daily_EURUSD``: the symbol ``FX`` until session 58, and still for a name whose rest is no
pair, ``FX_daily_prices``)."""
_LEADING = re.compile(r"[A-Za-z0-9]+")
_YAHOO_USD_FX = re.compile(r"^([A-Za-z]{3})=X(?![A-Za-z0-9])")
"""Yahoo's name of a dollar's rate: ``JPY=X`` is USDJPY (``EURUSD=X`` is a pair as written;
``JPY=X.csv`` was the stock ``JPY``)."""
_YAHOO_INDEX = re.compile(r"\^[A-Za-z0-9]+")
"""Yahoo's index names: ``^GSPC.csv``, ``^N225_daily.csv``."""
_SHARE_CLASS = re.compile(r"^([A-Za-z]{1,5}[.\-][A-Za-z])(?=$|[_ ])")
"""A share class after the ticker: ``BRK-A.csv``, ``BRK.B_daily.csv`` (not ``BRK``: two classes
in one folder were one symbol, refused as interleaved)."""
MARKET_SUFFIXES = frozenset(
    "T HK SS SZ TW TWO KS KQ NS BO SI KL JK BK AX NZ "  # Asia and the Pacific
    "L IL DE F BE DU HM HA MU SG PA AS BR LS MI MC SW VI ST OL CO HE IC IR AT IS WA PR BD ME TA "
    "TO V CN NE SA MX BA SN JO SR QA CA KW "  # the Americas, Africa and the Middle East
    "UK JP HU PL "  # Stooq's markets (its DE and HK are Yahoo's too)
    "SH BJ XSHG XSHE".split()  # Tushare's and Wind's Shanghai and Beijing, JoinQuant's codes
)
"""A market after a ticker, outside the US: Yahoo's exchange suffixes (``7203.T`` Tokyo,
``0700.HK``, ``005930.KS``, ``BMW.DE``, ``RY.TO``), Stooq's markets (``7203.jp``), China's
(``600519.SH``, ``000001.XSHE``)."""
_NUMERIC_TICKER = re.compile(r"^(\d{4,6})(?=$|[_ \-])")
"""A ticker of digits first in the name (``600519.csv``, ``7203_1d.csv``, ``005930_daily``:
Shanghai, Tokyo, Seoul): the symbol, not a number that says nothing (each was given its
folder's name, and a folder of such stocks was one series). A date (``2024``, ``202401``) is
no ticker; a dataset's parts are numbered after a word (``part-0001``)."""
_LISTED = re.compile(
    rf"^([A-Za-z0-9]{{1,12}}(?:-[A-Za-z0-9]{{1,5}})?)\.({'|'.join(sorted(MARKET_SUFFIXES))})(?=$|[_ ])",
    re.IGNORECASE,
)
"""A ticker and its market, the name Yahoo's download gives it (``7203.T.csv``): the symbol is
both (``7203.T``: was ``T``, AT&T's stock, and ``6758.T`` beside it the same symbol; ``BMW.DE``
was ``BMW``, a stock on the NYSE's calendar)."""
_STOOQ = re.compile(r"^([A-Za-z0-9]{1,12})_(uk|jp|de|hk|hu|pl)_[dwmqy]$", re.IGNORECASE)
"""Stooq's download of a ticker outside the US, ``{ticker}_{market}_{interval}``:
``7203_jp_d.csv`` is ``7203.JP`` (was ``JP``)."""
_CAMEL = re.compile(r"(?:[A-Z][a-z]+){2,}")
"""A word in CamelCase is a site's or a product's name, not a ticker (tickers are written in one
case): ``MacroTrends_Data_Download_AAPL.csv`` is ``AAPL`` (was ``MACROTRENDS``)."""


_BLOOMBERG = re.compile(r"\d (?:index|comdty|curncy)$", re.IGNORECASE)


def _bloomberg_root(stem: str) -> str | None:
    """The root of Bloomberg's generic name (``CO1 Comdty.csv``, ``ES1 Index.csv``) of a
    built-in future, else None."""
    if _BLOOMBERG.search(stem) is None:
        return None
    return futures_root(stem, FUTURES)


_PERP_SUFFIX = re.compile(
    rf"[-_.](?:({'|'.join(CRYPTO_QUOTES)})[-_.])?(perpetual|perp|swap)(?![a-z])", re.IGNORECASE
)
"""A perpetual's marker after the base, perhaps after its quote (``-perp``, ``-USDT-SWAP``,
Deribit's ``BTC-PERPETUAL``: ``BTC``, CME's bitcoin future, until session 59)."""


@dataclass(frozen=True)
class NameGuess:
    """What a file name says.

    Attributes:
        symbol: the symbol.
        how: how it was found, for the guess line (``histdata's file name``).
        tz: the vendor's zone of naive timestamps, or None (UTC unless the user says).
        interval: the bar interval the name claims, or None.
    """

    symbol: str
    how: str
    tz: str | None = None
    interval: timedelta | None = None


_DATED = re.compile(r"(19|20)\d{2}([-_.]?\d{2}){0,2}|\d{1,2}")
"""A file name that is only a date or a month (``2024-01``, ``20240102``, ``2024``, ``01``):
monthly downloads in a folder named for their symbol."""


_GENERIC_FOLDERS = frozenset(
    "data bars csv raw files input inputs tmp temp downloads download home desktop documents "
    "history historical minute daily intraday".split()
)
"""Folder names that say nothing of the symbol: a dated file in one is refused."""


_NAMELESS_WORDS = frozenset(
    "part chunk file batch data bars ohlc ohlcv candles kline klines export download prices output "
    "snappy gz quote quotes equity intraday extended history historical".split()
)
"""Words of file names that say nothing of the symbol: a dataset's parts (Spark's
``part-00000-<uuid>-c000.snappy``), a download's generic name (``data.csv``, ``chunk_001``,
NSE India's ``Quote-Equity-RELIANCE-EQ-03-01-2024-to-12-01-2024.csv``: ``RELIANCE``, was
``QUOTE``)."""
_UUID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}|c\d{3}",
    re.IGNORECASE,
)
"""A uuid (Spark's and pyarrow's part files), or Spark's ``c000``."""


def _nameless_token(token: str) -> bool:
    return (
        token.rstrip("0123456789") in _NAMELESS_WORDS  # part1, chunk001
        or token.isdigit()
        or name_interval(token) is not None
    )


_PARTITION = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.+)$")
"""A hive partition folder, ``key=value``: ``symbol=ES`` names the symbol (also ``ticker``,
``instrument``, ``sym``), any other key (``year=2024``, ``interval=1m``, ``freq=1min``,
``exchange=CME``) is passed over (``interval`` was the symbol until session 53)."""
_SYMBOL_KEYS = ("symbol", "ticker", "instrument", "sym")


_IG_EPIC = re.compile(r"^CS\.D\.([A-Z]{6})\.[A-Z]+\.IP$")
"""IG's epic of a currency pair, ``CS.D.EURUSD.MINI.IP``: the pair (was ``CS``)."""
_TONGDAXIN = re.compile(r"^(SH|SZ|BJ)#(\d{6})$", re.IGNORECASE)
"""Tongdaxin's export, ``SH#600519.txt``: the market, then the code (``600519.SH``; was ``SH``)."""


_DEFAULT_WORKBOOK = re.compile(
    r"^(book|mappe|classeur|libro|cartel|pasta|boek|zeszyt|kirja|munkaf\w*|workbook|"
    r"untitled( spreadsheet)?)[ _]?\d*$",
    re.IGNORECASE,
)
"""The name a spreadsheet gives a new workbook (Excel's ``Book1``, German ``Mappe1``, French
``Classeur1``, Spanish and Italian ``Libro1``/``Cartel1``, Portuguese ``Pasta1``...)."""
_DEFAULT_SHEET = re.compile(
    r"^(sheet|tabelle|feuil(le)?|hoja|foglio|planilha|plan|blad|arkusz|taulukko|munkalap|list)"
    r"[ _]?\d*$",
    re.IGNORECASE,
)
"""The name a spreadsheet gives a new sheet (``Sheet1``, ``Tabelle1``, ``Feuil1``, ``Hoja1``)."""
_SHEET_TICKER = re.compile(r"^[A-Za-z0-9^][A-Za-z0-9.\-_=^!#]{0,15}$")


def sheet_guess(path: Path, sheet: str) -> NameGuess | None:
    """The symbol of a workbook saved under its spreadsheet's default name (``Book1.xlsx``) or a
    name that says nothing (``data.xlsx``): its sheet's name where that is a ticker and no
    default (sheet ``MSFT``: was ``BOOK1``); else None (the file name's guess stands)."""
    stem = Path(path.name).stem
    name = sheet.strip()
    if not (_DEFAULT_WORKBOOK.match(stem) or _nameless(stem)) or _DEFAULT_SHEET.match(name):
        return None
    if not _SHEET_TICKER.match(name) or _nameless(name):  # a sheet "2024" or "Data"
        return None
    found = guess_from_name(path.with_name(f"{name}.csv"))
    return replace(found, how=f"the name of sheet {sheet!r}")


_WORD_THEN_DIGITS = re.compile(
    r"^(?:data|prices?|quotes?|history|historical|daily|stock|ohlcv?|candles|klines?)[_ \-]"
    r"(?=\d{5,6}(?:$|[_ \-]))",
    re.IGNORECASE,
)
"""A generic word before a ticker of five or six digits (``data_005930_20240115``: Seoul's
Samsung, which was the folder's name until session 54); four digits after a word may be a
part's number (``part-0001``)."""


def _numeric_ticker(stem: str) -> str | None:
    """The ticker of digits a name starts with (:data:`_NUMERIC_TICKER`), perhaps after a
    generic word (:data:`_WORD_THEN_DIGITS`), or None."""
    if (word := _WORD_THEN_DIGITS.match(stem)) is not None:
        stem = stem[word.end() :]
    m = _NUMERIC_TICKER.match(stem)
    if m is None or _DATED.fullmatch(m.group(1)) or _STOOQ.match(stem):
        return None
    return m.group(1)


def _nameless(stem: str) -> bool:
    """Whether a file's name says nothing of the symbol: a date, or only generic words, numbers,
    pieces of a uuid and intervals (``part-0``, ``data.csv``, ``<uuid>-0``, ``daily.csv``)."""
    if _DATED.fullmatch(stem):
        return True
    if _numeric_ticker(stem) is not None:  # 600519/2024-01.csv: the folder is the ticker
        return False
    tokens = [t for t in TOKEN.split(_UUID.sub(" ", stem).lower()) if t]
    return bool(tokens) and all(_nameless_token(t) for t in tokens)


def _from_folder(path: Path) -> NameGuess:
    """The guess of the nearest folder (or zip archive) above ``path`` whose name is no date
    (of the three nearest): a hive partition's ``symbol=ES`` gives ``ES``, ``year=2024`` is
    passed over, a Spark dataset ``ES.parquet/`` gives ``ES``.

    Raises:
        DataError: that name says nothing of the symbol (``data``, ``tmp``: :data:`_GENERIC_FOLDERS`),
            or there is none.
    """
    for parent in list(path.parents)[:3]:
        name = parent.name
        stem = re.sub(r"\.(zip|parquet|pq)$", "", name, flags=re.IGNORECASE)
        if (part := _PARTITION.match(stem)) is not None:
            if part.group(1).lower() not in _SYMBOL_KEYS:
                continue
            return NameGuess(part.group(2).upper(), f"the partition folder {name!r}")
        if _nameless(stem):
            continue
        if not _LEADING.search(stem) or stem.lower() in _GENERIC_FOLDERS:
            break
        guess = guess_from_name(parent.with_name(f"{stem}.csv"))
        kind = "the zip archive" if name.lower().endswith(".zip") else "the folder"
        how = f"the name of {kind} {name!r}"
        return replace(guess, how=how, interval=guess.interval or name_interval(path.stem))
    raise DataError(
        f"{path}: no symbol column, and the file name says nothing of the symbol (a date, a "
        "part of a dataset, a generic name); pass --symbol (or name the folder for the symbol)"
    )


def guess_from_name(path: Path) -> NameGuess:
    """Symbol, vendor clock and claimed interval of a file without a symbol column.

    Raises:
        DataError: the name holds no letters or digits.
    """
    stem = Path(uncompressed_name(path.name)).stem  # ES.csv.zst: ES
    if _DATED.fullmatch(stem):  # data/ES/2024-01.csv, ES_2024.zip/2024-01.csv: the folder's
        return _from_folder(path)
    for part in (stem, path.parent.stem if path.parent.suffix.lower() == ".zip" else ""):
        m = _HISTDATA.match(part)
        if m:
            interval = timedelta(minutes=1) if m.group(2).upper() == "M1" else None
            return NameGuess(m.group(1).upper(), "histdata's file name", HISTDATA_TZ, interval)
    bare = _COPY.sub("", stem)  # a browser's second download of a name: "AAPL (1)"
    if _SITE_NAMES.fullmatch(bare):  # SPY/HistoricalData_1530403200000.csv: the folder's
        folder = path.parent.name
        if folder and not _nameless(folder) and folder.lower() not in _GENERIC_FOLDERS:
            return _from_folder(path)  # its own folder alone: /home/u/data/... is no symbol U
        raise DataError(
            f"{path}: no symbol column, and {path.name!r} is the site's name for every "
            "download, not a symbol; pass --symbol (or name the file or its folder for it)"
        )
    if (contract := contract_name(stem)) is not None:  # ES 06-18.Last, ES-2014H, FDAX-201803-EUREX
        return NameGuess(*contract)
    if (ric := ric_root(stem)) is not None:  # Refinitiv's ESc1
        return NameGuess(ric, "Refinitiv's continuous RIC", None, name_interval(stem))
    if (pair := bitfinex_pair(stem)) is not None:  # tBTCUSD_1m
        return NameGuess(pair, "Bitfinex's file name (t + pair)", None, name_interval(stem))
    if (marketwatch := _MARKETWATCH.match(bare)) is not None:
        return NameGuess(marketwatch.group(1).upper(), "MarketWatch's file name")
    if (cqg := cqg_symbol(re.split(r"[_ ]", bare)[0])) is not None:  # F.US.EPH14[_5min].csv
        return NameGuess(cqg, "CQG's file name", None, name_interval(stem))
    if (epic := _IG_EPIC.match(stem.split("_")[0])) is not None:
        return NameGuess(epic.group(1), "IG's epic", None, name_interval(stem))
    if (tdx := _TONGDAXIN.match(stem)) is not None:
        return NameGuess(f"{tdx.group(2)}.{tdx.group(1).upper()}", "Tongdaxin's file name")
    if (numeric := _numeric_ticker(stem)) is not None:
        return NameGuess(numeric, "the file name (a ticker of digits)", None, name_interval(stem))
    if _nameless(stem):  # ES/part-0.parquet, symbol=ES/<uuid>-0.parquet, ES/data.csv: the folder's
        try:
            return _from_folder(path)
        except DataError:
            pass  # no folder names one: the name's own word, as before (data.csv: DATA)
    if quantiacs := _QUANTIACS.match(stem):
        root = f"F_{quantiacs.group(1)}"
        return NameGuess(root, "Quantiacs' file name (F_ROOT)", None, name_interval(stem))
    if tv := TRADINGVIEW.match(stem):
        symbol, claim = tradingview_name(*tv.groups(), _CONTINUOUS)
        return NameGuess(symbol, "TradingView's file name", None, claim)
    chris = _CHRIS.match(stem)
    if chris:
        exchange, root, number = chris.group(1).upper(), chris.group(2).upper(), int(chris.group(3))
        root = _CHRIS_ROOTS.get((exchange, root), root)
        if root not in FUTURES:  # a future all the same: never a stock's ticker (ICE's T, Z)
            root = f"{exchange}_{root}"
        symbol = root if number == 1 else f"{root}{number}"  # as ES2! is ES2: not the root
        return NameGuess(symbol, "Quandl's file name (CHRIS continuous futures)")
    if (cfe := cfe_name(stem)) is not None:  # the contract as ESZ24 is written: root + contract
        return NameGuess(cfe, "Cboe CFE's file name", None, name_interval(stem))
    prefixed = _PREFIXED.match(stem)
    ticker = prefixed.group(2).lstrip("^") if prefixed else ""  # NYSE_2024: a year, no ticker
    if prefixed and not (prefixed.group(1).islower() or ticker[0].isupper()):
        prefixed = None  # in small letters only after a name in small letters
    if _DATED.fullmatch(ticker) or (prefixed and _nameless(stem[prefixed.end(1) + 1 :])):
        prefixed = None  # binance_15m, polygon_data: the venue's word, as before session 60
    venue, ticker = (prefixed.group(1).upper(), prefixed.group(2)) if prefixed else ("", "")
    if (venue in _FUTURES_VENUES and ticker.upper() in FUTURES) or venue in _OTHER_VENUES:
        rest = guess_from_name(path.with_name(stem[len(venue) + 1 :] + path.suffix))
        how = f"the file name after {venue}"
        return replace(rest, how=how) if rest.how == "the file name" else rest
    whole = stem  # what the name claims of the interval, the period prefix included
    period = _PERIOD_PREFIX.match(stem)
    if period and period.group(1) and not pair_first(stem[period.end() :]):
        period = None  # FX_daily_prices.csv: the name's own word, FX, as before
    if period:
        stem = stem[period.end() :]
    mt4 = MT4_HISTORY.match(stem)
    base, quote = (mt4.group(1).upper(), mt4.group(2).upper()) if mt4 else ("", "")
    if mt4 and (is_pair(base, quote) or (base in CFD_BASES and quote in FIAT)):
        minutes = timedelta(minutes=int(mt4.group(3)))
        return NameGuess(base + quote, "MetaTrader 4's file name (pair and minutes)", None, minutes)
    if (kraken := kraken_pair(stem)) is not None:  # XXBTZUSD, XBTUSD_1440 (minutes)
        return NameGuess(kraken[0], "Kraken's pair code", None, name_interval(whole) or kraken[1])
    if (market := bitcoincharts_market(stem)) is not None:  # bitstampUSD_1-min_data_...
        return NameGuess(market, "bitcoincharts' market name", None, name_interval(whole))
    if (suffixed := broker_pair(stem)) is not None:  # EURUSDm, XAUUSDm_M5
        return NameGuess(
            suffixed, "the file name (a pair, a broker's suffix)", None, name_interval(whole)
        )
    pair = PAIR.match(stem)
    base, quote = (pair.group(1).upper(), pair.group(2).upper()) if pair else ("", "")
    if pair and quote in CRYPTO and base in CRYPTO_QUOTES and not is_pair(base, quote):
        base, quote = quote, base  # Upbit's and Bithumb's market first, KRW-BTC: BTCKRW
    # a pair, or a CFD quoted like one (Oanda's XAU_USD, BCO_USD: were XAU, BCO, stocks)
    if pair and (
        not (is_pair(base, quote) or (base in CFD_BASES and quote in FIAT))
        or _PERP_SUFFIX.search(stem)
    ):
        pair = None  # a perpetual swap (btc-usdt-swap) keeps the rule below
    named = HISTORICAL_DATA.match(stem)
    if named and pair is None:
        title = named.group(1).strip()
        if title.lower() in INVESTING_NAMES:  # daily, weekly or monthly: the name does not say
            return NameGuess(INVESTING_NAMES[title.lower()], "Investing.com's file name")
        if not _TICKER.match(title):
            raise DataError(
                f"{path}: no symbol column, and the file name says {title!r}, not a symbol; "
                "pass --symbol"
            )
        return NameGuess(title.upper(), "Investing.com's file name")
    if pair:
        return NameGuess(base + quote, "the file name (a pair)", None, name_interval(whole))
    stable = stable_pair(stem)
    if stable and not _PERP_SUFFIX.search(stem) and not _nameless_token(stable[0].lower()):
        return NameGuess("".join(stable), "the file name (a pair)", None, name_interval(whole))
    usd_fx = _YAHOO_USD_FX.match(stem)
    if usd_fx and usd_fx.group(1).upper() in FIAT - {"USD"}:
        symbol = "USD" + usd_fx.group(1).upper()
        return NameGuess(symbol, "Yahoo's file name (a dollar rate)", None, name_interval(whole))
    continuous = _CONTINUOUS.match(stem)
    if continuous:
        root = (continuous.group(1) or continuous.group(2)).upper()
        return NameGuess(root, "the file name (a continuous contract)", None, name_interval(whole))
    if (root := _bloomberg_root(stem)) is not None:
        return NameGuess(root, "the file name (a continuous contract)", None, name_interval(whole))
    if (yahoo := _YAHOO_INDEX.match(stem)) is not None:
        return NameGuess(yahoo.group(0).upper(), "the file name", None, name_interval(whole))
    # BRK.B, and VOD.L or ES.F (a share class, a market or Stooq's futures: the symbol either way)
    if (share := _SHARE_CLASS.match(stem)) is not None:
        return NameGuess(share.group(1).upper(), "the file name", None, name_interval(whole))
    if (listed := _LISTED.match(stem)) is not None:
        symbol = f"{listed.group(1)}.{listed.group(2)}".upper()
        return NameGuess(
            symbol, "the file name (a ticker and its market)", None, name_interval(whole)
        )
    if (stooq := _STOOQ.match(stem)) is not None:
        symbol = f"{stooq.group(1)}.{stooq.group(2)}".upper()
        return NameGuess(symbol, "Stooq's file name (a ticker and its market)")
    # the first run of letters and digits that is no generic word (prices_ES.csv: ES) nor a
    # name in CamelCase (MacroTrends_Data_Download_AAPL.csv: AAPL)
    m = next(
        (
            r
            for r in _LEADING.finditer(stem)
            if not _nameless_token(r.group(0).lower()) and not _CAMEL.fullmatch(r.group(0))
        ),
        None,
    ) or _LEADING.match(stem)  # only generic words, and no folder named a symbol: the first
    if m is None:
        raise DataError(f"{path}: no symbol column and no symbol in the file name; pass --symbol")
    symbol = m.group(0).upper()
    perp = _PERP_SUFFIX.match(stem, m.end())
    if perp:
        symbol = "-".join(p.upper() for p in (symbol, *perp.groups()) if p)
    return NameGuess(symbol, "the file name", None, name_interval(whole))


def guess_lines(per_file: tuple[tuple[str, ...], ...], most: int = 12) -> list[str]:
    """The guesses made reading files, one line each, each distinct line once; past ``most``
    lines the per-file symbol lines are merged into one (``symbols F_AD, F_AE, ... (88 files)
    from Quantiacs' file name (F_ROOT); --symbol to change``)."""
    lines = list(dict.fromkeys(g for guesses in per_file for g in guesses))
    if len(lines) <= most:
        return lines
    symbols = [g for g in lines if g.startswith("symbol ")]
    rest = [g for g in lines if not g.startswith("symbol ")]
    by_how: dict[str, list[str]] = {}
    for g in symbols:
        name, how = g.removeprefix("symbol ").split(" from ", 1)
        by_how.setdefault(how, []).append(name)
    merged = [
        f"symbols {', '.join(names[:6])}{', ...' if len(names) > 6 else ''} ({len(names)} files) "
        f"from {how}"
        for how, names in by_how.items()
    ]
    return [*rest, *merged]


def name_guess(path: Path, sheet: str | None) -> NameGuess:
    """What the file's name, or a workbook's sheet's name (:func:`sheet_guess`), says of the
    symbol."""
    found = sheet_guess(path, sheet) if sheet is not None else None
    return found if found is not None else guess_from_name(path)
