"""read_dbn itself, pinned where `make mutate` found it loose: the exact refusals (missing
package, mixed schema, not DBN), the frame's columns and dtypes, symbols taken verbatim or from
the instrument_id when a record has no mapping, and zstd files whatever the suffix's case."""

from __future__ import annotations

import io
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest

from foxhunt.data.read.dbn import DBN_COLUMNS, read_dbn
from foxhunt.errors import DataError

dbn = pytest.importorskip("databento_dbn")

T0_NS = int(datetime(2024, 10, 1, 13, 30, tzinfo=UTC).timestamp()) * 10**9
PX = 1_000_000_000  # DBN prices are integers in units of 1e-9


def _mapping(raw_symbol: str, instrument_id: int) -> SimpleNamespace:
    interval = SimpleNamespace(
        start_date=date(2024, 10, 1), end_date=date(2024, 11, 1), symbol=str(instrument_id)
    )
    return SimpleNamespace(raw_symbol=raw_symbol, intervals=[interval])


def _metadata(schema=None, symbols: list[str] | None = None, mappings=None) -> bytes:
    return bytes(
        dbn.Metadata(
            dataset="GLBX.MDP3",
            start=T0_NS,
            stype_in=dbn.SType.RAW_SYMBOL,
            stype_out=dbn.SType.INSTRUMENT_ID,
            schema=schema,
            symbols=symbols,
            mappings=mappings,
        )
    )


def _bar(i: int, instrument_id: int) -> bytes:
    return bytes(
        dbn.OHLCVMsg(
            dbn.RType.OHLCV_1M,
            1,
            instrument_id,
            T0_NS + i * 60 * 10**9,
            5700 * PX + PX // 4,
            5701 * PX,
            5699 * PX + PX // 2,
            5700 * PX + PX // 2,
            100 + i,
        )
    )


def _dbn(symbol: str | None, n: int, instrument_id: int = 4242) -> bytes:
    """n one-minute bars of one instrument; symbol None writes no symbols or mappings."""
    if symbol is None:
        meta = _metadata(dbn.Schema.OHLCV_1M)
    else:
        meta = _metadata(dbn.Schema.OHLCV_1M, [symbol], [_mapping(symbol, instrument_id)])
    return meta + b"".join(_bar(i, instrument_id) for i in range(n))


def _zstd(data: bytes) -> bytes:
    out = io.BytesIO()
    t = dbn.Transcoder(out, dbn.Encoding.DBN, dbn.Compression.ZSTD)
    t.write(data)
    t.flush()
    del t  # the zstd frame is finished when the transcoder is dropped
    return out.getvalue()


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_missing_package_is_refused_with_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = _write(tmp_path, "ES.dbn", _dbn("ESZ4", 2))
    monkeypatch.setitem(sys.modules, "databento_dbn", None)  # `import` now raises ImportError
    with pytest.raises(DataError) as excinfo:
        read_dbn(p)
    assert str(excinfo.value) == f"{p}: reading DBN needs the databento-dbn package"


def test_mixed_schema_is_refused_as_mixed(tmp_path: Path) -> None:
    p = _write(tmp_path, "mixed.dbn", _metadata(None, ["ESZ4"], [_mapping("ESZ4", 4242)]))
    with pytest.raises(DataError) as excinfo:
        read_dbn(p)
    assert str(excinfo.value) == (f"{p}: DBN schema mixed holds no bars (need an ohlcv schema)")


def test_not_dbn_is_refused_with_the_decoders_first_line(tmp_path: Path) -> None:
    p = _write(tmp_path, "x.dbn", b"this is not dbn at all")
    with pytest.raises(DataError) as excinfo:
        read_dbn(p)
    assert str(excinfo.value) == f"{p}: cannot read as DBN (decoding error: invalid DBN header)"


def test_frame_has_the_documented_columns_and_dtypes(tmp_path: Path) -> None:
    df = read_dbn(_write(tmp_path, "ES.dbn", _dbn("ESZ4", 3)))
    assert df.columns == list(DBN_COLUMNS)
    assert df.schema == pl.Schema(
        {
            "ts_event": pl.UInt64,
            "symbol": pl.String,
            "open": pl.Float64,
            "high": pl.Float64,
            "low": pl.Float64,
            "close": pl.Float64,
            "volume": pl.Float64,
        }
    )


def test_values_are_nanoseconds_and_decimal_prices_as_written(tmp_path: Path) -> None:
    df = read_dbn(_write(tmp_path, "ES.dbn", _dbn("ESZ4", 2)))
    assert df.rows() == [
        (T0_NS, "ESZ4", 5700.25, 5701.0, 5699.5, 5700.5, 100.0),
        (T0_NS + 60 * 10**9, "ESZ4", 5700.25, 5701.0, 5699.5, 5700.5, 101.0),
    ]


def test_numeric_looking_symbol_is_kept_as_text(tmp_path: Path) -> None:
    df = read_dbn(_write(tmp_path, "x.dbn", _dbn("007", 1)))
    assert df["symbol"].to_list() == ["007"]


@pytest.mark.parametrize("symbol", ["XXXX", "a,b", 'q"x'])
def test_symbol_is_taken_verbatim(tmp_path: Path, symbol: str) -> None:
    df = read_dbn(_write(tmp_path, "x.dbn", _dbn(symbol, 1)))
    assert df["symbol"].to_list() == [symbol]


def test_record_without_mapping_takes_its_instrument_id_as_symbol(tmp_path: Path) -> None:
    df = read_dbn(_write(tmp_path, "x.dbn", _dbn(None, 2, instrument_id=99)))
    assert df["symbol"].to_list() == ["99", "99"]
    assert df.schema["symbol"] == pl.String


def test_mapped_and_unmapped_instruments_in_one_file(tmp_path: Path) -> None:
    meta = _metadata(dbn.Schema.OHLCV_1M, ["ESZ4"], [_mapping("ESZ4", 4242)])
    p = _write(tmp_path, "x.dbn", meta + _bar(0, 4242) + _bar(1, 7))
    assert read_dbn(p)["symbol"].to_list() == ["ESZ4", "7"]


def test_empty_symbol_mapping_falls_back_to_the_instrument_id(tmp_path: Path) -> None:
    df = read_dbn(_write(tmp_path, "x.dbn", _dbn("", 1, instrument_id=31)))
    assert df["symbol"].to_list() == ["31"]


def test_an_empty_file_or_one_without_records_is_refused(tmp_path: Path) -> None:
    empty = _write(tmp_path, "empty.dbn", b"")
    with pytest.raises(DataError) as refused:
        read_dbn(empty)
    assert str(refused.value) == f"{empty}: empty file (no bars)"
    header = _write(tmp_path, "header.dbn", _dbn("ESZ4", 0))
    with pytest.raises(DataError) as refused:
        read_dbn(header)
    assert str(refused.value) == f"{header}: no bars (the DBN file holds its header and no record)"


@pytest.mark.parametrize("name", ["ES.ohlcv-1m.dbn.zst", "ES.OHLCV-1M.DBN.ZST", "ES.dbn.Zst"])
def test_zstd_dbn_reads_as_the_plain_file_whatever_the_suffix_case(
    tmp_path: Path, name: str
) -> None:
    data = _dbn("ESZ4", 4)
    plain = read_dbn(_write(tmp_path, "ES.dbn", data))
    packed = read_dbn(_write(tmp_path, name, _zstd(data)))
    assert packed.equals(plain)
    assert packed.height == 4


def test_metadata_larger_than_one_mib_is_read(tmp_path: Path) -> None:
    """The header is decoded to the length its prelude gives (a fixed 1 MiB prefix refused
    files of thousands of symbols as 'list index out of range')."""
    n = 7000  # about 1.5 MiB of symbols and mappings
    symbols = [f"S{i:07d}" for i in range(n)]
    mappings = [_mapping(s, i + 1) for i, s in enumerate(symbols)]
    meta = _metadata(dbn.Schema.OHLCV_1M, symbols, mappings)
    assert 1 << 20 < len(meta) < 2 << 20
    df = read_dbn(_write(tmp_path, "big.dbn", meta + _bar(0, 5)))
    assert df["symbol"].to_list() == ["S0000004"]


def test_the_header_ends_where_the_prelude_says() -> None:
    """Only the metadata is decoded up front (decoding every record into Python objects would
    cost seconds on a year of bars); where there is no DBN prelude the decoder gets everything
    and refuses it."""
    from foxhunt.data.read.dbn import DBN_PRELUDE, _metadata_end

    meta = _metadata(dbn.Schema.OHLCV_1M, ["ESZ4"], [_mapping("ESZ4", 1)])
    data = meta + _bar(0, 1)
    assert meta[:3] == b"DBN" and _metadata_end(data) == len(meta)
    length = int.from_bytes(meta[4:8], "little")  # little-endian: a big-endian read is far off
    assert _metadata_end(data) == DBN_PRELUDE + length and length < 1 << 16
    assert _metadata_end(b"dbn" + data[3:]) == len(data)  # not the magic
    assert _metadata_end(b"XDBN" + data[4:]) == len(data)
    assert _metadata_end(data[:DBN_PRELUDE]) == DBN_PRELUDE + length  # a bare prelude
    assert _metadata_end(data[:7]) == 7  # shorter than a prelude


@pytest.mark.parametrize("keep", [3, 8, 20])
def test_a_header_cut_short_is_refused_in_words(tmp_path: Path, keep: int) -> None:
    data = _dbn("ESZ4", 2)[:keep]  # the magic only, the prelude only, part of the metadata
    p = _write(tmp_path, "cut.dbn", data)
    with pytest.raises(DataError) as refused:
        read_dbn(p)
    assert str(refused.value) == f"{p}: cannot read as DBN (its metadata header is cut short)"


@pytest.mark.parametrize("cut", [1, 17, 55])
def test_a_last_record_cut_short_is_refused_with_where(tmp_path: Path, cut: int) -> None:
    """A download cut inside its last bar: the transcoder drops the partial record without a
    word, so the reader counts the records itself (each opens with its length in words)."""
    whole = _dbn("ESZ4", 3)
    record = len(_bar(0, 4242))
    assert record == 56
    p = _write(tmp_path, "cut.dbn", whole[: len(whole) - record + cut])
    at = len(whole) - record
    with pytest.raises(DataError) as refused:
        read_dbn(p)
    assert str(refused.value) == (
        f"{p}: cannot read as DBN (the file is cut short: the record at byte {at} has {cut} "
        f"of its {record} bytes, after 2 whole records)"
    )
    assert read_dbn(_write(tmp_path, "whole.dbn", whole)).height == 3


def test_records_of_mixed_lengths_are_walked_one_by_one() -> None:
    """A file whose records differ in length (a mapping record among the bars) takes the slow
    walk; one that ends on a record boundary passes, one cut inside a record does not, and a
    record that gives its length as 0 is named rather than looped on."""
    from foxhunt.data.read.dbn import _cut_record

    bars = _bar(0, 1) + _bar(1, 1)
    long_record = bytes([20]) + bytes(79)  # 80 bytes, its length byte 20 words
    data = b"HEAD" + bars + long_record + _bar(2, 1)
    assert _cut_record(data, 4) is None
    assert _cut_record(data[:-1], 4) == (
        f"the file is cut short: the record at byte {4 + 112 + 80} has 55 of its 56 bytes, "
        "after 3 whole records"
    )
    assert _cut_record(data[: -56 - 1], 4) == (
        "the file is cut short: the record at byte 116 has 79 of its 80 bytes, after 2 whole "
        "records"
    )
    assert _cut_record(b"HEAD" + bars + bytes(8), 4) == "a record at byte 116 gives its length as 0"
    assert _cut_record(b"HEAD", 4) is None and _cut_record(b"HEAD", 9) is None
    same = _bar(0, 1) * 3  # one length throughout, the fast path
    assert _cut_record(same, 0) is None
    assert _cut_record(same[:-8], 0) == (
        "the file is cut short: the record at byte 112 has 48 of its 56 bytes, after 2 whole "
        "records"
    )
