"""files.py where `make mutate` (session 50) found it loose: which names the "not read"
warnings leave out (vendor metadata, notes, hidden files, compressed members that are read),
how many names a message shows, the hive-partition hint, and JSON read alone."""

from __future__ import annotations

import logging
import zipfile
from pathlib import Path

import pytest

from foxhunt.data.read.files import _NAMES, resolve_table_paths
from foxhunt.errors import DataError


def _zip(path: Path, members: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name in members:
            z.writestr(name, "x")
    return path


def _touch(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text("x")
    return folder


def test_a_zip_warns_of_none_of_what_it_reads_or_what_is_never_bars(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Read members (a compressed CSV too), a vendor's metadata, notes and a readme are not
    named as unread; macOS's folder is skipped whatever its files are called."""
    archive = _zip(
        tmp_path / "bars.zip",
        ["ES.csv.gz", "metadata.json", "readme.json", "notes.pdf", "__MACOSX/NQ.csv"],
    )
    with caplog.at_level(logging.WARNING):
        assert resolve_table_paths(archive) == [archive / "ES.csv.gz"]
    assert caplog.messages == []


def test_a_zip_skips_a_readme_among_its_csv_members(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "bars.zip", ["ES.csv", "README.csv", "License.csv"])
    assert resolve_table_paths(archive) == [archive / "ES.csv"]


def test_a_zip_names_five_unread_files_then_says_there_are_more(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    five = _zip(tmp_path / "five.zip", ["ES.csv", *(f"p{i}.parquet" for i in range(5))])
    with caplog.at_level(logging.WARNING):
        resolve_table_paths(five)
    assert "5 files not read: p0.parquet, p1.parquet, p2.parquet, p3.parquet, p4.parquet;" in (
        caplog.text
    )
    caplog.clear()
    six = _zip(tmp_path / "six.zip", ["ES.csv", *(f"p{i}.parquet" for i in range(6))])
    with caplog.at_level(logging.WARNING):
        resolve_table_paths(six)
    assert (
        "6 files not read: p0.parquet, p1.parquet, p2.parquet, p3.parquet, p4.parquet, ...;"
        in caplog.text
    )


def test_a_directory_warns_only_of_files_it_does_not_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Bars of two kinds and a subfolder without bars: nothing is named as unread."""
    folder = _touch(tmp_path / "d", "ES.parquet", "NQ.csv")
    (folder / "empty").mkdir()
    with caplog.at_level(logging.WARNING):
        assert resolve_table_paths(folder) == [folder / "ES.parquet", folder / "NQ.csv"]
    assert caplog.messages == []


def test_json_alone_is_read_without_the_beside_other_bars_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = _touch(tmp_path / "d", "ES.json", "NQ.json")
    with caplog.at_level(logging.WARNING):
        assert resolve_table_paths(folder) == [folder / "ES.json", folder / "NQ.json"]
    assert caplog.messages == []
    _touch(folder, "ES.csv")
    with caplog.at_level(logging.WARNING):
        assert resolve_table_paths(folder) == [folder / "ES.csv"]
    assert "JSON beside other bar files is not read as bars" in caplog.text


def test_the_json_warning_names_five_then_says_there_are_more(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = _touch(tmp_path / "d", "ES.csv", *(f"m{i}.json" for i in range(6)))
    with caplog.at_level(logging.WARNING):
        resolve_table_paths(folder)
    shown = ", ".join(str(folder / f"m{i}.json") for i in range(5))
    assert caplog.messages[0].startswith(f"{shown}, ...: JSON beside other bar files")


def test_subfolders_with_bars_are_named_hidden_ones_not(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = _touch(tmp_path / "d", "ES.csv")
    for sub in ("a", "b", "c", "d", "e", "f", ".cache"):
        _touch(folder / sub, "NQ.csv")
    with caplog.at_level(logging.WARNING):
        resolve_table_paths(folder)
    assert caplog.messages == [
        f"{folder}: subfolders not read (a directory is read without them): a, b, c, d, e, ...; "
        f"the glob '{folder}/**/*' reads them too"
    ]


@pytest.mark.parametrize(
    ("subfolders", "shown"), [(["symbol=ES", "symbol=NQ", "symbol=YM"], "symbol=ES, symbol=NQ, "
    "symbol=YM"), (["s=A", "s=B", "s=C", "s=D"], "s=A, s=B, s=C, ...")],
)  # fmt: skip
def test_a_directory_of_partitions_is_refused_with_the_glob_that_reads_them(
    tmp_path: Path, subfolders: list[str], shown: str
) -> None:
    folder = tmp_path / "dataset"
    for sub in subfolders:
        _touch(folder / sub, "part-0.parquet")
    _touch(folder / ".git", "index.csv")  # hidden: never named
    _touch(folder, "notes.md")  # a file, not a subfolder
    with pytest.raises(DataError) as refused:
        resolve_table_paths(folder)
    assert str(refused.value) == (
        f"{folder}: directory holds no {_NAMES} file; its subfolders ({shown}) hold bars: the "
        f"glob '{folder}/**/*' reads them (each takes its folder's symbol, symbol=ES gives ES)"
    )


def test_a_directory_without_bars_anywhere_gets_no_partition_hint(tmp_path: Path) -> None:
    folder = _touch(tmp_path / "dataset", "notes.md")
    _touch(folder / "docs", "readme.md")
    with pytest.raises(DataError) as refused:
        resolve_table_paths(folder)
    assert str(refused.value) == f"{folder}: directory holds no {_NAMES} file"
