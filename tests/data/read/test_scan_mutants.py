"""scan_table's refusals and its numeric columns; first_line of messages with and without text."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.scan import first_line, scan_table
from foxhunt.errors import DataError

CSV = "ts,open,close\n" + "".join(f"2024-01-0{d} 00:00,1.{d},2.{d}\n" for d in range(1, 6))


def test_first_line_of_a_message_is_its_first_stripped_line() -> None:
    assert first_line(ValueError("\n  boom here\nmore detail\n")) == "boom here"


@pytest.mark.parametrize("message", ["", "  \n \n"])
def test_first_line_without_text_is_the_exception_type(message: str) -> None:
    assert first_line(ValueError(message)) == "ValueError"


def test_empty_parquet_is_refused_as_empty(tmp_path: Path) -> None:
    p = tmp_path / "ES.parquet"
    p.write_bytes(b"")
    with pytest.raises(DataError) as excinfo:
        scan_table(p)
    assert str(excinfo.value) == f"{p}: empty file (no bars)"


def test_unknown_kind_is_refused_with_its_suffix(tmp_path: Path) -> None:
    p = tmp_path / "ES.numbers"
    p.write_bytes(b"x")
    with pytest.raises(DataError) as excinfo:
        scan_table(p)
    assert str(excinfo.value) == f"{p}: unsupported file type '.numbers'"


def test_numeric_columns_are_chosen_from_the_header_and_read_as_float(tmp_path: Path) -> None:
    p = tmp_path / "ES.csv"
    p.write_text(CSV)
    seen: list[list[str]] = []

    def numeric(names: list[str]) -> tuple[str, ...]:
        seen.append(list(names))
        return tuple(n for n in names if n != "ts")

    scanned = scan_table(p, numeric)
    assert seen == [["ts", "open", "close"]]
    assert dict(scanned.lf.collect_schema()) == {
        "ts": pl.String,
        "open": pl.Float64,
        "close": pl.Float64,
    }
    assert scanned.lf.collect()["close"].to_list() == [2.1, 2.2, 2.3, 2.4, 2.5]


def test_without_numeric_every_csv_column_is_text(tmp_path: Path) -> None:
    p = tmp_path / "ES.csv"
    p.write_text(CSV)
    schema = scan_table(p).lf.collect_schema()
    assert dict(schema) == {"ts": pl.String, "open": pl.String, "close": pl.String}


def test_a_failure_while_opening_is_named_by_its_first_line(tmp_path: Path) -> None:
    p = tmp_path / "ES.csv"
    p.write_text(CSV)

    def numeric(names: list[str]) -> tuple[str, ...]:
        raise RuntimeError("column trouble\nsecond line")

    with pytest.raises(DataError) as excinfo:
        scan_table(p, numeric)
    assert str(excinfo.value) == f"{p}: cannot read (column trouble)"
