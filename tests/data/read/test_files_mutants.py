"""files.py pinned where `make mutate` found it loose: zip archives (macOS resource forks and
non-table members left out, the three refusals word for word), which paths are readable, the
parquet suffixes in either case, and how a parquet table is written (zstd, with statistics)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from foxhunt.data.read.files import (
    is_parquet,
    is_readable,
    resolve_table_paths,
    table_kind,
    write_table,
    zip_member,
)
from foxhunt.errors import DataError, InputError


def _zip(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, text in members.items():
            z.writestr(name, text)
    return path


def test_a_zip_gives_its_tables_without_resource_forks_or_other_files(tmp_path: Path) -> None:
    archive = _zip(
        tmp_path / "bars.zip",
        {"b.csv": "x", "a.csv": "x", "__MACOSX/._a.csv": "x", "notes.md": "x", "c.txt": "x"},
    )
    # .txt beside .csv in an archive is notes; a resource fork or a .md is never a table
    assert resolve_table_paths(archive) == [archive / "a.csv", archive / "b.csv"]
    only_forks = _zip(tmp_path / "forks.zip", {"__MACOSX/._a.csv": "x", "data.json": "x"})
    with pytest.raises(DataError) as refused:
        resolve_table_paths(only_forks)
    assert str(refused.value) == f"{only_forks}: the zip archive holds no .csv, .tsv or .txt file"
    lower = _zip(tmp_path / "lower.zip", {"__macosx/a.csv": "x"})  # not macOS's spelling
    assert resolve_table_paths(lower) == [lower / "__macosx/a.csv"]


def test_a_damaged_zip_and_a_missing_member_are_refused_word_for_word(tmp_path: Path) -> None:
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip at all")
    with pytest.raises(DataError) as refused:
        resolve_table_paths(bad)
    assert str(refused.value) == (
        f"{bad}: the file holds text (a CSV?), though its name says a zip archive: name it .csv"
    )
    bad.write_bytes(b"PK\x03\x04 cut short")  # a zip's first bytes, then no more
    with pytest.raises(DataError) as refused:
        resolve_table_paths(bad)
    assert str(refused.value) == f"{bad}: cannot read the zip archive (File is not a zip file)"
    archive = _zip(tmp_path / "bars.zip", {"a.csv": "x"})
    with pytest.raises(DataError) as refused:
        resolve_table_paths(archive / "b.csv")
    assert str(refused.value) == f"{archive}: the zip archive holds no file 'b.csv'"
    assert resolve_table_paths(archive / "a.csv") == [archive / "a.csv"]


def test_readable_paths_are_files_and_members_of_existing_archives(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "bars.zip", {"a.csv": "x"})
    assert is_readable(archive) and is_readable(archive / "a.csv")
    assert zip_member(archive / "a.csv") == (archive, "a.csv")
    assert zip_member(archive / "dir" / "a.csv") == (archive, "dir/a.csv")
    assert not is_readable(tmp_path / "missing.csv")
    assert not is_readable(tmp_path / "missing.zip" / "a.csv")
    assert zip_member(tmp_path / "missing.zip" / "a.csv") is None
    folder = tmp_path / "folder.zip"  # a directory that is named like an archive
    folder.mkdir()
    (folder / "a.csv").write_text("x")
    assert zip_member(folder / "a.csv") is None and is_readable(folder / "a.csv")
    plain = tmp_path / "plain"
    plain.write_text("x")  # a file that is not named .zip is no archive
    assert zip_member(plain / "a.csv") is None


@pytest.mark.parametrize("name", ["x.parquet", "x.PARQUET", "x.pq", "x.PQ"])
def test_parquet_suffixes_in_either_case(name: str) -> None:
    assert is_parquet(Path(name)) and table_kind(Path(name)) == "parquet"


def test_csv_and_other_names_are_not_parquet() -> None:
    assert not is_parquet(Path("x.csv")) and table_kind(Path("x.h5")) is None


def test_parquet_is_written_zstd_with_statistics(tmp_path: Path) -> None:
    df = pl.DataFrame({"a": [3, 1, 2]})
    write_table(df, tmp_path / "x.pq")
    meta = pq.ParquetFile(tmp_path / "x.pq").metadata
    column = meta.row_group(0).column(0)
    assert column.compression == "ZSTD"
    assert column.statistics is not None and column.statistics.has_min_max
    assert (column.statistics.min, column.statistics.max) == (1, 3)
    assert pl.read_parquet(tmp_path / "x.pq").equals(df)


def test_an_output_without_suffix_is_refused_naming_none(tmp_path: Path) -> None:
    df = pl.DataFrame({"a": [1]})
    with pytest.raises(InputError) as refused:
        write_table(df, tmp_path / "out")
    assert (
        str(refused.value)
        == f"{tmp_path / 'out'}: output must end in .parquet or .csv, not '(none)'"
    )
    with pytest.raises(InputError) as refused:
        write_table(df, tmp_path / "out.JSON")
    assert (
        str(refused.value)
        == f"{tmp_path / 'out.JSON'}: output must end in .parquet or .csv, not '.json'"
    )
