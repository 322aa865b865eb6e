"""Row estimates of the edge cases: files without a newline, DBN sizes, compressed DBN, folders
mixing every kind, and gzip's unsigned ISIZE trailer."""

from __future__ import annotations

import gzip
import logging
import struct
import zipfile
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.row_count import DBN_OHLCV_RECORD, estimate_file_rows, estimate_rows


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


def test_gzip_size_past_two_gib_is_read_unsigned(tmp_path: Path) -> None:
    # 80 kB of 8-byte lines (more than the sample, so the trailer is not checked), with an
    # ISIZE trailer of 3e9 bytes: a file of > 2 GiB uncompressed.
    blob = gzip.compress(b"1234567\n" * 10_000)
    p = tmp_path / "ES.csv.gz"
    p.write_bytes(blob[:-4] + struct.pack("<I", 3_000_000_000))
    assert estimate_rows(p) == 375_000_000
