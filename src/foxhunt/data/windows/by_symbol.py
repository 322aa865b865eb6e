"""Window arrays built one symbol at a time, so one symbol's feature table is alive at once.

Computing the features of every symbol at once holds the whole table (float32 inputs, float64
targets) while the row arrays are filled from it: about twice the arrays at the peak, 10.1 GB to
evaluate a year of 1-minute bars of 10 instruments (docs/memory.md). Here each symbol's table is
built, laid out as row arrays (:func:`~foxhunt.data.windows.row_arrays.row_arrays`) and dropped
before the next symbol's; the pieces are then copied into the joined arrays one by one, each
freed as soon as it is copied, so the peak is the arrays once plus one symbol's table.

Bars whose arrays would pass :data:`SPILL_ABOVE_BYTES` are given a folder (``spill``): each
symbol's rows are then appended to files in a temporary folder there whose names are deleted as
soon as they are open (an open file keeps its data), read by windows
(:mod:`foxhunt.data.windows.row_files`), so the peak holds one symbol's table and not the arrays,
and nothing is left on disk however the process ends.

The result equals :class:`~foxhunt.data.windows.dataset.WindowDataset` built from the whole table
(the features of a symbol depend on its own bars only).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import numpy as np
import polars as pl
import torch

from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.data.windows.row_arrays import row_arrays
from foxhunt.data.windows.row_files import MappedRows, RowWriter, check_disk
from foxhunt.errors import DataError

SPILL_ABOVE_BYTES = 512 * 2**20
"""Window arrays (float32 inputs and targets, one row per bar) of this size or more go to
files when a folder is given."""

SymbolTable = Callable[[str, pl.DataFrame], pl.DataFrame]
"""``(symbol, its bars) -> its feature rows`` (``ts`` and the spec's columns, in time order)."""


def scratch_for(model_dir: Path) -> Path:
    """Where evaluation and forecasting write their temporary window files: the model's run
    directory (on the disk training used) when it is writable, else the system's temporary
    folder (``TMPDIR``)."""
    return Path(model_dir) if os.access(model_dir, os.W_OK) else Path(tempfile.gettempdir())


def symbol_blocks(bars: pl.DataFrame) -> Iterator[tuple[str, pl.DataFrame]]:
    """Each symbol and its rows of ``bars``, in symbol order (slices: nothing is copied when
    ``bars`` is already sorted by symbol, as read bars are)."""
    if not bars["symbol"].is_sorted():
        bars = bars.sort(["symbol", "ts"], maintain_order=True)
    start = 0
    for sym, n in bars.group_by("symbol", maintain_order=True).len().iter_rows():
        yield str(sym), bars.slice(start, n)
        start += n


def windows_by_symbol(
    bars: pl.DataFrame,
    table: SymbolTable,
    spec: FeatureSpec,
    encoder_length: int,
    horizon: int,
    *,
    with_target: bool,
    scaler: ScalerParams | None,
    calendars: Mapping[str, str] | None = None,
    spill: Path | None = None,
) -> WindowDataset:
    """Windows (stride 1) over ``bars``, the feature table built one symbol at a time.

    Args:
        bars: Validated bars, any number of symbols.
        table: Builds one symbol's feature rows from its bars (e.g. ``compute_features``).
        spec: The feature names.
        encoder_length: L.
        horizon: H.
        with_target: Gather targets (evaluation) or not (forecasting).
        scaler: Scales the inputs (and targets) while the arrays are filled; None keeps them.
        calendars: symbol -> calendar of its decoder schedule (as for ``WindowDataset``).
        spill: A folder for the arrays' temporary files when they would pass
            :data:`SPILL_ABOVE_BYTES` (None: held in memory).

    Raises:
        DataError: ``bars`` hold no symbol, or what ``table`` or ``row_arrays`` raise.
    """
    width = len(spec.inputs) + (horizon if with_target else 0)
    if spill is not None and 4 * width * bars.height >= SPILL_ABOVE_BYTES:
        check_disk(spill, 4 * width * bars.height, bars.height)
        folder = Path(tempfile.mkdtemp(prefix=".foxhunt-rows.", dir=spill))
        try:
            return _windows_in_files(
                bars, table, spec, encoder_length, horizon, with_target, scaler, calendars, folder
            )
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    symbols: list[str] = []
    lengths: list[int] = []
    parts: list[list[torch.Tensor]] = [[], [], [], []]  # historical, known, static, target
    times: list[np.ndarray] = []
    for sym, part in symbol_blocks(bars):
        frame = table(sym, part)
        arrays = row_arrays(frame, spec, horizon, scaler, with_target=with_target)
        for kept, a in zip(parts, arrays, strict=True):
            if a is not None:
                kept.append(a)
        times.append(frame.get_column("ts").dt.epoch("us").to_numpy())
        symbols.append(sym)
        lengths.append(frame.height)
        del frame, arrays
    if not symbols:
        raise DataError("no bars: no symbol to build windows for")
    historical, known, static = (joined(p) for p in parts[:3])
    target = joined(parts[3]) if with_target else None
    return WindowDataset.from_arrays(
        spec,
        encoder_length,
        horizon,
        historical=historical,
        known=known,
        static=static,
        target=target,
        ts=np.concatenate(times),
        symbols=symbols,
        lengths=lengths,
        scaler=scaler,
        calendars=calendars,
    )


def _windows_in_files(
    bars: pl.DataFrame,
    table: SymbolTable,
    spec: FeatureSpec,
    encoder_length: int,
    horizon: int,
    with_target: bool,
    scaler: ScalerParams | None,
    calendars: Mapping[str, str] | None,
    folder: Path,
) -> WindowDataset:
    """:func:`windows_by_symbol` with each symbol's rows appended to files in ``folder``."""
    names = ("historical", "known", "static", "target")[: 4 if with_target else 3]
    widths = (len(spec.historical), len(spec.known), len(spec.static), horizon)
    writers = [  # nameless at once: nothing is left on disk however the process ends
        RowWriter(folder / f"{n}.f32", np.float32, w, unlink=True)
        for n, w in zip(names, widths[: len(names)], strict=True)
    ]
    folder.rmdir()
    symbols: list[str] = []
    lengths: list[int] = []
    times: list[np.ndarray] = []
    try:
        for sym, part in symbol_blocks(bars):
            frame = table(sym, part)
            arrays = row_arrays(frame, spec, horizon, scaler, with_target=with_target)
            for w, a in zip(writers, arrays, strict=False):
                w.append(a.numpy())  # type: ignore[union-attr]
            times.append(frame.get_column("ts").dt.epoch("us").to_numpy())
            symbols.append(sym)
            lengths.append(frame.height)
            del frame, arrays
        if not symbols:
            raise DataError("no bars: no symbol to build windows for")
        files: dict[str, MappedRows] = {n: w.close() for n, w in zip(names, writers, strict=True)}
    finally:
        for w in writers:
            w.abandon()
    return WindowDataset.from_files(
        spec,
        encoder_length,
        horizon,
        files,
        ts=np.concatenate(times),
        symbols=symbols,
        lengths=lengths,
        scaler=scaler,
        calendars=calendars,
    )


def joined(parts: list[torch.Tensor]) -> torch.Tensor:
    """``torch.cat(parts)``, emptying ``parts`` as it copies: each piece is freed once copied,
    so the joined array and the pieces are never all resident at once."""
    rows = sum(int(p.shape[0]) for p in parts)
    out = torch.empty((rows, *parts[0].shape[1:]), dtype=parts[0].dtype)
    at = 0
    while parts:
        piece = parts.pop(0)
        out[at : at + piece.shape[0]] = piece
        at += int(piece.shape[0])
        del piece
    return out
