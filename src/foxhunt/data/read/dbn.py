"""Databento DBN bar files (``.dbn``, ``.dbn.zst``) with OHLCV records, via ``databento-dbn``.

The library transcodes the records to CSV with decimal prices (DBN stores them as integers in
units of 1e-9) and a ``symbol`` column from the file's symbology mappings; polars reads that. A
record whose instrument has no mapping gets its ``instrument_id`` as symbol. Only OHLCV schemas
(``ohlcv-1s``, ``-1m``, ``-1h``, ``-1d``, ``-eod``) are bars; other schemas are refused.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import polars as pl

from foxhunt.errors import DataError

DBN_COLUMNS = ("ts_event", "symbol", "open", "high", "low", "close", "volume")
"""Columns of :func:`read_dbn`'s frame."""


FIXED_POINT = 1e9
"""Databento's price unit: 1e-9 (``4790000000000`` is 4790.0)."""


def fixed_point_prices(lf: pl.LazyFrame, names: list[str], price: str) -> bool:
    """Whether a CSV of Databento's layout (``rtype``, ``publisher_id`` beside the bars) holds
    its prices as written without ``pretty_px``: integers in units of 1e-9 (``4790000000000``;
    ``pretty_px`` writes ``4790.000000000``), over its first 64 values of ``price``: whole
    numbers, some of them a million or more (a price of 0.001 or more)."""
    if not {"rtype", "publisher_id"} <= {n.strip().lower() for n in names}:
        return False
    number = pl.col(price).cast(pl.String).str.strip_chars().cast(pl.Float64, strict=False)
    values = lf.select(number).head(64).collect().to_series().drop_nulls()
    return (
        values.len() > 0
        and bool((values == values.round(0)).all())
        and float(values.abs().max()) >= 1e6  # type: ignore[arg-type]
    )


def _raw_bytes(path: Path) -> bytes:
    if path.name.lower().endswith(".zst"):
        import pyarrow as pa  # zstd is in pyarrow, which polars' parquet path already needs

        with pa.input_stream(str(path), compression="zstd") as f:
            return f.read()
    return path.read_bytes()


DBN_PRELUDE = 8
"""Bytes before a DBN file's metadata: ``DBN``, the version byte, the metadata's length
(little-endian uint32)."""


def _metadata_end(data: bytes) -> int:
    """Where the metadata header of ``data`` ends (the prelude's length field; the whole of
    ``data`` where it is not a DBN prelude, for the decoder to refuse). A symbology header of
    thousands of instruments is megabytes: no fixed prefix holds every file's."""
    if len(data) < DBN_PRELUDE or data[:3] != b"DBN":
        return len(data)
    return DBN_PRELUDE + int.from_bytes(data[4:DBN_PRELUDE], "little")


def _cut_record(data: bytes, start: int) -> str | None:
    """Why the records of ``data`` from byte ``start`` do not end at its last byte (a download
    cut short), or None where they do. Each DBN record opens with its length in 4-byte words;
    the transcoder drops a partial last record without a word, which would lose a bar unseen."""
    if start >= len(data):
        return None
    first = data[start] * 4
    if first and (len(data) - start) % first == 0:  # one record length throughout: no loop
        lengths = np.frombuffer(data, np.uint8, offset=start)[::first]
        if bool((lengths == data[start]).all()):
            return None
    pos, whole = start, 0
    while pos < len(data):
        length = data[pos] * 4
        if length == 0:
            return f"a record at byte {pos} gives its length as 0"
        if pos + length > len(data):
            return (
                f"the file is cut short: the record at byte {pos} has {len(data) - pos} of its "
                f"{length} bytes, after {whole} whole records"
            )
        pos, whole = pos + length, whole + 1
    return None


def read_dbn(path: Path) -> pl.DataFrame:
    """Read the OHLCV records of a DBN file.

    Args:
        path: a ``.dbn`` or zstd-compressed ``.dbn.zst`` file.

    Returns:
        Columns :data:`DBN_COLUMNS`: ``ts_event`` (UInt64 ns since the epoch, UTC), ``symbol``
        (String), prices (Float64), ``volume`` (Float64), in file order.

    Raises:
        DataError: ``databento-dbn`` is not installed, the file is empty or not DBN, its
            schema is not OHLCV, it holds no record, or its last record is cut short.
    """
    try:
        import databento_dbn as dbn
    except ImportError as e:  # pragma: no cover - a runtime dependency
        raise DataError(f"{path}: reading DBN needs the databento-dbn package") from e
    try:
        data = _raw_bytes(path)
        if not data:
            raise DataError(f"{path}: empty file (no bars)")
        header_end = _metadata_end(data)
        decoder = dbn.DBNDecoder()
        decoder.write(data[:header_end])  # the header only: no record decoded here
        decoded = decoder.decode()
        if not decoded:  # the header the prelude announces is not all there
            raise DataError(f"{path}: cannot read as DBN (its metadata header is cut short)")
        meta = decoded[0]
        schema = str(meta.schema) if meta.schema is not None else "mixed"
        if not schema.startswith("ohlcv"):
            raise DataError(f"{path}: DBN schema {schema} holds no bars (need an ohlcv schema)")
        cut = _cut_record(data, header_end)
        if cut is not None:
            raise DataError(f"{path}: cannot read as DBN ({cut})")
        out = io.BytesIO()
        transcoder = dbn.Transcoder(
            out, dbn.Encoding.CSV, dbn.Compression.NONE, pretty_px=True, pretty_ts=False
        )
        transcoder.write(data)
        transcoder.flush()
        df = pl.read_csv(
            out.getvalue(),
            schema_overrides={
                "ts_event": pl.UInt64,
                "instrument_id": pl.String,
                "symbol": pl.String,
            },
        )
    except DataError:
        raise
    except Exception as e:  # the bindings raise ValueError / DBNError on bad input
        raise DataError(f"{path}: cannot read as DBN ({str(e).splitlines()[0]})") from e
    if df.height == 0:  # the transcoder writes the CSV header even without records
        raise DataError(f"{path}: no bars (the DBN file holds its header and no record)")
    symbol = pl.col("symbol") if "symbol" in df.columns else pl.lit(None, pl.String)
    return df.select(
        "ts_event",
        pl.coalesce(symbol.replace("", None), pl.col("instrument_id")).alias("symbol"),
        *(pl.col(c).cast(pl.Float64) for c in ("open", "high", "low", "close", "volume")),
    )
