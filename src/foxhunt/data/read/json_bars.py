"""Bars saved as JSON: records with names, as REST APIs answer and pandas writes them.

Read (``.json``, ``.jsonl``, ``.ndjson``, plain or compressed: ``.json.gz``, ``.json.bz2``,
``.json.xz``, ``.json.zst``, the same for the others; refused as a file type until session 57):

* a list of records, ``[{"t": 1704205800000, "o": 4790.25, ...}, ...]`` (pandas'
  ``to_json(orient="records")``), or one record a line (JSON Lines, ``orient="records",
  lines=True``);
* an API's answer that holds such a list under one key beside scalars and objects of metadata:
  Polygon's aggregates (``{"ticker": "AAPL", "results": [...]}``), Alpaca's bars of one symbol
  (``{"bars": [...], "symbol": "AAPL"}``); the answer's ``ticker`` or ``symbol`` names the bars
  (Polygon's market prefix dropped: ``X:BTCUSD`` is ``BTCUSD``);
* such an answer in the one object of the answer that holds a list, at any depth (a word for
  the bars, :data:`CONTAINER_KEYS`, is never a symbol): Tradier's ``{"series": {"data":
  [...]}}``, Bitstamp's ``{"data": {"pair": ..., "ohlc": [...]}}``, CryptoCompare's
  ``{"RateLimit": {}, "Data": {"TimeFrom": ..., "Data": [...]}}``;
* bars keyed by symbol under that key, Alpaca's answer for several symbols
  (``{"bars": {"AAPL": [...], "MSFT": [...]}}``): each symbol's records get its name (a symbol
  with none is passed over);
* Twelve Data's ``{"meta": {"symbol", "exchange_timezone"}, "values": [...]}``: the symbol and
  the zone of its naive times from ``meta``;
* Yahoo's chart API, ``{"chart": {"result": [{"meta": {"symbol": ...}, "timestamp": [...],
  "indicators": {"quote": [{"open": [...], ...}]}}]}}``: prices in lists beside the epochs;
* one list per field, TradingView's UDF answer and Finnhub's candles (``{"s": "ok", "t": [...],
  "o": [...], ...}``), Deribit's chart data (:mod:`foxhunt.data.read.json_columns`);
* pandas' ``orient="split"`` (``{"columns": [...], "data": [[...]]}``), and Nasdaq Data
  Link's ``{"dataset_data": {"column_names": [...], "data": [[...]]}}``;
* a list of such answers, one a symbol: Tiingo's crypto prices, ``[{"ticker": "btcusd", ...,
  "priceData": [...]}, ...]``;
* bars keyed by their time, Alpha Vantage's ``"Time Series (5min)"`` and pandas'
  ``orient="index"`` or ``"columns"`` of bars indexed by time
  (:mod:`foxhunt.data.read.json_keyed`).

A record's own symbol, where it has no ``symbol`` or ``ticker``, is its ``S``, ``s`` or ``T``
(:data:`RECORD_SYMBOLS`).

The records then read as a parquet file's columns do (names as vendors spell them: ``t o h l c
v``, epochs or ISO times). Rows without names (a list of lists, as Binance's, Coinbase's,
Kraken's, Bybit's and OKX's candle APIs write them) are read in their vendor's order
(:mod:`foxhunt.data.read.json_rows`), and refused, naming what the file holds, where no order
reads them; refused too is anything else (pandas' default ``orient="columns"`` of bars indexed by
row numbers, not times). An answer is
an empty file where its key for the bars (:data:`CONTAINER_KEYS`) holds nothing (Polygon's
``"results": []``), not where another key does (Kraken's ``"error": []``).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import polars as pl

from foxhunt.data.read.compressed import ERRORS, uncompressed_name
from foxhunt.data.read.encoding import open_bytes
from foxhunt.data.read.json_columns import column_lists
from foxhunt.data.read.json_keyed import time_keyed
from foxhunt.data.read.json_rows import positional_records
from foxhunt.data.read.vendors import guess_from_name
from foxhunt.errors import DataError

log = logging.getLogger(__name__)

LINES_SUFFIXES = (".jsonl", ".ndjson")
"""JSON Lines: one record a line."""
SYMBOL_KEYS = ("ticker", "symbol", "instrument_name")
"""The answer's own name for its symbol, beside the records (Polygon's ``ticker``, Alpaca's
``symbol``, Crypto.com's ``instrument_name``): the bars' symbol, before the file name's."""
CONTAINER_KEYS = frozenset(
    "data day days bar bars candle candles kline klines ohlc ohlcv values results result series "
    "history items records rows list prices quotes".split()
)
"""Vendors' names of the object or list that holds the bars, never a symbol (compared in lower
case): Tradier's ``{"series": {"data": [...]}}`` and ``{"history": {"day": [...]}}``,
Bitstamp's ``{"data": {"ohlc": [...]}}``, Bybit's ``{"result": {"list": [...]}}`` (were read as
bars keyed by the symbols ``data``, ``day``, ``ohlc``)."""
_MARKET = re.compile(r"^[A-Za-z]:")
"""Polygon's market prefix (``X:`` crypto, ``C:`` forex, ``I:`` indices), not the symbol's."""


def market_dropped(symbol: pl.Expr) -> pl.Expr:
    """A symbol column's values without Polygon's (Massive's) market prefix, the pair joined:
    its flat files' ``C:EUR-USD``, ``X:BTC-USD`` and ``I:SPX`` are ``EURUSD``, ``BTCUSD`` and
    ``SPX`` (until session 61 kept: ``C:EUR-USD`` an unknown market on 24x7)."""
    prefixed = symbol.str.contains(r"^[CXI]:[A-Za-z0-9]")
    bare = symbol.str.replace(r"^[CXI]:", "").str.replace_all("-", "").str.to_uppercase()
    return pl.when(prefixed).then(bare).otherwise(symbol)


def read_json_bars(path: Path) -> pl.DataFrame:
    """The bars of a JSON file as a frame (see the module docstring).

    Raises:
        DataError: not JSON, no records with names, or records of no bars.
    """
    if uncompressed_name(path.name).lower().endswith(LINES_SUFFIXES):
        records = _lines(path)
    else:
        try:
            data = json.loads(_raw(path))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise DataError(f"{path}: not JSON ({e})") from None
        records = _records(path, data)
    if not records:
        raise DataError(f"{path}: empty file (no bars)")
    records = _symbol_field(_bars_only(path, [_flat(r) for r in records]))
    try:
        return pl.from_dicts(records, infer_schema_length=None)
    except (pl.exceptions.PolarsError, TypeError, ValueError) as e:
        raise DataError(f"{path}: records that are no table ({str(e).splitlines()[0]})") from None


def _flat(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A record whose objects are spread into columns named by their path: Oanda's candle
    ``{"time": ..., "mid": {"o": "1.0945", ...}}`` has the columns ``time``, ``mid.o``, ...
    (as a CSV export of it names them), so its prices are found as a CSV's are."""
    if not prefix and not any(isinstance(v, dict) for v in record.values()):
        return record  # the common record, flat already: not copied
    out: dict[str, Any] = {}
    for k, v in record.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


_PRICE_KEYS = frozenset("o c open close price_close close_price closePrice".split())


def _bars_only(path: Path, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` without a stream's messages that hold no price (Alpaca's ``{"T": "success",
    "msg": "connected"}`` and its subscription beside the ``{"T": "b", ...}`` bars), where some
    record holds one (one info line)."""
    priced = [r for r in records if not _PRICE_KEYS.isdisjoint(r)]
    if not priced or len(priced) == len(records):
        return records
    log.info(
        "%s: %d records with no price left out (a stream's messages)",
        path,
        len(records) - len(priced),
    )
    return priced


RECORD_SYMBOLS = ("S", "s", "T")
"""A record's own symbol, where it has no ``symbol`` or ``ticker``: Alpaca's stream bars
(``S``; their ``T`` is the message type), a Binance kline (``s``; its ``T`` is the close time),
Polygon's grouped daily bars (``T``, one bar per ticker and day). Taken only when every record
holds a string there."""


def _symbol_field(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if any(k.lower() in ("symbol", "ticker") for k in records[0]):
        return records
    for key in RECORD_SYMBOLS:
        if all(isinstance(r.get(key), str) for r in records):
            return [{**{k: v for k, v in r.items() if k != key}, "symbol": r[key]} for r in records]
    return records


def _raw(path: Path) -> bytes:
    """The file's bytes, decompressed where its name says (``.json.gz`` ... ``.jsonl.zst``),
    read whole (zstd's stream has no lines).

    Raises:
        DataError: a damaged or mislabelled stream.
    """
    try:
        with open_bytes(path) as f:
            return f.read()  # type: ignore[no-any-return]
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except ERRORS as e:
        raise DataError(f"{path}: cannot read ({e})") from None


def _lines(path: Path) -> list[dict[str, Any]]:
    records = []
    for number, line in enumerate(_raw(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise DataError(f"{path} line {number}: not JSON ({e})") from None
        if not isinstance(record, dict):
            raise DataError(f"{path} line {number}: JSON {_what(record)}, not a record with names")
        records.append(record)
    return records


def _records(path: Path, data: object) -> list[dict[str, Any]]:
    """The list of records in ``data``, with a ``symbol`` where they are keyed by one."""
    if isinstance(data, list) and data and all(_answer(e) for e in data):
        # Tiingo's [{"ticker": "btcusd", ..., "priceData": [...]}, ...]: answers in a list
        return [r for answer in data for r in _records(path, answer)]
    if not isinstance(data, dict):
        return _named(path, data, "the file")
    if (chart := _yahoo_chart(data)) is not None:
        return chart
    if (columns := column_lists(data)) is not None:  # Finnhub's {"t": [...], "o": [...]}
        return columns
    # Alpha Vantage's {"Time Series (5min)": {...}}, where no list of records is held (Polygon's
    # "results" beside "dividends" keyed by date: the list, as before session 60's keyed read)
    if not _holds(data) and (keyed := time_keyed(data)) is not None:
        return _with_symbol(_zoned(keyed[0], [keyed[1]]), [keyed[1]])
    keys, levels = _holder(data)
    holder = levels[-1]
    if (names := _split(holder)) is not None:  # the names beside the rows
        return [dict(zip(names, row, strict=True)) for row in holder["data"]]
    # no list here: the objects below that hold one (two or more, or we would have gone down)
    lists = {k: v for k, v in holder.items() if _rows(v)} or {
        k: v for k, v in holder.items() if _holds(v)
    }
    if not lists and (empty := _empty(data)) is not None:  # Polygon's "results": []
        raise DataError(f"{path}: empty file (no bars): {empty} holds no records")
    if len(lists) != 1:
        names = ", ".join(repr(k) for k in list(holder)[:6])
        where = f"{_where(keys)} holds " if keys else ""
        raise DataError(
            f"{path}: {where}a JSON object ({names}) with {'no' if not lists else 'several'} "
            "list of bar records under its keys: save the bars as a list of records "
            '(pandas: df.to_json(path, orient="records")) or as CSV'
        )
    ((key, rows),) = lists.items()
    if isinstance(rows, dict):  # {"AAPL": [...], "MSFT": [...]}: keyed by symbol
        return [
            {**record, "symbol": symbol}
            for symbol, part in rows.items()
            if part  # a symbol without bars in the answer's span: none to read
            for record in _named(path, part, _where((*keys, key, symbol)))
        ]
    meta = [
        m for level in levels for m in (level, *(v for v in level.values() if isinstance(v, dict)))
    ]
    return _with_symbol(_zoned(_named(path, rows, _where((*keys, key))), meta), meta)


def _with_symbol(named: list[dict[str, Any]], meta: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``named`` with the answer's symbol (in ``meta``) where the records name none."""
    symbol = next((m[k] for m in meta for k in SYMBOL_KEYS if isinstance(m.get(k), str)), None)
    if symbol and not any("symbol" in r for r in named):  # Polygon's X:BTCUSD: BTCUSD
        return [{**r, "symbol": _MARKET.sub("", symbol.strip()).upper()} for r in named]
    return named


def _yahoo_chart(data: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Yahoo's chart API (``query1.finance.yahoo.com/v8/finance/chart/SPY``): ``{"chart":
    {"result": [{"meta": {"symbol": "SPY", ...}, "timestamp": [...], "indicators": {"quote":
    [{"open": [...], "high": [...], ...}]}}]}}``, each symbol's prices in lists beside its
    epoch seconds, as records with ``meta.symbol`` read as a file of that name is (``BTC-USD``
    is ``BTCUSD``, ``ES=F`` is ``ES``), a day's bars as their exchange's dates; None for another
    answer. (Refused as
    missing 'open' until session 58, with advice no column name could follow.)"""
    chart = data.get("chart")
    results = chart.get("result") if isinstance(chart, dict) else None
    if not isinstance(results, list) or not results:
        return None
    records: list[dict[str, Any]] = []
    for result in results:
        times = result.get("timestamp") if isinstance(result, dict) else None
        quotes = (result.get("indicators") or {}).get("quote") if isinstance(times, list) else None
        if not (isinstance(quotes, list) and quotes and isinstance(quotes[0], dict)):
            return None
        quote = {k: v for k, v in quotes[0].items() if isinstance(v, list) and len(v) == len(times)}
        meta = result.get("meta") or {}
        symbol = meta.get("symbol")
        if isinstance(symbol, str):  # Yahoo's spelling, read as its file's name is: BTC-USD
            symbol = guess_from_name(Path(f"{symbol}.csv")).symbol
        if meta.get("dataGranularity") in _YAHOO_DAYS and meta.get("exchangeTimezoneName"):
            times = _local_dates(times, str(meta["exchangeTimezoneName"]))
        for i, t in enumerate(times):
            record = {"timestamp": t, **{k: v[i] for k, v in quote.items()}}
            records.append(record | ({"symbol": symbol} if isinstance(symbol, str) else {}))
    return records


_YAHOO_DAYS = frozenset({"1d", "5d", "1wk", "1mo", "3mo"})
"""Yahoo's granularities of a day or more: stamped at the session's open, the exchange's date."""


def _local_dates(times: list[Any], zone: str) -> list[Any]:
    """Epoch seconds as the exchange's dates (a day's bar of Sydney opens at 23:00 UTC the day
    before: its UTC date was a Sunday's); the times as they are where the zone is unknown."""
    try:
        tz = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        return times
    return [
        dt.datetime.fromtimestamp(t, tz).date().isoformat() if isinstance(t, int | float) else t
        for t in times
    ]


def _answer(value: object) -> bool:
    """An answer of one symbol in a list of them: an object whose one list of records lies
    beside its scalars (Tiingo's crypto prices, ``{"ticker": ..., "priceData": [...]}``)."""
    return (
        isinstance(value, dict)
        and sum(isinstance(v, list) and bool(v) and isinstance(v[0], dict) for v in value.values())
        == 1
    )


def _holder(data: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """The keys down to the object that holds the bars, and the objects on the way (``data``
    first): ``data`` itself where one of its keys holds a list of rows, or where not exactly one
    of its objects holds one at any depth; else that object, looked at the same way (Tradier's
    ``{"series": {"data": [...]}}``, CryptoCompare's ``{"Response": ..., "RateLimit": {},
    "Data": {"TimeFrom": ..., "Data": [...]}}``, Kraken's ``{"error": [], "result":
    {"XXBTZUSD": [...], "last": ...}}``)."""
    keys, levels = [], [data]
    while not any(_rows(v) for v in data.values()):
        inner = [k for k, v in data.items() if _holds(v)]
        if len(inner) != 1:
            break
        keys.append(inner[0])
        data = data[inner[0]]
        levels.append(data)
    return keys, levels


def _holds(value: object) -> bool:
    """An object with a list of rows under one of its keys, at any depth."""
    return isinstance(value, dict) and any(_rows(v) or _holds(v) for v in value.values())


def _empty(data: dict[str, Any], keys: tuple[str, ...] = ()) -> str | None:
    """Where the key that would hold the bars holds none: a key named for them
    (:data:`CONTAINER_KEYS`: Polygon's ``{"resultsCount": 0, "results": []}``, Bybit's
    ``"result": {"list": []}``) holding ``[]`` or ``{}``, at any depth; None where there is none
    (Kraken's ``"error": []`` and Bybit's ``"retExtInfo": {}`` hold no bars when empty)."""
    for k, v in data.items():
        if isinstance(v, list | dict) and not v and k.lower() in CONTAINER_KEYS:
            return _where((*keys, k))
    for k, v in data.items():
        if isinstance(v, dict) and (found := _empty(v, (*keys, k))) is not None:
            return found
    return None


def _where(keys: tuple[str, ...] | list[str]) -> str:
    """``("series", "data")`` -> ``'series'['data']``: where in the answer a value is."""
    return repr(keys[0]) + "".join(f"[{k!r}]" for k in keys[1:])


def _split(data: dict[str, Any]) -> list[str] | None:
    """The names of rows written beside them, pandas' ``orient="split"`` (``columns``) or Nasdaq
    Data Link's ``dataset_data`` (``column_names``), or None."""
    columns = data.get("columns", data.get("column_names"))
    rows = data.get("data")
    if (
        isinstance(columns, list)
        and all(isinstance(c, str) for c in columns)
        and isinstance(rows, list)
        and all(isinstance(r, list) and len(r) == len(columns) for r in rows)
    ):
        return columns
    return None


def _rows(value: object) -> bool:
    """A list of rows, or an object of such lists keyed by symbol (some may be empty; a key
    named for a container of bars, :data:`CONTAINER_KEYS`, is no symbol)."""
    if isinstance(value, dict):
        lists = [v for v in value.values() if v is not None]
        return (
            bool(lists)
            and all(isinstance(v, list) for v in lists)
            and any(lists)
            and not any(k.lower() in CONTAINER_KEYS for k in value)
        )
    return bool(value) and isinstance(value, list) and isinstance(value[0], dict | list)


ZONE_KEYS = ("exchange_timezone", "timezone", "time_zone")
"""The answer's zone of its times (Twelve Data's ``meta.exchange_timezone``)."""
_NAIVE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$")


def _zoned(records: list[dict[str, Any]], meta: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records whose naive times the answer places in a zone (in ``meta``, its objects around
    the records), with the time named so as a header names its zone (``datetime
    (America/New_York)``: the reader's own rule)."""
    import zoneinfo

    zone = next((m[k] for m in meta for k in ZONE_KEYS if isinstance(m.get(k), str)), None)
    key = next((k for k in ("datetime", "date", "time", "timestamp") if k in records[0]), None)
    if zone is None or key is None:
        return records
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return records
    if not all(isinstance(r.get(key), str) and _NAIVE.match(r[key]) for r in records):
        return records
    named = f"{key} ({zone})"
    return [{(named if k == key else k): v for k, v in r.items()} for r in records]


def _named(path: Path, rows: object, where: str) -> list[dict[str, Any]]:
    if not isinstance(rows, list):
        raise DataError(f"{path}: {where} holds JSON {_what(rows)}, not a list of bar records")
    odd = next((r for r in rows if not isinstance(r, dict)), None)
    if odd is not None and (positional := positional_records(rows)) is not None:
        return positional  # candle rows in their vendor's order (json_rows)
    if odd is not None:
        raise DataError(
            f"{path}: {where} holds rows without names (JSON {_what(odd)}): candle APIs write "
            "their columns in orders that differ by vendor (Coinbase puts the low first); save "
            "them as CSV with a header naming each column"
        )
    return rows


def _what(value: object) -> str:
    if value is None:
        return "nulls"
    kinds = {list: "lists", dict: "objects", str: "strings", bool: "booleans"}
    return next((name for t, name in kinds.items() if isinstance(value, t)), "numbers")
