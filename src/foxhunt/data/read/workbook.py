"""Excel and OpenDocument workbooks (``.xlsx .xlsm .xls .xlsb .ods``): bars as a sheet holds them.

A workbook is read with ``fastexcel`` (calamine, no code from the file runs), every cell as
text: the reader then casts prices and parses times exactly as it does a CSV file's, so a cell
that is no number is named by its row. The table is the first sheet with one whose header
names a price (a summary sheet before the bars is passed over; else the first with a table):
its header is the first row with at least four cells (a title or a ticker above it, as
Bloomberg's BDH writes, is skipped), its rows are the rows below. Other sheets of bars are
not read, and a warning names them. Cells Excel stores as dates come out as
``2024-01-02 09:30:00``; a column of times of day (a Time beside a Date: Excel's time cells,
which the reader gives on its day zero, ``1899-12-31 15:30:00``, and OpenDocument's time cells)
as ``15:30:00``, the clock the date is joined to. A sheet that writes its times as bare serial
numbers (``45293.39``) is not told apart from an epoch and needs ``--ts-format``.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from foxhunt.data.read.csv_dialect import column_levels
from foxhunt.data.read.encoding import not_delimited
from foxhunt.data.read.magic import OLE_MAGIC, ZIP_MAGIC
from foxhunt.errors import DataError

if TYPE_CHECKING:
    from fastexcel import ExcelReader

log = logging.getLogger(__name__)

MIN_HEADER_CELLS = 4
"""Cells of the narrowest header: a time and three prices."""


def read_workbook(path: Path) -> pl.DataFrame:
    """The sheet of bars of ``path`` (:func:`read_workbook_sheets`)."""
    return read_workbook_sheets(path)[0]


def read_workbook_sheets(path: Path) -> tuple[pl.DataFrame, tuple[str, ...], str]:
    """The first sheet of ``path`` that holds a table, as text columns named by its header
    (its times of day as clocks: :func:`_clocks`), a line naming the other sheets of bars not
    read (none: empty), and the sheet's name.

    Read with fastexcel directly and handed to polars through Arrow's C interface: polars'
    ``read_excel`` goes through pyarrow, whose thread pool deadlocks a process forked after the
    parent used it (``make mutate`` forks every test run).

    Raises:
        DataError: no sheet holds a row of :data:`MIN_HEADER_CELLS` cells.
    """
    import fastexcel

    with path.open("rb") as f:
        head = f.read(1 << 12)
    if not head.startswith(WORKBOOK_MAGIC):
        what = not_delimited(head) or "text (a CSV?)"
        raise DataError(
            f"{path}: not a workbook: the file holds {what}, though its name says a sheet "
            "(some sites send their CSV named .xls); name it for what it holds (.csv)"
            if _texty(head)
            else f"{path}: not a workbook (neither an .xlsx/.ods zip nor an .xls file)"
        )
    ole, suffix = head.startswith(OLE_MAGIC), path.suffix.lower()
    if ole != (suffix == ".xls"):  # an .xls named .xlsx, or an .xlsx/.ods named .xls
        what = "an Excel .xls workbook" if ole else "an .xlsx (or .ods) workbook, a zip"
        raise DataError(
            f"{path}: the file holds {what}, though its name says {suffix}: name it "
            f"{'.xls' if ole else '.xlsx'}"
        )
    reader = fastexcel.read_excel(str(path))
    names = list(reader.sheet_names)
    tables: list[tuple[str, int, int, pl.DataFrame]] = []  # (sheet, index, header row, cells)
    for at_sheet, name in enumerate(names):
        raw = pl.DataFrame(reader.load_sheet(at_sheet, header_row=None, dtypes="string"))
        filled = raw.select(pl.sum_horizontal(pl.all().is_not_null())).to_series()
        wide = [i for i, n in enumerate(filled) if n >= MIN_HEADER_CELLS]
        # the first wide row that names a price (a "Ticker | AAPL | Currency | USD" row of a
        # title block above it is no header), else the first wide row
        at = next((i for i in wide[:_HEADER_SEARCH] if _names_a_price(raw.row(i))), None)
        at = wide[0] if at is None and wide else at
        if at is not None:
            tables.append((name, at_sheet, at, raw))
    if not tables:
        raise DataError(
            f"{path}: no sheet holds a table (a row of at least {MIN_HEADER_CELLS} cells: "
            "a time and the prices)"
        )
    # the first sheet whose header names a price (a summary sheet before the bars is passed over)
    priced = [t for t in tables if _names_a_price(t[3].row(t[2]))]
    name, at_sheet, at, raw = (priced or tables)[0]
    if at or len(names) > 1:
        skipped = ", the rows above its header skipped" if at else ""
        log.info("%s: the bars of sheet %r (of %d)%s", path, name, len(names), skipped)
    others = [t[0] for t in priced if t[0] != name]
    notes: tuple[str, ...] = ()
    if others:
        many = len(others) > 1
        notes = (
            f"{path}: sheet {name!r} read; sheet{'s' if many else ''} "
            f"{', '.join(repr(o) for o in others)} hold{'' if many else 's'} bars too and "
            f"{'are' if many else 'is'} not read: save each as its own file, or the bars of "
            "every symbol in one sheet with a symbol column",
        )
        log.warning("%s", notes[0])
    header = _names(raw.row(at))
    near = [
        ["" if c is None else str(c) for c in raw.row(i)]
        for i in range(at, min(at + 6, raw.height))
    ]
    levels = column_levels(near, path)  # yfinance's frame saved by to_excel: Price, Ticker, Date
    if levels is not None:
        header, under = list(levels[0]), levels[1]
        at += under - 1  # the index's name's row: the bars below it
    cells = _clocks(reader, at_sheet, at, raw)
    return cells.rename(dict(zip(raw.columns, header, strict=True))), notes, name


EXCEL_DAY_ZERO = r"^(?:1899-12-3[01]|1904-01-01) (\d{2}:\d{2}:\d{2}(?:\.\d+)?)$"
"""A time cell as the workbook reader writes it: the time of day on the workbook's day zero
(1899-12-31 as calamine counts Excel's serial 0, 1899-12-30 as others count it, 1904-01-01 in a
workbook of the Mac's 1904 date system)."""
_DATETIME = r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}"


def _clocks(reader: ExcelReader, at_sheet: int, at: int, raw: pl.DataFrame) -> pl.DataFrame:
    """The rows below the header (row ``at``) of sheet ``at_sheet``, read as text (``raw``),
    with their times of day as the text of a clock (``15:30:00``): in a column that holds cells
    on Excel's day zero (:data:`EXCEL_DAY_ZERO`) and no datetime of another day, those cells;
    and time cells the text read left null (OpenDocument's), read again as durations, those
    under a day."""
    cells = raw.slice(at + 1)
    blank = [i for i, c in enumerate(cells.columns) if cells[c].null_count()]
    if blank:  # time cells read as text are null: read those columns as durations
        again = reader.load_sheet(at_sheet, header_row=None, use_columns=blank, dtypes="duration")
        lost = pl.DataFrame(again).slice(at + 1)
        if lost.height == cells.height:
            span = pl.all()
            clock = (pl.lit(datetime(2000, 1, 1)) + span).dt.strftime("%H:%M:%S%.3f")
            under_a_day = (span >= timedelta(0)) & (span < timedelta(days=1))
            clock = pl.when(under_a_day).then(clock.str.strip_suffix(".000"))
            lost = lost.select(clock.name.keep())
            cells = cells.with_columns(
                pl.coalesce(cells.columns[i], lost[c]).alias(cells.columns[i])
                for i, c in zip(blank, lost.columns, strict=True)
            )
    for c in cells.columns:
        zero = cells[c].str.contains(EXCEL_DAY_ZERO)
        if zero.any() and not (cells[c].str.contains(_DATETIME) & ~zero).any():
            cells = cells.with_columns(pl.col(c).str.replace(EXCEL_DAY_ZERO, "${1}"))
    return cells


_PRICE_WORDS = ("open", "high", "low", "close", "last", "price", "settle")


_HEADER_SEARCH = 20
"""Wide rows of a sheet looked at for the header that names a price."""


def _names_a_price(cells: tuple[object, ...]) -> bool:
    """Whether a header row names a price column (``Open``, ``<CLOSE>``, ``PX_LAST``...)."""
    return any(w in str(c).lower() for c in cells if c is not None for w in _PRICE_WORDS)


WORKBOOK_MAGIC = (ZIP_MAGIC, OLE_MAGIC)
"""The first bytes of a zip (``.xlsx``, ``.ods``) and of an OLE file (``.xls``)."""


def _texty(head: bytes) -> bool:
    """Bytes that read as text: no NUL and mostly printable."""
    if not head or b"\x00" in head:
        return False
    printable = sum(32 <= b < 127 or b in (9, 10, 13) or b >= 128 for b in head)
    return printable >= 0.95 * len(head)


def _names(cells: tuple[object, ...]) -> list[str]:
    """Column names from a header row: blank cells named ``column_N`` (1-based, as polars names
    a headerless file's), a repeated name numbered (``close_2``)."""
    out: list[str] = []
    for j, cell in enumerate(cells):
        name = str(cell).strip() if cell is not None and str(cell).strip() else f"column_{j + 1}"
        base, k = name, 2
        while name in out:
            name, k = f"{base}_{k}", k + 1
        out.append(name)
    return out


def workbook_rows(path: Path) -> int:
    """Rows of the workbook's first sheet (an estimate of its bars, for the memory plan)."""
    import fastexcel

    return int(fastexcel.read_excel(str(path)).load_sheet(0, header_row=None).total_height)
