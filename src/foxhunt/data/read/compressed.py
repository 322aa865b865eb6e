"""Compressed delimited text: ``.csv``, ``.txt`` or ``.tsv`` in gzip, bzip2, xz or zstd.

A vendor's bars often come compressed: ``.csv.gz`` (Polygon's flat files, Tardis), ``.csv.zst``
(Databento's batch downloads of CSV, whose default compression is zstd), ``.csv.bz2`` and
``.csv.xz`` (archives and research data sets). Each is decompressed as a stream (gzip, bzip2 and
xz by Python's own modules, zstd by pyarrow's codec, which the parquet reader already needs) and
then read like the plain file. A file whose name says one compression and whose bytes are not it
is refused naming what its bytes are (:mod:`foxhunt.data.read.magic`).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zlib
from pathlib import Path
from typing import BinaryIO, Literal

Codec = Literal["gzip", "bzip2", "xz", "zstd"]

CODECS: dict[str, Codec] = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd"}
"""File name ending -> compression."""

TEXT_SUFFIXES = tuple(base + end for end in ("", *CODECS) for base in (".csv", ".txt", ".tsv"))
"""Delimited text, plain or compressed: ``.csv`` ... ``.tsv.zst``."""

ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)
"""What a damaged or cut-short stream raises (gzip's ``BadGzipFile``, bzip2's and pyarrow's
``OSError`` are among them)."""


def codec_of(name: str) -> Codec | None:
    """The compression a file name ends in (``.csv.bz2``: ``bzip2``), or None."""
    lower = name.lower()
    return next((codec for end, codec in CODECS.items() if lower.endswith(end)), None)


def uncompressed_name(name: str) -> str:
    """``name`` without its compression ending: ``ES.csv.zst`` -> ``ES.csv``."""
    lower = name.lower()
    end = next((e for e in CODECS if lower.endswith(e)), "")
    return name[: len(name) - len(end)]


def decompressed(raw: BinaryIO, codec: Codec) -> BinaryIO:
    """A stream of ``raw``'s decompressed bytes (``raw`` is closed with it; each opens for
    reading, the modes' default)."""
    if codec == "gzip":
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    if codec == "bzip2":
        return bz2.BZ2File(raw)  # type: ignore[return-value]
    if codec == "xz":
        return lzma.LZMAFile(raw)  # type: ignore[return-value]
    import pyarrow as pa

    return pa.CompressedInputStream(pa.PythonFile(raw), "zstd")  # type: ignore[return-value]


def open_compressed(path: Path, codec: Codec) -> BinaryIO:
    """Open the compressed file ``path`` as its decompressed bytes."""
    return decompressed(open(path, "rb"), codec)  # noqa: SIM115
