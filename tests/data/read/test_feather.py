"""Feather (Arrow IPC) bar files: what pandas' ``to_feather`` writes reads as its parquet does;
a Feather under another name, or another file named ``.feather``, is refused naming what it
holds. Was refused as "Feather is not read; write the bars as parquet"."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.files import resolve_table_paths
from foxhunt.data.read.row_count import estimate_rows
from foxhunt.errors import DataError

BTC = Path(__file__).parents[1] / "fixtures" / "real" / "btc-perp-20211231-20220201_1m.csv.gz"


@pytest.fixture(scope="module")
def btc() -> pd.DataFrame:
    """The real BTC one-minute fixture as pandas reads it: naive times, float prices."""
    frame = pd.read_csv(io.BytesIO(gzip.decompress(BTC.read_bytes())), parse_dates=["timestamp"])
    assert len(frame) == 6000
    return frame


@pytest.mark.parametrize("compression", ["lz4", "zstd", "uncompressed"])
def test_pandas_feather_reads_as_its_parquet(
    tmp_path: Path, btc: pd.DataFrame, compression: str
) -> None:
    """pandas writes Feather v2 compressed with lz4 unless told otherwise."""
    feather, parquet = tmp_path / "BTCUSDT.feather", tmp_path / "BTCUSDT.parquet"
    btc.to_feather(feather, compression=compression)
    btc.to_parquet(parquet)
    expected = read_bars(parquet)
    assert expected.height == 6000
    assert_frame_equal(read_bars(feather), expected)
    assert estimate_rows(feather) == 6000  # the file's own count, as parquet's


def test_polars_arrow_ipc_with_utc_times_and_a_folder_of_them(
    tmp_path: Path, btc: pd.DataFrame
) -> None:
    frame = pl.from_pandas(btc).with_columns(pl.col("timestamp").dt.replace_time_zone("UTC"))
    frame.write_ipc(tmp_path / "BTCUSDT.arrow")
    frame.write_ipc(tmp_path / "ETHUSDT.ipc")
    frame.write_parquet(tmp_path / "SOLUSDT.parquet")
    names = ["BTCUSDT.arrow", "ETHUSDT.ipc", "SOLUSDT.parquet"]
    assert [p.name for p in resolve_table_paths(tmp_path)] == names
    bars = read_bars(tmp_path)
    by_symbol = bars.partition_by("symbol", as_dict=True)
    assert sorted(k[0] for k in by_symbol) == ["BTCUSDT", "ETHUSDT", "SOLUSDT"]
    sol = by_symbol[("SOLUSDT",)].drop("symbol")
    for other in ("BTCUSDT", "ETHUSDT"):
        assert_frame_equal(by_symbol[(other,)].drop("symbol"), sol)


def test_a_feather_under_another_name_and_text_named_feather_are_named_for_what_they_hold(
    tmp_path: Path, btc: pd.DataFrame
) -> None:
    btc.to_feather(tmp_path / "a.csv")
    btc.to_feather(tmp_path / "b.parquet")
    (tmp_path / "c.feather").write_text("timestamp,open,high,low,close\n")
    cases = {
        "a.csv": "an Arrow IPC (Feather) file, though its name says a text table: name it .feather",
        "b.parquet": "an Arrow IPC (Feather) file, though its name says parquet: name it .feather",
        "c.feather": "text (a CSV?), though its name says an Arrow IPC (Feather) file: name it .csv",
    }
    for name, said in cases.items():
        with pytest.raises(DataError) as refused:
            read_bars(tmp_path / name)
        assert str(refused.value) == f"{tmp_path / name}: the file holds {said}", name


@pytest.mark.filterwarnings("ignore:Feather V1 files are deprecated:DeprecationWarning")
def test_the_ipc_stream_format_and_feather_v1_read_as_the_file_format(
    tmp_path: Path, btc: pd.DataFrame
) -> None:
    """Both were 'cannot read (out-of-spec: InvalidFooter)': a stream has no footer to scan
    from (polars' write_ipc_stream, pyarrow's new_stream), and Feather v1 (R's feather, pandas
    before 1.0) is no Arrow IPC file at all."""
    import pyarrow.feather

    btc.to_parquet(tmp_path / "BTCUSDT.parquet")
    expected = read_bars(tmp_path / "BTCUSDT.parquet")
    stream, v1 = tmp_path / "stream" / "BTCUSDT.arrow", tmp_path / "v1" / "BTCUSDT.feather"
    stream.parent.mkdir()
    v1.parent.mkdir()
    pl.from_pandas(btc).write_ipc_stream(stream)
    pyarrow.feather.write_feather(btc, v1, version=1)
    assert stream.read_bytes()[:4] == b"\xff\xff\xff\xff" and v1.read_bytes()[:4] == b"FEA1"
    assert_frame_equal(read_bars(stream), expected)
    assert_frame_equal(read_bars(v1), expected)
