"""Open one bars file lazily, whatever it is: parquet, CSV in any dialect (plain, compressed or
inside a zip archive), Feather (Arrow IPC), JSON records, DBN, Sierra Chart's ``.scid``, a
workbook.

CSV columns are read as text so that a bad value is reported with its row; parquet, Feather and
DBN keep their types.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from foxhunt.data.read.csv_damage import overlong_line, unclosed_quote_line
from foxhunt.data.read.csv_dialect import CsvDialect, header_names, scan_csv_text, sniff_csv
from foxhunt.data.read.dbn import read_dbn
from foxhunt.data.read.files import table_kind, zip_member
from foxhunt.data.read.json_bars import read_json_bars
from foxhunt.data.read.magic import mislabelled
from foxhunt.data.read.price_order import vendor_order
from foxhunt.data.read.scid import read_scid
from foxhunt.data.read.workbook import read_workbook_sheets
from foxhunt.errors import DataError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Scanned:
    """A file opened for reading.

    Attributes:
        lf: its columns as stored (CSV: all text).
        dialect: the CSV dialect, None for parquet and DBN.
    """

    lf: pl.LazyFrame
    dialect: CsvDialect | None
    notes: tuple[str, ...] = ()
    """What was left unread that the user should see (a workbook's other sheets of bars)."""
    sheet: str | None = None
    """The name of a workbook's sheet that was read (None for other files)."""


def first_line(e: BaseException) -> str:
    """The first line of an exception's message (polars errors run to many lines)."""
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def zip_size(archive: Path, member: str) -> int:
    """Uncompressed size of a zip member."""
    import zipfile

    with zipfile.ZipFile(archive) as z:
        return z.getinfo(member).file_size


def _scan_arrow(path: Path) -> pl.LazyFrame:
    """An Arrow IPC file (Feather v2) lazily; the IPC stream format (``write_ipc_stream``,
    pyarrow's ``new_stream``) and Feather v1 (R's feather, pandas before 1.0) read whole."""
    with path.open("rb") as f:
        head = f.read(8)
    if head.startswith(b"\xff\xff\xff\xff"):  # a stream: messages, no footer to scan from
        return pl.read_ipc_stream(path).lazy()
    if head.startswith(b"FEA1"):
        import pyarrow.feather

        with warnings.catch_warnings():  # pyarrow 25 deprecates v1: read while it reads it
            warnings.simplefilter("ignore", DeprecationWarning)
            frame = pl.from_arrow(pyarrow.feather.read_table(path))
        assert isinstance(frame, pl.DataFrame)
        return frame.lazy()
    return pl.scan_ipc(path)


def _polars_zone(zone: str) -> bool:
    """Whether polars takes ``zone`` as a column's time zone (``+05:30``, ``Z`` it does not)."""
    try:
        pl.Series([0]).cast(pl.Datetime("us", zone))
    except pl.exceptions.PolarsError:
        return False
    return True


def _zones_in_utc(path: Path, kind: str, scan: Callable[[Path], pl.LazyFrame]) -> pl.LazyFrame:
    """``scan(path)``, or, where a time column's zone is one polars cannot parse (a fixed
    offset of a part hour, ``+05:30``: pandas' parse of Indian times; ``Z``), the file read
    with pyarrow and those columns put in UTC, the same instants (polars panicked on them: a
    traceback, exit 1)."""
    import pyarrow as pa
    import pyarrow.dataset

    try:  # a parquet or an Arrow IPC file (a stream, Feather v1 or a damaged file: as polars)
        table = pyarrow.dataset.dataset(path, format=kind)
    except (pa.ArrowException, OSError):
        return scan(path)
    odd = [
        i
        for i, f in enumerate(table.schema)
        if pa.types.is_timestamp(f.type) and f.type.tz and not _polars_zone(f.type.tz)
    ]
    if not odd:
        return scan(path)
    whole = table.to_table()
    for i in odd:
        utc = whole[i].cast(pa.timestamp(whole.schema[i].type.unit, "UTC"))
        whole = whole.set_column(i, whole.schema[i].name, utc)
    frame = pl.from_arrow(whole)
    assert isinstance(frame, pl.DataFrame)
    return frame.lazy()


_BINARY_TABLES: dict[str, tuple[str, Callable[[Path], pl.LazyFrame]]] = {
    "parquet": ("parquet", pl.scan_parquet),
    "ipc": ("an Arrow IPC (Feather) file", _scan_arrow),
}
"""Typed table files polars scans: what their first bytes must say (``magic.MAGICS``), and the
scan."""


def scan_table(
    path: Path,
    numeric: Callable[[list[str]], tuple[str, ...]] | None = None,
    decimal: str | None = None,
    *,
    say: bool = True,
) -> Scanned:
    """Open ``path`` lazily (see the module docstring).

    Args:
        path: the file.
        numeric: for CSV, given the column names, the columns to read as Float64 rather than
            text (:func:`foxhunt.data.read.csv_dialect.scan_csv_text`); None: all text.
        decimal: a CSV's decimal separator (``--decimal``), None: guessed.
        say: log a CSV's guessed dialect (False where the file was read before: said once).

    Raises:
        DataError: the file is empty, of an unknown kind, or unreadable.
    """
    member = zip_member(path)
    size = zip_size(*member) if member else path.stat().st_size
    if size == 0:
        raise DataError(f"{path}: empty file (no bars)")
    kind = table_kind(path)
    try:
        if kind in _BINARY_TABLES:
            what, scan = _BINARY_TABLES[kind]
            if member is None:
                with path.open("rb") as f:
                    wrong = mislabelled(path, f.read(512), what)
                if wrong is not None:
                    raise wrong
            return Scanned(scan(path) if member else _zones_in_utc(path, kind, scan), None)
        if kind == "json":
            return Scanned(read_json_bars(path).lazy(), None)
        if kind == "dbn":
            return Scanned(read_dbn(path).lazy(), None)
        if kind == "scid":
            return Scanned(read_scid(path).lazy(), None)
        if kind == "workbook":
            cells, notes, sheet = read_workbook_sheets(path)
            return Scanned(cells.lazy(), None, notes, sheet)
        if kind == "csv":
            dialect = sniff_csv(path, decimal, say=say)
            if say and (order := vendor_order(dialect.names)) is not None:
                log.info(
                    "%s: no header: prices read as %s, the one order that reads the first "
                    "rows as bars; --columns names each field's column",
                    path,
                    order,
                )
            cols = numeric(header_names(path, dialect)) if numeric else ()
            return Scanned(scan_csv_text(path, dialect, cols), dialect)
    except DataError:
        raise
    except Exception as e:  # polars raises several types for unreadable files
        raise unreadable(path, e) from e
    raise DataError(f"{path}: unsupported file type {path.suffix!r}")


def unreadable(path: Path, e: BaseException) -> DataError:
    """The error for a file polars could not read: the line of an unclosed quote when a text
    file has one (polars' message does not name it), else polars' first line."""
    line = unclosed_quote_line(path) if table_kind(path) == "csv" else None
    if line is not None:
        return DataError(
            f"{path} line {line}: a quote opens and does not close on its line (no field of a "
            "bar file spans lines: was the file cut short or edited by hand?)"
        )
    over = overlong_line(path) if table_kind(path) == "csv" and "more fields" in str(e) else None
    if over is not None:
        return DataError(
            f"{path} line {over[0]}: {over[1]} fields where the table has {over[2]} (a note or a "
            "value typed after the last column? remove it, or give the column a name in the "
            "header)"
        )
    return DataError(f"{path}: cannot read ({first_line(e)})")
