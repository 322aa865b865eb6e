"""What a refusal of the validation adds about its likely cause, from the file as written: a
comma number's two readings, a settlement read as the close, a symbol column read past, two
files of one symbol overlapping, a bar written again as it updated
(:mod:`foxhunt.data.read.validate` raises them)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from foxhunt.data.read.files import is_readable
from foxhunt.data.read.scan import scan_table


def raw_value(path: Path, col: str, row: int) -> object:
    """The value as stored in the file (for 'cannot parse' messages); None without a file."""
    if not is_readable(path):
        return None
    lf = scan_table(path, say=False).lf
    names = lf.collect_schema().names()
    if "+" in col and col not in names:  # Date+Time, Date+Hour+Minute, Date+Time (UTC+0)
        parts = _joined(col, names) or col.split("+", 1)
        return " ".join(str(v) for v in lf.select(parts).slice(row, 1).collect().row(0))
    return lf.select(pl.col(col)).slice(row, 1).collect().item()


def _joined(col: str, names: list[str]) -> list[str] | None:
    """The columns ``col`` joins with ``+``, each one of ``names`` (a name may hold a ``+``:
    ``Time (UTC+0)``), or None."""
    if col in names:
        return [col]
    for i in (i for i, c in enumerate(col) if c == "+" and col[:i] in names):
        if rest := _joined(col[i + 1 :], names):
            return [col[:i], *rest]
    return None


def comma_hint(raw: str) -> str:
    """What to say of a number with a comma that did not read: a decimal comma the first lines
    did not show (``46821,75``), or, before three digits (``79,700``), that or a comma between
    thousands, with what each ``--decimal`` reads."""
    text = raw.strip()
    if not re.fullmatch(r"-?\d{1,3},\d{3}", text):
        return " (a decimal comma? --decimal comma reads the file's numbers so)"
    return (
        " (a decimal comma or a comma between thousands? --decimal comma reads it as "
        f"{float(text.replace(',', '.')):g}, --decimal point as {int(text.replace(',', ''))})"
    )


def settle_hint(close: str, extra: tuple[str, ...]) -> str:
    """Where the close read is a settlement price (Quandl's ``Settle``, CME's settlements):
    a settlement is no trade and may fall outside the day's range, and ``--columns close=LAST``
    reads the file's last trade (``extra``: its columns read past). Else ``""``."""
    if "settle" not in close.lower():
        return ""
    last = next((c for c in extra if c.strip().lower() in ("last", "last price")), None)
    # quoted for a shell where the name holds a space: --columns 'close=Last Price'
    flag = (
        f"--columns {shlex.quote(f'close={last}')}"
        if last
        else "--columns close=COLUMN (a last trade)"
    )
    return (
        f" (the close was read from '{close}', a settlement price, which may fall outside "
        f"the day's range; {flag} reads the last trade as the close)"
    )


def _label(value: object) -> bool:
    """Text with a letter, no number or time: what a symbol column holds (``NYA``,
    ``sh.600519``), not ``09:30`` or ``1e5``."""
    if not isinstance(value, str) or not re.search(r"[A-Za-z]", value):
        return False
    try:
        float(value.replace(",", ""))
    except ValueError:
        return True
    return False


def symbol_column_hint(path: Path, extra: tuple[str, ...], rows: tuple[int, int]) -> str:
    """When a column read past (``extra``) holds other text on the two ``rows`` of one time in
    one file (Kaggle's ``Index`` of ``NYA`` then ``IXIC``, Baostock's ``code``): the symbols of
    a long table, and the flag that reads it so; else ``""``."""
    for col in extra:
        a, b = (raw_value(path, col, r) for r in rows)
        if _label(a) and _label(b) and str(a).strip() != str(b).strip():
            return (
                f": column '{col}' holds {str(a).strip()!r} on one and {str(b).strip()!r} on the "
                "other, as a symbol column would (a long table of several symbols?); --columns "
                f"symbol={col} reads each apart"
            )
    return ""


def two_files_hint(
    first: Path, this: Path, symbol: object, intervals: tuple[str, str] | None = None
) -> str:
    """A duplicate bar whose first came from another file: the two files overlap (one future's
    contracts around a roll, ``ES 03-24.Last.txt`` beside ``ES 06-24.Last.txt``, or a file and
    its copy), and the ways out; or, where the files' ``intervals`` differ (Kraken's
    ``XBTUSD_1.csv`` beside ``XBTUSD_60.csv``), bars of two intervals."""
    if intervals is not None and intervals[0] != intervals[1]:
        return (
            f": the files {first.name} ({intervals[0]} bars) and {this.name} ({intervals[1]}) "
            f"both hold bars of {symbol!r}: bars of two intervals; read each interval apart "
            "(a folder or a glob per interval)"
        )
    return (
        f": the files {first.name} and {this.name} both hold bars of {symbol!r} at this time "
        "(a future's contracts around a roll, or a file and its copy?): one series is read "
        "from them, and foxhunt does not splice contracts; read one file, or splice the "
        "contracts into one series (rolled and back-adjusted) first"
    )


def updated_hint(df: pl.DataFrame, hit: Mapping[str, object], provenance: tuple[str, str]) -> str:
    """A duplicate bar (``hit``, its twin's file and row in ``__pf`` and ``__pr``) whose two rows
    are the last two of its symbol in one file, with other prices or volume: the bar written
    again as it updated (a live export's or a collector's last bar); what changed, and which
    row to keep. Else ``""``. ``provenance``: ``df``'s file and row columns."""
    file_column, row_column = provenance
    f, row, twin_f, twin_row = (int(str(hit[k])) for k in (*provenance, "__pf", "__pr"))
    if f != twin_f or abs(row - twin_row) != 1:
        return ""
    mine = df.filter((pl.col(file_column) == f) & (pl.col("symbol") == hit["symbol"]))
    if max(row, twin_row) != mine[row_column].max():  # the last two rows of its symbol
        return ""
    twin = df.filter((pl.col(file_column) == f) & (pl.col(row_column) == twin_row)).row(
        0, named=True
    )
    first, later = (twin, hit) if twin_row < row else (hit, twin)
    prices = ("open", "high", "low", "close", "volume")
    changed = [f"{c} {first[c]} then {later[c]}" for c in prices if first[c] != later[c]]
    if not changed:
        return ""
    return (
        f": {', '.join(changed)} (the bar written again as it updated, a live export's last "
        "bar?): keep the later row"
    )
