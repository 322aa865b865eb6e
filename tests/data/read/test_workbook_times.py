"""A Time column of time cells beside a Date column reads as the time of day: Excel's time cells
(a fraction of a day, which the workbook reader gives on Excel's day zero, ``1899-12-31
15:30:00``, or 1904-01-01 in a Mac workbook) and OpenDocument's (``PT15H30M00S``, which the
reader gives as durations and as no text at all). Datetimes of other days are left as they are."""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.workbook import read_workbook

xlsxwriter = pytest.importorskip("xlsxwriter")

HEADER = ["Date", "Time", "Open", "High", "Low", "Close", "Volume"]
CLOCKS = [dt.time(9, 30), dt.time(9, 35), dt.time(9, 40, 15, 500_000)]
WANT = [
    dt.datetime(2024, 1, 3, 9, 30, tzinfo=dt.UTC),
    dt.datetime(2024, 1, 3, 9, 35, tzinfo=dt.UTC),
    dt.datetime(2024, 1, 3, 9, 40, 15, 500_000, tzinfo=dt.UTC),
]


def _prices(i: int) -> list[float]:
    return [1.0945, 1.0946, 1.0944, 1.0945 + i / 10_000, 361.0 + i]


def _xlsx(path: Path, day: object, clocks: list[object], mac: bool = False) -> Path:
    """A sheet of Date (a date cell, or text) and Time (time cells) beside the prices."""
    wb = xlsxwriter.Workbook(str(path), {"date_1904": mac})
    date = wb.add_format({"num_format": "yyyy-mm-dd"})
    time = wb.add_format({"num_format": "hh:mm:ss.000"})
    ws = wb.add_worksheet()
    ws.write_row(0, 0, HEADER)
    for i, clock in enumerate(clocks):
        if isinstance(day, dt.datetime):
            ws.write_datetime(i + 1, 0, day, date)
        else:
            ws.write_string(i + 1, 0, str(day))
        if isinstance(clock, dt.time):
            ws.write_datetime(i + 1, 1, clock, time)
        else:
            ws.write_string(i + 1, 1, str(clock))
        ws.write_row(i + 1, 2, _prices(i))
    wb.close()
    return path


def test_excel_time_cells_beside_date_cells_read_as_the_time_of_day(tmp_path: Path) -> None:
    book = _xlsx(tmp_path / "EURUSD.xlsx", dt.datetime(2024, 1, 3), CLOCKS)
    assert read_workbook(book)["Time"].to_list() == ["09:30:00", "09:35:00", "09:40:15.500"]
    assert read_bars(book, min_bars=1)["ts"].to_list() == WANT


def test_excel_time_cells_beside_metatrader_text_dates(tmp_path: Path) -> None:
    """MetaTrader's history pasted into a sheet: ``2024.01.03`` as text, the times as cells."""
    book = _xlsx(tmp_path / "EURUSD.xlsx", "2024.01.03", CLOCKS)
    assert read_bars(book, min_bars=1)["ts"].to_list() == WANT


def test_time_cells_of_a_mac_1904_workbook(tmp_path: Path) -> None:
    """The 1904 date system's day zero is 1904-01-01: its time cells are on that day."""
    book = _xlsx(tmp_path / "EURUSD.xlsx", dt.datetime(2024, 1, 3), CLOCKS, mac=True)
    assert read_bars(book, min_bars=1)["ts"].to_list() == WANT


def test_time_cells_and_times_typed_as_text_in_one_column(tmp_path: Path) -> None:
    clocks: list[object] = [CLOCKS[0], "09:35", CLOCKS[2]]
    book = _xlsx(tmp_path / "EURUSD.xlsx", dt.datetime(2024, 1, 3), clocks)
    assert read_bars(book, min_bars=1)["ts"].to_list() == WANT


def test_datetimes_of_other_days_are_left_as_written(tmp_path: Path) -> None:
    """A column of datetimes with one cell on day zero (a 0 formatted as a date, a blank the
    sheet filled) is no column of clocks: its cells keep their days, and that one is refused as
    the 1899 date it says, not read as a time on no day."""
    wb = xlsxwriter.Workbook(str(tmp_path / "ES.xlsx"))
    when = wb.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"})
    ws = wb.add_worksheet()
    ws.write_row(0, 0, ["Date", "Open", "High", "Low", "Close", "Volume"])
    for i, t in enumerate([dt.datetime(2024, 1, 3, 9, 30), dt.datetime(2024, 1, 3, 9, 35)]):
        ws.write_datetime(i + 1, 0, t, when)
        ws.write_row(i + 1, 1, [4780.25, 4781.0, 4779.5, 4780.5, 10])
    ws.write_number(3, 0, 0, when)
    ws.write_row(3, 1, [4780.25, 4781.0, 4779.5, 4780.5, 10])
    wb.close()
    assert read_workbook(tmp_path / "ES.xlsx")["Date"].to_list() == [
        "2024-01-03 09:30:00",
        "2024-01-03 09:35:00",
        "1899-12-31 00:00:00",
    ]


def _ods(path: Path, rows: list[list[tuple[str, object]]]) -> Path:
    """A minimal OpenDocument spreadsheet of these cells: (kind, value), kind ``string``,
    ``float``, ``date`` (``2024-01-03``) or ``time`` (``PT09H30M00S``), as LibreOffice saves
    them, or ``empty``."""
    attribute = {"float": "value", "date": "date-value", "time": "time-value"}

    def cell(kind: str, value: object) -> str:
        if kind == "empty":
            return "<table:table-cell/>"
        typed = f' office:{attribute[kind]}="{value}"' if kind in attribute else ""
        return (
            f'<table:table-cell office:value-type="{kind}"{typed}><text:p>{value}</text:p>'
            "</table:table-cell>"
        )

    body = "".join(
        "<table:table-row>" + "".join(cell(*c) for c in row) + "</table:table-row>" for row in rows
    )
    ns = (
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
    )
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ns} '
        'office:version="1.2"><office:body><office:spreadsheet><table:table table:name="Bars">'
        f"{body}</table:table></office:spreadsheet></office:body></office:document-content>"
    )
    mime = "application/vnd.oasis.opendocument.spreadsheet"
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest='
        '"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">'
        f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{mime}"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
        "</manifest:manifest>"
    )
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", mime)
        z.writestr("content.xml", content)
        z.writestr("META-INF/manifest.xml", manifest)
    return path


def test_opendocument_time_cells_read_as_the_time_of_day(tmp_path: Path) -> None:
    """LibreOffice's time cells: the text read gives none (each Time was null, and the bars
    were refused as ``'2024-01-03 None'``); the empty cells of a Note column stay empty."""
    clocks = ["PT09H30M00S", "PT09H35M00S", "PT09H40M15.5S"]
    rows = [[("string", h) for h in [*HEADER, "Note"]]]
    rows += [
        [("date", "2024-01-03"), ("time", c), *(("float", p) for p in _prices(i)), ("empty", None)]
        for i, c in enumerate(clocks)
    ]
    book = _ods(tmp_path / "EURUSD.ods", rows)
    sheet = read_workbook(book)
    assert sheet["Time"].to_list() == ["09:30:00", "09:35:00", "09:40:15.500"]
    assert sheet["Note"].to_list() == [None, None, None]
    assert read_bars(book, min_bars=1)["ts"].to_list() == WANT
