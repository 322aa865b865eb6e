"""Where tables come from and how they are written: path resolution and atomic writes.

A bars path may be a file, a directory (every table file in it) or a glob. Table files are
parquet (``.parquet``/``.pq``), CSV (``.csv``, gzipped ``.csv.gz``) and Databento DBN
(``.dbn``, zstd-compressed ``.dbn.zst``). Tables are
written atomically (:func:`foxhunt.runtime.atomic_path`), so a failed write never leaves a
half-written file.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Literal

import polars as pl

from foxhunt.errors import DataError, InputError
from foxhunt.runtime import atomic_path

TABLE_SUFFIXES = (".parquet", ".pq", ".csv")
"""File name endings that are written as tables (``.csv`` as CSV, the others as parquet)."""
READ_SUFFIXES = (*TABLE_SUFFIXES, ".csv.gz", ".dbn", ".dbn.zst")
"""File name endings read as bars (see :func:`table_kind`)."""

_GLOB_CHARS = set("*?[")
_NAMES = ", ".join(READ_SUFFIXES)


def is_parquet(path: Path) -> bool:
    """True for ``.parquet``/``.pq`` names, False for ``.csv``."""
    return path.suffix.lower() in (".parquet", ".pq")


def table_kind(path: Path) -> Literal["parquet", "csv", "dbn"] | None:
    """How a bars file is read, from its name: parquet, CSV (plain or gzipped), DBN, or None."""
    name = path.name.lower()
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith((".csv", ".csv.gz")):
        return "csv"
    if name.endswith((".dbn", ".dbn.zst")):
        return "dbn"
    return None


def resolve_table_paths(path: str | Path) -> list[Path]:
    """Expand a file, directory or glob into a sorted list of table files.

    Args:
        path: a bars file (:data:`READ_SUFFIXES`), a directory holding such files
            (not recursive), or a glob pattern such as ``data/ES*.parquet``.

    Returns:
        The files, sorted by name.

    Raises:
        DataError: nothing exists at ``path``, the pattern or directory matches no table file,
            or a file has an unsupported extension.
    """
    text = str(path)
    if any(ch in _GLOB_CHARS for ch in text):
        files = sorted(Path(p) for p in glob.glob(text) if Path(p).is_file())
        files = [f for f in files if table_kind(f)]
        if not files:
            raise DataError(f"{text}: the pattern matches no {_NAMES} file")
        return files
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and table_kind(f))
        if not files:
            raise DataError(f"{p}: directory holds no {_NAMES} file")
        return files
    if not p.exists():
        raise DataError(f"{p}: no such file or directory")
    if table_kind(p) is None:
        raise DataError(f"{p}: unsupported file type {p.suffix!r} (use {_NAMES})")
    return [p]


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
