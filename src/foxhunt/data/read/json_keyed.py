"""Bars in JSON keyed by their time: one object per bar under its timestamp.

* Alpha Vantage's answers, ``{"Meta Data": {"2. Symbol": "IBM", "6. Time Zone": "US/Eastern"},
  "Time Series (5min)": {"2024-01-02 09:35:00": {"1. open": "161.5", ...}, ...}}`` (its daily,
  weekly, FX and crypto series alike): the numbering of its names (``1. ``) is dropped, so
  that ``1. open`` is ``open``, ``2. Symbol`` names the bars and ``6. Time Zone`` places their
  naive times (until session 60 refused as no list of records);
* pandas' ``to_json(orient="index")`` of bars indexed by time, ``{"1704205800000": {"open":
  ...}, ...}``, and its default ``orient="columns"``, ``{"open": {"1704205800000": ...}, ...}``
  (the index's epoch milliseconds or ISO times as keys).

Keys that are no times (pandas' row numbers ``"0"``, ``"1"``) are not read so: such an object
is refused by :mod:`foxhunt.data.read.json_bars` as before, naming what it holds.
"""

from __future__ import annotations

import re
from typing import Any

_TIME_KEY = re.compile(r"^(\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?\S*)?|\d{8,19})$")
"""A key that is a time: an ISO date or date and time (an offset or ``Z`` after it), or the
digits of a date (``20240102``) or of an epoch count (pandas' milliseconds)."""
_PAIR_KEYS = (("from symbol", "to symbol"), ("digital currency code", "market code"))
"""Alpha Vantage's names of a pair's sides in its FX and crypto series (the symbol ``EURUSD``,
``BTCEUR``; a stock's series names its ``symbol``)."""
_NUMBERED = re.compile(r"^\d+[a-z]?\.\s+")
"""Alpha Vantage's numbering before a name: ``1. open``, ``2. Symbol``, ``1a. open (USD)``."""


def _name(key: str) -> str:
    """A name without its numbering (``1. open`` -> ``open``; ``6. Time Zone`` ->
    ``time_zone``, as other answers spell their zone's key)."""
    bare = _NUMBERED.sub("", key.strip())
    return "time_zone" if bare.lower() == "time zone" else bare


def _times(value: object) -> bool:
    """An object whose keys are all times (one or more)."""
    return (
        isinstance(value, dict)
        and bool(value)
        and all(isinstance(k, str) and _TIME_KEY.match(k.strip()) for k in value)
    )


def _records(by_time: dict[str, Any]) -> list[dict[str, Any]]:
    """One record per time key: the time (epoch digits as a number), then its fields named."""
    out = []
    for key, fields in by_time.items():
        time: object = int(key) if key.isdigit() and len(key) > 8 else key
        out.append({"timestamp": time, **{_name(k): v for k, v in fields.items()}})
    return out


def time_keyed(data: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """The records of an answer whose bars are keyed by their time, and its metadata (the
    scalars of its other objects, names without numbering); None for another answer."""
    bars = {k: v for k, v in data.items() if _times(v) and all(_flat(f) for f in v.values())}
    if len(bars) == 1:  # Alpha Vantage's one series beside its "Meta Data"
        ((key, by_time),) = bars.items()
        meta = {
            _name(k).lower(): v
            for other, inner in data.items()
            if other != key and isinstance(inner, dict)
            for k, v in inner.items()
            if isinstance(v, str | int | float)
        }
        return _records(by_time), _paired(meta)
    if _times(data) and all(_flat(v) for v in data.values()):  # pandas' orient="index"
        return _records(data), {}
    if len(data) > 1 and all(_times(v) and _flat(v) for v in data.values()):
        fields = list(data)  # pandas' orient="columns": one object per field, keyed by time
        stamps = list(data[fields[0]])
        if all(list(data[f]) == stamps for f in fields):
            return _records({t: {f: data[f][t] for f in fields} for t in stamps}), {}
    return None


def _paired(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` with the symbol its pair's sides spell (``EUR``, ``USD``: ``EURUSD``) where it
    names no symbol."""
    for base, quote in _PAIR_KEYS:
        sides = meta.get(base), meta.get(quote)
        if "symbol" not in meta and all(isinstance(v, str) for v in sides):
            return {**meta, "symbol": f"{sides[0]}{sides[1]}"}
    return meta


def _flat(value: object) -> bool:
    """An object of scalars: one bar's fields (or one field's values)."""
    return isinstance(value, dict) and all(not isinstance(v, dict | list) for v in value.values())
