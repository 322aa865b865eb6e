"""The CSV dialect module's details, pinned where `make mutate csv_dialect` found them untested:
text decoding in every container (BOM dropped, bad bytes replaced), headerless column names,
the description, and where the sniffer gives up."""

from __future__ import annotations

import gzip
import logging
import zipfile
from pathlib import Path

import pytest

from foxhunt.data.read.csv_dialect import (
    CsvDialect,
    header_names,
    headerless_names,
    open_text,
    sniff_csv,
)
from foxhunt.data.read.encoding import HEAD_BYTES
from foxhunt.errors import DataError

BODY = "ts,open,high,low,close,volume\n2024-01-02 09:30,1.5,2.5,1.0,2.0,10\n"


def _containers(tmp_path: Path, data: bytes) -> list[Path]:
    plain = tmp_path / "bars.csv"
    plain.write_bytes(data)
    gz = tmp_path / "bars.csv.gz"
    gz.write_bytes(gzip.compress(data))
    archive = tmp_path / "bars.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("bars.csv", data)
    return [plain, gz, archive / "bars.csv"]


def test_a_byte_order_mark_is_dropped_in_every_container(tmp_path: Path) -> None:
    for path in _containers(tmp_path, b"\xef\xbb\xbf" + BODY.encode()):
        with open_text(path) as f:
            assert f.readline() == "ts,open,high,low,close,volume\n", path
        assert header_names(path, sniff_csv(path))[0] == "ts", path


def test_bytes_that_are_not_utf8_are_read_as_windows_1252_not_fatal(tmp_path: Path) -> None:
    data = BODY.replace("ts,", "t\xe9s,").encode("latin-1")  # é as one latin-1 byte
    for path in _containers(tmp_path, data):
        with open_text(path) as f:
            assert f.readline().startswith("t\xe9s,"), path


def test_a_damaged_byte_in_utf8_text_is_replaced_not_fatal(tmp_path: Path) -> None:
    rows = BODY.split("\n", 1)[1] * (HEAD_BYTES // 30)  # the bad byte past the judged head
    data = (BODY.replace("ts,", "t\u00e9s,") + rows).encode() + b"\xff\n"  # UTF-8, one bad byte
    for path in _containers(tmp_path, data):
        with open_text(path) as f:
            text = f.read()
        assert text.startswith("t\u00e9s,") and text.endswith("\ufffd\n"), path


def test_carriage_returns_are_kept_for_the_csv_reader(tmp_path: Path) -> None:
    """Plain files and zip members are opened with newline="" (what the csv module needs:
    a line break inside a quoted field stays in the field)."""
    data = b'ts,note\r\n2024-01-02,"a\r\nb"\r\n'
    plain, _, member = _containers(tmp_path, data)
    for path in (plain, member):
        with open_text(path) as f:
            assert f.read() == data.decode(), path


def test_a_missing_zip_member_or_a_broken_gzip_is_a_data_error(tmp_path: Path) -> None:
    _, gz, member = _containers(tmp_path, BODY.encode())
    with pytest.raises(DataError, match="cannot read"):
        sniff_csv(member.parent / "other.csv")
    gz.write_bytes(b"not gzip at all")
    with pytest.raises(DataError, match="holds text .a CSV.., though its name says gzip"):
        sniff_csv(gz)
    gz.write_bytes(b"\x1f\x8b\x08 cut short")  # a gzip's first bytes, then no more
    with pytest.raises(DataError, match="cannot read"):
        sniff_csv(gz)


def test_blank_lines_are_skipped_and_an_empty_file_refused(tmp_path: Path) -> None:
    p = tmp_path / "bars.csv"
    p.write_text("\n\n" + BODY)
    assert header_names(p, sniff_csv(p)) == ["ts", "open", "high", "low", "close", "volume"]
    p.write_text("\n \n")
    with pytest.raises(DataError, match="empty file"):
        sniff_csv(p)


@pytest.mark.parametrize(
    ("first", "names"),
    [
        (["2024.01.02", "09:30", "1", "2", "0.5", "1.5", "7"], ("date", "time", "open", "high", "low", "close", "volume")),
        (["2024.01.02", "9:30:00.5", "1", "2", "0.5", "1.5"], ("date", "time", "open", "high", "low", "close")),
        (["2024-01-02 09:30", "1", "2", "0.5", "1.5", "7"], ("timestamp", "open", "high", "low", "close", "volume")),
        (["2024-01-02 09:30", "1", "2", "0.5", "1.5", "7", "3", "4"], ("timestamp", "open", "high", "low", "close", "volume", "column_7", "column_8")),
        (["2024.01.02", "09:30", "1", "2", "0.5"], ("timestamp", "open", "high", "low", "close")),
        (["2024.01.02", "0930", "1", "2", "0.5", "1.5"], ("timestamp", "open", "high", "low", "close", "volume")),
    ],
)  # fmt: skip
def test_headerless_names_follow_the_first_row(first: list[str], names: tuple[str, ...]) -> None:
    assert headerless_names(first) == names


def test_describe_says_what_was_guessed() -> None:
    assert CsvDialect().describe() == "delimiter ',', header"
    assert CsvDialect(";", False, True).describe() == "delimiter ';', no header, decimal comma"


def test_a_headerless_semicolon_file_is_named_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    p = tmp_path / "bars.csv"
    p.write_text("".join(f"2024.01.02;09:3{i};1;2;0.5;1.5;7\n" for i in range(3)))
    with caplog.at_level(logging.INFO):
        d = sniff_csv(p)
    assert d == CsvDialect(";", False, False, headerless_names(["", "09:30", "", "", "", "", ""]))
    assert header_names(p, d) == list(d.names or ())
    assert "CSV read with delimiter ';', no header (guessed from the first lines)" in caplog.text


def test_a_plain_comma_file_is_not_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    p = tmp_path / "bars.csv"
    p.write_text(BODY)
    with caplog.at_level(logging.INFO):
        assert sniff_csv(p) == CsvDialect()
    assert "guessed" not in caplog.text


@pytest.mark.parametrize(
    "text",
    [
        "a;b;c\n1;2;3\n4;5;6\n",  # three fields: no delimiter gives four or more
        # ragged: the commonest width (4) in 3 of 5 body rows, under nine in ten
        "a;b;c;d\n" + "1;2;3;4\n" * 3 + "1;2;3;4;5\n" * 2,
    ],
)
def test_no_fitting_delimiter_falls_back_to_comma_with_a_header(tmp_path: Path, text: str) -> None:
    p = tmp_path / "bars.csv"
    p.write_text(text)
    assert sniff_csv(p) == CsvDialect()


def test_nine_rows_in_ten_of_one_width_are_enough(tmp_path: Path) -> None:
    p = tmp_path / "bars.csv"
    p.write_text("a;b;c;d\n" + "1;2;3;4\n" * 9 + "1;2;3;4;5\n")
    assert sniff_csv(p).delimiter == ";"


def test_a_first_row_of_four_numbers_is_data_not_a_header(tmp_path: Path) -> None:
    p = tmp_path / "bars.csv"
    p.write_text("".join(f"2024-01-02 09:3{i},1.5,2.5,1.0,2.0\n" for i in range(3)))
    d = sniff_csv(p)
    assert not d.has_header and d.names == ("timestamp", "open", "high", "low", "close")


def test_a_row_with_an_extra_field_is_refused_not_truncated(tmp_path: Path) -> None:
    from foxhunt.data.read.bars import read_bars

    p = tmp_path / "bars.csv"
    rows = [f"2024-01-02 15:3{i}:00,1.5,2.5,1.0,2.0,10\n" for i in range(6)]  # NYSE hours, UTC
    p.write_text("ts,open,high,low,close,volume\n" + "".join(rows))
    assert read_bars(p).height == 6
    rows[3] = rows[3].rstrip("\n") + ",99\n"
    p.write_text("ts,open,high,low,close,volume\n" + "".join(rows))
    with pytest.raises(DataError, match="line 5: 7 fields where the table has 6"):
        read_bars(p)
