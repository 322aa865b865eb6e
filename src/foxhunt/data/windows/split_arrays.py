"""Train / validation / test windows built one symbol at a time, the scaler fitted after.

What ``foxhunt train`` prepares from bars: each symbol's feature table is computed, cut into
its three splits (:mod:`foxhunt.data.windows.splits`: the same bounds from its row count),
laid out as unscaled row arrays (float32 inputs, float64 targets) and dropped before the next
symbol's. Once every symbol is in, the scaler is fitted on the training rows
(:func:`~foxhunt.data.scale.scaler.fit_scaler_columns`, one column at a time: the values
:func:`~foxhunt.data.scale.scaler.fit_scaler` would see on the whole training table, so the same
params) and every array is scaled in place. At the peak the process holds the arrays once plus
one symbol's table, where the whole table (computed, then split) held them about twice
(docs/memory.md, "Data preparation").

Given a folder (``spill``) the arrays are not held at all: each symbol's rows are appended to
raw files there, the training rows also column by column (what the scaler reads), the files
are scaled through ``read``/``write`` a block at a time and the datasets map them
(:mod:`foxhunt.data.windows.row_files`). The peak then holds one symbol's table, not the arrays.

The datasets equal those built from the whole table: ``compute_features``, ``split_by_time``,
``fit_scaler``, then :class:`~foxhunt.data.windows.dataset.WindowDataset` per split.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import torch

from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.scale.scaler import ScalerParams, fit_scaler_columns
from foxhunt.data.windows.by_symbol import SymbolTable, joined, symbol_blocks
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.data.windows.row_arrays import row_arrays
from foxhunt.data.windows.row_files import (
    MappedRows,
    RowWriter,
    check_disk,
    divide_rows,
    read_column,
    scale_rows,
)
from foxhunt.data.windows.splits import SplitCut, short_symbols_warning, split_bounds, too_short
from foxhunt.errors import DataError

log = logging.getLogger(__name__)

SPLITS = ("train", "val", "test")


@dataclass
class _Pieces:
    """One split's unscaled per-symbol arrays, in symbol order."""

    symbols: list[str] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    inputs: list[list[torch.Tensor]] = field(default_factory=lambda: [[], [], []])
    targets: list[np.ndarray] = field(default_factory=list)
    times: list[np.ndarray] = field(default_factory=list)

    def abandon(self) -> None:
        """Nothing to close (arrays in memory)."""

    def add(self, symbol: str, rows: pl.DataFrame, spec: FeatureSpec, horizon: int) -> None:
        if rows.height == 0:  # a split of fraction 0: no block, as a table without rows
            return
        arrays = row_arrays(rows, spec, horizon, None, with_target=False)
        for kept, a in zip(self.inputs, arrays[:3], strict=True):
            kept.append(a)  # type: ignore[arg-type]
        self.targets.append(rows.select(spec.targets).to_numpy().astype(np.float64, order="C"))
        self.times.append(rows.get_column("ts").dt.epoch("us").to_numpy())
        self.symbols.append(symbol)
        self.lengths.append(rows.height)


def split_windows_by_symbol(
    bars: pl.DataFrame,
    table: SymbolTable,
    spec: FeatureSpec,
    encoder_length: int,
    horizon: int,
    cut: SplitCut,
    *,
    stride: int = 1,
    calendars: Mapping[str, str] | None = None,
    spill: Path | None = None,
) -> tuple[WindowDataset, WindowDataset, WindowDataset, ScalerParams]:
    """Scaled ``(train, val, test, scaler)`` windows of ``bars``, built one symbol at a time.

    Args:
        bars: Validated bars, any number of symbols.
        table: One symbol's feature rows with targets (e.g. ``compute_features``).
        spec: The feature names.
        encoder_length: L.
        horizon: H.
        cut: The split fractions, embargo and fewest rows per split.
        stride: Distance between training origins (validation and test: 1).
        calendars: symbol -> calendar of its decoder schedule.
        spill: An existing folder for the arrays' files (None: held in memory). The
            datasets map the files; the caller deletes the folder once every process that
            reads them has mapped them (:mod:`foxhunt.data.windows.row_files`).

    Raises:
        DataError: no symbol, every symbol too short for the splits (the first one's
            reason), or what ``table`` raises.
    """
    if spill is not None:
        check_disk(spill, spill_bytes(bars.height, spec, horizon), bars.height)
    pieces: dict[str, _Pieces] = {
        name: _Pieces() if spill is None else _SpilledPieces(spill, name, spec, horizon)
        for name in SPLITS
    }
    counts: list[tuple[str, int]] = []
    short: dict[str, str] = {}
    empty: pl.DataFrame | None = None
    try:
        for sym, part in symbol_blocks(bars):
            frame = table(sym, part)
            n = frame.height
            counts.append((sym, n))
            empty = frame.head(0) if empty is None else empty
            kw = {"val_fraction": cut.val_fraction, "test_fraction": cut.test_fraction}
            kw |= {"embargo": cut.embargo}
            short |= too_short([(sym, n)], min_rows=cut.min_rows, **kw)
            if sym not in short:
                train_end, val_start, val_end, test_start = split_bounds(
                    [(sym, n)], min_rows=cut.min_rows, **kw
                )[sym]
                bounds = ((0, train_end), (val_start, val_end), (test_start, n))
                for name, (a, b) in zip(SPLITS, bounds, strict=True):
                    pieces[name].add(sym, frame.slice(a, b - a), spec, horizon)
            del frame
        if empty is None:
            raise DataError("no bars: no symbol to build windows for")
        if short and len(short) == len(counts):
            raise DataError(next(iter(short.values())))
    except BaseException:
        for p in pieces.values():
            p.abandon()  # close the files: the caller deletes the folder
        raise
    if short:
        log.warning(short_symbols_warning(short, dict(counts), cut.min_rows))
    rows = [sum(pieces[name].lengths) for name in SPLITS]
    log.info(
        "splits: train %d, val %d, test %d rows (embargo %d rows x2 per symbol)",
        *rows, cut.embargo,
    )  # fmt: skip
    if spill is not None:
        spilled = {name: pieces[name] for name in SPLITS}
        return _spilled_datasets(spilled, empty, spec, encoder_length, horizon, stride, calendars)  # type: ignore[arg-type]
    # train has rows: every symbol that is not short has at least min_rows of them
    arrays = {name: _joined_split(pieces[name]) for name in SPLITS}
    scaler = _fit(arrays["train"], spec)
    out = []
    for name, step in zip(SPLITS, (stride, 1, 1), strict=True):
        got = arrays.pop(name)
        if got is None:  # no rows: the dataset a table without rows gives
            out.append(WindowDataset(empty, spec, encoder_length, horizon, stride=step))
            continue
        historical, known, static, target64, ts = got
        _scale_in_place(historical, spec.historical, scaler)
        _scale_in_place(known, spec.known, scaler)
        _scale_in_place(static, spec.static, scaler)
        target = torch.from_numpy((target64 / np.asarray(scaler.target_std)).astype(np.float32))
        del target64
        p = pieces[name]
        out.append(
            WindowDataset.from_arrays(
                spec,
                encoder_length,
                horizon,
                historical=historical,
                known=known,
                static=static,
                target=target,
                ts=ts,
                symbols=p.symbols,
                lengths=p.lengths,
                stride=step,
                scaler=scaler,
                calendars=calendars,
            )
        )
    train, val, test = out
    return train, val, test, scaler


def spill_bytes(n_bars: int, spec: FeatureSpec, horizon: int) -> int:
    """Disk the window files of ``n_bars`` bars may take while they are built: the rows
    (float32 inputs, float64 targets until scaled) and the training rows again column by column
    (at most every row; deleted once the scaler is fitted)."""
    return 2 * n_bars * (4 * len(spec.inputs) + 8 * horizon)


class _SpilledPieces(_Pieces):
    """One split's unscaled rows appended to raw files in a folder, symbol after symbol; the
    training split's also column by column (column-major per symbol block), for the scaler."""

    def __init__(self, folder: Path, split: str, spec: FeatureSpec, horizon: int) -> None:
        super().__init__()
        self.split, self.spec, self.horizon = split, spec, horizon
        widths = {"historical": len(spec.historical), "known": len(spec.known)}
        widths |= {"static": len(spec.static)}
        self.writers = {
            name: RowWriter(folder / f"{split}.{name}.f32", np.float32, w)
            for name, w in widths.items()
        }
        self.writers["target64"] = RowWriter(folder / f"{split}.target64.f64", np.float64, horizon)
        self.columns: tuple[Path, Path] | None = None
        if split == "train":
            self.columns = (folder / "train.columns.f32", folder / "train.targets.f64")
            for p in self.columns:
                p.write_bytes(b"")

    def add(self, symbol: str, rows: pl.DataFrame, spec: FeatureSpec, horizon: int) -> None:
        if rows.height == 0:
            return
        arrays = row_arrays(rows, spec, horizon, None, with_target=False)
        target = rows.select(spec.targets).to_numpy().astype(np.float64, order="C")
        inputs = [a.numpy() for a in arrays[:3]]  # type: ignore[union-attr]
        for name, a in zip(("historical", "known", "static"), inputs, strict=True):
            self.writers[name].append(a)
        self.writers["target64"].append(target)
        if self.columns is not None:  # one column after another: read_column's layout
            with open(self.columns[0], "ab") as f:
                for a in inputs:
                    for j in range(a.shape[1]):
                        f.write(np.ascontiguousarray(a[:, j]).data)
            with open(self.columns[1], "ab") as f:
                for j in range(target.shape[1]):
                    f.write(np.ascontiguousarray(target[:, j]).data)
        self.times.append(rows.get_column("ts").dt.epoch("us").to_numpy())
        self.symbols.append(symbol)
        self.lengths.append(rows.height)

    def fit_scaler(self) -> ScalerParams:
        """The scaler of the training columns, each read whole from the column files."""
        assert self.columns is not None
        inputs, targets = self.spec.inputs, self.spec.targets

        def column(name: str) -> pl.Series:
            if name in targets:
                values = read_column(
                    self.columns[1], self.lengths, targets.index(name), len(targets), np.float64
                )
            else:
                values = read_column(
                    self.columns[0], self.lengths, inputs.index(name), len(inputs), np.float32
                )
            return pl.Series(name, values)

        scaler = fit_scaler_columns(column, self.spec)
        for p in self.columns:
            p.unlink()
        return scaler

    def mapped(self, scaler: ScalerParams) -> dict[str, MappedRows]:
        """Close the files, scale them in place and map them."""
        spec = self.spec
        out = {}
        for name, names in (
            ("historical", spec.historical), ("known", spec.known), ("static", spec.static)
        ):  # fmt: skip
            w = self.writers.pop(name)
            w.abandon()
            pos = [scaler.columns.index(c) for c in names]
            scale_rows(w.path, w.width, [scaler.mean[i] for i in pos], [scaler.std[i] for i in pos])
            out[name] = MappedRows(w.path, np.float32, w.width, w.rows)
        w = self.writers.pop("target64")
        w.abandon()
        dest = w.path.with_name(f"{self.split}.target.f32")
        divide_rows(w.path, dest, self.horizon, scaler.target_std[: self.horizon])
        out["target"] = MappedRows(dest, np.float32, self.horizon, w.rows)
        return out

    def abandon(self) -> None:
        for w in self.writers.values():
            w.abandon()


def _spilled_datasets(
    pieces: dict[str, _SpilledPieces],
    empty: pl.DataFrame,
    spec: FeatureSpec,
    encoder_length: int,
    horizon: int,
    stride: int,
    calendars: Mapping[str, str] | None,
) -> tuple[WindowDataset, WindowDataset, WindowDataset, ScalerParams]:
    """The datasets over the scaled, mapped files of ``pieces``."""
    try:
        scaler = pieces["train"].fit_scaler()
        out = []
        for name, step in zip(SPLITS, (stride, 1, 1), strict=True):
            p = pieces[name]
            files = p.mapped(scaler)
            if not p.symbols:  # no rows: the dataset a table without rows gives
                out.append(WindowDataset(empty, spec, encoder_length, horizon, stride=step))
                continue
            ds = WindowDataset.from_files(
                spec,
                encoder_length,
                horizon,
                files,
                ts=np.concatenate(p.times),
                symbols=p.symbols,
                lengths=p.lengths,
                stride=step,
                scaler=scaler,
                calendars=calendars,
            )
            out.append(ds)
    finally:
        for p in pieces.values():
            p.abandon()
    train, val, test = out
    return train, val, test, scaler


_Arrays = tuple[torch.Tensor, torch.Tensor, torch.Tensor, np.ndarray, np.ndarray]


def _joined_split(p: _Pieces) -> _Arrays | None:
    """A split's pieces joined (each freed once copied); None for a split without rows."""
    if not p.symbols:
        return None
    historical, known, static = (joined(kept) for kept in p.inputs)
    targets = np.concatenate(p.targets)
    p.targets.clear()
    times = np.concatenate(p.times)
    p.times.clear()
    return historical, known, static, targets, times


def _fit(train: _Arrays | None, spec: FeatureSpec) -> ScalerParams:
    """The scaler of the training arrays, one column at a time as ``fit_scaler`` reads them."""
    assert train is not None
    historical, known, static, target, _ = train
    where: dict[str, tuple[np.ndarray, int]] = {}
    for names, a in ((spec.historical, historical), (spec.known, known), (spec.static, static)):
        where |= {c: (a.numpy(), j) for j, c in enumerate(names)}
    where |= {c: (target, j) for j, c in enumerate(spec.targets)}

    def column(name: str) -> pl.Series:
        a, j = where[name]
        return pl.Series(name, np.ascontiguousarray(a[:, j]))

    return fit_scaler_columns(column, spec)


SCALE_BLOCK_ROWS = 1 << 15
"""Rows z-scored at a time: contiguous blocks (a float64 copy of 32,768 rows is 59 MB at 225
inputs), where a column at a time strides through the whole array once per column."""


def _scale_in_place(a: torch.Tensor, names: Sequence[str], scaler: ScalerParams) -> None:
    """z-score the columns of float32 row array ``a`` in float64, as ``row_arrays`` does while
    it fills (the same operations on each value: the same floats), a block of rows at a time."""
    pos = [scaler.columns.index(c) for c in names]
    mean = np.asarray([scaler.mean[i] for i in pos], dtype=np.float64)
    std = np.asarray([scaler.std[i] for i in pos], dtype=np.float64)
    x = a.numpy()
    for start in range(0, x.shape[0], SCALE_BLOCK_ROWS):
        block = x[start : start + SCALE_BLOCK_ROWS]
        block[:] = (block.astype(np.float64) - mean) / std
