"""Where tables come from and how they are written: path resolution and atomic writes.

A bars path may be a file, a directory (every table file in it) or a glob. Table files are
parquet (``.parquet``/``.pq``), Feather (``.feather``, ``.arrow``, ``.ipc``), delimited text
(``.csv``, ``.txt``, ``.tsv``, plain or compressed: ``.csv.gz``, ``.csv.bz2``, ``.csv.xz``,
``.csv.zst``, ...; see :mod:`foxhunt.data.read.compressed`), Databento DBN (``.dbn``,
zstd-compressed ``.dbn.zst``), Sierra Chart intraday files (``.scid``) and zip archives of
delimited text (``.zip``: every
``.csv``/``.tsv`` inside, or its ``.txt`` files when it holds no ``.csv``; histdata, Binance and
QuantConnect ship zips). A file inside a zip is named by a
path through the archive, ``HISTDATA_COM_ASCII_EURUSD_M12018.zip/DAT_ASCII_EURUSD_M1_2018.csv``
(:func:`zip_member`), and messages name it so. In a directory, ``README*`` and ``LICENSE*``
files are not bars, nor ``.txt`` files beside other table files. Tables are
written atomically (:func:`foxhunt.runtime.atomic_path`), so a failed write never leaves a
half-written file.
"""

from __future__ import annotations

import functools
import glob
import logging
import zipfile
from pathlib import Path
from typing import Literal

import polars as pl

from foxhunt.data.read.compressed import CODECS, TEXT_SUFFIXES
from foxhunt.data.read.magic import TAR, mislabelled
from foxhunt.errors import DataError, InputError
from foxhunt.runtime import atomic_path

log = logging.getLogger(__name__)

TABLE_SUFFIXES = (".parquet", ".pq", ".csv")
"""File name endings that are written as tables (``.csv`` as CSV, the others as parquet)."""
JSON_SUFFIXES = tuple(b + end for end in ("", *CODECS) for b in (".json", ".jsonl", ".ndjson"))
"""Bars as JSON records (:mod:`foxhunt.data.read.json_bars`), plain or compressed
(``.json.gz``: an API's answers saved gzipped); in a folder or glob read only when no other
table file is there (a vendor's metadata, an instrument table beside the bars)."""
IPC_SUFFIXES = (".feather", ".arrow", ".ipc")
"""Arrow IPC files: Feather v2, what pandas' ``to_feather`` and R's ``arrow::write_feather``
write, read by polars as parquet is."""
WORKBOOK_SUFFIXES = (".xlsx", ".xlsm", ".xls", ".xlsb", ".ods")
"""Excel and OpenDocument workbooks (:mod:`foxhunt.data.read.workbook`)."""
READ_SUFFIXES = (
    *TABLE_SUFFIXES,
    *TEXT_SUFFIXES[1:],  # .txt, .tsv and the compressed ones: .csv.gz ... .tsv.zst
    *IPC_SUFFIXES,
    *JSON_SUFFIXES,
    ".zip",
    ".dbn",
    ".dbn.zst",
    ".scid",
    *WORKBOOK_SUFFIXES,
)
"""File name endings read as bars (see :func:`table_kind`)."""

_GLOB_CHARS = set("*?[")
_NAMES = ", ".join(
    (
        ".parquet",
        ".pq",
        ".csv, .txt, .tsv (plain or .gz, .bz2, .xz, .zst)",
        *IPC_SUFFIXES,
        ".json, .jsonl, .ndjson (plain or .gz, .bz2, .xz, .zst)",
        ".zip",
        ".dbn",
        ".dbn.zst",
        ".scid",
    )
    + WORKBOOK_SUFFIXES
)
"""The endings read, for messages (the compressed text ones in a word)."""


def is_parquet(path: Path) -> bool:
    """True for ``.parquet``/``.pq`` names, False for ``.csv``."""
    return path.suffix.lower() in (".parquet", ".pq")


_NOT_BARS = ("readme", "license", "licence", ".", "~$")
"""Names that are never bars: notes, and the hidden files other programs leave beside data
(macOS's ``._ES.csv`` and ``.DS_Store``, Excel's lock file ``~$ES.xlsx`` of an open workbook)."""


def table_kind(
    path: Path,
) -> Literal["parquet", "csv", "ipc", "json", "dbn", "scid", "zip", "workbook"] | None:
    """How a bars file is read, from its name: parquet, delimited text (plain or compressed,
    also inside a zip), Feather, JSON records, DBN, Sierra Chart's intraday files, a zip
    archive, a workbook, or None."""
    name = path.name.lower()
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith(TEXT_SUFFIXES):
        return "csv"
    if name.endswith(IPC_SUFFIXES):
        return "ipc"
    if name.endswith(JSON_SUFFIXES):
        return "json"
    if name.endswith((".dbn", ".dbn.zst")):
        return "dbn"
    if name.endswith(".scid"):
        return "scid"
    if name.endswith(".zip"):
        return "zip"
    if name.endswith(WORKBOOK_SUFFIXES):
        return "workbook"
    return None


def zip_member(path: Path) -> tuple[Path, str] | None:
    """``(archive, member name)`` when ``path`` names a file inside a zip archive
    (``a.zip/b.csv``), else None. The name as the archive writes it: Windows PowerShell 5.1's
    ``Compress-Archive`` writes ``crypto_1h\\BTCUSDT_1h.csv``, which is read as the path
    ``crypto_1h/BTCUSDT_1h.csv`` (the folder's name was the symbol of every file)."""
    for parent in path.parents:
        if parent.name.lower().endswith(".zip") and parent.is_file():
            name = path.relative_to(parent).as_posix()
            windows = name.replace("/", "\\")
            if "/" in name and windows in _member_names(parent, parent.stat().st_mtime_ns):
                return parent, windows
            return parent, name
    return None


@functools.lru_cache(maxsize=32)
def _member_names(archive: Path, mtime_ns: int) -> frozenset[str]:
    """The names in ``archive`` (its modification time keys the cache)."""
    try:
        with zipfile.ZipFile(archive) as z:
            return frozenset(z.namelist())
    except (OSError, zipfile.BadZipFile):
        return frozenset()


def is_readable(path: Path) -> bool:
    """True for an existing file or a member of an existing zip archive."""
    return path.is_file() or zip_member(path) is not None


_DATA_LIKE = (
    ".parquet", ".pq", ".zip", ".dbn", ".zst", ".feather", ".arrow", ".ipc", ".json", ".jsonl",
    ".ndjson", ".scid", ".bz2", ".xz", ".gz", ".h5", ".hdf5", ".pkl", ".pickle", ".tar", ".tgz", ".7z",
    ".db", ".sqlite", ".sqlite3", ".numbers", *WORKBOOK_SUFFIXES,
)  # fmt: skip
"""Endings of files that may hold bars: one left unread beside the bars read is named."""
_METADATA = ("metadata.json", "symbology.json", "condition.json", "manifest.json")
"""Files a vendor writes beside its bars (Databento's batch downloads): never bars."""


def _warn_unread(where: Path, names: list[str], what: str, advice: str) -> None:
    """One warning naming the files in ``where`` that look like data but are not read."""
    unread = [
        n
        for n in names
        if Path(n).name.lower().endswith(_DATA_LIKE)
        and Path(n).name.lower() not in _METADATA
        and not Path(n).name.lower().startswith(_NOT_BARS)
    ]
    if unread:
        shown = ", ".join(unread[:5]) + (", ..." if len(unread) > 5 else "")
        log.warning(
            "%s: %d file%s not read: %s; only %s are read (%s)",
            where,
            len(unread),
            "s" if len(unread) > 1 else "",
            shown,
            what,
            advice,
        )


def _zip_members(archive: Path) -> list[Path]:
    """The delimited-text files inside ``archive`` (see the module docstring)."""
    try:
        with zipfile.ZipFile(archive) as z:
            names = [i.filename for i in z.infolist() if not i.is_dir()]
    except (OSError, zipfile.BadZipFile) as e:
        with archive.open("rb") as f:
            wrong = mislabelled(archive, f.read(512), "a zip archive")
        raise wrong or DataError(f"{archive}: cannot read the zip archive ({e})") from e
    names = [n for n in names if not n.startswith("__MACOSX/")]
    _warn_unread(
        archive,
        [n for n in names if table_kind(Path(n)) != "csv"],
        "its delimited-text files (.csv, .tsv, .txt, plain or .gz, .bz2, .xz, .zst)",
        "extract the others, or write them as CSV",
    )
    names = [
        n
        for n in names
        if not Path(n).name.lower().startswith(_NOT_BARS) and table_kind(Path(n)) == "csv"
    ]
    tables = [n for n in names if not n.lower().endswith(".txt")]
    chosen = tables or names
    if not chosen:
        raise DataError(f"{archive}: the zip archive holds no .csv, .tsv or .txt file")
    return [archive / n.replace("\\", "/") for n in sorted(chosen)]


_NO_PRICES = {
    "premiumindexklines": "Binance's premium index klines (a future's premium over its index, near 0)"
}
"""Folders whose files hold bars of something that is no price, under a price file's name
(Binance's ``premiumIndexKlines/BTCUSDT-1m-2024-01-06.csv``: BTCUSDT at 0.00012 until session
53)."""


def _refuse_no_prices(files: list[Path]) -> None:
    for f in files:
        hit = next((_NO_PRICES[p.lower()] for p in f.parts if p.lower() in _NO_PRICES), None)
        if hit is not None:
            raise DataError(
                f"{f}: {hit}, not prices (the folder {f.parent.name!r}); read the klines "
                "of its prices instead"
            )


def _expand(files: list[Path]) -> list[Path]:
    """Zip archives replaced by their members; ``.txt`` files dropped when other tables are
    there (notes beside the bars), kept when they are all there is (Quantiacs' folders); JSON
    files alike (a vendor's metadata or an instrument table beside the bars)."""
    tables = [f for f in files if not f.name.lower().endswith((".txt", *JSON_SUFFIXES))]
    unread = [f for f in files if f.name.lower().endswith(JSON_SUFFIXES)] if tables else []
    if unread:
        log.warning(
            "%s: JSON beside other bar files is not read as bars (a vendor's metadata, an "
            "instrument table): give its path alone to read it",
            ", ".join(str(f) for f in unread[:5]) + (", ..." if len(unread) > 5 else ""),
        )
    files = tables or files
    _refuse_no_prices(files)
    out: list[Path] = []
    for f in files:
        out += _zip_members(f) if table_kind(f) == "zip" else [f]
    return out


def _bars_file(f: Path) -> bool:
    name = f.name.lower()
    return (
        f.is_file()
        and table_kind(f) is not None
        and not name.startswith(_NOT_BARS)
        and name not in _METADATA
    )


def resolve_table_paths(path: str | Path) -> list[Path]:
    """Expand a file, directory or glob into a sorted list of table files.

    Args:
        path: a bars file (:data:`READ_SUFFIXES`), a directory holding such files
            (not recursive), a glob pattern such as ``data/ES*.parquet``, or a file inside a
            zip archive (``a.zip/b.csv``).

    Returns:
        The files, sorted by name; a zip archive is replaced by its members.

    Raises:
        DataError: nothing exists at ``path``, the pattern or directory matches no table file,
            or a file has an unsupported extension.
    """
    text = str(path)
    if any(ch in _GLOB_CHARS for ch in text):
        files = sorted(Path(p) for p in glob.glob(text, recursive=True) if _bars_file(Path(p)))
        if not files:
            raise DataError(f"{text}: the pattern matches no {_NAMES} file")
        return _expand(files)
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if _bars_file(f))
        if not files:
            raise DataError(f"{p}: directory holds no {_NAMES} file{_hive_hint(p)}")
        _warn_of_subfolders(p)
        others = sorted(f.name for f in p.iterdir() if f.is_file() and table_kind(f) is None)
        _warn_unread(p, others, f"{_NAMES} files", "write the others as CSV or parquet")
        return _expand(files)
    if zip_member(p) is not None:
        archive, member = zip_member(p)  # type: ignore[misc]
        with zipfile.ZipFile(archive) as z:
            if member not in z.namelist():
                raise DataError(f"{archive}: the zip archive holds no file {member!r}")
        return [p]
    if not p.exists():
        raise DataError(f"{p}: no such file or directory")
    if table_kind(p) is None:
        hint = _SAVE_AS.get(p.suffix.lower(), "")
        if p.name.lower().endswith(_TAR_ENDINGS):
            hint = f": a tar archive is not read; {TAR[1]}"
        raise DataError(f"{p}: unsupported file type {p.suffix!r} (use {_NAMES}){hint}")
    return _expand([p])


def _hive_hint(folder: Path) -> str:
    """For a directory of subfolders with bars only (a hive-partitioned dataset,
    ``symbol=ES/``): how to read them."""
    nested = sorted(d.name for d in folder.iterdir() if d.is_dir() and not d.name.startswith("."))
    if not any(any(_bars_file(f) for f in (folder / d).rglob("*")) for d in nested):
        return ""
    return (
        f"; its subfolders ({', '.join(nested[:3])}{', ...' if len(nested) > 3 else ''}) hold "
        f"bars: the glob '{folder}/**/*' reads them (each takes its folder's symbol, "
        "symbol=ES gives ES)"
    )


def _warn_of_subfolders(folder: Path) -> None:
    """One warning naming the subfolders of ``folder`` that hold bar files: a directory is
    read without them (a glob such as ``DIR/**/*.csv`` reads them too)."""
    nested = sorted(
        d.name
        for d in folder.iterdir()
        if d.is_dir() and not d.name.startswith(".") and any(_bars_file(f) for f in d.rglob("*"))
    )
    if nested:
        log.warning(
            "%s: subfolders not read (a directory is read without them): %s; the glob "
            "'%s/**/*' reads them too",
            folder,
            ", ".join(nested[:5]) + (", ..." if len(nested) > 5 else ""),
            folder,
        )


_SAVE_AS = {
    ".numbers": ": a Numbers workbook is not read; export its sheet of bars as CSV (UTF-8)",
    ".h5": ": HDF5 is not read; write the bars as CSV or parquet (pandas: df.to_parquet)",
    ".hdf5": ": HDF5 is not read; write the bars as CSV or parquet (pandas: df.to_parquet)",
    ".pkl": ": a pickle is never read (it can run code); write the bars as parquet",
    ".pickle": ": a pickle is never read (it can run code); write the bars as parquet",
}
"""What to do with a file type foxhunt does not read (appended to the refusal)."""
_TAR_ENDINGS = (".tar", ".tgz", ".tbz2", ".txz", ".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst")


def write_table(df: pl.DataFrame, path: Path) -> None:
    """Write ``df`` as parquet or CSV (by extension), atomically.

    Args:
        df: the table.
        path: destination; ``.parquet``/``.pq`` or ``.csv``.

    Raises:
        InputError: the extension is neither parquet nor CSV, or the folder does not exist.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise InputError(f"{path}: output must end in .parquet or .csv, not {suffix or '(none)'!r}")
    if not path.parent.exists():
        raise InputError(f"{path}: folder {path.parent} does not exist")
    with atomic_path(path) as tmp:
        if suffix == ".csv":
            df.write_csv(tmp)
        else:
            df.write_parquet(tmp, compression="zstd", statistics=True)
