"""Compressed delimited text: ``.csv``, ``.txt`` or ``.tsv`` in gzip, bzip2, xz or zstd.

A vendor's bars often come compressed: ``.csv.gz`` (Polygon's flat files, Tardis), ``.csv.zst``
(Databento's batch downloads of CSV, whose default compression is zstd), ``.csv.bz2`` and
``.csv.xz`` (archives and research data sets). Each is decompressed as a stream (gzip, bzip2 and
xz by Python's own modules, zstd by pyarrow's codec, which the parquet reader already needs) and
then read like the plain file. A file whose name says one compression and whose bytes are not it
is refused naming what its bytes are (:mod:`foxhunt.data.read.magic`).
"""

from __future__ import annotations

import gzip
import importlib
import zlib
from pathlib import Path
from typing import BinaryIO, Literal

from foxhunt.errors import DataError

Codec = Literal["gzip", "bzip2", "xz", "zstd"]

CODECS: dict[str, Codec] = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd"}
"""File name ending -> compression."""

TEXT_SUFFIXES = tuple(base + end for end in ("", *CODECS) for base in (".csv", ".txt", ".tsv"))
"""Delimited text, plain or compressed: ``.csv`` ... ``.tsv.zst``."""

try:
    from lzma import LZMAError
except ImportError:  # a Python built without liblzma (pandas warns of the same): no .xz

    class LZMAError(Exception):  # type: ignore[no-redef]
        """Stands in for ``lzma.LZMAError`` where the module is missing."""


ERRORS = (EOFError, OSError, zlib.error, LZMAError)
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


def decompressed(raw: BinaryIO, codec: Codec, where: object) -> BinaryIO:
    """A stream of ``raw``'s decompressed bytes, ``raw`` closed with it (each opens for reading,
    the modes' default); ``where`` names the file in the error.

    Raises:
        DataError: bzip2 or xz on a Python built without that library (pyenv without
            ``libbz2-dev`` or ``liblzma-dev``).
    """
    if codec == "gzip":
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    if codec in _STDLIB:
        module, opener = _STDLIB[codec]
        try:
            stream = getattr(importlib.import_module(module), opener)
        except ImportError:
            raw.close()
            raise DataError(
                f"{where}: this Python was built without the {module} module: decompress the "
                f"{codec} file first, or use a Python built with it"
            ) from None
        return stream(raw)  # type: ignore[no-any-return]
    import pyarrow as pa

    return pa.CompressedInputStream(pa.PythonFile(raw), "zstd")  # type: ignore[return-value]


_STDLIB = {"bzip2": ("bz2", "BZ2File"), "xz": ("lzma", "LZMAFile")}
"""The compressions Python's own modules read, imported when a file needs them (a Python built
without libbz2 or liblzma reads the other kinds)."""


def open_compressed(path: Path, codec: Codec) -> BinaryIO:
    """Open the compressed file ``path`` as its decompressed bytes."""
    return decompressed(open(path, "rb"), codec, path)  # noqa: SIM115
