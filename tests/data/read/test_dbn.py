"""Databento DBN OHLCV files, written here with databento-dbn itself (no downloads)."""

from __future__ import annotations

import io
from datetime import UTC, date, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.errors import DataError

dbn = pytest.importorskip("databento_dbn")

T0 = datetime(2024, 10, 1, 13, 30, tzinfo=UTC)
PX = 1_000_000_000  # DBN prices are integers in units of 1e-9


def _dbn_bytes(symbol: str, n: int, schema=None, instrument_id: int = 4242) -> bytes:
    mapping = SimpleNamespace(
        raw_symbol=symbol,
        intervals=[
            SimpleNamespace(
                start_date=date(2024, 10, 1), end_date=date(2024, 11, 1), symbol=str(instrument_id)
            )
        ],
    )
    meta = dbn.Metadata(
        dataset="GLBX.MDP3",
        start=int(T0.timestamp()) * 10**9,
        stype_in=dbn.SType.RAW_SYMBOL if "." not in symbol else dbn.SType.CONTINUOUS,
        stype_out=dbn.SType.INSTRUMENT_ID,
        schema=schema or dbn.Schema.OHLCV_1M,
        symbols=[symbol],
        mappings=[mapping],
    )
    t0 = int(T0.timestamp()) * 10**9
    records = [
        dbn.OHLCVMsg(
            dbn.RType.OHLCV_1M,
            1,
            instrument_id,
            t0 + i * 60 * 10**9,
            5700 * PX + PX // 4,
            5701 * PX,
            5699 * PX + PX // 2,
            5700 * PX + PX // 2,
            100 + i,
        )
        for i in range(n)
    ]
    return bytes(meta) + b"".join(bytes(r) for r in records)


def _zstd(data: bytes) -> bytes:
    out = io.BytesIO()
    t = dbn.Transcoder(out, dbn.Encoding.DBN, dbn.Compression.ZSTD)
    t.write(data)
    t.flush()
    del t  # the zstd frame is finished when the transcoder is dropped
    return out.getvalue()


def test_dbn_ohlcv_1m(tmp_path: Path) -> None:
    p = tmp_path / "glbx-mdp3-20241001.ohlcv-1m.dbn"
    p.write_bytes(_dbn_bytes("ESZ4", 5))
    df = read_bars(p)
    assert df["ts"][0] == T0 and df.height == 5
    assert df["open"][0] == 5700.25 and df["low"][0] == 5699.5
    assert df["volume"].to_list() == [100.0, 101.0, 102.0, 103.0, 104.0]
    assert df["symbol"].unique().to_list() == ["ES"]
    assert df["contract"].unique().to_list() == ["ESZ4"]


def test_dbn_zst_continuous_symbol(tmp_path: Path) -> None:
    p = tmp_path / "es-continuous.ohlcv-1m.dbn.zst"
    p.write_bytes(_zstd(_dbn_bytes("ES.c.0", 4)))
    df = read_bars(p)
    assert df.select("symbol", "contract").unique().rows() == [("ES", "ES.c.0")]
    assert df.height == 4


def test_dbn_other_schema_refused(tmp_path: Path) -> None:
    p = tmp_path / "x.dbn"
    p.write_bytes(_dbn_bytes("ESZ4", 0, schema=dbn.Schema.TRADES))
    with pytest.raises(DataError, match="DBN schema trades holds no bars"):
        read_bars(p)


def test_not_dbn_is_one_line(tmp_path: Path) -> None:
    p = tmp_path / "x.dbn"
    p.write_bytes(b"this is not dbn at all")
    with pytest.raises(DataError, match=r"x\.dbn: cannot read as DBN") as e:
        read_bars(p)
    assert "\n" not in str(e.value)
