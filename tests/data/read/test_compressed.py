"""Compressed delimited text (``foxhunt.data.read.compressed``): ``.csv`` in bzip2, xz and zstd
reads as the plain file does; a name that says one compression over other bytes is refused
naming what they are; a stream cut short is refused, not read to where it stops."""

from __future__ import annotations

import bz2
import gzip
import lzma
import zipfile
from pathlib import Path

import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.compressed import codec_of, uncompressed_name
from foxhunt.data.read.files import resolve_table_paths
from foxhunt.data.read.row_count import estimate_rows
from foxhunt.errors import DataError

FIXTURES = Path(__file__).parents[1] / "fixtures"
BTC = FIXTURES / "real" / "btc-perp-20211231-20220201_1m.csv.gz"
DATABENTO = FIXTURES / "synthetic" / "glbx-mdp3-20240107.ohlcv-1m.csv"


def _zstd(data: bytes) -> bytes:
    return pa.compress(data, codec="zstd", asbytes=True)


def _zstd_file(path: Path, data: bytes) -> None:
    with pa.output_stream(str(path), compression="zstd") as f:  # a whole zstd frame, as zstd writes
        f.write(data)


COMPRESS = {".bz2": bz2.compress, ".xz": lzma.compress}


@pytest.fixture(scope="module")
def btc_text() -> bytes:
    return gzip.decompress(BTC.read_bytes())


@pytest.mark.parametrize("end", [".csv.bz2", ".csv.xz", ".csv.zst", ".txt.zst", ".tsv.bz2"])
def test_each_compression_reads_the_bars_of_the_plain_file(
    tmp_path: Path, btc_text: bytes, end: str
) -> None:
    """The real BTC one-minute fixture, compressed: the same bars as its plain text."""
    plain = tmp_path / "BTCUSDT.csv"
    plain.write_bytes(btc_text)
    packed = tmp_path / f"BTCUSDT{end}"
    if end.endswith(".zst"):
        _zstd_file(packed, btc_text)
    else:
        packed.write_bytes(COMPRESS[end[4:]](btc_text))
    expected = read_bars(plain)
    assert expected.height == 6000
    assert_frame_equal(read_bars(packed), expected)
    assert estimate_rows(packed) == 6001  # the header and 6,000 bars, counted as it decompresses
    if end == ".csv.bz2":  # a last line without its newline still counts
        packed.write_bytes(bz2.compress(btc_text.rstrip(b"\n")))
        assert estimate_rows(packed) == 6001


def test_a_databento_csv_download_in_zstd_reads_as_its_plain_file(tmp_path: Path) -> None:
    """Databento's batch downloads of CSV are zstd by default (``*.ohlcv-1m.csv.zst``): was
    'unsupported file type'."""
    packed = tmp_path / f"{DATABENTO.name}.zst"
    _zstd_file(packed, DATABENTO.read_bytes())
    bars = read_bars(packed, min_bars=1)
    assert_frame_equal(bars, read_bars(DATABENTO, min_bars=1))
    assert bars["symbol"].unique().to_list() == ["ESH4"]


def test_a_compressed_member_of_a_zip_and_a_symbol_from_a_compressed_name(
    tmp_path: Path, btc_text: bytes
) -> None:
    plain, packed = tmp_path / "plain.zip", tmp_path / "packed.zip"
    with zipfile.ZipFile(plain, "w") as z:
        z.writestr("BTCUSDT_2022-01.csv", btc_text)
    with zipfile.ZipFile(packed, "w") as z:  # monthly files compressed, then zipped together
        z.writestr("BTCUSDT_2022-01.csv.bz2", bz2.compress(btc_text))
    assert_frame_equal(read_bars(packed), read_bars(plain))
    assert estimate_rows(packed) == 6001
    named = tmp_path / "ETHUSD.csv.xz"  # no symbol column: the name's, without .csv.xz
    named.write_bytes(lzma.compress(btc_text))
    assert read_bars(named)["symbol"].unique().to_list() == ["ETHUSD"]


def test_a_folder_reads_its_compressed_files_beside_the_plain_ones(
    tmp_path: Path, btc_text: bytes
) -> None:
    (tmp_path / "BTCUSDT.csv").write_bytes(btc_text)
    (tmp_path / "ETHUSDT.csv.bz2").write_bytes(bz2.compress(btc_text))
    _zstd_file(tmp_path / "SOLUSDT.csv.zst", btc_text)
    names = ["BTCUSDT.csv", "ETHUSDT.csv.bz2", "SOLUSDT.csv.zst"]
    assert [p.name for p in resolve_table_paths(tmp_path)] == names
    bars = read_bars(tmp_path)
    assert bars.group_by("symbol").len().sort("symbol").rows() == [
        ("BTCUSDT", 6000),
        ("ETHUSDT", 6000),
        ("SOLUSDT", 6000),
    ]


def test_a_name_that_says_one_compression_over_other_bytes_is_refused_naming_them(
    tmp_path: Path, btc_text: bytes
) -> None:
    cases = {
        "a.csv.zst": (btc_text, "text (a CSV?), though its name says zstd-compressed data"),
        "b.csv.xz": (
            bz2.compress(btc_text),
            "bzip2-compressed data, though its name says xz-compressed data: name it .csv.bz2",
        ),
        "c.csv": (_zstd(btc_text), "zstd-compressed data, though its name says a text table"),
        "d.csv": (lzma.compress(btc_text), "xz-compressed data, though its name says a text"),
    }
    for name, (data, said) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(DataError) as refused:
            read_bars(tmp_path / name)
        assert str(refused.value).startswith(f"{tmp_path / name}: the file holds {said}"), name
    (tmp_path / "e.csv.bz2").write_bytes(b"\x00\x01binary, no container")
    with pytest.raises(DataError, match=r"e.csv.bz2: not bzip2-compressed data$"):
        read_bars(tmp_path / "e.csv.bz2")


@pytest.mark.parametrize("end", [".csv.bz2", ".csv.xz", ".csv.zst"])
def test_a_stream_cut_short_is_refused_not_read_to_where_it_stops(
    tmp_path: Path, btc_text: bytes, end: str
) -> None:
    """A download cut off: the first 64 KiB decompress, the rest does not."""
    whole = _zstd(btc_text) if end.endswith(".zst") else COMPRESS[end[4:]](btc_text)
    cut = tmp_path / f"BTCUSDT{end}"
    cut.write_bytes(whole[: len(whole) * 3 // 4])
    with pytest.raises(DataError, match=rf"BTCUSDT{end}: cannot read \("):
        read_bars(cut)


def test_codec_and_name_of_each_ending() -> None:
    assert [codec_of(n) for n in ("a.csv.GZ", "a.csv.bz2", "a.tsv.xz", "a.txt.zst", "a.csv")] == [
        "gzip",
        "bzip2",
        "xz",
        "zstd",
        None,
    ]
    assert uncompressed_name("ES.csv.ZST") == "ES.csv"
    assert uncompressed_name("ES.csv") == "ES.csv"


def test_a_python_without_the_bz2_module_refuses_naming_the_file(
    tmp_path: Path, btc_text: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyenv builds Python without ``_bz2`` or ``_lzma`` when their headers are missing: such a
    file is refused in one line; every other kind still reads."""
    import importlib

    real = importlib.import_module

    def without_bz2(name: str, *args: object) -> object:
        if name == "bz2":
            raise ImportError(name)
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", without_bz2)
    packed = tmp_path / "BTCUSDT.csv.bz2"
    packed.write_bytes(bz2.compress(btc_text))
    with pytest.raises(DataError) as refused:
        read_bars(packed)
    assert str(refused.value) == (
        f"{packed}: this Python was built without the bz2 module: decompress the bzip2 file "
        "first, or use a Python built with it"
    )
    packed = tmp_path / "BTCUSDT.csv.xz"
    packed.write_bytes(lzma.compress(btc_text))
    assert read_bars(packed).height == 6000


def test_a_file_compressed_twice_is_told_to_be_decompressed_once(
    tmp_path: Path, btc_text: bytes
) -> None:
    """Was told to 'name it .csv.gz', which it already was."""
    twice = tmp_path / "BTCUSDT.csv.gz"
    twice.write_bytes(gzip.compress(gzip.compress(btc_text)))
    with pytest.raises(DataError) as refused:
        read_bars(twice)
    assert str(refused.value) == (
        f"{twice}: compressed twice (gzip-compressed data inside the gzip): decompress it once"
    )


def test_text_named_gz_inside_a_zip_is_named_for_what_it_holds(
    tmp_path: Path, btc_text: bytes
) -> None:
    """Was 'cannot read (Not a gzipped file (b'ti'))'; outside a zip it was named already."""
    archive = tmp_path / "BTCUSDT_2022.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("BTCUSDT_2022-01.csv.gz", btc_text)
    member = archive / "BTCUSDT_2022-01.csv.gz"
    with pytest.raises(DataError) as refused:
        read_bars(member)
    assert str(refused.value) == (
        f"{member}: the file holds text (a CSV?), though its name says gzip-compressed data: "
        "name it .csv"
    )
