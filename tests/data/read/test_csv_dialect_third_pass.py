"""data/read/csv_dialect.py, third pass of `make mutate csv_dialect`: the refusal of pandas'
columns in levels says what it found, the decimal-point rules for three decimals (a comma file
is never asked; ``0.`` and ``-0.`` are decimals), lines ending in CR alone told from CRLF, the
dialect kept by every way a file is read in memory, and a headerless comma file whose quoted
numbers have decimal commas."""

from __future__ import annotations

import bz2
import lzma
from datetime import UTC, datetime
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.csv_dialect import _odd_line_end, sniff_csv
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError

MINUTES = range(30, 36)
"""15:30 .. 15:35 UTC on 2 January 2024 (New York's morning: every calendar is open)."""


def _utc(minute: int) -> list[datetime]:
    return [datetime(2024, 1, 2, 15, m, tzinfo=UTC) for m in MINUTES][:minute]


def _write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, newline="")
    return path


def _levels(tickers: list[str], level: str = "Ticker") -> str:
    fields = len(tickers)
    return (
        f"Price,{','.join(['Close'] * fields)}\n{level},{','.join(tickers)}\n"
        f"Datetime{',' * fields}\n2024-01-02 15:30:00+00:00,{','.join(['1'] * fields)}\n"
    )


@pytest.mark.parametrize(
    ("tickers", "named"),
    [
        (["A", "B", "C", "D"], "A, B, C, D"),
        (["A", "B", "C", "D", "E"], "A, B, C, D, ..."),
        (["E", "D", "C", "B", "A", "F"], "A, B, C, D, ..."),
    ],
    ids=["four", "five", "six-unsorted"],
)
def test_several_tickers_in_levels_are_named_four_at_most(
    tmp_path: Path, tickers: list[str], named: str
) -> None:
    path = _write(tmp_path, "AAPL.csv", _levels(tickers))
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value) == (
        f"{path}: columns in levels hold several Ticker ({named}): save one per file "
        "(pandas: df.xs(NAME, axis=1, level=1).to_csv(...))"
    )


def test_levels_without_names_are_called_labels(tmp_path: Path) -> None:
    """``df.columns.names`` unset: the levels' first cells are empty."""
    path = _write(tmp_path, "AAPL.csv", _levels(["AAPL", "MSFT", "NVDA"], level=""))
    with pytest.raises(DataError, match=r"hold several labels \(AAPL, MSFT, NVDA\): save one"):
        read_bars(path, min_bars=1)


def test_levels_of_four_fields_are_read_as_levels(tmp_path: Path) -> None:
    """The narrowest table in levels (the index and three columns) still has its names taken
    from the fields' level, so what it lacks is named in the file's own words."""
    text = "Price,Close,Open,Volume\nTicker,AAPL,AAPL,AAPL\nDatetime,,,\n" + "".join(
        f"2024-01-02 15:{m}:00+00:00,185.{m},185.0,{m}\n" for m in MINUTES
    )
    path = _write(tmp_path, "AAPL.csv", text)
    levels = ("('Datetime', '')", "('Close', 'AAPL')", "('Open', 'AAPL')", "('Volume', 'AAPL')")
    assert sniff_csv(path).names == levels  # the ticker kept (session 54)
    with pytest.raises(DataError, match=r"missing column 'high' \(columns: Datetime, Close, Open"):
        read_bars(path, min_bars=1)


def test_a_comma_file_of_three_decimals_is_read_with_points(tmp_path: Path) -> None:
    """USDJPY's ``151.234`` in a comma file: a comma file never has points between thousands
    (its thousands would be commas), so nothing is asked; only other delimiters are ambiguous."""
    text = "Date,Open,High,Low,Close,Volume\n" + "".join(
        f"2024-01-02 15:{m}:00,151.234,151.240,151.230,151.235,{m}\n" for m in MINUTES
    )
    bars = read_bars(_write(tmp_path, "USDJPY.csv", text), min_bars=1)
    assert bars["open"].to_list() == [151.234] * 6
    assert bars["high"].to_list() == [151.24] * 6


@pytest.mark.parametrize(
    ("prices", "extra", "expected"),
    [
        ("0.652;0.653;0.651;0.652", "", 0.652),
        ("+0.652;0.653;0.651;0.652", "", 0.652),
        ("4.700;4.701;4.699;4.700", ";-0.125", 4.7),
        ("4.700;4.701;4.699;4.700", ";+0.125", 4.7),
    ],
    ids=["below-one", "signed-below-one", "negative-change", "signed-change"],
)
def test_a_number_starting_0_point_makes_the_points_decimals(
    tmp_path: Path, prices: str, extra: str, expected: float
) -> None:
    """No thousands group starts ``0.``: a semicolon file of AUDUSD (``0.652``), or one whose
    change column holds ``-0.125``, is read with decimal points, not refused as ambiguous."""
    head = "Date;Open;High;Low;Close;" + ("Change;" if extra else "") + "Volume\n"
    text = head + "".join(f"2024-01-02 15:{m}:00;{prices}{extra};{m}\n" for m in MINUTES)
    bars = read_bars(_write(tmp_path, "FX.csv", text), min_bars=1)
    assert bars["open"].to_list() == [expected] * 6


def test_odd_line_ends_are_told_from_crlf_and_lf(tmp_path: Path) -> None:
    """Only a file whose lines end in CR alone or in CR CR LF is rewritten in memory; CRLF and
    LF files are scanned from disk as they are."""
    rows = ["ts,open,high,low,close", "2024-01-02T15:30:00Z,1,1,1,1"]
    assert _odd_line_end(_write(tmp_path, "cr.csv", "\r".join(rows) + "\r")) == b"\r"
    assert _odd_line_end(_write(tmp_path, "crcrlf.csv", "\r\r\n".join(rows) + "\r\r\n")) == (
        b"\r\r\n"
    )
    assert _odd_line_end(_write(tmp_path, "crlf.csv", "\r\n".join(rows) + "\r\n")) is None
    assert _odd_line_end(_write(tmp_path, "lf.csv", "\n".join(rows) + "\n")) is None


def test_lines_ending_cr_cr_lf_are_read(tmp_path: Path) -> None:
    """Python's ``csv.writer`` on Windows, the file opened without ``newline=''``, ends each
    line ``\\r\\r\\n``: was refused as "a column name spans lines"."""
    text = "Date,Open,High,Low,Close,Volume\r\r\n" + "".join(
        f"2024-01-02 15:{m}:00,4780.25,4781.25,4779.25,4779.5,{m}\r\r\n" for m in MINUTES
    )
    bars = read_bars(_write(tmp_path, "ES.csv", text.encode()), min_bars=1)
    assert bars["ts"].to_list() == _utc(6)
    assert bars["volume"].to_list() == [float(m) for m in MINUTES]


GERMAN = "Date;Time;Open;High;Low;Close;Volume\n" + "".join(
    f"02.01.2024;15:{m};4.700,5;4.701,25;4.699,75;4.700,5;{m}\n" for m in MINUTES
)


def test_a_semicolon_file_with_cr_lines_keeps_its_dialect(tmp_path: Path) -> None:
    """Excel for Mac's "CSV (Macintosh)" from a German locale: semicolons, decimal commas and
    lines ending in CR, read in memory with the guessed dialect."""
    path = _write(tmp_path, "FDAX.csv", GERMAN.replace("\n", "\r").encode())
    bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == _utc(6)
    assert bars["open"].to_list() == [4700.5] * 6
    assert bars["volume"].to_list() == [float(m) for m in MINUTES]


@pytest.mark.parametrize("end", [".csv.bz2", ".csv.xz"])
def test_a_compressed_headerless_semicolon_file_keeps_its_dialect(tmp_path: Path, end: str) -> None:
    """bzip2 and xz text is decompressed in memory, then read with the guessed dialect
    (headerless, semicolons, decimal commas), as the plain file is."""
    text = "".join(f"2024-01-02 15:{m}:00;4700,5;4701;4699,5;4700;{m}\n" for m in MINUTES)
    packed = (bz2.compress if end == ".csv.bz2" else lzma.compress)(text.encode())
    bars = read_bars(_write(tmp_path, f"ES{end}", packed), min_bars=1)
    assert bars["ts"].to_list() == _utc(6)
    assert bars["open"].to_list() == [4700.5] * 6
    assert bars["low"].to_list() == [4699.5] * 6


def test_a_headerless_comma_file_of_quoted_decimal_commas_is_headerless(tmp_path: Path) -> None:
    """A localized export without its header: ``"16.751,64"`` is a number, so the first line is
    a bar (it was taken for the header, and the file refused as missing 'open')."""
    text = "".join(
        f'"2024-01-02 15:{m}:00","16.751,{m}","16.760,00","16.740,50","16.750,25","{m}"\n'
        for m in MINUTES
    )
    path = _write(tmp_path, "DAX.csv", text)
    dialect = sniff_csv(path)
    assert (dialect.has_header, dialect.decimal_comma) == (False, True)
    bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == _utc(6)
    assert bars["open"].to_list() == [16751 + m / 100 for m in MINUTES]


def _tab(prices: str, volumes: list[str]) -> str:
    """An Excel "Text (Tab delimited)" save of formatted cells: US dates, commas as written."""
    head = "Date\tTime\tOpen\tHigh\tLow\tClose\tVolume\n"
    return head + "".join(
        f"01/03/2024\t15:{m}\t{prices}\t{v}\n" for m, v in zip(MINUTES, volumes, strict=True)
    )


THOUSANDS = ["1,261", "1,483", "1,499", "1,622", "1,738", "1,325"]


def test_commas_before_three_digits_and_nothing_else_to_tell_are_refused(
    tmp_path: Path,
) -> None:
    """A tab file of whole YM prices and volumes of ``1,261``: a German decimal comma or an
    English thousands comma (it was read as 1.261, and the US dates day-first as 1 March)."""
    path = _write(tmp_path, "YM.txt", _tab("37715\t37719\t37711\t37711", THOUSANDS))
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value) == (
        f"{path}: every number with a comma has three digits after it ('1,261'), and nothing "
        "in the first lines tells a decimal comma from commas between thousands (an English "
        "export's '1,261' is 1261); --decimal point or --decimal comma says which"
    )
    point = read_bars(path, min_bars=1, options=ReadOptions(decimal="point"))
    assert point["volume"].to_list() == [float(v.replace(",", "")) for v in THOUSANDS]
    assert point["ts"].to_list() == [datetime(2024, 1, 3, 15, m, tzinfo=UTC) for m in MINUTES]
    comma = read_bars(path, min_bars=1, options=ReadOptions(decimal="comma"))
    assert comma["volume"][0] == 1.261


def test_formatted_prices_with_commas_are_read_with_decimal_point(tmp_path: Path) -> None:
    """``37,715`` in every price: read with ``--decimal point`` as 37715 (was 37.715, valid)."""
    path = _write(tmp_path, "YM.txt", _tab("37,715\t37,719\t37,711\t37,711", THOUSANDS))
    with pytest.raises(DataError, match=r"three digits after it \('37,715'\)"):
        read_bars(path, min_bars=1)
    bars = read_bars(path, min_bars=1, options=ReadOptions(decimal="point"))
    assert bars["open"].to_list() == [37715.0] * 6


def test_a_comma_before_three_digits_beside_small_whole_numbers_parts_thousands(
    tmp_path: Path,
) -> None:
    """A formatted volume column of ``1,261`` beside ``820``: thousands commas, so the prices'
    ``37,715`` is 37715 too, and the dates are read as the data say (not day-first)."""
    volumes = ["1,261", "820", "1,499", "95", "2,038", "7"]
    path = _write(tmp_path, "YM.txt", _tab("37,715\t37,719\t37,711\t37,711", volumes))
    assert sniff_csv(path).comma_groups and not sniff_csv(path).decimal_comma
    bars = read_bars(path, min_bars=1)
    assert bars["open"].to_list() == [37715.0] * 6
    assert bars["volume"].to_list() == [1261.0, 820.0, 1499.0, 95.0, 2038.0, 7.0]


def test_a_comma_before_three_digits_beside_a_large_whole_number_is_decimal(
    tmp_path: Path,
) -> None:
    """``1,261`` beside ``5044`` in one column: no thousands separator there, so a decimal comma
    (a semicolon file of a German export)."""
    text = "Datum;Zeit;Open;High;Low;Close;Volume\n" + "".join(
        f"02.01.2024;15:{m};1,094;1,095;1,093;1,094;{v}\n"
        for m, v in zip(MINUTES, ["1,261", "5044", "2", "13", "8", "7"], strict=True)
    )
    bars = read_bars(_write(tmp_path, "EURUSD.csv", text), min_bars=1)
    assert bars["open"].to_list() == [1.094] * 6
    assert bars["volume"].to_list() == [1.261, 5044.0, 2.0, 13.0, 8.0, 7.0]


def test_points_between_thousands_beside_small_numbers_settle_a_decimal_comma(
    tmp_path: Path,
) -> None:
    """A volume of ``5.044`` beside ``820`` (points part thousands) and prices of ``1,094``:
    a German export, read with decimal commas, not refused."""
    volumes = ["5.044", "820", "1.210", "99", "12.000", "7"]
    bars = read_bars(
        _write(tmp_path, "EURUSD.txt", _tab("1,094\t1,095\t1,093\t1,094", volumes)), min_bars=1
    )
    assert bars["open"].to_list() == [1.094] * 6
    assert bars["volume"].to_list() == [5044.0, 820.0, 1210.0, 99.0, 12000.0, 7.0]


@pytest.mark.parametrize(
    "odd", ["1,5", "0,652", "16.750,50"], ids=["short-decimals", "lone-zero", "dotted-groups"]
)
def test_one_decimal_comma_of_another_shape_settles_the_file(tmp_path: Path, odd: str) -> None:
    """``1,261`` and nothing else is ambiguous; one ``1,5``, ``0,652`` or ``16.750,50`` in the
    sample says decimal comma."""
    volumes = [*THOUSANDS[:5], odd]
    bars = read_bars(
        _write(tmp_path, "YM.txt", _tab("37715\t37719\t37711\t37711", volumes)), min_bars=1
    )
    assert bars["volume"][0] == 1.261


def test_a_decimal_point_after_commas_parts_thousands_in_a_tab_file(tmp_path: Path) -> None:
    """``4,780.25`` beside a volume of ``1,261``: English thousands (was refused as not a number
    after a decimal-comma guess, its dates read day-first)."""
    path = _write(tmp_path, "ES.txt", _tab("4,780.25\t4,781.25\t4,779.25\t4,779.5", THOUSANDS))
    dialect = sniff_csv(path)
    assert (dialect.decimal_comma, dialect.comma_groups) == (False, True)
    assert dialect.describe() == "delimiter '\\t', header, commas between thousands"
    told = sniff_csv(path, decimal="comma")
    assert (told.decimal_comma, told.comma_groups) == (True, False)
    bars = read_bars(path, min_bars=1)
    assert bars["open"].to_list() == [4780.25] * 6
    assert bars["volume"][0] == 1261.0
    assert bars["ts"][0] == datetime(2024, 1, 3, 15, 30, tzinfo=UTC)


ES_ROWS = [f"2024-01-02 15:{m}:00,4780.25,4781.25,4779.25,4779.5,{m}" for m in MINUTES]


def test_a_delimiter_after_every_bar_but_not_the_header_is_read(tmp_path: Path) -> None:
    """``Date,...,Volume`` over ``...,1261,``: the bars' empty last field is a trailing
    delimiter (polars refused it: "found more fields than defined in 'Schema'")."""
    text = "Date,Open,High,Low,Close,Volume\n" + "".join(f"{r},\n" for r in ES_ROWS)
    path = _write(tmp_path, "ES.csv", text)
    dialect = sniff_csv(path)
    assert dialect.names == ("Date", "Open", "High", "Low", "Close", "Volume", "")
    assert (dialect.has_header, dialect.skip_lines) == (False, 1)
    bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == _utc(6)
    assert bars["volume"].to_list() == [float(m) for m in MINUTES]


def test_a_value_typed_after_the_last_column_names_its_line(tmp_path: Path) -> None:
    rows = [f"2024-01-02 15:{m:02d}:00,4780.25,4781.25,4779.25,4779.5,{m}" for m in range(30)]
    rows[4] += ",roll day"
    path = _write(
        tmp_path, "ES.csv", "Symbol: ES\nDate,Open,High,Low,Close,Volume\n" + "\n".join(rows) + "\n"
    )
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value) == (
        f"{path} line 7: 7 fields where the table has 6 (a note or a value typed after the last "
        "column? remove it, or give the column a name in the header)"
    )
    headerless = _write(tmp_path, "NQ.csv", "\n".join(rows) + "\n")
    with pytest.raises(DataError, match=r"NQ.csv line 5: 7 fields where the table has 6 "):
        read_bars(headerless, min_bars=1)


def test_a_trailing_delimiter_on_the_header_too_is_no_extra_field(tmp_path: Path) -> None:
    """A header that ends in a delimiter already names its empty last field: bars with one
    empty field more are read as polars reads them, not given two columns of one empty name."""
    text = "Date,Open,High,Low,Close,Volume,\n" + "".join(f"{r},,\n" for r in ES_ROWS)
    path = _write(tmp_path, "ES.csv", text)
    assert sniff_csv(path).has_header
    bars = read_bars(path, min_bars=1)
    assert bars["volume"].to_list() == [float(m) for m in MINUTES]


@pytest.mark.parametrize(
    ("header", "stamp"),
    [
        ("Timestamp (ms)", "1704209400000"),  # refused: "names the zone 'ms'"
        ("Open Time (ms)", "1704209400000"),
        ("time (unix)", "1704209400"),
        ("Date (YYYY-MM-DD HH:MM)", "2024-01-02 15:30"),
    ],
)
def test_a_unit_or_layout_in_a_time_columns_brackets_is_no_zone(
    tmp_path: Path, header: str, stamp: str
) -> None:
    path = _write(
        tmp_path,
        "ES.csv",
        f"{header},Open,High,Low,Close,Volume\n{stamp},4780,4781,4779,4780.5,7\n",
    )
    assert read_bars(path, min_bars=1)["ts"].to_list() == _utc(1)
