"""Which column of a bar file is which bar field, across vendors' spellings.

Names are compared after trimming, lower-casing and dropping MetaTrader's angle brackets
(``<DATE>`` -> ``date``). The first alias found wins:

* timestamp: ``ts``, ``ts_event``, ``timestamp``, ``timestamp_utc``, ``datetime``,
  ``date_time``, ``date time``, ``gmt time`` and ``local time`` (Dukascopy), ``time_utc``,
  ``open_time`` (crypto, epoch ms; ``open time`` and ``opentime`` too), ``dates`` (Bloomberg),
  ``window_start`` (Polygon's flat files), ``time_period_start`` (CoinAPI), ``start_time``
  (Bybit's ``startTime``), ``t`` (Polygon's and Alpaca's aggregates), any of these with
  other separators (``Date/Time``: AmiBroker,
  ``Time Stamp``, ``Timestamp UTC``), pandas' index (a *first* unnamed column in a
  CSV: an unnamed column elsewhere is a trailing delimiter's; ``__index_level_0__`` in a
  parquet file); else a date column plus a time
  column (``date`` + ``time``: TradeStation, MetaTrader, Kibot; the date also as
  ``trade_date``, ``<DTYYYYMMDD>``, ``Date_YMD``); else ``time`` or ``date`` alone. A
  timestamp, date or time name may end in its zone in brackets (``Time (UTC)``, ``Date (EET)``,
  ``Time (GMT+2)``, ``Time (ET)``): the zone of its naive times (:func:`header_zone`).
* prices ``open high low close`` (or ``o h l c``, or Bloomberg's ``px_open`` ... ``px_last``;
  the close also as ``last`` (Barchart, IB), ``price`` (Investing.com) or ``close/last``
  (Nasdaq.com); Nasdaq Nordic's ``Opening price`` ... ``Closing price``; CoinAPI's
  ``price_open`` ... ``price_close``, Bybit's ``openPrice`` ...
  ``closePrice``; the names of several words also with other separators); volume ``volume``,
  ``vol``, ``vol.``, ``v``, ``px_volume``, ``volume_traded`` (CoinAPI), then tick volume
  (``tickvol``, ``tick_volume``), then the first volume named with its unit (``Volume BTC``,
  ``Volume (USD)``); else the sum of up and down volume (``Up`` + ``Down``: TradeStation,
  MultiCharts); a file without any gets volume 0.
* symbol ``symbol``, ``ticker``, ``instrument``, ``raw_symbol``, ``#ric``/``ric``,
  ``contract``, else ``instrument_id``
  (Databento without ``map_symbols``).

Every other column is *extra*: listed (not silently dropped) and left out of the bars, unless
the caller keeps it as an input (``read_bars(..., keep=...)``: the user's covariates).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

TS_NAMES = (
    "candle_date_time_utc",  # Upbit's candles: its "timestamp" is the last trade's time
    "snapshottimeutc",  # IG's prices (its snapshotTime is London's clock)
    "ts",
    "ts_event",
    "timeopen",  # CoinMarketCap: its "timestamp" is the close (23:59:59.999), timeOpen the bar's
    "timestamp",
    "timestamp_utc",
    "datetime",
    "date_time",
    "date time",
    "gmt time",
    "local time",  # Dukascopy, its values with their offset ("... GMT+0100")
    "time_utc",
    "open_time",
    "dates",  # Bloomberg's BDH
    "open time",  # Binance's spreadsheet export; "openTime" in its API's JSON turned to CSV
    "opentime",
    "window_start",  # Polygon's flat files (epoch ns)
    "time_period_start",  # CoinAPI
    "start_time",  # Bybit's startTime
    "t",  # Polygon's and Alpaca's aggregates (epoch ms, or RFC 3339), beside o h l c v
    "mts",  # Bitfinex's candles and trades (epoch ms)
    "sip_timestamp",  # Polygon's trades and quotes flat files (epoch ns)
    "created_time",  # OKX's trades history (epoch ms)
    "start",  # Coinbase Advanced Trade's candles (epoch s, or RFC 3339 in its exports)
)
INDEX_NAMES = ("", "unnamed: 0", "__index_level_0__")
DATE_NAMES = ("date", "day", "trade_date", "dtyyyymmdd", "date_ymd", "exchange_date",
              "trading_date", "business_date", "session_date")  # fmt: skip
"""Then CME DataMine's ``Trade Date``, MetaStock's ``<DTYYYYMMDD>``, AmiBroker's ``Date_YMD``,
Refinitiv Eikon's ``Exchange Date`` (its export was refused as missing 'ts' until session 59)
and exchanges' other names of a trading day (names are also matched with other separators)."""
TIME_NAMES = ("time", "time_of_day")
HOUR_NAMES = ("hour", "hr", "hours", "hour_of_day")
"""A column of the hour alone beside a date (``Date,Hour,...``: ``0`` .. ``23``), read as the
time with :data:`MINUTE_NAMES`' column, if any, as its minutes (``file_read``)."""
MINUTE_NAMES = ("minute", "min", "minutes")
TICK_VOLUME = ("tickvol", "tick_volume", "tick volume", "tickvolume", "tickqty")
"""Tick volume (MetaTrader's ``<TICKVOL>``, FXCM's ``TickQty``): the volume where no other is, or where the chosen
volume column is 0 on every bar (``file_read``)."""
ALIASES = {
    "open": ("open", "o", "px_open", "price_open", "open_price", "opening price", "opening_price"),
    "high": ("high", "h", "px_high", "price_high", "high_price", "high price"),
    "low": ("low", "l", "px_low", "price_low", "low_price", "low price"),
    "close": (
        "close",
        "c",
        "settle",  # a future's settlement price, the day's official close (Quandl's CHRIS keeps
        "settlement",  # it beside "Last", the last trade; DataMine, Barchart and CSI name it so)
        "settlement price",
        "settle price",
        "last",
        "price",
        "close/last",
        "px_last",
        "price_close",
        "close_price",
        "closing price",  # Nasdaq Nordic's "Opening price;High price;Low price;Closing price"
        "trade_price",  # Upbit's candles: opening_price, high_price, low_price, trade_price
    ),
    "volume": (
        "volume",
        "vol",
        "vol.",
        "v",
        "px_volume",
        "volume_traded",
        "periodvolume",  # IQFeed's each bar's volume (its TotalVolume is the day's running total)
        "period volume",
        "period_volume",
        "number of shares",  # Euronext's (its Turnover is in euros)
        "no.of shares",  # BSE India's daily prices
        "no. of shares",
        "total traded quantity",  # NSE India's
        "tottrdqty",
        "ttl_trd_qnty",  # NSE India's full bhavcopy (sec_bhavdata_full): total traded quantity
        "volumefrom",  # CryptoCompare's volume in the base currency (volumeto: in the quote's)
        # the bar's count under a longer name (session 52's sweep: each was read past, volume 0)
        "total volume",  # Cboe CFE's history files (not IQFeed's running TotalVolume)
        "trade volume",
        "trading volume",
        "traded volume",
        "total traded volume",
        "shares traded",  # niftyindices.com
        "share volume",
        "est. volume",  # CME's settlements page
        "estimated volume",
        "real volume",  # MetaTrader's real volume beside its tick volume
        "base volume",  # an exchange's volume in the base currency
        "candle_acc_trade_volume",  # Upbit's (its candle_acc_trade_price is in KRW)
        "lasttradedvolume",  # IG's
        *TICK_VOLUME,
    ),
}
UP_DOWN = (("up", "down"), ("upvol", "downvol"), ("up volume", "down volume"))
"""TradeStation's and MultiCharts' volume, written as the volume of up ticks and of down ticks:
the bar's volume is their sum (when the file has no volume column)."""
LOCALIZED = {
    "open": ("eröffnung", "eröffn.", "erster", "ouverture", "ouv.", "apertura", "abertura",
             "открытие", "откр.", "始値", "开盘", "开盘价", "시가"),
    "high": ("hoch", "plus haut", "máximo", "maximo", "massimo", "máxima", "maxima", "макс.",
             "максимум", "高値", "高", "最高", "最高价", "고가"),
    "low": ("tief", "plus bas", "mínimo", "minimo", "mínima", "minima", "мин.", "минимум",
            "安値", "低", "最低", "最低价", "저가"),
    "close": ("schluss", "schlusskurs", "zuletzt", "letzter", "clôture", "cloture", "dernier",
              "cierre", "último", "ultimo", "chiusura", "fechamento", "закрытие", "цена", "終値",
              "收盘", "收盘价", "종가"),
    # the shares traded before a German "Volumen", which is their value in euros (Börse
    # Frankfurt's and ariva's Stücke), and B3's Quantidade
    "volume": ("stücke", "stuecke", "umsatz in stück", "umsatz in stueck", "quantidade",
               "volumen", "объём", "объем", "出来高", "交易量", "成交量", "总手", "거래량"),
}  # fmt: skip
"""Investing.com's and European brokers' names in their languages (German, French, Spanish,
Italian, Portuguese, Russian, Japanese, Chinese, Korean: Tongdaxin's ``最高``, KRX's ``시가``):
tried after the English ones."""
LOCALIZED_DATES = ("datum", "fecha", "data", "дата", "日付", "日付け", "日期", "일자", "날짜")
LOCALIZED_TIMES = ("zeit", "uhrzeit", "heure", "hora", "ora", "время", "時間", "时间")
CHECKED_SYMBOL_NAMES = (
    "sym", "name", "code", "ts_code", "stock", "asset", "pair", "product_id", "ticker symbol",
    "ticker_symbol", "securityid", "security_id", "secid", "permno",
)  # fmt: skip
"""Names of a column that is the symbol only where its values look like tickers
(:data:`TICKER_LIKE`): kdb+'s and Polygon's stream's ``sym``, Kaggle's S&P 500 ``Name``, EODHD's
bulk ``Code``, Tushare's ``ts_code``,
Coinbase's ``product_id``, CRSP's ``permno``...; tried in this order, the first that holds
tickers taken (a company's ``Name`` beside a ``Code`` of tickers: the code)."""
SYMBOL_NAMES = (
    "symbol", "ticker", "instrument", "raw_symbol", "#ric", "ric", "contract", "instrument_id",
    *CHECKED_SYMBOL_NAMES,
)  # fmt: skip
"""``#RIC``: Refinitiv's (LSEG's) Tick History, rows of several contracts in one file;
``contract``: a futures export's contract code (``ESH24`` then ``ESM24``). ``instrument_id``
is Databento's numeric id in a CSV written without ``map_symbols``: a series per instrument,
named by its number (a warning says so). Then :data:`CHECKED_SYMBOL_NAMES`, taken only where
their values look like tickers (Kaggle's S&P 500 data set, ``all_stocks_5yr.csv``:
``date,open,high,low,close,volume,Name``)."""
TICKER_LIKE = r"^(?:[A-Z0-9][A-Z0-9./:_\-]{0,15}|(?:sh|sz|bj)\.?\d{6})$"
"""A value of a :data:`CHECKED_SYMBOL_NAMES` column that is a ticker (``AAPL``, ``BRK.B``,
``600519.SH``, ``BTC-USD``, ``BTC/USDT``, ``14593``, Baostock's and akshare's ``sh.600519``
and ``sz000001``), not a company's name (``Apple Inc.``)."""


def holds_tickers(values: pl.Series) -> bool:
    """Whether a column's first 1,000 values (nulls aside) all look like tickers
    (:data:`TICKER_LIKE`): a :data:`CHECKED_SYMBOL_NAMES` column is the symbol only so."""
    text = values.head(1000).cast(pl.String).drop_nulls().str.strip_chars()
    return bool(text.len()) and bool(text.str.contains(TICKER_LIKE).all())


def canonical_name(name: str) -> str:
    """``" <DATE> "`` -> ``date``: trimmed, lower-case, without angle brackets."""
    n = name.strip().lower()
    if n.startswith("<") and n.endswith(">"):
        n = n[1:-1].strip()
    return n


@dataclass(frozen=True)
class ColumnMap:
    """The file's names for each bar field (None: absent).

    Attributes:
        ts: one timestamp column, or None when ``date`` + ``time`` are used.
        date: date column (with ``time``).
        time: time-of-day column (with ``date``).
        prices: ``open high low close`` -> file name.
        volume: volume column or None.
        symbol: symbol column or None.
        extra: the remaining columns, in file order.
    """

    ts: str | None
    date: str | None
    time: str | None
    prices: dict[str, str]
    volume: str | None
    symbol: str | None
    extra: tuple[str, ...]


_ZONED = re.compile(r"^(?P<name>[^()]*?)\s*\((?P<zone>[^()]+)\)$")
"""A column name ending in a bracketed zone: ``Time (UTC)``."""


def _zoned(name: str) -> tuple[str, str] | None:
    """``"Time (UTC)"`` -> ``("time", "UTC")`` for a timestamp, date or time name; else None
    (``Volume (BTC)`` is not a zone: only names of times carry one)."""
    m = _ZONED.match(name.strip())
    if m is None:
        return None
    base = canonical_name(m["name"])
    if base not in (*TS_NAMES, *DATE_NAMES, *TIME_NAMES):
        return None
    if _NO_ZONE.match(m["zone"].strip()):  # "Timestamp (ms)": a unit or a layout, no zone
        return None
    return base, m["zone"].strip()


def _time_with_unit(name: str) -> str | None:
    """``"Timestamp (ms)"`` -> ``timestamp``: a time column whose brackets hold its unit or
    layout (:data:`_NO_ZONE`), not a zone; else None."""
    m = _ZONED.match(name.strip())
    if m is None or not _NO_ZONE.match(m["zone"].strip()):
        return None
    base = canonical_name(m["name"])
    return base if base in (*TS_NAMES, *DATE_NAMES, *TIME_NAMES) else None


_NO_ZONE = re.compile(
    r"^(?:ms|s|sec|us|µs|ns|millis|milliseconds|seconds|unix|epoch|posix|utc ms|unix ms"
    r"|[ymdhs/:.\- ]*(?:yy|mm|dd|hh)[ymdhs/:.\- ]*)$",
    re.IGNORECASE,
)
"""What a time column's brackets hold that is no zone: its epoch unit (``Timestamp (ms)``,
``time (unix)``) or its layout (``Date (YYYY-MM-DD HH:MM)``): read as zones, they were refused
as unknown ones."""


_GENERIC_ZONES = {
    "ET": "America/New_York",
    "CT": "America/Chicago",
    "MT": "America/Denver",
    "PT": "America/Los_Angeles",
}
"""US clock names without a season, as a header writes them (``Time (ET)``): the city's zone,
daylight saving included (``EST`` stays what the zone database says, UTC-5)."""


def header_zone(cols: ColumnMap) -> tuple[str, str] | None:
    """The zone a column of times names in its header, and that column: ``("UTC", "Time
    (UTC)")``, ``("America/New_York", "Time (ET)")``, ``("UTC", "Gmt time")`` (Dukascopy's);
    None when no header names one."""
    for column in (cols.ts, cols.date, cols.time):
        if column is not None and (zoned := _zoned(column)) is not None:
            return _GENERIC_ZONES.get(zoned[1].upper(), zoned[1]), column
        if column is not None and canonical_name(column) == "gmt time":  # Dukascopy's
            return "UTC", column
    return None


_UNIT_VOLUME = re.compile(r"^vol(ume)?[\s_(]+[a-z]")
"""A volume named with its unit: ``Volume BTC`` (CryptoDataDownload), ``Volume (USD)``,
``volume_base``."""


_NO_UNIT = {"ma", "sma", "ema", "wma", "avg", "average", "mean", "median", "delta", "change",
            "chg", "osc", "oscillator", "ratio", "signal", "profile", "weighted", "rsi", "std"}  # fmt: skip
"""Words after ``Volume`` that name an indicator of it, not its unit: TradingView's ``Volume MA``
(a 20-bar average) was read as the volume."""


def _unit_volume(lower: dict[str, str]) -> str | None:
    """The first column named as a volume with its unit (the file's order: the base currency's
    comes first in CryptoDataDownload's ``Volume BTC,Volume USD``), for a file without a plain
    volume column; not an indicator of the volume (:data:`_NO_UNIT`)."""
    return next(
        (
            n
            for key, n in lower.items()
            if _UNIT_VOLUME.match(key) and re.split(r"[\s_()]+", key)[1] not in _NO_UNIT
        ),
        None,
    )


def up_down_volume(cols: ColumnMap) -> tuple[str, str] | None:
    """The up- and down-volume columns (:data:`UP_DOWN`) whose sum is the volume of a file
    without a volume column; None otherwise."""
    if cols.volume is not None:
        return None
    extra = {canonical_name(n): n for n in cols.extra}
    for up, down in UP_DOWN:
        if up in extra and down in extra:
            return extra[up], extra[down]
    return None


def _squash(name: str) -> str:
    """``"Date/Time"`` -> ``datetime``: letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", name)


def _pick_squashed(lower: dict[str, str], names: tuple[str, ...]) -> str | None:
    """The first of ``names`` spelt with other separators (``Date/Time``, ``Time Stamp``,
    ``DATE-TIME``); a one-letter name (``t``) only as written."""
    squashed: dict[str, str] = {}
    for n, original in lower.items():
        squashed.setdefault(_squash(n), original)
    for n in names:
        if len(n) > 1 and (hit := squashed.get(_squash(n))) is not None:
            return hit
    return None


def _index_of_times(names: list[str], index_is_integer: bool) -> str | None:
    """A first column ``Index`` that is not row numbers, where nothing else holds the time: R's
    ``write.zoo`` of a quantmod series (``"Index","AAPL.Open",...``)."""
    if names and canonical_name(names[0]) == "index" and not index_is_integer:
        return names[0]
    return None


def _pick(lower: dict[str, str], names: tuple[str, ...]) -> str | None:
    for n in names:
        if n in lower:
            return lower[n]
    return None


FIELDS = ("ts", "date", "time", "open", "high", "low", "close", "volume", "symbol")
"""Bar fields the user may name a column for (``--columns ts=DATE,open=OPEN``)."""


def parse_columns(entries: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``("ts=DATE", "open=OPEN")`` -> ``{"ts": "DATE", "open": "OPEN"}``.

    Raises:
        ValueError: an entry without ``=``, an unknown field or a field given twice.
    """
    out: dict[str, str] = {}
    for e in entries:
        field, sep, column = e.partition("=")
        field, column = field.strip().lower(), column.strip()
        if not sep or not column:
            raise ValueError(f"--columns entry {e!r} is not FIELD=COLUMN")
        if field not in FIELDS:
            raise ValueError(f"--columns field {field!r} is not one of {', '.join(FIELDS)}")
        if field in out:
            raise ValueError(f"--columns names {field!r} twice")
        out[field] = column
    if ("date" in out) != ("time" in out) or ("ts" in out and "date" in out):
        raise ValueError("--columns takes ts=COLUMN, or date=COLUMN and time=COLUMN together")
    return out


def _given(names: list[str], given: dict[str, str], where: str) -> dict[str, str]:
    """The user's ``--columns`` matched to the file's names (exact, else trimmed/lower-case)."""
    from foxhunt.errors import DataError

    out = {}
    for field, column in given.items():
        match = column if column in names else None
        if match is None:
            match = next((n for n in names if canonical_name(n) == canonical_name(column)), None)
        if match is None:
            raise DataError(
                f"{where}: --columns {field}={column}: no column {column!r} "
                f"(columns: {', '.join(names)})"
            )
        out[field] = match
    return out


def map_columns(
    names: list[str],
    index_is_integer: bool = False,
    given: dict[str, str] | None = None,
    where: str = "the file",
) -> ColumnMap:
    """Match a file's column names to bar fields (see the module docstring).

    Args:
        names: the columns as spelled in the file.
        index_is_integer: a leading unnamed column holds integers (a pandas RangeIndex, no time).
        given: the user's choice (:func:`parse_columns`), field -> column; it wins over the
            aliases.
        where: the file, for messages.

    Returns:
        The mapping; missing prices are absent from ``prices`` (the caller names them).

    Raises:
        DataError: a column the user named is not in the file.
    """
    chosen = _given(names, given or {}, where)
    lower: dict[str, str] = {}
    for n in names:
        if n not in chosen.values():
            key = canonical_name(n)
            # two spellings of one name: the lower-case one is the field (Binance's kline
            # keys: t the open time and T the close time, l the low and L a trade id)
            if key not in lower or (n == n.lower() and lower[key] != lower[key].lower()):
                lower[key] = n
    for n in names:  # "Time (UTC)" read as "time", after any name spelt without a zone
        if n not in chosen.values() and (zoned := _zoned(n)) is not None:
            lower.setdefault(zoned[0], n)
        elif n not in chosen.values() and (base := _time_with_unit(n)) is not None:
            lower.setdefault(base, n)  # "Timestamp (ms)", "Date (YYYY-MM-DD)"
    prices = {
        k: v
        for k in ("open", "high", "low", "close")
        if (
            v := _pick(lower, ALIASES[k])
            or _pick_squashed(lower, ALIASES[k])
            or _pick(lower, LOCALIZED[k])
        )
    }
    prices.update({k: chosen[k] for k in ("open", "high", "low", "close") if k in chosen})
    volume = (
        chosen.get("volume")
        or _pick(lower, ALIASES["volume"])
        or _unit_volume(lower)
        or _pick(lower, LOCALIZED["volume"])
    )
    symbol = chosen.get("symbol") or _pick(lower, SYMBOL_NAMES)
    if "date" in chosen:
        ts, date, time = None, chosen["date"], chosen["time"]
        used = {date, time, volume, symbol, *prices.values()}
        extra = tuple(n for n in names if n not in used)
        return ColumnMap(ts, date, time, prices, volume, symbol, extra)
    ts = chosen.get("ts") or _pick(lower, TS_NAMES) or _pick_squashed(lower, TS_NAMES)
    date = time = None
    if ts is None and not index_is_integer:
        # pandas' index: first in a CSV (an empty name elsewhere is a trailing delimiter's),
        # last in a parquet file, under its own name
        first = names[0] if names and canonical_name(names[0]) in INDEX_NAMES[:2] else None
        ts = first if first is not None else _pick(lower, INDEX_NAMES[2:])
    if ts is None:
        date = (
            _pick(lower, DATE_NAMES)
            or _pick_squashed(lower, DATE_NAMES)
            or _pick(lower, LOCALIZED_DATES)
        )
        time = (
            _pick(lower, TIME_NAMES)
            or _pick_squashed(lower, TIME_NAMES)
            or _pick(lower, LOCALIZED_TIMES)
            or (_pick(lower, HOUR_NAMES) if date is not None else None)
        )
        if date is None or time is None:
            ts = date or time or _index_of_times(names, index_is_integer)
            date = time = None
    used = {ts, date, time, volume, symbol, *prices.values()}
    # A pandas RangeIndex column is an artefact of how the file was written, not data.
    extra = tuple(n for n in names if n not in used and canonical_name(n) not in INDEX_NAMES)
    return ColumnMap(ts, date, time, prices, volume, symbol, extra)


def range_index(lf: pl.LazyFrame, schema: pl.Schema, name: str) -> bool:
    """The first column holds integers: typed so, or text of row numbers (pandas' index written
    by ``df.to_csv()``: ib_insync's and MetaTrader 5's frames saved with their index,
    ``,date,open,...`` then ``0,2018-03-05 09:30:00-05:00,...``; after a filter or a sort its
    numbers have gaps or count down, ``30000, 30001, 30003``, and frames joined each count from
    0), not a time: numbers under 10^9 that only rise (or start again at 0) or only fall (epoch
    seconds since 2001 have ten digits), not dates written ``YYYYMMDD``."""
    if schema[name].is_integer():
        return True
    if schema[name] != pl.String:
        return False
    try:
        head = lf.select(pl.col(name).str.strip_chars()).head(64).collect().to_series()
    except pl.exceptions.PolarsError:  # a malformed file: the read names its line
        return False
    head = head.drop_nulls()
    if head.len() < 2 or not bool(head.str.contains(r"^\d{1,9}$").all()):
        return False
    if bool(head.str.contains(r"^(19|20)\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$").all()):
        return False
    values = head.cast(pl.Int64)
    steps = values.diff().slice(1)
    restart = values.slice(1) == 0  # frames joined with pd.concat: each one's numbers from 0
    return bool(((steps > 0) | restart).all() or (steps < 0).all())
