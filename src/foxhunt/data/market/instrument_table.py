"""Reading the user's instrument table (``--instruments FILE``): TOML or CSV.

TOML, one table per root or symbol::

    [ES]
    tick_size = 0.25
    point_value = 50
    currency = "USD"
    asset_class = "equity_index"
    calendar = "cme_equity"

CSV, one row per root or symbol, with a header naming the same fields (``root`` first)::

    root,tick_size,point_value,currency,asset_class,calendar
    ES,0.25,50,USD,equity_index,cme_equity

Required: ``tick_size``, ``point_value``, ``asset_class``, ``calendar``; optional: ``currency``
(default empty), ``session_hours`` (default: the calendar's), ``typical_price``. Every error is
one line naming the file, the row and the field.
"""

from __future__ import annotations

import csv
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from foxhunt.data.market.instrument import Instrument
from foxhunt.errors import DataError

REQUIRED = ("tick_size", "point_value", "asset_class", "calendar")
OPTIONAL = ("currency", "session_hours", "typical_price")
_FLOATS = ("tick_size", "point_value", "session_hours", "typical_price")


def _row(path: Path, where: str, root: str, fields: Mapping[str, Any]) -> Instrument:
    unknown = [k for k in fields if k not in (*REQUIRED, *OPTIONAL, "root")]
    if unknown:
        known = ", ".join(("root", *REQUIRED, *OPTIONAL))
        raise DataError(f"{path}: {where}, unknown field {unknown[0]!r} (fields: {known})")
    missing = [k for k in REQUIRED if fields.get(k) in (None, "")]
    if missing:
        raise DataError(f"{path}: {where}, field {missing[0]!r} is missing")
    if not root:
        raise DataError(f"{path}: {where}, field 'root' is empty")
    values: dict[str, Any] = {}
    for k, v in fields.items():
        if k == "root" or v in (None, ""):
            continue
        if k in _FLOATS:
            try:
                values[k] = float(v)
            except (TypeError, ValueError):
                raise DataError(f"{path}: {where}, field {k!r}: not a number: {v!r}") from None
        else:
            values[k] = str(v).strip()
    values.setdefault("currency", "")
    try:
        return Instrument(root=root, **values)
    except DataError as e:  # name the file and row; the message already names the field
        raise DataError(f"{path}: {where}, {str(e).split(': ', 1)[-1]}") from None


def load_instruments(path: str | Path) -> dict[str, Instrument]:
    """Read an instrument table (``.toml`` or ``.csv``) into ``{ROOT: Instrument}``.

    Args:
        path: the file; keys (roots or symbols) are upper-cased.

    Returns:
        The table, in file order.

    Raises:
        DataError: unreadable file, unknown extension, bad TOML/CSV, a missing or bad field,
            a duplicated root (one line naming file, row and field).
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: instrument table not found")
    suffix = path.suffix.lower()
    rows: list[tuple[str, str, Mapping[str, Any]]] = []  # (where, root, fields)
    if suffix == ".toml":
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise DataError(f"{path}: not valid TOML: {e}") from None
        for key, fields in doc.items():
            if not isinstance(fields, dict):
                raise DataError(f"{path}: [{key}] should be a table of fields, got {fields!r}")
            root = str(fields.get("root", key))
            rows.append((f"[{key}]", root, fields))
    elif suffix == ".csv":
        try:
            with path.open(newline="", encoding="utf-8") as fh:
                reader = csv.DictReader(fh)
                if not reader.fieldnames or "root" not in reader.fieldnames:
                    raise DataError(f"{path}: the header needs a 'root' column")
                for n, fields in enumerate(reader, start=2):
                    if None in fields:
                        raise DataError(f"{path}: row {n}, more values than header fields")
                    rows.append((f"row {n}", (fields.get("root") or "").strip(), fields))
        except UnicodeDecodeError as e:
            raise DataError(f"{path}: not UTF-8 text: {e}") from None
    else:
        raise DataError(f"{path}: instrument table must be .toml or .csv, got {suffix!r}")
    table: dict[str, Instrument] = {}
    for where, root, fields in rows:
        key = root.strip().upper()
        if key in table:
            raise DataError(f"{path}: {where}, root {key!r} appears twice")
        table[key] = _row(path, where, key, fields)
    return table
