"""data/read/csv_dialect.py, fourth pass of `make mutate csv_dialect` (session 54's survivors):
a header-only semicolon file, the 64 KiB read for line ends, stray marks in a cell not taken
for thousands, a comma part of thousands deciding three-decimal points, comma numbers not scored
off ``,``, a header over one bar with a trailing delimiter, the refusal of a narrow headerless
file, headerless ticks told from a header of numbers, pandas' levels as found (rows 1 to 4, the
index's name alone and without digits, the fields' level by any column after the first), the
header line alone and as polars splits it, fields quoted after a space (over half the table's
lines; only those spaces dropped in memory), and a semicolon file's overlong line
(csv_damage.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.csv_damage import overlong_line
from foxhunt.data.read.csv_dialect import CsvDialect, _odd_line_end, header_names, sniff_csv
from foxhunt.errors import DataError

MINUTES = range(30, 36)
"""15:30 .. 15:35 UTC on 2 January 2024 (New York's morning: every calendar is open)."""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, newline="")
    return path


def test_a_semicolon_file_of_its_header_alone_keeps_its_delimiter(tmp_path: Path) -> None:
    """No bar under the header: the columns of nothing are none (no error on the empty body)."""
    path = _write(tmp_path, "ES.csv", "Date;Open;High;Low;Close\n")
    assert sniff_csv(path) == CsvDialect(";")


def test_line_ends_are_judged_on_the_first_64_kib_only(tmp_path: Path) -> None:
    """Lines ending in CR alone for more than 64 KiB, a line feed after it: a CR file (the line
    feed is not seen; the whole file is not read to tell)."""
    head = ("2024-01-02 15:30:00,1,2,0.5,1.5," + "0" * 67 + "\r") * 700  # 70,000 bytes
    path = tmp_path / "ES.csv"
    path.write_bytes(head.encode() + b"2024-01-02 15:31:00,1,2,0.5,1.5,1\n")
    assert len(head) == 70_000
    assert _odd_line_end(path) == b"\r"


def test_an_apostrophe_before_a_number_is_no_thousands_mark(tmp_path: Path) -> None:
    """Excel's text mark (``'1234.5``) is no group of thousands, so the cell is not a number
    with a decimal point, and the prices' ``4700,5`` still says decimal comma."""
    text = "Date;Open;High;Low;Close;Ref\n" + "".join(
        f"2024-01-02 15:{m}:00;4700,5;4701;4699,5;4700;'1234.5\n" for m in MINUTES
    )
    assert sniff_csv(_write(tmp_path, "FDAX.csv", text)) == CsvDialect(";", decimal_comma=True)


def test_commas_between_thousands_make_three_decimals_points(tmp_path: Path) -> None:
    """A volume of ``1,261`` beside ``820`` has commas between thousands, so the prices'
    ``12.352`` has a decimal point: read, not refused as ambiguous."""
    volumes = ["1,261", "820", "1,483", "915", "1,622", "733"]
    text = "Date;Open;High;Low;Close;Volume\n" + "".join(
        f"2024-01-02 15:{m}:00;12.352;12.360;12.350;12.355;{v}\n"
        for m, v in zip(MINUTES, volumes, strict=True)
    )
    path = _write(tmp_path, "X.csv", text)
    assert sniff_csv(path) == CsvDialect(";", comma_groups=True)


def test_quoted_comma_numbers_do_not_score_for_commas(tmp_path: Path) -> None:
    """Split at ``,`` the quoted ``"1,5"`` is a field, but no number there (a comma file has no
    decimal comma to score): ``;``'s three numbers a row win, not a tie that ``,`` would take."""
    path = _write(tmp_path, "X.csv", '"1,5","2,5","3,5","4,5";6;7;8\n' * 3)
    assert sniff_csv(path) == CsvDialect(";")


def test_a_header_over_one_bar_with_a_trailing_delimiter(tmp_path: Path) -> None:
    """Two lines: the header is left out of the width check, and the bar's empty last field is
    named (it was read as ragged, or as 'more fields than defined')."""
    path = _write(
        tmp_path, "ES.csv", "time,open,high,low,close\n2024-01-02 15:30:00,1,2,0.5,1.5,\n"
    )
    assert sniff_csv(path) == CsvDialect(
        ",", False, names=("time", "open", "high", "low", "close", ""), skip_lines=1
    )
    assert read_bars(path, min_bars=1)["close"].to_list() == [1.5]


def test_a_headerless_file_of_four_fields_is_refused_naming_60_characters(tmp_path: Path) -> None:
    first = "2024-01-03 10:30:30.291000,1.104501234567,1.104601234567,1000000"
    text = "".join(
        f"2024-01-03 10:30:{m}.291000,1.104501234567,1.104601234567,1000000\n" for m in MINUTES
    )
    path = _write(tmp_path, "EURUSD.csv", text)
    with pytest.raises(DataError) as refused:
        sniff_csv(path)
    assert str(refused.value) == (
        f"{path}: no header, and 4 fields a row ({first[:60]!r}): too few for bars (a time, "
        "open, high, low and close); ticks or quotes need a header line naming their columns "
        "(such as time,bid,ask,volume or time,price,size), then --bar-minutes K builds "
        "K-minute bars from them"
    )
    assert first[:60] == "2024-01-03 10:30:30.291000,1.104501234567,1.104601234567,100"


def test_two_lines_of_histdata_ticks_are_headerless(tmp_path: Path) -> None:
    """The first row is told from a header by the second (a file of two ticks is enough)."""
    text = "20240103 103000291,1.10450,1.10460,0\n20240103 103000591,1.10451,1.10461,0\n"
    path = _write(tmp_path, "DAT_ASCII_EURUSD_T_202401.csv", text)
    assert sniff_csv(path) == CsvDialect(",", False, names=("timestamp", "bid", "ask", "volume"))


def test_ticks_with_decimal_commas_are_headerless(tmp_path: Path) -> None:
    """``1,10450`` is a number in a tick row (any spelling counts): three a row, no header."""
    text = "".join(f"20240103 1030{m}291;1,10450;1,10460;0\n" for m in MINUTES)
    path = _write(tmp_path, "DAT_ASCII_EURUSD_T_202401.csv", text)
    assert sniff_csv(path) == CsvDialect(
        ";", False, True, names=("timestamp", "bid", "ask", "volume")
    )


def test_a_header_of_numbers_without_a_time_is_a_header(tmp_path: Path) -> None:
    """pandas' integer column labels (``time,0,1,2``): three numbers, as many as the first
    tick's, but no date and clock in the row itself, so it is the header."""
    text = "time,0,1,2\n" + "".join(f"2024-01-03 10:30:{m},1.1045,1.1046,5\n" for m in MINUTES)
    assert sniff_csv(_write(tmp_path, "EURUSD.csv", text)) == CsvDialect(",")


def test_the_index_name_row_of_levels_is_looked_for_in_rows_1_to_4(tmp_path: Path) -> None:
    """A row of a word and empty fields as the table's sixth line is no index's name under
    levels (pandas writes at most four levels here): the header is a plain header."""
    bar = "2024-01-02 15:{}:00,1,2,0.5,1.5\n"
    text = (
        "Date,Open,High,Low,Close\n"
        + "".join(bar.format(m) for m in MINUTES[:4])
        + "Note,,,,\n"
        + "".join(bar.format(m) for m in MINUTES[4:])
    )
    assert sniff_csv(_write(tmp_path, "ES.csv", text)) == CsvDialect(",")


def test_a_ticker_level_cut_short_is_no_index_name(tmp_path: Path) -> None:
    """``Ticker,AAPL`` (its repeats cut off) has a label after its name, so the index's name is
    the ``Datetime`` row below it, and the levels are read."""
    text = "Price,Close,High,Low,Open,Volume\nTicker,AAPL\nDatetime,,,,,\n" + "".join(
        f"2024-01-02 15:{m}:00+00:00,185.5,186,185,185.2,{m}\n" for m in range(30, 42)
    )
    names = ("Datetime", "Close", "High", "Low", "Open", "Volume")
    assert sniff_csv(_write(tmp_path, "AAPL.csv", text)) == CsvDialect(
        ",",
        False,
        names=tuple(f"('{n}', '{'AAPL' if i else ''}')" for i, n in enumerate(names)),
        skip_lines=3,
    )


def test_a_bar_with_its_prices_empty_under_a_header_is_no_level(tmp_path: Path) -> None:
    """The third line ``2024-01-03,,,,``: a date (digits) in the first field, no index's name,
    so no levels (it was refused as levels holding several 2024-01-02)."""
    text = (
        "Date,Open,High,Low,Close\n2024-01-02,1,2,0.5,1.5\n2024-01-03,,,,\n2024-01-04,1,2,0.5,1.5\n"
    )
    assert sniff_csv(_write(tmp_path, "ES.csv", text)) == CsvDialect(",")


def test_the_fields_level_is_found_by_its_first_field(tmp_path: Path) -> None:
    """yfinance's actions: ``Close`` is the only price name of the fields' level (Dividends and
    Stock Splits are none), and it is enough."""
    text = "Price,Close,Dividends,Stock Splits\nTicker,AAPL,AAPL,AAPL\nDate,,,\n" + "".join(
        f"2024-01-{d:02d},185.5,0.0,0.0\n" for d in range(2, 8)
    )
    assert sniff_csv(_write(tmp_path, "AAPL.csv", text)) == CsvDialect(
        ",",
        False,
        names=(
            "('Date', '')",
            "('Close', 'AAPL')",
            "('Dividends', 'AAPL')",
            "('Stock Splits', 'AAPL')",
        ),
        skip_lines=3,
    )


def test_header_names_drop_the_space_before_quoted_names(tmp_path: Path) -> None:
    text = '"Date", "Open", "High", "Low", "Close"\n' + "".join(
        f'"2024-01-02 15:{m}:00", "185.5", "186", "185", "185.25"\n' for m in MINUTES
    )
    path = _write(tmp_path, "AAPL.csv", text)
    dialect = sniff_csv(path)
    assert dialect == CsvDialect(",", spaced_quotes=True)
    assert header_names(path, dialect) == ["Date", "Open", "High", "Low", "Close"]


def test_header_names_are_the_header_line_alone(tmp_path: Path) -> None:
    """A quote opened in the header and not closed ends with the line: the next line is not
    read into the last name, nor the line's end (the file is refused for the quote)."""
    text = 'time,open,high,low,"close\n' + "".join(
        f"2024-01-02 15:{m}:00,1,2,0.5,1.5\n" for m in MINUTES
    )
    path = _write(tmp_path, "ES.csv", text)
    assert header_names(path, sniff_csv(path)) == ["time", "open", "high", "low", "close"]
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value) == (
        f"{path} line 1: a quote opens and does not close on its line (no field of a bar file "
        "spans lines: was the file cut short or edited by hand?)"
    )


def test_half_the_lines_quoted_after_a_space_is_not_the_dialect(tmp_path: Path) -> None:
    """Two lines of four: not over half, so the spaces are not skipped."""
    text = (
        '"Date", "Open", "High", "Low", "Close"\n'
        '"2024-01-02 15:30:00", "1", "2", "0.5", "1.5"\n'
        "2024-01-02 15:31:00,1,2,0.5,1.5\n2024-01-02 15:32:00,1,2,0.5,1.5\n"
    )
    assert sniff_csv(_write(tmp_path, "ES.csv", text)) == CsvDialect(",")


def test_quotes_after_a_space_are_counted_on_the_table_lines(tmp_path: Path) -> None:
    """Two lines of preamble and four spaced lines: four of four table lines, the dialect."""
    text = 'AAPL\nexported\n"Date", "Open", "High", "Low", "Close"\n' + "".join(
        f'"2024-01-02 15:{m}:00", "185.5", "186", "185", "185.25"\n' for m in MINUTES[:3]
    )
    path = _write(tmp_path, "AAPL.csv", text)
    assert sniff_csv(path) == CsvDialect(",", skip_lines=2, spaced_quotes=True)
    assert read_bars(path, min_bars=1)["close"].to_list() == [185.25] * 3


def test_a_headerless_file_quoted_after_spaces_is_headerless(tmp_path: Path) -> None:
    """``, "185.5"``: the space skipped, each field is a number, so the first line is a bar."""
    text = "".join(
        f'"2024-01-02 15:{m}:00", "185.5", "186", "185", "185.25", "{m}"\n' for m in MINUTES
    )
    path = _write(tmp_path, "AAPL.csv", text)
    assert sniff_csv(path) == CsvDialect(
        ",",
        False,
        names=("timestamp", "open", "high", "low", "close", "volume"),
        spaced_quotes=True,
    )
    assert read_bars(path, min_bars=1)["volume"].to_list() == [float(m) for m in MINUTES]


def test_the_space_before_quotes_is_described() -> None:
    assert CsvDialect(spaced_quotes=True).describe() == (
        "delimiter ',', header, a space before each quoted field"
    )


def test_an_overlong_line_of_a_semicolon_file_is_named(tmp_path: Path) -> None:
    """The fields are counted at the file's own delimiter (at ``,`` every line is one field)."""
    text = (
        "Date;Open;High;Low;Close;Volume\n"
        + "".join(f"2024-01-02 15:{m}:00;1,5;2;0,5;1,5;{m}\n" for m in range(30, 42))
        + "2024-01-02 15:42:00;1,5;2;0,5;1,5;42;late print\n"
    )
    path = _write(tmp_path, "FDAX.csv", text)
    assert overlong_line(path) == (14, 7, 6)
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value) == (
        f"{path} line 14: 7 fields where the table has 6 (a note or a value typed after the "
        "last column? remove it, or give the column a name in the header)"
    )


def test_a_file_quoted_after_spaces_keeps_every_character_of_its_lines(tmp_path: Path) -> None:
    """The spaces before quotes go in memory, and nothing else: a line ending ``XXX`` (no
    currency) over one starting ``XXII`` (22nd Century Group) keeps both."""
    text = '"Symbol", "Date", "Open", "High", "Low", "Close", "Currency"\n' + "".join(
        f'XXII, "2024-01-02 15:{m}:00", "1.5", "2", "1", "1.5", XXX\n' for m in MINUTES
    )
    path = _write(tmp_path, "XXII.csv", text)
    assert sniff_csv(path) == CsvDialect(",", spaced_quotes=True)
    assert read_bars(path, min_bars=1)["symbol"].to_list() == ["XXII"] * 6
