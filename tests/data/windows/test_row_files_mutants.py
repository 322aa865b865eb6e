"""Cases the mutation run of data/windows/row_files.py asked for (docs/testing.md, session 27)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from foxhunt.data.windows import row_files
from foxhunt.data.windows.row_files import MappedRows, RowWriter, read_column, scale_rows
from foxhunt.errors import DataError


@pytest.mark.parametrize(
    ("name", "tag"),
    [("box.example.com", "box-example-com"), ("a_b-c9", "a-b-c9"), ("", "host")],
)
def test_the_host_tag_is_the_name_with_only_letters_digits_and_dashes(
    name: str, tag: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(row_files.socket, "gethostname", lambda: name)
    assert row_files.host_tag() == tag


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_stale_rows_pids_0_and_1_and_names_that_are_not_ours(tmp_path: Path) -> None:
    host, dead = row_files.host_tag(), _dead_pid()
    names = {
        ".rows.0": False,  # not HOST.PID: kept (and sorted first: the others are still looked at)
        f".rows.{host}.0": True,  # pid 0 is no process of ours
        f".rows.{host}.1": False,  # init runs
        f".rows.{host}.x{dead}": False,  # not a pid
        f".prepared.{dead}": False,  # too few parts
        ".prepared.notapid.pt": False,
        f".prepared.{dead}.pt": True,
    }
    for name in names:
        (tmp_path / name).mkdir()
    removed = {p.name for p in row_files.remove_stale_rows(tmp_path)}
    assert removed == {n for n, gone in names.items() if gone}
    assert {p.name for p in tmp_path.iterdir()} == {n for n, gone in names.items() if not gone}


def test_the_disk_refusal_names_the_folder_and_both_sizes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(row_files.shutil, "disk_usage", lambda p: usage._replace(free=1.2e9))
    with pytest.raises(DataError) as info:
        row_files.check_disk(tmp_path, int(2.5e9), 1_234_567)
    assert str(info.value) == (
        f"{tmp_path}: the window files of 1,234,567 bars need up to 2.5 GB of disk while they "
        "are built, and 1.2 GB is free; free some space, or write the run (--out) to another disk"
    )
    row_files.check_disk(tmp_path, int(1.2e9), 1)  # exactly enough: no refusal


def test_window_starts_of_any_shape_are_flattened(tmp_path: Path) -> None:
    a = np.arange(200, dtype=np.float32).reshape(50, 4)
    w = RowWriter(tmp_path / "a.f32", np.float32, 4)
    w.append(a)
    m = w.close()
    got = m.windows(np.array([[3], [40]]), 5)
    assert got.shape == (2, 5, 4)
    assert np.array_equal(got, a[[[*range(3, 8)], [*range(40, 45)]]])


def test_each_window_reads_its_own_bytes_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = np.arange(300, dtype=np.float32).reshape(100, 3)
    w = RowWriter(tmp_path / "a.f32", np.float32, 3)
    w.append(a)
    m = w.close()
    real, sizes = os.preadv, []

    def counted(fd: int, buffers: list[memoryview], offset: int) -> int:
        sizes.append(len(buffers[0]))
        return real(fd, buffers, offset)

    monkeypatch.setattr(row_files.os, "preadv", counted)
    m.windows(np.array([0, 10, 20]), 4)
    assert sizes == [4 * 3 * 4] * 3


def test_an_npy_file_of_another_format_is_refused_by_name(tmp_path: Path) -> None:
    with open(tmp_path / "a.npy", "wb") as f:
        np.lib.format.write_array(f, np.zeros((2, 2), np.float32), version=(3, 0))
    with pytest.raises(ValueError, match=r"a\.npy: \.npy format \(3, 0\) \(need 1\.0 or 2\.0\)"):
        MappedRows.of_npy(tmp_path / "a.npy")


def test_a_file_of_one_column_is_scaled(tmp_path: Path) -> None:
    x = np.array([[1.0], [2.0], [4.0]], np.float32)
    x.tofile(tmp_path / "x.f32")
    scale_rows(tmp_path / "x.f32", 1, [1.0], [2.0])
    assert np.array_equal(np.fromfile(tmp_path / "x.f32", np.float32), [0.0, 0.5, 1.5])


def test_a_column_of_no_blocks_is_empty_of_its_type(tmp_path: Path) -> None:
    (tmp_path / "c.f32").write_bytes(b"")
    got = read_column(tmp_path / "c.f32", [], 0, 3, np.float32)
    assert got.shape == (0,) and got.dtype == np.float32


def test_a_file_without_rows_keeps_its_type(tmp_path: Path) -> None:
    w = RowWriter(tmp_path / "n.f32", np.float32, 3)
    m = w.close()
    assert m.tensor.dtype == torch.float32 and m.tensor.shape == (0, 3)


def test_the_file_is_closed_when_the_rows_are_dropped(tmp_path: Path) -> None:
    import gc

    path = tmp_path / "a.f32"

    def opened() -> int:
        """Descriptors open on this file: the whole process's count also moves when a
        collection frees earlier tests' files (a CI run failed on that)."""
        n = 0
        for fd in os.listdir("/proc/self/fd"):
            try:
                n += os.readlink(f"/proc/self/fd/{fd}") == str(path)
            except OSError:  # closed between the listing and the read
                pass
        return n

    w = RowWriter(path, np.float32, 2)
    w.append(np.zeros((10, 2), np.float32))
    assert opened() == 1  # the writer's file
    m = w.close()
    assert opened() >= 1  # the writer's file closed, the rows' file (and its map's copy) open
    del m
    gc.collect()
    assert opened() == 0  # nothing of the rows left open


def test_a_file_that_ends_early_names_the_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = RowWriter(tmp_path / "a.f32", np.float32, 2)
    w.append(np.zeros((10, 2), np.float32))
    m = w.close()
    replies = iter([8, 0])  # 8 bytes, then the end of the file
    monkeypatch.setattr(row_files.os, "preadv", lambda fd, b, at: next(replies))
    with pytest.raises(OSError, match=r"file ends at byte 32, row 3$"):
        m.windows(np.array([3]), 2)  # row 3 starts at byte 24
