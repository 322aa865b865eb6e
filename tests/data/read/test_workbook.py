"""Bars in an Excel or OpenDocument workbook read as their CSV twin (the workbooks are written
here with xlsxwriter: Excel dates, numbers, a title above the header, several sheets)."""

from __future__ import annotations

import datetime as dt
import json
import logging
from pathlib import Path

import polars as pl
import pytest

from foxhunt.cli import main
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.files import resolve_table_paths, table_kind
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.row_count import estimate_rows
from foxhunt.data.read.workbook import read_workbook
from foxhunt.errors import DataError

xlsxwriter = pytest.importorskip("xlsxwriter")

HEADER = ("Date", "Open", "High", "Low", "Close", "Volume")
TIMES = [dt.datetime(2024, 1, 2, 14, 30 + i) for i in range(6)]


def _book(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    """A workbook with these sheets; datetimes written as Excel dates."""
    wb = xlsxwriter.Workbook(str(path))
    when = wb.add_format({"num_format": "yyyy-mm-dd hh:mm:ss"})
    for name, rows in sheets.items():
        ws = wb.add_worksheet(name)
        for i, row in enumerate(rows):
            for j, cell in enumerate(row):
                if isinstance(cell, dt.datetime):
                    ws.write_datetime(i, j, cell, when)
                elif cell is not None:
                    ws.write(i, j, cell)
    wb.close()
    return path


def _bars_rows() -> list[list[object]]:
    return [[t, 4700.25, 4702.0, 4699.5, 4700.0 + 0.25 * i, 10 + i] for i, t in enumerate(TIMES)]


def test_a_sheet_of_bars_reads_as_its_csv_twin(tmp_path: Path) -> None:
    book = _book(tmp_path / "ES.xlsx", {"ES": [list(HEADER), *_bars_rows()]})
    assert table_kind(book) == "workbook" and resolve_table_paths(book) == [book]
    csv = tmp_path / "csv" / "ES.csv"
    csv.parent.mkdir()
    lines = [",".join(HEADER)] + [
        f"{r[0]:%Y-%m-%d %H:%M:%S},{r[1]},{r[2]},{r[3]},{r[4]},{r[5]}" for r in _bars_rows()
    ]
    csv.write_text("\n".join(lines) + "\n")
    a, b = read_bars(csv, min_bars=1), read_bars(book, min_bars=1)
    assert b.height == 6 and b.equals(a)
    assert b["ts"][0] == dt.datetime(2024, 1, 2, 14, 30, tzinfo=dt.UTC)
    assert estimate_rows(book) == 7  # the header and six bars


def test_a_title_above_the_header_and_a_notes_sheet_first(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Bloomberg's BDH puts the ticker above the header; a workbook may open on a notes sheet."""
    bars = [["ESH4 Index"], [], ["Dates", "PX_OPEN", "PX_HIGH", "PX_LOW", "PX_LAST", "PX_VOLUME"]]
    book = _book(
        tmp_path / "ES.xlsx", {"notes": [["exported by"], ["me"]], "data": bars + _bars_rows()}
    )
    with caplog.at_level(logging.INFO, logger="foxhunt.data.read.workbook"):
        got = read_bars(book, min_bars=1)
    assert got["close"].to_list() == [4700.0 + 0.25 * i for i in range(6)]
    assert "the bars of sheet 'data' (of 2), the rows above its header skipped" in caplog.text


def test_header_cells_blank_or_repeated(tmp_path: Path) -> None:
    rows = [
        ["ts", "open", "high", "low", "close", None, "close"],
        *[[*r[:5], "x", 1.0] for r in _bars_rows()],
    ]
    frame = read_workbook(_book(tmp_path / "ES.xlsx", {"s": rows}))
    assert frame.columns == ["ts", "open", "high", "low", "close", "column_6", "close_2"]
    assert frame.schema["open"] == pl.String  # every cell as text, cast by the reader


def test_a_cell_that_is_no_number_is_named_by_its_row(tmp_path: Path) -> None:
    rows = _bars_rows()
    rows[3][2] = "n/a?"
    book = _book(tmp_path / "ES.xlsx", {"ES": [list(HEADER), *rows]})
    with pytest.raises(
        DataError, match=r"ES.xlsx: column 'High', row 3 \(.*\): not a number 'n/a\?'"
    ):
        read_bars(book, min_bars=1)


def test_a_workbook_without_a_table_is_refused(tmp_path: Path) -> None:
    book = _book(tmp_path / "ES.xlsx", {"a": [["only", "three", "cells"]], "b": [["x"]]})
    with pytest.raises(DataError) as e:
        read_bars(book, min_bars=1)
    assert str(e.value) == (
        f"{book}: no sheet holds a table (a row of at least 4 cells: a time and the prices)"
    )


def test_a_file_that_is_no_workbook_is_refused_in_one_line(tmp_path: Path) -> None:
    """Said for what it is: text (a site's CSV named .xls), a web page, or other bytes; was
    calamine's "Invalid OLE signature ... not an office document?"."""
    book = tmp_path / "ES.xlsx"
    book.write_bytes(b"not a zip, not a workbook")
    with pytest.raises(DataError) as e:
        read_bars(book, min_bars=1)
    assert str(e.value) == (
        f"{book}: not a workbook: the file holds text (a CSV?), though its name says a sheet "
        "(some sites send their CSV named .xls); name it for what it holds (.csv)"
    )
    page = tmp_path / "ES.xls"
    page.write_bytes(b"<!DOCTYPE html><html><body>Sign in</body></html>")
    with pytest.raises(DataError, match=r"ES.xls: not a workbook: the file holds a web page"):
        read_bars(page, min_bars=1)
    other = tmp_path / "ES2.xls"
    other.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(DataError) as e:
        read_bars(other, min_bars=1)
    assert str(e.value) == f"{other}: not a workbook (neither an .xlsx/.ods zip nor an .xls file)"


def test_names_for_blank_and_thrice_repeated_header_cells(tmp_path: Path) -> None:
    header = ["ts", "open", "high", "low", "close", " ", "close", "close"]
    rows = [header, *[[*r[:5], 7.5, 1.0, 2.0] for r in _bars_rows()]]
    frame = read_workbook(_book(tmp_path / "ES.xlsx", {"s": rows}))
    assert frame.columns == ["ts", "open", "high", "low", "close", "column_6", "close_2", "close_3"]
    assert frame.schema["column_6"] == pl.String  # numbers under a blank header: text too


def test_a_four_cell_header_is_a_table(tmp_path: Path) -> None:
    """Four cells make a header (a time and three prices): here the close is missing, and the
    reader says so rather than finding no table."""
    rows = [["ts", "open", "high", "low"], *[r[:4] for r in _bars_rows()]]
    book = _book(tmp_path / "ES.xlsx", {"s": rows})
    with pytest.raises(DataError, match=r"missing column 'close' \(columns: ts, open, high, low\)"):
        read_bars(book, min_bars=1)


def test_which_sheet_is_said_only_when_there_is_a_choice(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    table = [list(HEADER), *_bars_rows()]
    cases = {
        "plain": ({"ES": table}, None),
        "titled": ({"ES": [["ES bars"], *table]}, "(of 1), the rows above its header skipped"),
        "two sheets": ({"a": [["x"]], "ES": table}, "the bars of sheet 'ES' (of 2)\n"),
    }
    for case, (sheets, said) in cases.items():
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="foxhunt.data.read.workbook"):
            read_workbook(_book(tmp_path / f"{case}.xlsx", sheets))
        if said is None:
            assert caplog.text == "", case
        else:
            assert said in caplog.text, (case, caplog.text)


def test_a_summary_sheet_first_is_passed_over_and_other_sheets_of_bars_are_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """A summary table (Symbol, Start, End, Bars) before the bars was taken for the bars
    (refused: no open column); a second sheet of bars was dropped without a word."""
    summary = [["Symbol", "Start", "End", "Bars"], ["ES", "2024-01-02", "2024-01-02", 6]]
    bars = [list(HEADER), *_bars_rows()]
    book = _book(
        tmp_path / "ES.xlsx", {"Summary": summary, "Jan": bars, "Feb": bars, "Notes": [["x"]]}
    )
    with caplog.at_level(logging.WARNING):
        frame = read_workbook(book)
    assert frame.columns == list(HEADER) and frame.height == 6
    assert caplog.messages == [
        f"{book}: sheet 'Jan' read; sheet 'Feb' holds bars too and is not read: save each as "
        "its own file, or the bars of every symbol in one sheet with a symbol column"
    ]
    assert main(["data", "inspect", str(book), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "suspicious" and report["warnings"] == [caplog.messages[0]]


@pytest.mark.parametrize(
    ("book", "sheet", "symbol"),
    [  # until session 53 the workbook's default name was the symbol (BOOK1, MAPPE1)
        ("Book1.xlsx", "MSFT", "MSFT"),
        ("Mappe1.xlsx", "7203.T", "7203.T"),
        ("data.xlsx", "ES", "ES"),
        ("ES.xlsx", "NQ", "ES"),  # a name that says the symbol stays the symbol
        ("Book1.xlsx", "Sheet1", "BOOK1"),  # a default sheet name says nothing either
        ("Book1.xlsx", "Daily prices", "BOOK1"),  # no ticker
    ],
)
def test_a_default_workbook_name_takes_its_sheets_name(
    tmp_path: Path, book: str, sheet: str, symbol: str
) -> None:
    path = _book(tmp_path / book, {sheet: [list(HEADER), *_bars_rows()]})
    df = read_bars(path, min_bars=1, options=ReadOptions(allow_odd_times=True))
    assert df["symbol"].unique().to_list() == [symbol]


def test_a_title_blocks_row_of_four_cells_is_no_header(tmp_path: Path) -> None:
    """A title, then ``Ticker | AAPL | Currency | USD`` above the header: that row of four
    cells was taken for the header until session 53 (missing 'open')."""
    rows: list[list[object]] = [
        ["Apple Inc. daily prices"],
        ["Ticker", "AAPL", "Currency", "USD"],
        [],
        list(HEADER),
        *_bars_rows(),
    ]
    path = _book(tmp_path / "AAPL.xlsx", {"Prices": rows})
    df = read_bars(path, min_bars=1, options=ReadOptions(allow_odd_times=True))
    assert df.height == 6 and df["close"].to_list() == [r[4] for r in _bars_rows()]


def test_yfinances_frame_saved_by_to_excel_reads_by_its_price_level(tmp_path: Path) -> None:
    """``yf.download("AAPL").to_excel(...)``: the rows ``Price, Close, ...``, ``Ticker, AAPL,
    ...`` and ``Date`` above the bars (the CSV's levels, read since session 47): until session
    53 refused as missing 'ts' (columns Price, Close, ...)."""
    bars = _bars_rows()
    rows: list[list[object]] = [
        ["Price", "Close", "High", "Low", "Open", "Volume"],
        ["Ticker", "AAPL", "AAPL", "AAPL", "AAPL", "AAPL"],
        ["Date"],
        *[[r[0], r[4], r[2], r[3], r[1], r[5]] for r in bars],
    ]
    path = _book(tmp_path / "AAPL.xlsx", {"Sheet1": rows})
    df = read_bars(path, min_bars=1, options=ReadOptions(allow_odd_times=True))
    assert df.select("open", "high", "low", "close", "volume").rows() == [
        (r[1], r[2], r[3], r[4], float(r[5])) for r in bars
    ]
    two = [rows[0], ["Ticker", "AAPL", "AAPL", "MSFT", "MSFT", "MSFT"], *rows[2:]]
    with pytest.raises(DataError, match=r"columns in levels hold several Ticker \(AAPL, MSFT\)"):
        read_bars(_book(tmp_path / "two.xlsx", {"Sheet1": two}), min_bars=1)
