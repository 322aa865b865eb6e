"""Bars saved as JSON: records with names, as REST APIs answer and pandas writes them.

Read (``.json``, ``.jsonl``, ``.ndjson``):

* a list of records, ``[{"t": 1704205800000, "o": 4790.25, ...}, ...]`` (pandas'
  ``to_json(orient="records")``), or one record a line (JSON Lines, ``orient="records",
  lines=True``);
* an API's answer that holds such a list under one key beside scalars and objects of metadata:
  Polygon's aggregates (``{"ticker": "AAPL", "results": [...]}``), Alpaca's bars of one symbol
  (``{"bars": [...], "symbol": "AAPL"}``); the answer's ``ticker`` or ``symbol`` names the bars
  (Polygon's market prefix dropped: ``X:BTCUSD`` is ``BTCUSD``);
* bars keyed by symbol under that key, Alpaca's answer for several symbols
  (``{"bars": {"AAPL": [...], "MSFT": [...]}}``): each symbol's records get its name.

The records then read as a parquet file's columns do (names as vendors spell them: ``t o h l c
v``, epochs or ISO times). Refused, naming what the file holds: rows without names (a list of
lists, as Binance's and Coinbase's candle APIs write them, in orders that differ by vendor:
Coinbase puts the low before the open), and anything else (a dict of dicts keyed by time, such
as Alpha Vantage's, or pandas' default ``orient="columns"``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl

from foxhunt.errors import DataError

LINES_SUFFIXES = (".jsonl", ".ndjson")
"""JSON Lines: one record a line."""
SYMBOL_KEYS = ("ticker", "symbol")
"""The answer's own name for its symbol, beside the records (Polygon's ``ticker``, Alpaca's
``symbol``): the bars' symbol, before the file name's."""
_MARKET = re.compile(r"^[A-Z]:")
"""Polygon's market prefix (``X:`` crypto, ``C:`` forex, ``I:`` indices), not the symbol's."""


def read_json_bars(path: Path) -> pl.DataFrame:
    """The bars of a JSON file as a frame (see the module docstring).

    Raises:
        DataError: not JSON, no records with names, or records of no bars.
    """
    if path.name.lower().endswith(LINES_SUFFIXES):
        records = _lines(path)
    else:
        try:
            data = json.loads(path.read_bytes())
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise DataError(f"{path}: not JSON ({e})") from None
        records = _records(path, data)
    if not records:
        raise DataError(f"{path}: empty file (no bars)")
    try:
        return pl.from_dicts(records, infer_schema_length=None)
    except (pl.exceptions.PolarsError, TypeError, ValueError) as e:
        raise DataError(f"{path}: records that are no table ({str(e).splitlines()[0]})") from None


def _lines(path: Path) -> list[dict[str, Any]]:
    records = []
    with path.open("rb") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise DataError(f"{path} line {number}: not JSON ({e})") from None
            if not isinstance(record, dict):
                raise DataError(
                    f"{path} line {number}: JSON {_what(record)}, not a record with names"
                )
            records.append(record)
    return records


def _records(path: Path, data: object) -> list[dict[str, Any]]:
    """The list of records in ``data``, with a ``symbol`` where they are keyed by one."""
    if isinstance(data, dict):
        lists = {k: v for k, v in data.items() if isinstance(v, list | dict) and _rows(v)}
        if len(lists) != 1:
            keys = ", ".join(repr(k) for k in list(data)[:6])
            raise DataError(
                f"{path}: a JSON object ({keys}) with {'no' if not lists else 'several'} list "
                "of bar records under its keys: save the bars as a list of records "
                '(pandas: df.to_json(path, orient="records")) or as CSV'
            )
        ((key, rows),) = lists.items()
        if isinstance(rows, dict):  # {"AAPL": [...], "MSFT": [...]}: keyed by symbol
            return [
                {**record, "symbol": symbol}
                for symbol, part in rows.items()
                for record in _named(path, part, f"{key!r}[{symbol!r}]")
            ]
        named = _named(path, rows, repr(key))
        symbol = next((data[k] for k in SYMBOL_KEYS if isinstance(data.get(k), str)), None)
        if symbol and not any("symbol" in r for r in named):  # Polygon's X:BTCUSD: BTCUSD
            return [{**r, "symbol": _MARKET.sub("", symbol)} for r in named]
        return named
    return _named(path, data, "the file")


def _rows(value: object) -> bool:
    """A list of rows, or an object of such lists (keyed by symbol)."""
    if isinstance(value, dict):
        return bool(value) and all(isinstance(v, list) and v for v in value.values())
    return bool(value) and isinstance(value, list) and isinstance(value[0], dict | list)


def _named(path: Path, rows: object, where: str) -> list[dict[str, Any]]:
    if not isinstance(rows, list):
        raise DataError(f"{path}: {where} holds JSON {_what(rows)}, not a list of bar records")
    odd = next((r for r in rows if not isinstance(r, dict)), None)
    if odd is not None:
        raise DataError(
            f"{path}: {where} holds rows without names (JSON {_what(odd)}): candle APIs write "
            "their columns in orders that differ by vendor (Coinbase puts the low first); save "
            "them as CSV with a header naming each column"
        )
    return rows


def _what(value: object) -> str:
    kinds = {list: "lists", dict: "objects", str: "strings", bool: "booleans"}
    return next((name for t, name in kinds.items() if isinstance(value, t)), "numbers")
