"""Path resolution and atomic table writes."""

from __future__ import annotations

import logging
import zipfile
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.files import resolve_table_paths, write_table
from foxhunt.errors import DataError, InputError


def test_resolve(tmp_path: Path) -> None:
    for name in ("b.csv", "a.parquet", "c.txt", "d.json", "README.txt", "e.h5"):
        (tmp_path / name).write_text("x")
    # .txt and .json beside other tables are notes and metadata; a README is never bars.
    assert [p.name for p in resolve_table_paths(tmp_path)] == ["a.parquet", "b.csv"]
    assert [p.name for p in resolve_table_paths(f"{tmp_path}/*.csv")] == ["b.csv"]
    assert resolve_table_paths(tmp_path / "d.json") == [tmp_path / "d.json"]  # named: read
    with pytest.raises(DataError, match="unsupported file type '.h5'"):
        resolve_table_paths(tmp_path / "e.h5")
    with pytest.raises(DataError, match="no such file"):
        resolve_table_paths(tmp_path / "missing.csv")
    only_txt = tmp_path / "quantiacs"
    only_txt.mkdir()
    for name in ("F_CL.txt", "F_ES.txt", "README.txt"):
        (only_txt / name).write_text("x")
    # A folder of .txt tables alone (Quantiacs) is read, the README left out.
    assert [p.name for p in resolve_table_paths(only_txt)] == ["F_CL.txt", "F_ES.txt"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="holds no"):
        resolve_table_paths(tmp_path / "empty")


def test_write_table_atomic(tmp_path: Path) -> None:
    df = pl.DataFrame({"a": [1, 2]})
    write_table(df, tmp_path / "x.parquet")
    write_table(df, tmp_path / "x.csv")
    assert pl.read_parquet(tmp_path / "x.parquet").equals(df)
    assert pl.read_csv(tmp_path / "x.csv").equals(df)
    with pytest.raises(InputError, match="must end in"):
        write_table(df, tmp_path / "x.json")
    with pytest.raises(InputError, match="does not exist"):
        write_table(df, tmp_path / "nope" / "x.parquet")
    bad = pl.DataFrame({"a": [[1, 2]]})  # CSV cannot hold a list column
    with pytest.raises(pl.exceptions.ComputeError):
        write_table(bad, tmp_path / "y.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv", "x.parquet"]


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("ES.numbers", "a Numbers workbook is not read; export its sheet of bars as CSV (UTF-8)"),
        ("ES.pkl", "a pickle is never read (it can run code); write the bars as parquet"),
        ("ES.h5", "HDF5 is not read; write the bars as CSV or parquet (pandas: df.to_parquet)"),
    ],
)
def test_a_file_type_not_read_says_what_to_do(tmp_path: Path, name: str, hint: str) -> None:
    (tmp_path / name).write_bytes(b"x")
    with pytest.raises(DataError) as refused:
        resolve_table_paths(tmp_path / name)
    assert str(refused.value).endswith(f".dbn.zst, .scid, .xlsx, .xlsm, .xls, .xlsb, .ods): {hint}")
    (tmp_path / "ES.xyz").write_bytes(b"x")
    with pytest.raises(DataError) as refused:
        resolve_table_paths(tmp_path / "ES.xyz")
    assert str(refused.value).endswith(".xlsb, .ods)")


def _bars(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("ts,open,high,low,close,volume\n2024-01-02 14:30:00,1,1,1,1,1\n")
    return path


@pytest.mark.parametrize("junk", ["._ES.csv", ".DS_Store", "~$ES.xlsx", ".hidden.csv"])
def test_hidden_files_other_programs_leave_are_not_bars(tmp_path: Path, junk: str) -> None:
    """macOS's AppleDouble ``._ES.csv``, Excel's lock file ``~$ES.xlsx``: a folder of bars
    beside one was refused as a whole ("missing column 'open'", "cannot read")."""
    es = _bars(tmp_path / "ES.csv")
    (tmp_path / junk).write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        ")
    assert resolve_table_paths(tmp_path) == [es]
    with zipfile.ZipFile(tmp_path / "bars.zip", "w") as z:
        z.write(es, "ES.csv")
        z.writestr(junk, b"junk")
    assert resolve_table_paths(tmp_path / "bars.zip") == [tmp_path / "bars.zip" / "ES.csv"]


def test_subfolders_are_named_in_a_warning_and_read_with_a_recursive_glob(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    es = _bars(tmp_path / "ES.csv")
    nq = _bars(tmp_path / "more" / "deeper" / "NQ.csv")
    (tmp_path / "empty").mkdir()
    with caplog.at_level(logging.WARNING):
        assert resolve_table_paths(tmp_path) == [es]
    assert (
        f"{tmp_path}: subfolders not read (a directory is read without them): more;" in caplog.text
    )
    assert resolve_table_paths(f"{tmp_path}/**/*.csv") == [es, nq]


def test_files_not_read_beside_the_bars_are_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Half the bars in an .hdf5 or .h5 beside a .csv, a parquet in a zip beside its
    CSV: read without them and without a word. A vendor's metadata.json is no bars."""
    for name in ("ES-1.csv", "ES-2.hdf5", "ES-3.h5", "metadata.json", "README.txt"):
        (tmp_path / name).write_text("x")
    with caplog.at_level(logging.WARNING):
        assert resolve_table_paths(tmp_path) == [tmp_path / "ES-1.csv"]
    assert caplog.messages == [
        f"{tmp_path}: 2 files not read: ES-2.hdf5, ES-3.h5; only .parquet, .pq, .csv, .txt, "
        ".tsv (plain or .gz, .bz2, .xz, .zst), .feather, .arrow, .ipc, .json, .jsonl, .ndjson "
        "(plain or .gz, .bz2, .xz, .zst), .zip, .dbn, .dbn.zst, .scid, .xlsx, .xlsm, .xls, .xlsb, .ods files are read (write the others "
        "as CSV or parquet)"
    ]
    archive = tmp_path / "zipped" / "ES.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("ES-1.csv", "x")
        z.writestr("ES-2.parquet", "x")
        z.writestr("notes/README.md", "x")
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert resolve_table_paths(archive) == [archive / "ES-1.csv"]
    assert caplog.messages == [
        f"{archive}: 1 file not read: ES-2.parquet; only its delimited-text files (.csv, .tsv, "
        ".txt, plain or .gz, .bz2, .xz, .zst) are read (extract the others, or write them as CSV)"
    ]


def test_a_directory_of_partition_folders_names_the_glob(tmp_path: Path) -> None:
    (tmp_path / "ds" / "symbol=ES").mkdir(parents=True)
    (tmp_path / "ds" / "symbol=ES" / "part-0.parquet").write_text("x")
    with pytest.raises(DataError) as refused:
        resolve_table_paths(tmp_path / "ds")
    assert str(refused.value).endswith(
        f"file; its subfolders (symbol=ES) hold bars: the glob '{tmp_path / 'ds'}/**/*' reads "
        "them (each takes its folder's symbol, symbol=ES gives ES)"
    )


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("ES.txt.gz", "Date,Time,Open,High,Low,Close,Volume\n{rows}"),  # Kibot, gzipped
        ("BRK.B.tsv.gz", "Date\tTime\tOpen\tHigh\tLow\tClose\tVolume\n{rows}"),
    ],
)
def test_gzipped_text_and_tab_files_are_read(tmp_path: Path, name: str, text: str) -> None:
    """They were refused as "unsupported file type '.gz'" while ``.csv.gz`` read."""
    import gzip

    from foxhunt.data.read.bars import read_bars

    sep = "\t" if ".tsv" in name else ","
    rows = "".join(
        sep.join([f"2024-01-0{d}", "10:00", "10", "11", "9", "10.5", "100"]) + "\n"
        for d in (2, 3, 4, 5)
    )
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.format(rows=rows).encode()))
    assert resolve_table_paths(tmp_path) == [path]
    bars = read_bars(path, min_bars=1)
    assert bars.height == 4
    assert bars["symbol"][0] == name.removesuffix(".txt.gz").removesuffix(".tsv.gz")


def test_binances_premium_index_klines_are_refused_as_no_prices(tmp_path: Path) -> None:
    """``premiumIndexKlines/BTCUSDT-1m-2024-01-06.csv``: the name of a price file, a premium
    near 0 in it; read as BTCUSDT at 0.00012 until session 53."""
    folder = tmp_path / "premiumIndexKlines"
    folder.mkdir()
    path = folder / "BTCUSDT-1m-2024-01-06.csv"
    path.write_text(
        "open_time,open,high,low,close,volume,close_time\n"
        "1704499200000,0.00012,0.000121,0.000113,0.000116,0,1704499259999\n"
    )
    with pytest.raises(DataError, match=r"premium index klines .*, not prices \(the folder "):
        resolve_table_paths(path)


def test_a_zip_written_with_backslashes_reads_each_file_as_its_own_symbol(tmp_path: Path) -> None:
    """Windows PowerShell 5.1's ``Compress-Archive`` names members ``crypto_1h\\BTCUSDT_1h.csv``:
    read as the path ``crypto_1h/BTCUSDT_1h.csv``, each file its symbol (every file was the
    symbol CRYPTO, the archive refused as two instruments interleaved)."""
    from foxhunt.data.read.bars import read_bars

    header = "timestamp,open,high,low,close,volume\n"
    archive = tmp_path / "crypto_1h.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for coin, price in (("BTCUSDT", 40000.0), ("ETHUSDT", 2500.0)):
            rows = "".join(
                f"2024-01-0{d} {h:02d}:00:00+00:00,{price},{price + 5},{price - 5},{price + 1},3\n"
                for d in (1, 2)
                for h in range(24)
            )
            z.writestr(f"crypto_1h\\{coin}_1h.csv", header + rows)
    files = resolve_table_paths(archive)
    assert [f.name for f in files] == ["BTCUSDT_1h.csv", "ETHUSDT_1h.csv"]
    bars = read_bars(archive, min_bars=1)
    assert bars.group_by("symbol").len().sort("symbol").rows() == [("BTCUSDT", 48), ("ETHUSDT", 48)]
    one = read_bars(archive / "crypto_1h" / "ETHUSDT_1h.csv", min_bars=1)
    assert one["symbol"].unique().to_list() == ["ETHUSDT"]
