"""data/read/csv_dialect.py, second pass of `make mutate csv_dialect`: the sample's size and
line ends, header names as polars gives them, the header row left out of the width check, the
delimiter scores (decimal comma counted only off ``,``; ties to the earlier delimiter), no
decimal comma with ``,``, and the text/Float64 columns of scan_csv_text in every container."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.csv_dialect import (
    SAMPLE_LINES,
    CsvDialect,
    _digit_clocks,
    _numbered_sample,
    header_names,
    headerless_names,
    scan_csv_text,
    sniff_csv,
)

sys.path.insert(0, str(Path(__file__).parent))
from test_csv_dialect_mutants import BODY, _containers  # noqa: E402

PRICES = ("open", "high", "low", "close")


def _file(tmp_path: Path, text: str, name: str = "bars.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_the_sample_is_the_first_sample_lines_non_blank_lines(tmp_path: Path) -> None:
    lines = [f"2024-01-02 09:30,{i},{i},{i},{i}" for i in range(SAMPLE_LINES + 5)]
    p = _file(tmp_path, "\n\n".join(lines) + "\n")
    assert [line.strip() for _, line in _numbered_sample(p)] == lines[:SAMPLE_LINES]


def test_a_line_past_the_sample_does_not_change_the_guess(tmp_path: Path) -> None:
    """Decimal comma in the first SAMPLE_LINES lines; a dotted number after them is not seen."""
    row = "2024-01-02 09:30;4500,25;4501,5;4499,75;4500,5;7\n"
    p = _file(tmp_path, row * SAMPLE_LINES + "2024-01-02 09:31;4500.25;4501.5;4499.75;4500.5;7\n")
    assert sniff_csv(p) == CsvDialect(
        ";", False, True, ("timestamp", "open", "high", "low", "close", "volume")
    )


@pytest.mark.parametrize(
    ("header", "delimiter", "names"),
    [
        ("ts\topen\thigh\tlow\tclose\t", "\t", ["ts", "open", "high", "low", "close", ""]),
        ("ts,open,high,low,close ", ",", ["ts", "open", "high", "low", "close "]),
        ("ts,open,high,low,close,INDEX", ",", ["ts", "open", "high", "low", "close", "INDEX"]),
    ],
)
def test_header_names_keep_the_line_as_polars_reads_it(
    tmp_path: Path, header: str, delimiter: str, names: list[str]
) -> None:
    """Only the line break is cut: a trailing delimiter, space or letter stays in the names."""
    row = delimiter.join(["2024-01-02 09:30", "1.5", "2.5", "1.0", "2.0", "3"][: len(names)])
    for eol in ("\n", "\r\n"):
        p = _file(tmp_path, header + eol + row + eol)
        d = sniff_csv(p)
        assert d == CsvDialect(delimiter)
        assert header_names(p, d) == names
        assert scan_csv_text(p, d).collect_schema().names() == names


def test_header_names_of_an_empty_file_are_none(tmp_path: Path) -> None:
    assert header_names(_file(tmp_path, ""), CsvDialect()) == []
    assert header_names(_file(tmp_path, "\n\n"), CsvDialect(";")) == []


@pytest.mark.parametrize("rows", [1, 8])
def test_the_header_row_is_not_counted_in_the_width_check(tmp_path: Path, rows: int) -> None:
    """A header with a trailing delimiter (6 fields) over rows of 5: the rows agree."""
    p = _file(tmp_path, "ts;open;high;low;close;\n" + "2024-01-02 09:30;1;2;0.5;1.5\n" * rows)
    assert sniff_csv(p) == CsvDialect(";")


def test_decimal_commas_score_for_semicolons_not_for_commas(tmp_path: Path) -> None:
    """Five fields either way (four decimal commas, four semicolons): ``;`` wins on the four
    numbers a row it reads, against one (the ``0`` after the last comma) for ``,``."""
    p = _file(
        tmp_path, "".join(f"2024-01-02 09:3{i};4500,25;4501,5;4499,75;4500,0\n" for i in range(3))
    )
    assert sniff_csv(p) == CsvDialect(";", False, True, ("timestamp", *PRICES))


def test_a_tie_goes_to_the_earlier_delimiter(tmp_path: Path) -> None:
    """Tab and pipe both give 4 fields with one number: tab comes first in DELIMITERS."""
    p = _file(tmp_path, "1\t2|3\t4|5\t6|7\n" * 3)
    assert sniff_csv(p) == CsvDialect("\t")


def test_a_comma_file_is_never_decimal_comma(tmp_path: Path) -> None:
    """A quoted ``"1,234"`` (a thousands separator) among whole prices stays text to be refused,
    not read as 1.234."""
    rows = "".join(f'2024-01-02 09:3{i},4500,4501,4499,4500,"1,234"\n' for i in range(3))
    assert sniff_csv(_file(tmp_path, "ts,open,high,low,close,volume\n" + rows)) == CsvDialect()


def test_scan_csv_text_reads_text_and_the_numeric_columns_as_floats(tmp_path: Path) -> None:
    for path in _containers(tmp_path, BODY.encode()):
        df = scan_csv_text(path, CsvDialect(), numeric=PRICES).collect()
        assert df.schema == pl.Schema(
            {"ts": pl.String, **dict.fromkeys(PRICES, pl.Float64), "volume": pl.String}
        ), path
        assert df.row(0) == ("2024-01-02 09:30", 1.5, 2.5, 1.0, 2.0, "10"), path
        df = scan_csv_text(path, CsvDialect()).collect()
        assert df.schema == pl.Schema(dict.fromkeys(df.columns, pl.String)), path
        assert df.row(0) == ("2024-01-02 09:30", "1.5", "2.5", "1.0", "2.0", "10"), path


def test_scan_csv_text_leaves_decimal_commas_as_text(tmp_path: Path) -> None:
    data = b"ts;open;high;low;close\n2024-01-02 09:30;4500,25;4501,5;4499,75;4500,0\n"
    for path in _containers(tmp_path, data):
        df = scan_csv_text(path, CsvDialect(";", True, True), numeric=PRICES).collect()
        assert df.row(0) == ("2024-01-02 09:30", "4500,25", "4501,5", "4499,75", "4500,0"), path


# --- clocks written in digits (Portara's headerless 20240102,0930,...), session 39 ---------

_PRICES = ["4700.25", "4701.5", "4699.75", "4700.5"]


def _portara(*rows: tuple[str, str], fields: int = 7) -> list[list[str]]:
    """Rows of date, clock, four prices and a volume, cut to ``fields``."""
    return [[date, clock, *_PRICES, "120"][:fields] for date, clock in rows]


@pytest.mark.parametrize("fields", [6, 7])
def test_a_date_seen_with_two_clocks_is_a_digit_clock(fields: int) -> None:
    """Six fields (no volume) are enough; two clocks on one date are enough."""
    rows = _portara(("20240102", "0930"), ("20240102", "0931"), fields=fields)
    assert _digit_clocks(rows)
    assert headerless_names(rows[0], rows)[:2] == ("date", "time")


def test_rows_under_six_fields_are_not_digit_clocks() -> None:
    assert not _digit_clocks(_portara(("20240102", "0930"), ("20240102", "0931"), fields=5))


def test_a_daily_file_whose_dates_do_not_repeat_has_no_digit_clock() -> None:
    """20240102,930,... with one row per date: 930 is the open, not a clock, even though the
    second fields differ from row to row."""
    rows = _portara(("20240102", "930"), ("20240103", "931"), ("20240104", "929"))
    assert not _digit_clocks(rows)
    assert headerless_names(rows[0], rows)[:2] == ("timestamp", "open")


@pytest.mark.parametrize(
    "odd",
    [("2024-01-02", "0931"), ("20240102", "09h31"), ("x", "0931")],
    ids=["date-with-dashes", "clock-not-digits", "no-date"],
)
def test_one_row_without_an_8_digit_date_and_a_digit_clock_rules_it_out(
    odd: tuple[str, str],
) -> None:
    rows = _portara(("20240102", "0930"), ("20240102", "0932"), odd)
    assert not _digit_clocks(rows)


def test_a_single_field_row_is_named_timestamp() -> None:
    assert headerless_names(["20240102"]) == ("timestamp",)
    assert headerless_names(["20240102", "4700"]) == ("timestamp", "open")
