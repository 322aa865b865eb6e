"""What a file's first bytes say it is: the containers a bar file is mistaken for.

A file named for one kind and holding another (a parquet or a zip saved as ``.csv``, a CSV
named ``.parquet`` or ``.csv.gz``, an ``.xls`` named ``.xlsx``) is refused saying what it
holds and what to name it, not with the reader's error for the kind its name claims.
"""

from __future__ import annotations

from pathlib import Path

from foxhunt.errors import DataError

GZIP_MAGIC = b"\x1f\x8b"
BZIP2_MAGIC = b"BZh"
XZ_MAGIC = b"\xfd7zXZ\x00"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
COMPRESSIONS = {
    "gzip": (GZIP_MAGIC, "gzip-compressed data"),
    "bzip2": (BZIP2_MAGIC, "bzip2-compressed data"),
    "xz": (XZ_MAGIC, "xz-compressed data"),
    "zstd": (ZSTD_MAGIC, "zstd-compressed data"),
}
"""Each compression a text file is read in (:mod:`foxhunt.data.read.compressed`): its first
bytes and what it is called."""
ZIP_MAGIC = b"PK\x03\x04"
"""A zip archive's first bytes (``.zip``, and the ``.xlsx``/``.ods`` workbooks that are zips)."""
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
"""An OLE file's first bytes (Excel's ``.xls``)."""

MAGICS = (
    (b"PAR1", "a parquet file", "name it .parquet"),
    (ZIP_MAGIC, "a zip archive (or an .xlsx workbook)", "name it .zip (or .xlsx)"),
    (GZIP_MAGIC, "gzip-compressed data", "name it .csv.gz, or gunzip it"),
    (BZIP2_MAGIC, "bzip2-compressed data", "name it .csv.bz2, or bunzip2 it"),
    (XZ_MAGIC, "xz-compressed data", "name it .csv.xz, or unxz it"),
    (ZSTD_MAGIC, "zstd-compressed data", "name it .csv.zst, or unzstd it"),
    (b"ARROW1", "an Arrow IPC (Feather) file", "name it .feather"),
    (OLE_MAGIC, "an Excel .xls workbook", "name it .xls"),
    (b"DBN", "Databento DBN", "name it .dbn"),
    (b"SCID", "a Sierra Chart intraday file", "name it .scid"),
    (b"SQLite format 3\x00", "an SQLite database", "export the bars as CSV"),
    (b"\x89HDF", "HDF5", "write the bars as CSV or parquet"),
    (b"7z\xbc\xaf", "a 7-Zip archive", "extract it"),
)
"""First bytes of the containers a bar file is mistaken for: (magic, what it is, what to do)."""


TAR = ("a tar archive", "extract it (tar -xf FILE) and pass the folder of its files")
"""A tar archive (``.tar``, and ``.tar.gz`` once decompressed): ``ustar`` at byte 257."""


def holds(head: bytes) -> tuple[str, str] | None:
    """What a file starting with ``head`` is and what to do with it, when its first bytes
    name a container (:data:`MAGICS`, :data:`TAR`); None for anything else (text, say)."""
    if head[257:262] == b"ustar":
        return TAR
    return next(((what, todo) for magic, what, todo in MAGICS if head.startswith(magic)), None)


def mislabelled(path: Path, head: bytes, expected: str) -> DataError | None:
    """The error for a file whose first bytes say it is not what its name says (``expected``:
    ``a text table``, ``parquet``, ``a zip archive``), or None when they do not contradict it.
    Text where a binary kind was expected is named too (a CSV named .parquet)."""
    found = holds(head)
    if found is None:
        if expected == "a text table" or not head or b"\x00" in head[:512]:
            return None
        what, todo = "text (a CSV?)", "name it .csv"
    else:
        what, todo = found
        if expected in what:  # "a text table" names no container: never in what
            return None
    return DataError(f"{path}: the file holds {what}, though its name says {expected}: {todo}")
