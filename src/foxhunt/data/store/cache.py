"""Training from a feature store: window arrays built once, read from their files by every rank.

``foxhunt train --bars DIR`` with ``DIR/manifest.json`` (see :mod:`foxhunt.data.store.manifest`) gives
the same splits, scaler and windows as training from the bars, without computing features:

1. every rank checks the manifest and the shards' footers, and derives the splits from the
   row counts alone (:func:`foxhunt.data.windows.splits.split_bounds`);
2. one process (rank 0 under torchrun) fits the scaler on the training rows, reading the
   shards lazily a few columns at a time, then scales :data:`BLOCK_ROWS` rows at a time into
   row-major float32 ``.npy`` files under ``DIR/cache/<key>/``, where ``key`` hashes what the
   arrays depend on (the shards' fingerprints, encoder length, horizon, split fractions,
   embargo, stride). It builds in ``<key>.<pid>.tmp/`` and renames the folder when complete;
   ``meta.json`` (scaler, symbols and rows per split) marks a complete cache;
3. the other ranks wait at a barrier, then every rank opens the arrays
   (:class:`~foxhunt.data.windows.row_files.MappedRows`: windows read with ``preadv``, nothing
   mapped): N ranks share one copy through the page cache instead of each holding the whole
   set, and a second run with the same settings starts at step 3.

Cache layout::

    DIR/cache/<key>/meta.json
    DIR/cache/<key>/<split>.<array>.npy    split: train, val, test;
                                           array: historical (N, V_h), known (N, V_k),
                                           static (N, S), target (N, H) float32, ts (N,) int64
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import numpy as np
import polars as pl
import torch

from foxhunt.config import RunConfig
from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.market.calendar import bars_interval
from foxhunt.data.market.intervals import refuse_mixed_intervals
from foxhunt.data.prepared import PreparedData
from foxhunt.data.scale.scaler import ScalerParams, fit_scaler
from foxhunt.data.store.manifest import (
    CACHE_DIR,
    MANIFEST,
    SHARD_ROW_GROUP,
    Manifest,
    check_store,
    read_store_closes,
)
from foxhunt.data.windows.dataset import WindowDataset, row_arrays
from foxhunt.data.windows.row_files import MappedRows
from foxhunt.data.windows.splits import split_bounds
from foxhunt.errors import DataError

log = logging.getLogger(__name__)

CACHE_FORMAT = 1
"""Layout version of a cache folder (part of its key)."""

SPLITS = ("train", "val", "test")
ARRAYS = ("historical", "known", "static", "target", "ts")

_META = "meta.json"
BLOCK_ROWS = SHARD_ROW_GROUP
"""Rows read, scaled and written at a time while building (bounds the builder's memory)."""

SCALER_PASS_BYTES = 32 * 2**20
"""Float32 training-column bytes read per pass while fitting the scaler (at least 1 column)."""


class Coordinator(Protocol):
    """Who builds the cache and how the others wait (``foxhunt.train.distributed.World``)."""

    @property
    def is_main(self) -> bool:
        """True in the one process that writes."""
        ...

    def barrier(self) -> None:
        """Return once every process has called it."""
        ...


@dataclass(frozen=True)
class _OneProcess:
    is_main: bool = True

    def barrier(self) -> None:
        return None


def cache_key(manifest: Manifest, cfg: RunConfig) -> tuple[str, dict[str, Any]]:
    """The cache folder name for ``cfg`` on this store, and what it was hashed from.

    Args:
        manifest: The store's manifest.
        cfg: The run config.

    Returns:
        (16 hex digits, the key's parts).
    """
    d = cfg.data
    L, H = cfg.model.encoder_length, cfg.model.horizon
    parts = {
        "cache_format": CACHE_FORMAT,
        "foxhunt_version": manifest.foxhunt_version,
        "fingerprint": manifest.fingerprint,
        "shards": [[s.symbol, s.rows, s.fingerprint] for s in manifest.shards],
        "instruments": [s.instrument for s in manifest.shards],
        "encoder_length": L,
        "horizon": H,
        "val_fraction": d.val_fraction,
        "test_fraction": d.test_fraction,
        "embargo": d.embargo if d.embargo is not None else L + H,
        "stride": d.stride,
    }
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    return digest[:16], parts


def prepare_store_data(
    root: Path, cfg: RunConfig, coordinator: Coordinator | None = None
) -> PreparedData:
    """Scaled train/val/test windows from a feature store, read from its cache files.

    Args:
        root: The store directory (holding ``manifest.json``).
        cfg: Run config (encoder length, horizon, split fractions, embargo, stride).
        coordinator: Under torchrun the rank's ``World``: its main process builds a missing
            cache while the others wait at its barrier. None: this process builds.

    Returns:
        The same datasets, spec, scaler and fingerprint as
        :func:`foxhunt.data.pipeline.prepare_training_data` on the bars the store was made from.

    Raises:
        DataError: A bad manifest or shard (see :func:`foxhunt.data.store.manifest.check_store`), too
            few bars or rows for the config, or a cache the main process did not leave.
    """
    root = Path(root)
    coord = coordinator if coordinator is not None else _OneProcess()
    L, H = cfg.model.encoder_length, cfg.model.horizon
    manifest = check_store(root, horizon=H)  # every rank: bad input fails everywhere
    need = manifest.spec.warmup + L + H
    short = min(manifest.shards, key=lambda s: (s.bars, s.symbol))
    if short.bars < need:
        raise DataError(
            f"{root / MANIFEST}: symbol {short.symbol!r} has {short.bars} bars; need at least "
            f"{need} (warm-up {manifest.spec.warmup} + encoder {L} + horizon {H})"
        )
    closes = read_store_closes(root, manifest)
    interval = bars_interval(closes)  # recorded in run.json, as a run on the bars records it
    refuse_mixed_intervals(closes, interval, root)
    dest, parts, bounds = cache_plan(root, manifest, cfg)
    if coord.is_main:
        if (dest / _META).is_file():
            log.info("window cache %s: reusing", dest)
        else:
            _build(root, manifest, bounds, cfg, dest, parts)
    coord.barrier()  # the others open the cache once the main process has finished it
    if not (dest / _META).is_file():
        raise DataError(
            f"{dest}: window cache missing after the main process built it "
            "(every rank must see the same store folder)"
        )
    seconds = interval.total_seconds() if interval is not None else None
    return _open(dest, manifest, cfg, closes=closes, bar_interval_s=seconds)


def cache_plan(
    root: Path, manifest: Manifest, cfg: RunConfig
) -> tuple[Path, dict[str, Any], dict[str, tuple[int, int, int, int]]]:
    """Where ``cfg``'s window cache of the store at ``root`` lives (``root / CACHE_DIR / key``),
    the parts of its key (:func:`cache_key`) and the split bounds it is built with."""
    key, parts = cache_key(manifest, cfg)
    bounds = split_bounds(
        [(s.symbol, s.rows) for s in manifest.shards],
        val_fraction=cfg.data.val_fraction,
        test_fraction=cfg.data.test_fraction,
        embargo=parts["embargo"],
        min_rows=cfg.model.encoder_length + cfg.model.horizon,
    )
    return root / CACHE_DIR / key, parts, bounds


# --- building (one process) ------------------------------------------------------------------


def _row_ranges(
    manifest: Manifest, bounds: dict[str, tuple[int, int, int, int]]
) -> dict[str, list[tuple[int, int]]]:
    """Per split, each shard's ``(start, stop)`` rows (in manifest order)."""
    out: dict[str, list[tuple[int, int]]] = {s: [] for s in SPLITS}
    for info in manifest.shards:
        tr_end, va_start, va_end, te_start = bounds[info.symbol]
        out["train"].append((0, tr_end))
        out["val"].append((va_start, va_end))
        out["test"].append((te_start, max(te_start, info.rows)))
    return out


def _fit_scaler(root: Path, manifest: Manifest, train: list[tuple[int, int]]) -> ScalerParams:
    """:func:`fit_scaler` on the training rows, a few columns at a time (lazy parquet reads).

    Each column's statistics do not depend on the others, nor (``fit_scaler`` makes columns
    contiguous) on how the rows are chunked, so this equals fitting on the whole table.
    """
    spec = manifest.spec
    names = [*spec.inputs, *spec.targets]
    targets = set(spec.targets)
    n_rows = sum(stop - start for start, stop in train)
    per_pass = max(1, SCALER_PASS_BYTES // max(1, 4 * n_rows))
    columns: list[str] = []
    mean: list[float] = []
    std: list[float] = []
    target_std: list[float] = []
    for i in range(0, len(names), per_pass):
        group = names[i : i + per_pass]
        frame = pl.concat(
            [
                pl.scan_parquet(root / info.file).select(group).slice(start, stop - start)
                for info, (start, stop) in zip(manifest.shards, train, strict=True)
            ]
        ).collect()
        part = fit_scaler(
            frame,
            FeatureSpec(
                historical=tuple(c for c in group if c not in targets),
                known=(),
                static=(),
                targets=tuple(c for c in group if c in targets),
                warmup=spec.warmup,
            ),
        )
        columns += part.columns
        mean += part.mean
        std += part.std
        target_std += part.target_std
    return ScalerParams(tuple(columns), tuple(mean), tuple(std), tuple(target_std))


class _NpyWriter:
    """A ``.npy`` file of known shape written by appending row blocks (never all in memory)."""

    def __init__(self, path: Path, dtype: np.dtype[Any], shape: tuple[int, ...]) -> None:
        self.path, self.dtype, self.shape = path, np.dtype(dtype), shape
        self._rows = 0
        self._f: BinaryIO = open(path, "wb")  # noqa: SIM115 - closed in close()
        header = {"descr": np.lib.format.dtype_to_descr(self.dtype), "fortran_order": False}
        np.lib.format.write_array_header_2_0(self._f, {**header, "shape": shape})

    def append(self, block: np.ndarray) -> None:
        if block.dtype != self.dtype or block.shape[1:] != self.shape[1:]:
            raise ValueError(f"{self.path}: block {block.dtype}{block.shape} vs {self.shape}")
        self._f.write(np.ascontiguousarray(block).data)  # no copy
        self._rows += block.shape[0]

    def abandon(self) -> None:
        """Close the file without checks (on failure; closing twice is harmless)."""
        self._f.close()

    def close(self) -> None:
        """Close the file; raise if fewer or more rows than the header says were written."""
        self._f.close()
        if self._rows != self.shape[0]:
            raise RuntimeError(f"{self.path}: wrote {self._rows} rows of {self.shape[0]}")


def _build(
    root: Path,
    manifest: Manifest,
    bounds: dict[str, tuple[int, int, int, int]],
    cfg: RunConfig,
    dest: Path,
    parts: dict[str, Any],
) -> None:
    """Fit the scaler and write the scaled window arrays of every split into ``dest``."""
    spec = manifest.spec
    H = cfg.model.horizon
    ranges = _row_ranges(manifest, bounds)
    tmp = dest.with_name(f"{dest.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    writers: dict[tuple[str, str], _NpyWriter] = {}
    try:
        log.info("window cache %s: fitting the scaler on the training rows", dest)
        scaler = _fit_scaler(root, manifest, ranges["train"])
        widths = {
            "historical": (len(spec.historical),),
            "known": (len(spec.known),),
            "static": (len(spec.static),),
            "target": (H,),
            "ts": (),
        }
        for split in SPLITS:
            n = sum(stop - start for start, stop in ranges[split])
            for name in ARRAYS:
                dtype = np.dtype(np.int64 if name == "ts" else np.float32)
                path = tmp / f"{split}.{name}.npy"
                writers[split, name] = _NpyWriter(path, dtype, (n, *widths[name]))
        columns = ["ts", "symbol", *spec.inputs, *spec.targets]
        for k, info in enumerate(manifest.shards):
            log.info("window cache %s: %s (%d rows)", dest, info.symbol, info.rows)
            shard = pl.scan_parquet(root / info.file).select(columns)
            for split in SPLITS:
                start, stop = ranges[split][k]
                for a in range(start, stop, BLOCK_ROWS):
                    rows = shard.slice(a, min(BLOCK_ROWS, stop - a)).collect()
                    # Scaled by the function WindowDataset fills its arrays with: the same
                    # arithmetic as training from bars, so the arrays are bit-identical.
                    hist, known, static, target = row_arrays(
                        rows, spec, H, scaler, with_target=True
                    )
                    assert target is not None
                    arrays = {
                        "historical": hist.numpy(),
                        "known": known.numpy(),
                        "static": static.numpy(),
                        "target": target.numpy(),
                        "ts": rows.get_column("ts").dt.epoch("us").to_numpy(),
                    }
                    for name in ARRAYS:
                        writers[split, name].append(arrays[name])
        for w in writers.values():
            w.close()
        meta = {
            "format": CACHE_FORMAT,
            "key": parts,
            "scaler": scaler.to_dict(),
            "splits": {
                split: {
                    "symbols": [s.symbol for s in manifest.shards],
                    "rows": [stop - start for start, stop in ranges[split]],
                }
                for split in SPLITS
            },
        }
        (tmp / _META).write_text(json.dumps(meta) + "\n")
        try:
            os.replace(tmp, dest)
        except OSError:  # another process finished the same cache first: keep theirs
            if not (dest / _META).is_file():
                raise
        log.info("window cache %s: written", dest)
    finally:
        for w in writers.values():
            w.abandon()
        shutil.rmtree(tmp, ignore_errors=True)


# --- opening (every process) -----------------------------------------------------------------


def _mapped(path: Path) -> torch.Tensor:
    """A read-only memory map of ``path`` as a tensor (nothing is read until indexed)."""
    try:
        array = np.load(path, mmap_mode="r")
    except ValueError:  # numpy cannot map a file with no data (an empty split)
        array = np.load(path)
    except OSError as e:
        raise DataError(f"{path}: cannot read window cache ({e})") from e
    with warnings.catch_warnings():
        # torch warns that the array is not writable; the datasets only ever index it
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(array)


def _rows(path: Path) -> MappedRows:
    """A cache array opened for window reads (see :func:`_mapped` for its errors)."""
    try:
        return MappedRows.of_npy(path)
    except (OSError, ValueError) as e:
        raise DataError(f"{path}: cannot read window cache ({e})") from e


def _open(
    dest: Path,
    manifest: Manifest,
    cfg: RunConfig,
    closes: pl.DataFrame,
    bar_interval_s: float | None = None,
) -> PreparedData:
    try:
        meta = json.loads((dest / _META).read_text())
        scaler = ScalerParams.from_dict(meta["scaler"])
        splits = meta["splits"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise DataError(f"{dest / _META}: cannot read window cache ({e})") from e
    L, H = cfg.model.encoder_length, cfg.model.horizon
    strides = {"train": cfg.data.stride, "val": 1, "test": 1}
    instruments = manifest.instruments()  # None: an older store, computed on globex
    calendars = {sym: inst.calendar for sym, inst in (instruments or {}).items()}
    datasets = []
    for split in SPLITS:
        # the rows are read a window at a time from the files (row_files.py), never mapped
        files = {name: _rows(dest / f"{split}.{name}.npy") for name in ARRAYS if name != "ts"}
        symbols, rows = splits[split]["symbols"], splits[split]["rows"]
        kept = [(s, n) for s, n in zip(symbols, rows, strict=True) if n > 0]
        if not kept:  # no rows (a fraction of 0): the dataset a table without rows gives
            root = dest.parent.parent  # dest is root / CACHE_DIR / key
            empty = pl.read_parquet(root / manifest.shards[0].file, n_rows=0)
            datasets.append(WindowDataset(empty, manifest.spec, L, H, stride=strides[split]))
            continue
        datasets.append(
            WindowDataset.from_files(
                manifest.spec,
                L,
                H,
                files,
                ts=_mapped(dest / f"{split}.ts.npy").numpy(),
                symbols=tuple(s for s, _ in kept),
                lengths=np.array([n for _, n in kept], dtype=np.int64),
                stride=strides[split],
                scaler=scaler,
                calendars=calendars,
            )
        )
    train, val, test = datasets
    log.info(
        "windows from %s (read from its files): train %d, val %d, test %d",
        dest,
        len(train),
        len(val),
        len(test),
    )
    return PreparedData(
        manifest.spec,
        scaler,
        train,
        val,
        test,
        manifest.fingerprint,
        closes,
        instruments,
        bar_interval_s,
    )
