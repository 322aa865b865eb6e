"""Row estimates of the edge cases: files without a newline, DBN sizes, compressed DBN, folders
mixing every kind, and gzip counted line by line (its size field is not the whole size)."""

from __future__ import annotations

import gzip
import logging
import struct
import zipfile
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.row_count import DBN_OHLCV_RECORD, estimate_file_rows, estimate_rows
from foxhunt.errors import DataError


def test_text_without_newline_counts_one_row(tmp_path: Path) -> None:
    (tmp_path / "ES.csv").write_bytes(b"ts,open,high,low,close")
    assert estimate_rows(tmp_path / "ES.csv") == 1


def test_empty_text_file_counts_no_rows(tmp_path: Path) -> None:
    (tmp_path / "ES.csv").write_bytes(b"")
    assert estimate_rows(tmp_path / "ES.csv") == 0


def test_one_newline_scales_the_size_by_the_line_length(tmp_path: Path) -> None:
    (tmp_path / "ES.csv").write_bytes(b"a,b\n1,2")  # 7 bytes over a 4-byte line
    assert estimate_rows(tmp_path / "ES.csv") == 2


def test_dbn_counts_whole_records_of_its_size(tmp_path: Path) -> None:
    (tmp_path / "ES.dbn").write_bytes(b"\x00" * (2 * DBN_OHLCV_RECORD + 20))
    got = estimate_rows(tmp_path / "ES.dbn")
    assert got == 2
    assert isinstance(got, int)


def test_compressed_dbn_counts_no_rows_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    p = tmp_path / "ES.dbn.zst"
    p.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 100)
    with caplog.at_level(logging.INFO, logger="foxhunt.data.read.row_count"):
        assert estimate_rows(p) == 0
    assert [r.getMessage() for r in caplog.records] == [
        f"{p}: compressed DBN, its bars not counted in the memory plan"
    ]


def test_folder_of_every_kind_sums_its_files(tmp_path: Path) -> None:
    pl.DataFrame({"close": [1.0, 2.0, 3.0]}).write_parquet(tmp_path / "a.parquet")
    (tmp_path / "b.csv").write_bytes(b"ts,close\n1,2\n3,4\n")
    (tmp_path / "c.csv.gz").write_bytes(gzip.compress(b"ts,close\n1,2\n"))
    (tmp_path / "d.dbn").write_bytes(b"\x00" * (4 * DBN_OHLCV_RECORD))
    (tmp_path / "e.dbn.zst").write_bytes(b"\x00" * 64)
    with zipfile.ZipFile(tmp_path / "f.zip", "w") as z:
        z.writestr("f.csv", "ts,close\n1,2\n3,4\n5,6\n")
    assert estimate_file_rows(tmp_path) == [3, 3, 2, 4, 0, 4]
    assert estimate_rows(tmp_path) == 16


def test_gzip_is_counted_not_sized_and_a_damaged_one_refused(tmp_path: Path) -> None:
    """gzip's size field holds its last member's size only (modulo 4 GiB): two members
    appended (daily logs) were estimated at half their lines, a false trailer at millions. The
    lines are counted; a trailer that does not match is refused, as the read refuses it."""
    p = tmp_path / "ES.csv.gz"
    p.write_bytes(gzip.compress(b"1234567\n" * 10_000) + gzip.compress(b"1234567\n" * 30_000))
    assert estimate_rows(p) == 40_000
    blob = gzip.compress(b"1234567\n" * 10_000)
    p.write_bytes(blob[:-4] + struct.pack("<I", 3_000_000_000))
    with pytest.raises(DataError, match=r"ES.csv.gz: cannot read \("):
        estimate_rows(p)
