"""Row arrays on disk (data/windows/row_files.py): written, scaled, read by windows, pickled by
name, and datasets over them that read like datasets over arrays in memory."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.data.features.table import compute_features, feature_spec
from foxhunt.data.windows import row_files
from foxhunt.data.windows.row_files import (
    MappedRows,
    RowWriter,
    divide_rows,
    read_column,
    scale_rows,
)
from foxhunt.data.windows.split_arrays import SplitCut, split_windows_by_symbol

SPEC = feature_spec(10)
L, H = 16, 10


def _written(path: Path, a: np.ndarray, pieces: int = 3) -> MappedRows:
    w = RowWriter(path, a.dtype, a.shape[1])
    for block in np.array_split(a, pieces):
        w.append(block)
    return w.close()


def test_windows_are_the_rows_of_the_file(tmp_path: Path) -> None:
    a = np.arange(200 * 7, dtype=np.float32).reshape(200, 7)
    m = _written(tmp_path / "a.f32", a)
    assert (m.rows, m.width) == (200, 7)
    assert torch.equal(m.tensor, torch.from_numpy(a))
    first = np.array([0, 5, 150, 188, 5])
    got = m.windows(first, 12)
    assert got.shape == (5, 12, 7) and got.flags.writeable
    assert np.array_equal(got, a[first[:, None] + np.arange(12)[None, :]])
    assert m.windows(np.array([], dtype=np.int64), 3).shape == (0, 3, 7)


@pytest.mark.parametrize("version", [(1, 0), (2, 0)])
def test_an_npy_file_is_read_after_its_header(tmp_path: Path, version: tuple[int, int]) -> None:
    a = np.arange(300, dtype=np.float32).reshape(60, 5)
    with open(tmp_path / "a.npy", "wb") as f:
        np.lib.format.write_array(f, a, version=version)
    m = MappedRows.of_npy(tmp_path / "a.npy")
    assert (m.rows, m.width, m.dtype) == (60, 5, np.float32) and m.offset > 0
    assert torch.equal(m.tensor, torch.from_numpy(a))
    assert np.array_equal(
        m.windows(np.array([0, 55, 3]), 5), a[[[*range(k, k + 5)] for k in (0, 55, 3)]]
    )
    back = pickle.loads(pickle.dumps(m))
    assert back.offset == m.offset and np.array_equal(back.windows(np.array([9]), 2), a[None, 9:11])
    np.save(tmp_path / "b.npy", np.zeros((2, 3, 4), np.float32))
    with pytest.raises(ValueError, match="3-D C array"):
        MappedRows.of_npy(tmp_path / "b.npy")
    np.save(tmp_path / "f.npy", np.asfortranarray(np.zeros((4, 3), np.float32)))
    with pytest.raises(ValueError, match="2-D Fortran array"):
        MappedRows.of_npy(tmp_path / "f.npy")


@pytest.mark.parametrize("first", [[-1], [189], [0, 200]])
def test_a_window_outside_the_file_is_refused(tmp_path: Path, first: list[int]) -> None:
    m = _written(tmp_path / "a.f32", np.zeros((200, 3), np.float32))
    with pytest.raises(IndexError, match="rows outside 0..199"):
        m.windows(np.array(first), 12)


def test_a_block_of_another_shape_or_type_is_refused(tmp_path: Path) -> None:
    w = RowWriter(tmp_path / "a.f32", np.float32, 4)
    with pytest.raises(ValueError, match=r"need \(n, 4\)"):
        w.append(np.zeros((3, 5), np.float32))
    with pytest.raises(ValueError, match="float64"):
        w.append(np.zeros((3, 4), np.float64))
    w.abandon()


def test_a_file_without_values_reads_as_empty(tmp_path: Path) -> None:
    none = _written(tmp_path / "n.f32", np.zeros((0, 4), np.float32), pieces=1)
    narrow = _written(tmp_path / "z.f32", np.zeros((9, 0), np.float32), pieces=1)
    assert none.tensor.shape == (0, 4) and narrow.tensor.shape == (9, 0)
    assert narrow.windows(np.array([0, 2]), 3).shape == (2, 3, 0)
    none.release()  # nothing mapped: nothing to give back


def test_scaling_and_dividing_through_the_file_gives_the_in_memory_floats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(row_files, "SCALE_BLOCK_ROWS", 17)  # blocks and a ragged last one
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 2.0, (100, 5)).astype(np.float32)
    mean, std = [0.5, -1.0, 3.0, 0.0, 2.5], [2.0, 0.3, 1.0, 7.0, 1e-3]
    path = tmp_path / "x.f32"
    x.tofile(path)
    scale_rows(path, 5, mean, std)
    want = ((x.astype(np.float64) - np.asarray(mean)) / np.asarray(std)).astype(np.float32)
    assert np.array_equal(np.fromfile(path, np.float32).reshape(100, 5), want)
    y = rng.normal(0.0, 1e-3, (100, 3))
    y.tofile(tmp_path / "y.f64")
    divide_rows(tmp_path / "y.f64", tmp_path / "y.f32", 3, [1e-3, 2e-3, 4e-3])
    got = np.fromfile(tmp_path / "y.f32", np.float32).reshape(100, 3)
    assert np.array_equal(got, (y / np.asarray([1e-3, 2e-3, 4e-3])).astype(np.float32))
    assert not (tmp_path / "y.f64").exists()


def test_a_column_is_read_across_symbol_blocks(tmp_path: Path) -> None:
    blocks = [np.arange(12, dtype=np.float64).reshape(4, 3), -np.ones((2, 3)), 7 + np.eye(3)]
    path = tmp_path / "c.f64"
    with open(path, "wb") as f:
        for b in blocks:
            for j in range(3):
                f.write(np.ascontiguousarray(b[:, j]).tobytes())
    for j in range(3):
        got = read_column(path, [len(b) for b in blocks], j, 3, np.float64)
        assert np.array_equal(got, np.concatenate([b[:, j] for b in blocks]))


def _rss_file_kib() -> int:
    with open("/proc/self/status") as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith("RssFile"))


def test_release_gives_back_the_pages_a_read_of_the_tensor_mapped(tmp_path: Path) -> None:
    m = _written(tmp_path / "a.f32", np.ones((2**20, 16), np.float32))  # 64 MiB
    before = _rss_file_kib()
    assert float(m.tensor[:, 3].sum()) == 2**20  # one value of every row: every page
    touched = _rss_file_kib()
    m.release()
    assert touched - before > 48 * 1024
    assert touched - _rss_file_kib() > 48 * 1024
    assert float(m.tensor[7:9, 3].sum()) == 2  # still readable


def test_reading_windows_maps_no_page(tmp_path: Path) -> None:
    m = _written(tmp_path / "a.f32", np.ones((2**20, 16), np.float32))
    before = _rss_file_kib()
    got = m.windows(np.arange(0, 2**20 - 60, 997), 60)
    assert got.shape[0] == 1052 and float(got.sum()) == got.size
    assert _rss_file_kib() - before < 4 * 1024  # (64 MiB mapped by reading the tensor)


@pytest.fixture
def spilled(panel_bars: pl.DataFrame, tmp_path: Path):  # noqa: ANN201
    def table(symbol: str, part: pl.DataFrame) -> pl.DataFrame:
        return compute_features(part, H, instruments={})

    cut = SplitCut(0.2, 0.2, embargo=L + H, min_rows=L + H)
    folder = tmp_path / "rows"
    folder.mkdir()
    on_disk = split_windows_by_symbol(panel_bars, table, SPEC, L, H, cut, spill=folder)
    in_memory = split_windows_by_symbol(panel_bars, table, SPEC, L, H, cut)
    return on_disk, in_memory, folder


def _same_batches(a, b) -> None:  # noqa: ANN001
    rows = list(range(0, len(a), 13))
    x, y = a.batch(rows), b.batch(rows)
    for name in ("static", "historical", "known", "target"):
        assert torch.equal(getattr(x, name), getattr(y, name)), name


def test_a_dataset_over_files_pickles_their_names_until_they_are_gone(spilled) -> None:  # noqa: ANN001
    (train, *_), (want, *_), folder = spilled
    assert train.mapped_arrays == ("historical", "known", "static", "target")
    assert want.mapped_arrays == ()
    # in memory: the index and side arrays only; the rows are in the files
    assert train.nbytes + train.file_bytes == want.nbytes and want.file_bytes == 0
    assert train.file_bytes == 4 * len(train.historical) * (
        train.historical.shape[1] + train.known.shape[1] + train.static.shape[1] + H
    )
    small = pickle.dumps(train)
    assert len(small) < train.historical.numel()  # names, not rows
    back = pickle.loads(small)
    assert back.mapped_arrays == train.mapped_arrays
    _same_batches(back, want)
    for p in folder.iterdir():
        p.unlink()
    _same_batches(train, want)  # open and mapped: readable after the files are deleted
    whole = pickle.dumps(train)  # the files are gone: the rows themselves
    assert len(whole) > train.historical.numel() * 4
    again = pickle.loads(whole)
    assert again.mapped_arrays == ()
    _same_batches(again, want)


def test_copies_read_from_the_same_files(spilled) -> None:  # noqa: ANN001
    (train, val, *_), (want_train, want_val, *_), _ = spilled
    for a, b in ((train, want_train), (val, want_val)):
        keep = np.arange(len(a)) % 3 == 0
        pairs = ((copy.copy(a), b), (a.subset(keep), b.subset(keep)))
        for got, want in (*pairs, (a.thinned(50), b.thinned(50))):
            assert got.mapped_arrays == a.mapped_arrays
            _same_batches(got, want)


def test_row_values_are_the_arrays_values(spilled, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    import foxhunt.data.windows.dataset as dataset

    monkeypatch.setattr(dataset, "ROW_VALUE_BLOCK", 100)  # blocks and a ragged last one
    (train, *_), (want, *_), _ = spilled
    rows = torch.from_numpy(train.origin_rows())
    for name, j in (("historical", 0), ("historical", 7), ("known", 2)):
        got = train.row_values(name, rows, j)
        assert torch.equal(got, getattr(want, name)[rows, j])
        assert torch.equal(want.row_values(name, rows, j), got)
    assert train.row_values("known", rows[:0], 1).shape == (0,)


def test_a_nameless_file_leaves_nothing_on_disk_and_reads_on(tmp_path: Path) -> None:
    a = np.arange(40, dtype=np.float32).reshape(10, 4)
    w = RowWriter(tmp_path / "a.f32", np.float32, 4, unlink=True)
    assert not list(tmp_path.iterdir())
    w.append(a)
    m = w.close()
    assert torch.equal(m.tensor, torch.from_numpy(a))
    assert np.array_equal(m.windows(np.array([2, 6]), 3), a[[[2, 3, 4], [6, 7, 8]]])


def test_short_reads_are_completed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    a = np.arange(3000, dtype=np.float32).reshape(300, 10)
    m = _written(tmp_path / "a.f32", a)
    real = os.preadv
    calls: list[int] = []

    def short(fd: int, buffers: list[memoryview], offset: int) -> int:  # at most 64 bytes
        calls.append(offset)
        return real(fd, [buffers[0][:64]], offset)

    monkeypatch.setattr(row_files.os, "preadv", short)
    got = m.windows(np.array([0, 17, 290]), 10)
    assert np.array_equal(got, a[np.array([0, 17, 290])[:, None] + np.arange(10)[None, :]])
    assert len(calls) == 3 * (10 * 40 // 64 + 1)  # 400 bytes per window, 64 at a time
    monkeypatch.setattr(row_files.os, "preadv", lambda fd, b, at: 0)  # the file ends early
    with pytest.raises(OSError, match="file ends at byte"):
        m.windows(np.array([5]), 2)


def test_without_preadv_windows_are_read_through_the_mapping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = np.arange(600, dtype=np.float32).reshape(100, 6)
    m = _written(tmp_path / "a.f32", a)
    monkeypatch.setattr(row_files, "_HAS_PREADV", False)
    first = np.array([3, 90, 0])
    assert np.array_equal(m.windows(first, 10), a[first[:, None] + np.arange(10)[None, :]])


def test_stale_window_files_of_dead_processes_of_this_host_are_removed(tmp_path: Path) -> None:
    import os
    import subprocess

    p = subprocess.Popen(["true"])
    p.wait()
    dead, alive, host = p.pid, os.getpid(), row_files.host_tag()
    made = {
        f".rows.{host}.{dead}": "dir",  # gone
        f".rows.{host}.{alive}": "dir",  # kept: its process runs
        f".rows.other-host.{dead}": "dir",  # kept: another machine's
        f".prepared.{dead}.rows": "dir",  # gone
        f".prepared.{dead}.pt": "file",  # gone
        f".prepared.{dead}.gone.abc": "dir",  # gone
        f".prepared.{alive}.pt": "file",  # kept
        "config.json": "file",  # kept: not ours
    }
    for name, kind in made.items():
        if kind == "dir":
            (tmp_path / name).mkdir()
            (tmp_path / name / "train.historical.f32").write_bytes(b"x")
        else:
            (tmp_path / name).write_bytes(b"x")
    removed = row_files.remove_stale_rows(tmp_path)
    want_gone = {f".rows.{host}.{dead}", f".prepared.{dead}.rows", f".prepared.{dead}.pt"}
    want_gone.add(f".prepared.{dead}.gone.abc")
    assert {q.name for q in removed} == want_gone
    assert {q.name for q in tmp_path.iterdir()} == set(made) - want_gone
