"""Windows built one symbol at a time equal windows built from the whole feature table."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import torch

from foxhunt.data.features.table import compute_features, feature_spec
from foxhunt.data.scale.scaler import fit_scaler
from foxhunt.data.windows.by_symbol import joined, symbol_blocks, windows_by_symbol
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.errors import DataError

SPEC = feature_spec(10)
L, H = 16, 10
CALENDARS = {"CLZ4": "globex", "ES": "cme_equity"}


def _per_symbol(with_target: bool):  # noqa: ANN202 - the table builder
    def table(symbol: str, part: pl.DataFrame) -> pl.DataFrame:
        assert part["symbol"].unique().to_list() == [symbol]
        return compute_features(part, H, with_targets=with_target, instruments={})

    return table


def _same(a: WindowDataset, b: WindowDataset) -> None:
    assert a.symbols == b.symbols
    assert len(a) == len(b)
    for name in ("historical", "known", "static", "target"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype == torch.float32
            assert torch.equal(x, y), name
    assert a.origins().equals(b.origins())
    assert a.calendar_windows == b.calendar_windows
    idx = list(range(0, len(a), 37))
    p, q = a.batch(idx), b.batch(idx)
    for name in ("static", "historical", "known", "target"):
        x, y = getattr(p, name), getattr(q, name)
        assert (x is None and y is None) or torch.equal(x, y), name


@pytest.mark.parametrize("with_target", [True, False])
def test_equals_the_whole_table(panel_bars: pl.DataFrame, with_target: bool) -> None:
    whole = compute_features(panel_bars, H, with_targets=with_target, instruments={})
    scaler = fit_scaler(compute_features(panel_bars, H, instruments={}), SPEC)
    ref = WindowDataset(
        whole, SPEC, L, H, with_target=with_target, scaler=scaler, calendars=CALENDARS
    )
    got = windows_by_symbol(
        panel_bars,
        _per_symbol(with_target),
        SPEC,
        L,
        H,
        with_target=with_target,
        scaler=scaler,
        calendars=CALENDARS,
    )
    _same(got, ref)
    assert got.nbytes == ref.nbytes


def test_bars_out_of_symbol_order_give_the_same_windows(panel_bars: pl.DataFrame) -> None:
    shuffled = panel_bars.sample(fraction=1.0, shuffle=True, seed=3)
    assert not shuffled["symbol"].is_sorted()
    kw = {"with_target": True, "scaler": None, "calendars": CALENDARS}
    _same(
        windows_by_symbol(shuffled, _per_symbol(True), SPEC, L, H, **kw),
        windows_by_symbol(panel_bars, _per_symbol(True), SPEC, L, H, **kw),
    )


def test_symbol_blocks_are_each_symbols_rows_in_order(panel_bars: pl.DataFrame) -> None:
    third = panel_bars.filter(pl.col("symbol") == "ES").head(50).with_columns(symbol=pl.lit("NQ"))
    bars = pl.concat([panel_bars, third])
    blocks = list(symbol_blocks(bars))
    assert [(s, b.height) for s, b in blocks] == [("CLZ4", 700), ("ES", 800), ("NQ", 50)]
    for sym, block in blocks:
        assert block.equals(bars.filter(pl.col("symbol") == sym))


@pytest.mark.parametrize("sizes", [(3,), (3, 2), (3, 2, 4)])
def test_joined_concatenates_and_empties_its_list(sizes: tuple[int, ...]) -> None:
    parts, at = [], 0
    for n in sizes:  # float64: the joined array keeps the pieces' dtype
        parts.append(torch.arange(at, at + 2 * n, dtype=torch.float64).reshape(n, 2))
        at += 2 * n
    want = torch.cat(parts)
    got = joined(parts)
    assert got.dtype == torch.float64
    assert torch.equal(got, want)
    assert parts == []  # each piece released once copied


def test_with_a_gap_the_calendar_decoder_rows_are_scaled_alike(panel_bars: pl.DataFrame) -> None:
    # a hole in ES's bars: windows whose next H rows are not the scheduled bar times get their
    # decoder's known inputs from the calendar, scaled with the same scaler
    gap = panel_bars.with_row_index("i").filter(~pl.col("i").is_between(1000, 1030)).drop("i")
    whole = compute_features(gap, H, instruments={})
    scaler = fit_scaler(whole, SPEC)
    calendars = {"CLZ4": "globex", "ES": "24x7"}  # ES's decoder runs on through the breaks
    ref = WindowDataset(whole, SPEC, L, H, scaler=scaler, calendars=calendars)
    got = windows_by_symbol(
        gap, _per_symbol(True), SPEC, L, H, with_target=True, scaler=scaler, calendars=calendars
    )
    assert ref.calendar_windows > 0
    _same(got, ref)
    every = list(range(len(ref)))
    assert torch.equal(got.batch(every).known, ref.batch(every).known)


def test_no_symbol_is_refused(panel_bars: pl.DataFrame) -> None:
    with pytest.raises(DataError, match="^no bars: no symbol to build windows for$"):
        windows_by_symbol(
            panel_bars.head(0), _per_symbol(True), SPEC, L, H, with_target=True, scaler=None
        )


@pytest.mark.parametrize("with_target", [True, False])
def test_large_arrays_go_to_files_that_are_gone_once_opened(
    panel_bars: pl.DataFrame, with_target: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import foxhunt.data.windows.by_symbol as by_symbol

    scaler = fit_scaler(compute_features(panel_bars, H, instruments={}), SPEC)
    args = (panel_bars, _per_symbol(with_target), SPEC, L, H)
    kw = {"with_target": with_target, "scaler": scaler, "calendars": CALENDARS}
    in_memory = windows_by_symbol(*args, **kw, spill=tmp_path)  # small: held (the threshold)
    assert in_memory.mapped_arrays == () and not list(tmp_path.iterdir())
    width = len(SPEC.inputs) + (H if with_target else 0)
    monkeypatch.setattr(by_symbol, "SPILL_ABOVE_BYTES", 4 * width * panel_bars.height)
    on_disk = windows_by_symbol(*args, **kw, spill=tmp_path)
    names = ("historical", "known", "static", "target")[: 4 if with_target else 3]
    assert on_disk.mapped_arrays == names
    assert not list(tmp_path.iterdir())  # the folder is deleted; the open files read on
    _same(on_disk, in_memory)
    for name in names:
        assert torch.equal(on_disk.row_range(name, 40, 95), in_memory.row_range(name, 40, 95))
    monkeypatch.setattr(by_symbol, "SPILL_ABOVE_BYTES", 4 * width * panel_bars.height + 1)
    assert windows_by_symbol(*args, **kw, spill=tmp_path).mapped_arrays == ()  # one byte under


def test_scratch_is_the_model_directory_when_writable(tmp_path: Path) -> None:
    import os
    import tempfile

    from foxhunt.data.windows.by_symbol import scratch_for

    assert scratch_for(tmp_path) == tmp_path
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        writable = os.access(locked, os.W_OK)  # root may write anyway
        want = locked if writable else Path(tempfile.gettempdir())
        assert scratch_for(locked) == want
    finally:
        locked.chmod(0o700)


def test_large_arrays_without_the_disk_for_them_are_refused(
    panel_bars: pl.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    import foxhunt.data.windows.by_symbol as by_symbol
    import foxhunt.data.windows.row_files as row_files

    monkeypatch.setattr(by_symbol, "SPILL_ABOVE_BYTES", 0)
    usage = shutil.disk_usage(tmp_path)
    need = 4 * len(SPEC.inputs) * panel_bars.height  # no targets
    monkeypatch.setattr(row_files.shutil, "disk_usage", lambda p: usage._replace(free=need - 1))
    with pytest.raises(DataError, match=f"window files of {panel_bars.height:,} bars need up to"):
        windows_by_symbol(
            panel_bars, _per_symbol(False), SPEC, L, H, with_target=False, scaler=None,
            spill=tmp_path,
        )  # fmt: skip
    assert not list(tmp_path.iterdir())
