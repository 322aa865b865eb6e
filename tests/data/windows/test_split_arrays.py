"""Train / val / test windows built one symbol at a time equal those built from the whole
table (compute_features, split_by_time, fit_scaler, one WindowDataset per split)."""

from __future__ import annotations

import logging
from pathlib import Path

import polars as pl
import pytest
import torch

from foxhunt.data.features.table import compute_features, feature_spec
from foxhunt.data.scale.scaler import fit_scaler
from foxhunt.data.sources.demo import demo_bars
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.data.windows.split_arrays import SplitCut, split_windows_by_symbol
from foxhunt.data.windows.splits import split_by_time
from foxhunt.errors import DataError

SPEC = feature_spec(10)
L, H = 16, 10
CALENDARS = {"CLZ4": "globex", "ES": "cme_equity", "NQ": "cme_equity"}


def _table(symbol: str, part: pl.DataFrame) -> pl.DataFrame:
    assert part["symbol"].unique().to_list() == [symbol]
    return compute_features(part, H, instruments={})


def _reference(
    bars: pl.DataFrame, cut: SplitCut, stride: int, calendars: dict[str, str] = CALENDARS
):  # noqa: ANN202
    splits = split_by_time(
        compute_features(bars, H, instruments={}),
        val_fraction=cut.val_fraction,
        test_fraction=cut.test_fraction,
        embargo=cut.embargo,
        min_rows=cut.min_rows,
    )
    scaler = fit_scaler(splits.train, SPEC)
    sets = [
        WindowDataset(frame, SPEC, L, H, stride=s, scaler=scaler, calendars=calendars)
        for frame, s in ((splits.train, stride), (splits.val, 1), (splits.test, 1))
    ]
    return (*sets, scaler)


def _same(a: WindowDataset, b: WindowDataset) -> None:
    assert (a.symbols, len(a), a.stride) == (b.symbols, len(b), b.stride)
    for name in ("historical", "known", "static", "target"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype == torch.float32
        assert torch.equal(x, y), name
    assert a.origins().equals(b.origins())
    if len(a):
        idx = list(range(0, len(a), 29))
        p, q = a.batch(idx), b.batch(idx)
        for name in ("static", "historical", "known", "target"):
            assert torch.equal(getattr(p, name), getattr(q, name)), name


@pytest.fixture(params=["memory", "disk"])
def spill(request: pytest.FixtureRequest, tmp_path: Path) -> Path | None:
    """Arrays held in memory, or written to files in a folder and mapped."""
    return None if request.param == "memory" else tmp_path


def _check(
    bars: pl.DataFrame,
    cut: SplitCut,
    stride: int = 1,
    calendars: dict[str, str] = CALENDARS,
    spill: Path | None = None,
) -> None:
    step = {"stride": stride} if stride != 1 else {}  # 1: the default
    step |= {"spill": spill} if spill is not None else {}
    *got, got_scaler = split_windows_by_symbol(
        bars, _table, SPEC, L, H, cut, calendars=calendars, **step
    )
    *want, want_scaler = _reference(bars, cut, stride, calendars)
    assert got_scaler == want_scaler  # the same floats, not merely close
    for a, b in zip(got, want, strict=True):
        _same(a, b)


def test_equals_the_whole_table(panel_bars: pl.DataFrame, spill: Path | None) -> None:
    _check(panel_bars, SplitCut(0.2, 0.15, embargo=L + H, min_rows=L + H), stride=3, spill=spill)


def test_without_a_test_split(panel_bars: pl.DataFrame, spill: Path | None) -> None:
    _check(panel_bars, SplitCut(0.25, 0.0, embargo=L + H, min_rows=L + H), spill=spill)


def test_a_short_symbol_is_left_out_with_the_same_warning(
    panel_bars: pl.DataFrame, caplog: pytest.LogCaptureFixture, spill: Path | None
) -> None:
    short = demo_bars(300, seed=4, symbol="NQ").with_columns(pl.col("volume").cast(pl.Float64))
    bars = pl.concat([panel_bars, short]).sort("symbol", "ts")
    cut = SplitCut(0.2, 0.2, embargo=L + H, min_rows=L + H)
    with caplog.at_level(logging.WARNING):
        _check(bars, cut, spill=spill)
    left_out = [r.getMessage() for r in caplog.records if "left out" in r.getMessage()]
    assert len(left_out) == 2  # one from each path, word for word the same
    assert left_out[0] == left_out[1]
    assert left_out[0].startswith("1 of 3 symbols left out") and "NQ (" in left_out[0]


def test_every_symbol_too_short_names_the_first(panel_bars: pl.DataFrame) -> None:
    cut = SplitCut(0.45, 0.45, embargo=200, min_rows=L + H)
    with pytest.raises(DataError) as ours:
        split_windows_by_symbol(panel_bars, _table, SPEC, L, H, cut)
    with pytest.raises(DataError) as theirs:
        _reference(panel_bars, cut, 1)
    assert str(ours.value) == str(theirs.value)
    assert "'CLZ4'" in str(ours.value)


def test_scaling_block_by_block_gives_the_same_floats(
    panel_bars: pl.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    import foxhunt.data.windows.split_arrays as split_arrays

    monkeypatch.setattr(split_arrays, "SCALE_BLOCK_ROWS", 97)  # many blocks, a ragged last one
    _check(panel_bars, SplitCut(0.2, 0.15, embargo=L + H, min_rows=L + H))


def test_scaling_files_block_by_block_gives_the_same_floats(
    panel_bars: pl.DataFrame, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import foxhunt.data.windows.row_files as row_files

    monkeypatch.setattr(row_files, "SCALE_BLOCK_ROWS", 97)  # many blocks, a ragged last one
    _check(panel_bars, SplitCut(0.2, 0.15, embargo=L + H, min_rows=L + H), spill=tmp_path)


def test_without_a_validation_split_the_test_split_is_kept(
    panel_bars: pl.DataFrame, spill: Path | None
) -> None:
    _check(panel_bars, SplitCut(0.0, 0.2, embargo=L + H, min_rows=L + H), spill=spill)


def test_fewest_rows_is_the_cuts_not_the_embargo(
    panel_bars: pl.DataFrame, spill: Path | None
) -> None:
    # validation and test get fewer rows than the embargo (100) but more than min_rows (26)
    _check(panel_bars, SplitCut(0.08, 0.08, embargo=100, min_rows=L + H), spill=spill)


def test_decoder_rows_from_the_calendar_are_scaled_alike(
    panel_bars: pl.DataFrame, spill: Path | None
) -> None:
    # ES on a 24x7 calendar: windows before each session break get their decoder's known
    # inputs from the calendar (with the scaler and calendars passed on)
    calendars = {"CLZ4": "globex", "ES": "24x7"}
    cut = SplitCut(0.2, 0.2, embargo=L + H, min_rows=L + H)
    where = {"spill": spill} if spill is not None else {}
    *got, _ = split_windows_by_symbol(
        panel_bars, _table, SPEC, L, H, cut, calendars=calendars, **where
    )
    assert sum(d.calendar_windows for d in got) > 0
    _check(panel_bars, cut, calendars=calendars, spill=spill)
    *want, _ = _reference(panel_bars, cut, 1, calendars)
    for a, b in zip(got, want, strict=True):
        every = list(range(len(a)))
        assert torch.equal(a.batch(every).known, b.batch(every).known)


def test_no_bars_is_refused_by_name(panel_bars: pl.DataFrame) -> None:
    cut = SplitCut(0.2, 0.2, embargo=L + H, min_rows=L + H)
    with pytest.raises(DataError, match="^no bars: no symbol to build windows for$"):
        split_windows_by_symbol(panel_bars.head(0), _table, SPEC, L, H, cut)


def test_too_little_disk_for_the_files_is_refused_before_any_work(
    panel_bars: pl.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    import foxhunt.data.windows.row_files as row_files
    import foxhunt.data.windows.split_arrays as split_arrays

    need = split_arrays.spill_bytes(panel_bars.height, SPEC, H)
    assert need == 2 * panel_bars.height * (4 * len(SPEC.inputs) + 8 * H)
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(row_files.shutil, "disk_usage", lambda p: usage._replace(free=need - 1))
    built: list[str] = []

    def table(symbol: str, part: pl.DataFrame) -> pl.DataFrame:
        built.append(symbol)
        return _table(symbol, part)

    cut = SplitCut(0.2, 0.2, embargo=L + H, min_rows=L + H)
    with pytest.raises(DataError, match=r"need up to 0\.0 GB of disk .* free; free some"):
        split_windows_by_symbol(panel_bars, table, SPEC, L, H, cut, spill=tmp_path)
    assert built == [] and not list(tmp_path.iterdir())
    monkeypatch.setattr(row_files.shutil, "disk_usage", lambda p: usage._replace(free=need))
    split_windows_by_symbol(panel_bars, table, SPEC, L, H, cut, spill=tmp_path)
    assert built == ["CLZ4", "ES"]


def test_an_error_while_building_closes_every_file(
    panel_bars: pl.DataFrame, tmp_path: Path
) -> None:
    import os

    def fds() -> int:
        """Descriptors open on files in tmp_path (the process's whole count also moves when
        a collection frees earlier tests' files)."""
        n = 0
        for fd in os.listdir("/proc/self/fd"):
            try:
                n += os.readlink(f"/proc/self/fd/{fd}").startswith(f"{tmp_path}/")
            except OSError:  # closed between the listing and the read
                pass
        return n

    def failing(symbol: str, part: pl.DataFrame) -> pl.DataFrame:
        if symbol == "ES":  # the second symbol: the first one's rows are in the files
            raise DataError("ES: bad bars")
        return _table(symbol, part)

    assert fds() == 0
    cut = SplitCut(0.2, 0.2, embargo=L + H, min_rows=L + H)
    with pytest.raises(DataError, match="ES: bad bars") as info:
        split_windows_by_symbol(panel_bars, failing, SPEC, L, H, cut, spill=tmp_path)
    assert info.traceback  # while the error (and its frames' locals) live, no file is open
    assert fds() == 0
    assert {p.name for p in tmp_path.iterdir()} >= {"train.historical.f32", "val.known.f32"}
