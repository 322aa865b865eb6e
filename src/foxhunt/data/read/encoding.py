"""The text encoding of a delimited bar file: UTF-8, UTF-16 or a Windows code page.

Most vendors write UTF-8 (or ASCII, which is UTF-8). Two others come up:

* **UTF-16**, with a byte-order mark: MetaTrader 5 exports and Excel's "Unicode text";
  without the mark, every other byte of an ASCII-range file is 0 and gives it away.
* **Windows-1252** (a superset of Latin-1 in printable characters): a column name or symbol
  written on a European Windows machine (``Clôture``, ``Volumen (Stück)``). Judged on the first
  :data:`HEAD_BYTES` bytes: when they are not UTF-8, the file is read as Windows-1252. A byte
  that is not UTF-8 further on (a damaged file) is read as U+FFFD and, inside a number, named by
  its row like any value that is not a number.
* **An East Asian code page**: GB18030/GBK (Tongdaxin's and East Money's exports), Shift-JIS
  (cp932: Japanese sites) or cp949 (KRX): a head that is not UTF-8 whose first lines, decoded
  so, name bar columns in their language (``日期``, ``始値``, ``시가``:
  :data:`foxhunt.data.read.columns.LOCALIZED`); Windows-1252 garbled them.

polars reads UTF-8 only: a file in another encoding is decoded here, in memory, and handed to
it re-encoded (:func:`foxhunt.data.read.csv_dialect.scan_csv_text`).
"""

from __future__ import annotations

import codecs
import re
import zipfile
from pathlib import Path
from typing import BinaryIO

from foxhunt.data.read.compressed import ERRORS, codec_of, decompressed, open_compressed
from foxhunt.data.read.files import zip_member
from foxhunt.data.read.magic import COMPRESSIONS, holds, mislabelled
from foxhunt.errors import DataError

HEAD_BYTES = 1 << 16
"""Bytes read to judge the encoding."""
UTF8 = "utf-8"


def open_bytes(path: Path) -> BinaryIO:
    """Open a text bar file as bytes: a plain file, a compressed one (``.gz``, ``.bz2``,
    ``.xz``, ``.zst``: :mod:`foxhunt.data.read.compressed`), or a file inside a zip archive
    (``a.zip/b.csv``, ``a.zip/b.csv.gz``)."""
    member = zip_member(path)
    codec = codec_of(path.name)
    if member is not None:
        archive = zipfile.ZipFile(member[0])
        inner = archive.open(member[1])
        if codec is not None:  # monthly .csv.gz files zipped together
            return decompressed(inner, codec, path)  # type: ignore[arg-type]
        return inner  # type: ignore[return-value]
    if codec is not None:
        return open_compressed(path, codec)
    return open(path, "rb")  # noqa: SIM115


def encoding_of(head: bytes) -> str:
    """The encoding of a file that starts with ``head``: ``utf-8``, ``utf-16`` (with a byte-order
    mark), ``utf-16-le``/``utf-16-be`` (without, told by where the zero bytes are) or
    ``cp1252``."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    even, odd = head[0::2], head[1::2]
    if len(head) >= 4 and odd.count(0) >= len(odd) // 2 and even.count(0) == 0:
        return "utf-16-le"
    if len(head) >= 4 and even.count(0) >= len(even) // 2 and odd.count(0) == 0:
        return "utf-16-be"
    try:
        codecs.getincrementaldecoder(UTF8)().decode(head, final=False)
    except UnicodeDecodeError:
        return _east_asian(head) or "cp1252"
    return UTF8


EAST_ASIAN = ("gb18030", "cp932", "cp949")
"""The code pages tried for a head that is not UTF-8, in order (:func:`_east_asian`)."""


def _east_asian(head: bytes) -> str | None:
    """The first of :data:`EAST_ASIAN` that decodes the head's first lines into at least two
    names of bar columns in an East Asian language, else None."""
    from foxhunt.data.read.columns import LOCALIZED, LOCALIZED_DATES, LOCALIZED_TIMES

    known = {n for names in LOCALIZED.values() for n in names if not n.isascii()}
    known |= {n for n in (*LOCALIZED_DATES, *LOCALIZED_TIMES) if not n.isascii()}
    lines = head[:4096].splitlines()[:3]
    for codec in EAST_ASIAN:
        try:
            text = b"\n".join(lines).decode(codec)
        except UnicodeDecodeError:
            continue
        words = {w.strip().lower() for w in re.split(r"[,;\t|\"\n]", text)}
        if len(words & known) >= 2:
            return codec
    return None


def text_encoding(path: Path) -> str:
    """:func:`encoding_of` the file's first :data:`HEAD_BYTES` bytes."""
    codec = codec_of(path.name)
    try:
        with open_bytes(path) as f:
            head = f.read(HEAD_BYTES)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise  # the file's own error: not a damaged stream
    except ERRORS as e:
        if codec is not None:
            magic, what = COMPRESSIONS[codec]
            raw = _raw_head(path)
            if (wrong := mislabelled(path, raw, what)) is not None:
                raise wrong from None  # text named .csv.gz, bzip2 data named .csv.xz
            if not raw.startswith(magic):
                raise DataError(f"{path}: not {what}") from None
        raise DataError(f"{path}: cannot read ({e})") from None
    inner = holds(head) if codec is not None else None
    if inner is not None and inner[0] in {what for _, what in COMPRESSIONS.values()}:
        raise DataError(
            f"{path}: compressed twice ({inner[0]} inside the {codec}): decompress it once"
        )
    if (wrong := mislabelled(path, head, "a text table")) is not None:
        raise wrong
    what = not_delimited(head)
    if what == "JSON":
        raise DataError(
            f"{path}: the file holds JSON, not delimited bars: name it .json (a list of "
            "records with names is read) or write it as CSV"
        )
    if what is not None:
        raise DataError(
            f"{path}: the file holds {what}, not bars: a failed download or a login page? "
            "save the data itself (CSV)"
        )
    return encoding_of(head)


def _raw_head(path: Path) -> bytes:
    """The first :data:`HEAD_BYTES` bytes as stored (a zip member's too), not decompressed."""
    member = zip_member(path)
    if member is None:
        with open(path, "rb") as f:
            return f.read(HEAD_BYTES)
    with zipfile.ZipFile(member[0]) as z, z.open(member[1]) as f:
        return f.read(HEAD_BYTES)


def not_delimited(head: bytes) -> str | None:
    """What a text file that is no delimited table holds, or None: ``JSON`` (an API's answer
    saved as ``.csv``) or ``a web page (HTML)`` (a failed download, a login page)."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:512].lower()
    if text.startswith((b"<!doctype html", b"<html", b"<?xml", b"<table", b"<head")):
        return "a web page (HTML)"
    if text.startswith((b"[{", b'{"', b"[[", b"[\n", b"[ ", b"{\n", b"{ ")):
        return "JSON"
    return None


def utf8_bytes(path: Path, encoding: str) -> bytes:
    """The whole file decoded from ``encoding`` and written as UTF-8 (bytes that are not in
    the encoding become U+FFFD)."""
    with open_bytes(path) as f:
        data = f.read()
    return data.decode(encoding, errors="replace").encode(UTF8)
