"""Sierra Chart intraday data files (``.scid``): the files Sierra Chart keeps one per symbol in
its ``Data`` folder (``ESZ25_FUT_CME.scid``), common among futures traders.

The layout is Sierra Chart's published one ("Intraday Data File Format"): a header that opens
with ``SCID`` and gives its own size (56) and the record size (40), then little-endian records
of a time, four float32 prices (open, high, low, close) and four uint32 counts (trades, volume,
bid volume, ask volume). The time is UTC: microseconds since 1899-12-30 as an int64, or, in
files written by versions before 2017, days since that date as a float64; each file's first
record says which (only one of the two readings is a date between 1970 and 2200).

A file holds one of two things, by its chart's storage unit:

- **bars** (a unit of seconds or minutes): each record a bar, read as ``open, high, low,
  close, volume``;
- **ticks** (a unit of one tick, Sierra Chart's default): each record one trade, its open 0
  (or one of the two markers of an unbundled trade's first and last parts, -1.999e37), its high
  the ask, its low the bid, its close the price and its volume the size. Read as prints
  (``price, size``): ``--bar-minutes K`` builds the bars (:mod:`foxhunt.data.read.prints`), as
  for any file of trades.

A file with both (its storage unit changed while it was written) is refused naming the first
record of the second kind, as is a record size other than 40 and a file whose last record is cut
short (a copy taken while Sierra Chart was writing it), and a record whose time is not a date
in 1970-2200 (a zero-filled tail, a damaged record). Prices are float32 on disk: a multiple of
1/256 (Treasury futures' 64ths to 256ths) is kept as it is, exact; any other is read as the
shortest decimal that is the same float32, so a 6E price stored as 1.08725 reads 1.08725, not
1.0872499942779541. Times in the old float64 days are rounded to the millisecond.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl

from foxhunt.data.read.files import zip_member
from foxhunt.errors import DataError

SCID_MAGIC = b"SCID"
HEADER_BYTES = 56
"""The header's size in the published format (a file's header gives its own)."""
RECORD_BYTES = 40

_RECORD = np.dtype(
    [
        ("time", "<i8"),
        ("open", "<f4"),
        ("high", "<f4"),
        ("low", "<f4"),
        ("close", "<f4"),
        ("trades", "<u4"),
        ("volume", "<u4"),
        ("bid_volume", "<u4"),
        ("ask_volume", "<u4"),
    ]
)
_DAYS_TO_UNIX = 25_569
"""Days from Sierra Chart's epoch (1899-12-30) to 1970-01-01."""
_US_PER_DAY = 86_400_000_000
_PLAUSIBLE_DAYS = (25_569.0, 109_575.0)
"""A record time read as days since 1899-12-30 must fall in 1970-2200 to be a date."""
_TICK_MARKER = -1e37
"""Opens at or below this are the markers of an unbundled trade's parts (-1.99900095e37 and
-1.99900197e37); an open of exactly 0 marks a single trade."""

SCID_PRINT_COLUMNS = ("ts", "price", "size")
SCID_BAR_COLUMNS = ("ts", "open", "high", "low", "close", "volume")


def scid_records(path: Path) -> int:
    """The number of records in ``path`` by its size (for the memory plan; the header's own
    size where it gives one, else the published 56 bytes)."""
    with path.open("rb") as f:
        head = f.read(12)
    header = int.from_bytes(head[4:8], "little") if head[:4] == SCID_MAGIC else HEADER_BYTES
    return max(0, (path.stat().st_size - header) // RECORD_BYTES)


def _header(path: Path, head: bytes, size: int) -> int:
    """The header's size, once the header (``head``: the file's first bytes) and the file's
    ``size`` are checked."""
    if head[:4] != SCID_MAGIC:
        raise DataError(
            f"{path}: not a Sierra Chart intraday file (it does not start with 'SCID'; an "
            "exported .scid is text: name it .txt or .csv)"
        )
    if len(head) < 12:
        raise DataError(f"{path}: the file is cut short inside its header ({size} bytes)")
    header = int.from_bytes(head[4:8], "little")
    record = int.from_bytes(head[8:12], "little")
    if record != RECORD_BYTES:
        raise DataError(
            f"{path}: its records are {record} bytes, not the {RECORD_BYTES} of Sierra Chart's "
            "intraday format: export it from Sierra Chart as text (Edit >> Export Intraday Data)"
        )
    if header < 12 or header > size:
        raise DataError(f"{path}: its header gives its size as {header} bytes (a file of {size})")
    body = size - header
    if body % RECORD_BYTES:
        raise DataError(
            f"{path}: the file is cut short: its last record has {body % RECORD_BYTES} of its "
            f"{RECORD_BYTES} bytes, after {body // RECORD_BYTES} whole records (copied while "
            "Sierra Chart was writing it?)"
        )
    return header


def _epoch_us(path: Path, raw: np.ndarray) -> np.ndarray:
    """Microseconds since 1970-01-01 UTC of each record's time, in whichever of the two
    encodings the first record's time is a date in; every record's must be one in 1970-2200
    (a zero-filled tail after a crash, or a damaged record, is refused naming its record)."""
    if raw.size == 0:
        return raw.astype(np.int64)
    low, high = _PLAUSIBLE_DAYS
    if low <= raw[0] / _US_PER_DAY <= high:
        days = raw / _US_PER_DAY
        us = raw - _DAYS_TO_UNIX * _US_PER_DAY
    else:
        days = raw.view("<f8")
        if not (math.isfinite(days[0]) and low <= days[0] <= high):
            raise DataError(
                f"{path} record 1: its time ({int(raw[0])}) is neither microseconds nor days "
                "since 1899-12-30 in 1970-2200: not a Sierra Chart intraday file?"
            )
        us = None
    with np.errstate(invalid="ignore"):
        bad = ~((days >= low) & (days <= high))  # NaN fails both
    if bad.any():
        first = int(np.argmax(bad))
        zero = " (all its bytes 0: a file padded after a crash?)" if not raw[first] else ""
        raise DataError(
            f"{path} record {first + 1}: its time is not a date in 1970-2200{zero}, after "
            f"{first} records that are: a damaged file"
        )
    if us is None:  # days: whole milliseconds (the old format's resolution), so a time one
        # float64 step below its minute is not read into the minute before
        us = np.rint((days - _DAYS_TO_UNIX) * 86_400_000).astype(np.int64) * 1000
    return us


_BINARY_GRID = 256
"""Treasury futures trade in 1/64, 1/128 and 1/256 of a point: a float32 price that is a
multiple of 1/256 is kept as it is (it is exact, and its shortest decimal may not be)."""


def _decimal(values: np.ndarray) -> np.ndarray:
    """float32 prices as float64: a multiple of 1/256 as it is (104.00390625, a 256th, is
    exact in float32, and its shortest float32 decimal 104.00391 is not the price), any other
    as the shortest decimal that is the same float32 (numpy's repr: 1.08725 stored as
    1.0872499942... reads 1.08725). Per distinct price: a tick file of millions of trades has a
    few thousand."""
    distinct, where = np.unique(values, return_inverse=True)
    exact = distinct.astype(np.float64)
    on_grid = np.isfinite(exact) & (np.rint(exact * _BINARY_GRID) == exact * _BINARY_GRID)
    decimals = np.array([float(str(v)) for v in distinct.astype(np.float32)], np.float64)
    return np.where(on_grid, exact, decimals)[where.reshape(values.shape)]


def read_scid(path: Path) -> pl.DataFrame:
    """Read a Sierra Chart intraday file (see the module docstring).

    Returns:
        Bars: columns :data:`SCID_BAR_COLUMNS`; ticks: :data:`SCID_PRINT_COLUMNS`. ``ts`` is a
        UTC datetime (microseconds), prices and sizes Float64, in file order.

    Raises:
        DataError: not the format, a record size other than 40, a cut-short file, a time in
            neither encoding, or bars and ticks in one file.
    """
    if zip_member(path) is not None:
        raise DataError(f"{path}: a .scid file inside a zip archive is not read: extract it")
    size = path.stat().st_size
    with path.open("rb") as f:
        header = _header(path, f.read(HEADER_BYTES), size)
    # mapped, not read: a tick file runs to gigabytes, and only four of its nine fields are used
    records = (
        np.memmap(path, _RECORD, mode="r", offset=header) if size > header else np.zeros(0, _RECORD)
    )
    ts = pl.Series("ts", _epoch_us(path, records["time"]), pl.Int64).cast(pl.Datetime("us", "UTC"))
    opens = records["open"]
    tick = (opens == 0) | (opens <= _TICK_MARKER)
    if tick.any() and not tick.all():
        first = bool(tick[0])
        change = int(np.argmax(tick != first))
        kinds = ("bars", "ticks") if not first else ("ticks", "bars")
        raise DataError(
            f"{path} record {change + 1}: {kinds[1]} after {change} records of {kinds[0]} (an "
            "open of 0 marks a tick: the chart's storage unit changed, or a bar opened at 0): "
            "export each part from Sierra Chart as text"
        )
    volume = records["volume"].astype(np.float64)
    if tick.any():  # all of them: one trade a record
        price = pl.Series("price", _decimal(records["close"]))
        return pl.DataFrame([ts, price, pl.Series("size", volume)])
    names = ("open", "high", "low", "close")
    prices = _decimal(np.stack([records[name] for name in names]))  # one pass over the prices
    columns = [pl.Series(name, row) for name, row in zip(names, prices, strict=True)]
    return pl.DataFrame([ts, *columns, pl.Series("volume", volume)])
