"""How many bars a file, directory or glob holds, roughly, without reading it.

For planning memory before the data is read (``--memory-budget``: the data preparation's
peak grows with the bars, :mod:`foxhunt.memory.preparation`): parquet and Feather row counts
from the files' metadata (exact); plain delimited text (also in a zip archive) as its size over
the mean length of its first lines, and compressed text by counting its lines as it decompresses
(gzip's size field holds only its last member's, modulo 4 GiB; bzip2 keeps none); DBN OHLCV
files as their size over one record's 56 bytes (zstd-compressed ones: unknown, counted as 0
with one log line); Sierra Chart ``.scid`` files as their size over one record's 40 bytes;
JSON records by reading them (JSON Lines as text).
"""

from __future__ import annotations

import logging
import zipfile
from pathlib import Path
from typing import BinaryIO

from foxhunt.data.read.compressed import ERRORS as COMPRESSED_ERRORS
from foxhunt.data.read.compressed import codec_of, open_compressed
from foxhunt.data.read.encoding import open_bytes
from foxhunt.data.read.files import is_parquet, resolve_table_paths, table_kind, zip_member
from foxhunt.data.read.json_bars import LINES_SUFFIXES, read_json_bars
from foxhunt.data.read.scid import scid_records
from foxhunt.data.read.workbook import workbook_rows
from foxhunt.errors import DataError

log = logging.getLogger(__name__)

SAMPLE_BYTES = 1 << 16
"""Bytes of a text file whose lines give the mean line length."""
DBN_OHLCV_RECORD = 56
"""Bytes of one DBN OHLCV record (a 16-byte header, four prices and the volume)."""


def _text_rows(head: bytes, size: int) -> int:
    lines = head.count(b"\n")
    if lines == 0:
        return 1 if size else 0
    return round(size / (len(head[: head.rfind(b"\n") + 1]) / lines))


def _sample(f: BinaryIO) -> bytes:
    return f.read(SAMPLE_BYTES)


def _lines(f: BinaryIO) -> int:
    """The lines of a stream, counted a megabyte at a time (a last line without a newline
    counts)."""
    lines, last = 0, b"\n"
    while chunk := f.read(1 << 20):
        lines += chunk.count(b"\n")
        last = chunk[-1:]
    return lines + (last != b"\n")


def estimate_rows(path: str | Path) -> int:
    """Rows (bars, header lines included) the bars at ``path`` hold, estimated.

    Raises:
        DataError: nothing readable at ``path`` (:func:`~foxhunt.data.files.resolve_table_paths`).
    """
    return sum(estimate_file_rows(path))


def estimate_file_rows(path: str | Path) -> list[int]:
    """:func:`estimate_rows` of each file at ``path``, in the order they are read (the largest
    bounds the bars of one symbol when each file holds its own, as vendors' folders do).

    Raises:
        DataError: nothing readable at ``path``.
    """
    rows = []
    for p in resolve_table_paths(path):
        try:
            rows.append(_file_rows(p))
        except (*COMPRESSED_ERRORS, zipfile.BadZipFile) as e:  # the read refuses it alike
            raise DataError(f"{p}: cannot read ({e})") from None
    return rows


def _file_rows(p: Path) -> int:
    """:func:`estimate_file_rows` of one file."""
    name = p.name.lower()
    member = zip_member(p)
    if member is not None:
        archive, inner = member
        if codec_of(inner) is not None:  # monthly .csv.gz files zipped together
            with open_bytes(p) as f:
                return _lines(f)
        with zipfile.ZipFile(archive) as z, z.open(inner) as f:
            return _text_rows(_sample(f), z.getinfo(inner).file_size)
    if is_parquet(p):
        import pyarrow.parquet as pq

        return pq.ParquetFile(p).metadata.num_rows
    kind = table_kind(p)
    if kind == "ipc":
        import polars as pl

        return pl.scan_ipc(p).select(pl.len()).collect().item()
    if kind == "json" and not name.endswith(LINES_SUFFIXES):
        return read_json_bars(p).height  # one line of records: read (an API's answer)
    if kind == "workbook":
        return workbook_rows(p)
    if kind == "dbn":
        if name.endswith(".zst"):
            log.info("%s: compressed DBN, its bars not counted in the memory plan", p)
            return 0
        return p.stat().st_size // DBN_OHLCV_RECORD
    if kind == "scid":
        return scid_records(p)
    if (codec := codec_of(name)) is not None:  # counted, not sized: gzip's size field holds
        with open_compressed(p, codec) as f:  # only its last member's (and bzip2's none)
            return _lines(f)
    with open(p, "rb") as f:
        return _text_rows(_sample(f), p.stat().st_size)
