"""Row arrays on disk: appended a block at a time, scaled through the file, read by windows.

A run's preparation, given a folder (``spill``, :mod:`foxhunt.data.windows.split_arrays`),
writes each split's row arrays to raw files there instead of holding them: each symbol's rows
are appended (:class:`RowWriter`), z-scored in place a block at a time through the file
(:func:`scale_rows`), and opened as :class:`MappedRows`. Writing and scaling go through
``write``/``read`` calls, so the pages are the kernel's page cache, never the process's memory.

A :class:`~foxhunt.data.windows.dataset.WindowDataset` over such files reads each window's rows
with one ``preadv`` per array (:meth:`MappedRows.windows`: a batch of 256 TFT-225 windows in
about 0.8 ms, against about 1.1 ms to index an array in memory), so batches cost the process
no memory beyond the batch itself. The files are also memory-mapped (:attr:`MappedRows.tensor`)
for code that indexes the arrays directly; a page such a read touches counts in the process's RSS
as file-backed memory, and the kernel maps a file's page cache in large folios (2 MB here,
Linux 6.18 on ext4: touching one value maps 2 MB), so such readers give the pages back
(:meth:`MappedRows.release`, ``madvise(MADV_DONTNEED)``: the data stays in the file and the page
cache) after each block of rows (``WindowDataset.row_values``) or pass.

Pickling a :class:`MappedRows` pickles its file's name: the preparation child hands the windows
to the trainer that way (:mod:`foxhunt.train.prepare`), and the trainer deletes the files once
it has opened them (Linux keeps a deleted file's data while it is open or mapped).
"""

from __future__ import annotations

import mmap
import os
import shutil
import socket
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import torch

from foxhunt.errors import DataError

_HAS_PREADV = hasattr(os, "preadv")
"""Linux and the BSDs; elsewhere :meth:`MappedRows.windows` reads through the mapping."""

SCALE_BLOCK_ROWS = 1 << 15
"""Rows z-scored at a time (a float64 copy of 32,768 rows is 59 MB at 225 inputs)."""


def host_tag() -> str:
    """This machine's name as a file name part (no dots or slashes)."""
    return "".join(c if c.isalnum() or c == "-" else "-" for c in socket.gethostname()) or "host"


def remove_stale_rows(directory: Path) -> list[Path]:
    """Delete window files a killed preparation left in a run directory; return what went.

    Stale: ``.rows.HOST.PID`` (a run that prepared in its own process) of this host, and
    ``.prepared.PID.*`` (a preparation child's hand-over: ``foxhunt train`` on one machine),
    whose process is gone. A folder of a live process, or of another host, is kept."""
    import psutil

    gone = []
    for p in sorted(Path(directory).glob(".rows.*")) + sorted(Path(directory).glob(".prepared.*")):
        parts = p.name.split(".")
        if p.name.startswith(".rows."):
            if len(parts) != 4 or parts[2] != host_tag() or not parts[3].isdigit():
                continue
            pid = int(parts[3])
        else:
            if len(parts) < 4 or not parts[2].isdigit():
                continue
            pid = int(parts[2])
        if psutil.pid_exists(pid) and pid != 0:
            continue
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        gone.append(p)
    return gone


def check_disk(folder: Path, need: int, n_bars: int) -> None:
    """Refuse before any feature is computed when ``folder``'s disk has less than ``need`` free.

    Raises:
        DataError: Not enough free disk, naming the folder and both sizes.
    """
    free = shutil.disk_usage(folder).free
    if free < need:
        raise DataError(
            f"{folder}: the window files of {n_bars:,} bars need up to {need / 1e9:.1f} GB of "
            f"disk while they are built, and {free / 1e9:.1f} GB is free; free some space, or "
            "write the run (--out) to another disk"
        )


class RowWriter:
    """A raw row-major file of ``width`` columns, appended a block of rows at a time.

    ``unlink``: delete the file's name at once (Linux keeps an open file's data): nothing is
    left on disk however the process ends, and :meth:`close` maps the open file; the file can
    then not be reopened by name (nor a dataset over it pickled by name)."""

    def __init__(self, path: Path, dtype: Any, width: int, *, unlink: bool = False) -> None:
        self.path, self.dtype, self.width = Path(path), np.dtype(dtype), width
        self.rows = 0
        self._f: BinaryIO = open(self.path, "w+b")  # noqa: SIM115 - closed in close()
        if unlink:
            self.path.unlink()

    def append(self, block: np.ndarray) -> None:
        """Write ``block`` ((n, width), this dtype) after the rows written so far."""
        if block.dtype != self.dtype or block.shape[1:] != (self.width,):
            raise ValueError(
                f"{self.path}: block {block.dtype}{block.shape}, need (n, {self.width})"
            )
        self._f.write(np.ascontiguousarray(block).data)
        self.rows += block.shape[0]

    def close(self) -> MappedRows:
        """Close the file and map it (the open file: no name is needed)."""
        self._f.flush()
        fd = os.dup(self._f.fileno())
        self._f.close()
        return MappedRows(self.path, self.dtype, self.width, self.rows, fd=fd)

    def abandon(self) -> None:
        """Close the file without mapping it (on failure; closing twice is harmless)."""
        self._f.close()


class MappedRows:
    """A raw row file opened for reads of windows of rows, and mapped read-only as an
    ``(rows, width)`` tensor (nothing read until indexed).

    Args:
        path: The file (``rows x width`` values of ``dtype``, row-major, after ``offset``
            bytes: 0 for a raw file, the header's length for a ``.npy`` file).
        dtype: The values' numpy dtype.
        width: Columns per row.
        rows: Rows in the file.
        offset: Bytes before the first row.
        fd: The file already open for reading (this object closes it); None: open ``path``.
    """

    def __init__(
        self,
        path: Path,
        dtype: Any,
        width: int,
        rows: int,
        offset: int = 0,
        *,
        fd: int | None = None,
    ) -> None:
        self.path, self.dtype = Path(path), np.dtype(dtype)
        self.width, self.rows, self.offset = width, rows, offset
        self._row_bytes = width * self.dtype.itemsize
        count = rows * width
        self._mm: mmap.mmap | None = None
        self._fd: int | None = None
        if count == 0:  # mmap cannot map nothing, and there is nothing to read
            array = np.empty((rows, width), dtype=self.dtype)
            if fd is not None:
                os.close(fd)
        else:
            self._fd = fd if fd is not None else os.open(self.path, os.O_RDONLY)
            size = offset + count * self.dtype.itemsize
            self._mm = mmap.mmap(self._fd, size, access=mmap.ACCESS_READ)
            array = np.frombuffer(self._mm, self.dtype, count, offset).reshape(rows, width)
        with warnings.catch_warnings():
            # torch warns that the array is not writable; datasets only ever index it
            warnings.simplefilter("ignore", UserWarning)
            self.tensor = torch.from_numpy(array)

    def windows(self, first: np.ndarray, length: int) -> np.ndarray:
        """Rows ``first[i] .. first[i] + length - 1`` for each i: ``(B, length, width)``, read
        with one ``preadv`` per window into a fresh array (no page of the file is mapped).

        Raises:
            IndexError: A window runs outside the file's rows.
        """
        first = np.asarray(first, dtype=np.int64).reshape(-1)
        out = np.empty((first.shape[0], length, self.width), dtype=self.dtype)
        if first.size and (int(first.min()) < 0 or int(first.max()) + length > self.rows):
            raise IndexError(f"{self.path}: rows outside 0..{self.rows - 1}")
        if out.size == 0 or self._fd is None:
            return out
        n = length * self._row_bytes
        view = memoryview(out).cast("B")
        if not _HAS_PREADV:  # (not Linux or BSD) read through the mapping
            index = first[:, None] + np.arange(length)[None, :]
            out[:] = self.tensor.numpy()[index]
            return out
        for i, row in enumerate(first.tolist()):
            at = self.offset + row * self._row_bytes
            done = os.preadv(self._fd, [view[i * n : (i + 1) * n]], at)
            while done < n:  # a short read (legal on network filesystems): read the rest
                more = os.preadv(self._fd, [view[i * n + done : (i + 1) * n]], at + done)
                if more == 0:
                    raise OSError(f"{self.path}: file ends at byte {at + done}, row {row}")
                done += more
        return out

    def release(self) -> None:
        """Give back the pages reads of :attr:`tensor` mapped (they stay in the file and the
        page cache)."""
        if self._mm is not None and hasattr(mmap, "MADV_DONTNEED"):
            self._mm.madvise(mmap.MADV_DONTNEED)

    def __del__(self) -> None:
        if getattr(self, "_fd", None) is not None:
            os.close(self._fd)  # type: ignore[arg-type]
            self._fd = None

    def __reduce__(self) -> tuple[Any, ...]:
        return (MappedRows, (self.path, self.dtype.str, self.width, self.rows, self.offset))

    @classmethod
    def of_npy(cls, path: Path) -> MappedRows:
        """A 2-D C-order ``.npy`` file (e.g. the feature store's window cache).

        Raises:
            ValueError: Not a 2-D C-order array.
        """
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f"{path}: .npy format {version} (need 1.0 or 2.0)")
            read = (
                np.lib.format.read_array_header_1_0
                if version == (1, 0)
                else (np.lib.format.read_array_header_2_0)
            )
            shape, fortran, dtype = read(f)
            offset = f.tell()
        if fortran or len(shape) != 2:
            raise ValueError(f"{path}: a {len(shape)}-D {'Fortran' if fortran else 'C'} array")
        return cls(path, dtype, shape[1], shape[0], offset)


def scale_rows(path: Path, width: int, mean: Sequence[float], std: Sequence[float]) -> None:
    """z-score the columns of raw float32 row file ``path`` in place, in float64, a block of
    :data:`SCALE_BLOCK_ROWS` rows at a time (the same operations on each value as
    :func:`foxhunt.data.windows.row_arrays.row_arrays`: the same floats)."""
    if width == 0:
        return
    m = np.asarray(mean, dtype=np.float64)
    s = np.asarray(std, dtype=np.float64)
    row_bytes = 4 * width
    with open(path, "r+b") as f:
        f.seek(0, 2)
        rows = f.tell() // row_bytes
        for start in range(0, rows, SCALE_BLOCK_ROWS):
            n = min(SCALE_BLOCK_ROWS, rows - start)
            f.seek(start * row_bytes)
            x = np.fromfile(f, dtype=np.float32, count=n * width).reshape(n, width)
            x[:] = (x.astype(np.float64) - m) / s
            f.seek(start * row_bytes)
            f.write(x.data)


def divide_rows(source: Path, dest: Path, width: int, divisor: Sequence[float]) -> None:
    """Raw float64 row file ``source`` divided by ``divisor`` per column, as float32 rows in
    ``dest``, a block at a time (``source`` is deleted)."""
    d = np.asarray(divisor, dtype=np.float64)
    with open(source, "rb") as f, open(dest, "wb") as out:
        while True:
            x = np.fromfile(f, dtype=np.float64, count=SCALE_BLOCK_ROWS * width)
            if x.size == 0:
                break
            out.write((x.reshape(-1, width) / d).astype(np.float32).data)
    Path(source).unlink()


def read_column(
    path: Path, blocks: Sequence[int], column: int, width: int, dtype: Any
) -> np.ndarray:
    """Column ``column`` of a column-major file of symbol blocks: each block holds ``width``
    columns of ``blocks[k]`` rows, one column after another; the column's values of every block,
    in block order."""
    dt = np.dtype(dtype)
    parts = []
    offset = 0
    with open(path, "rb") as f:
        for n in blocks:
            f.seek(offset + column * n * dt.itemsize)
            parts.append(np.fromfile(f, dtype=dt, count=n))
            offset += width * n * dt.itemsize
    return np.concatenate(parts) if parts else np.empty(0, dt)
