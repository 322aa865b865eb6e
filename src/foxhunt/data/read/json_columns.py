"""Bars in JSON written column by column: one list per field, the i-th bar at index i.

TradingView's UDF history answer and Finnhub's candles, ``{"s": "ok", "t": [...], "o": [...],
"h": [...], "l": [...], "c": [...], "v": [...]}``; Deribit's chart data, ``{"jsonrpc": "2.0",
"result": {"ticks": [...], "open": [...], ..., "volume": [...], "cost": [...]}}`` (its epoch
milliseconds named ``ticks``); ``json.dump(df.to_dict("list"))``. Until session 59 each was
refused as "a JSON object with no list of bar records under its keys".

An object holds bars so where, among its lists of scalars, those of the close's length name an
open, a close and a time (:data:`TIME_KEYS`); the object is looked for in the answer and in
its objects, at any depth. Its scalars beside the lists (``"s": "ok"``) are passed over; its
``symbol`` or ``ticker``, where a string, names the bars.
"""

from __future__ import annotations

from typing import Any

TIME_KEYS = ("t", "time", "timestamp", "ticks", "date", "datetime")
"""Names of the time list (``ticks``: Deribit's; read as ``timestamp``, a CSV's ``ticks`` being
a count of trades elsewhere)."""
_OPEN = ("o", "open")
_CLOSE = ("c", "close")
_SYMBOL = ("symbol", "ticker")


def _objects(data: object) -> list[dict[str, Any]]:
    """``data`` and every object inside it, the outer first."""
    if not isinstance(data, dict):
        return []
    return [data, *(o for v in data.values() for o in _objects(v))]


def _scalars(value: object) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and not any(isinstance(x, list | dict) for x in value)
    )


def column_lists(data: object) -> list[dict[str, Any]] | None:
    """The records of the first object in ``data`` that holds bars column by column (see the
    module docstring), or None where none does."""
    for obj in _objects(data):
        lists = {k: v for k, v in obj.items() if _scalars(v)}
        lower = {k.lower(): k for k in lists}
        close = next((lower[k] for k in _CLOSE if k in lower), None)
        if close is None:
            continue
        n = len(lists[close])
        same = {k: v for k, v in lists.items() if len(v) == n}
        names = {k.lower(): k for k in same}
        time = next((names[k] for k in TIME_KEYS if k in names), None)
        if time is None or not any(k in names for k in _OPEN):
            continue
        renamed = {
            ("timestamp" if k == time and k.lower() == "ticks" else k): v for k, v in same.items()
        }
        records = [{k: v[i] for k, v in renamed.items()} for i in range(n)]
        symbol = next((obj[k] for k in _SYMBOL if isinstance(obj.get(k), str)), None)
        if symbol is not None and not any(k.lower() in _SYMBOL for k in renamed):
            records = [{**r, "symbol": symbol} for r in records]
        return records
    return None
