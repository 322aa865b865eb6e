"""``data/read/magic.py``: which first bytes contradict a file's name, and which do not."""

from __future__ import annotations

from pathlib import Path

import pytest

from foxhunt.data.read.magic import MAGICS, holds, mislabelled

TEXT = b"ts,open,high,low,close\n2024-01-02T09:30:00Z,1,2,0.5,1.5\n"


def test_every_magic_is_named_and_text_is_not() -> None:
    for magic, what, todo in MAGICS:
        assert holds(magic + b"rest") == (what, todo)
    assert holds(TEXT) is None
    assert holds(b"") is None


def test_a_container_is_not_refused_under_its_own_name() -> None:
    assert mislabelled(Path("a.parquet"), b"PAR1xxxx", "parquet") is None
    assert mislabelled(Path("a.zip"), b"PK\x03\x04xxxx", "a zip archive") is None
    assert mislabelled(Path("a.csv.gz"), b"\x1f\x8bxxxx", "gzip-compressed data") is None


def test_text_under_a_text_name_passes_and_a_container_does_not() -> None:
    assert mislabelled(Path("a.csv"), TEXT, "a text table") is None
    wrong = mislabelled(Path("a.csv"), b"PAR1" + TEXT, "a text table")
    assert str(wrong) == (
        "a.csv: the file holds a parquet file, though its name says a text table: name it .parquet"
    )


@pytest.mark.parametrize(
    ("head", "why"),
    [
        (b"", "an empty file is left to the reader's own message"),
        (b"\x01\x02\x00\x03" * 8, "unknown binary (a NUL in the first 512 bytes) is not text"),
    ],
)
def test_no_verdict_where_the_bytes_say_nothing(head: bytes, why: str) -> None:
    assert mislabelled(Path("a.parquet"), head, "parquet") is None, why


def test_text_named_for_a_container_is_named_text() -> None:
    wrong = mislabelled(Path("a.parquet"), TEXT, "parquet")
    assert str(wrong) == (
        "a.parquet: the file holds text (a CSV?), though its name says parquet: name it .csv"
    )


def test_only_the_first_512_bytes_are_searched_for_a_nul() -> None:
    """Callers read 512 bytes (HEAD_BYTES more in encoding.py): a NUL past them is not seen."""
    assert mislabelled(Path("a.parquet"), b"a" * 511 + b"\x00", "parquet") is None
    assert mislabelled(Path("a.parquet"), b"a" * 512 + b"\x00", "parquet") is not None


def _tar(path: Path, compression: str = "") -> Path:
    """A tar archive of one bar file, as ``tar -czf`` writes it."""
    import io
    import tarfile

    with tarfile.open(path, f"w:{compression}") as tar:
        info = tarfile.TarInfo("AAPL.csv")
        info.size = len(TEXT)
        tar.addfile(info, io.BytesIO(TEXT))
    return path


@pytest.mark.parametrize(
    ("name", "compression"), [("AAPL.csv.gz", "gz"), ("AAPL.csv", ""), ("AAPL.csv.bz2", "bz2")]
)
def test_a_tar_archive_under_a_text_name_is_refused_saying_extract_it(
    tmp_path: Path, name: str, compression: str
) -> None:
    """A ``tar -czf`` saved as ``.csv.gz`` was read as text: the first member's header block
    became a column name (``AAPL.csv 0000644 ...``), refused as missing 'ts'."""
    from foxhunt.data.read.bars import read_bars
    from foxhunt.errors import DataError

    path = _tar(tmp_path / name, compression)
    with pytest.raises(DataError) as e:
        read_bars(path)
    assert str(e.value) == (
        f"{path}: the file holds a tar archive, though its name says a text table: extract it "
        "(tar -xf FILE) and pass the folder of its files"
    )


@pytest.mark.parametrize("name", ["stocks.tar.gz", "stocks.tgz", "stocks.tar"])
def test_a_tar_archive_by_name_is_refused_saying_extract_it(tmp_path: Path, name: str) -> None:
    from foxhunt.data.read.bars import read_bars
    from foxhunt.errors import DataError

    path = _tar(tmp_path / name, "gz" if "gz" in name else "")
    with pytest.raises(
        DataError, match=r": a tar archive is not read; extract it \(tar -xf FILE\)"
    ):
        read_bars(path)
