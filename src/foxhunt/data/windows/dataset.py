"""A windows ``Dataset`` that never materialises windows.

The feature table is held once, as contiguous row-major float32 arrays (observed, known,
static, targets), with each symbol's rows a contiguous block — one block per symbol inside one
array, so a batch that mixes symbols is still one indexing operation. Window i is an *origin*
row t; its batch is gathered on demand:

* historical: rows t-L+1 .. t                  -> [B, L, V_h]
* known:      rows t-L+1 .. t (encoder), then the H *scheduled* bar times after t (decoder)
                                               -> [B, L+H, V_k]
* static:     row t                            -> [B, S]
* target:     ``target__h1..hH`` at row t      -> [B, H]   (log(close[t+h]/close[t]), scaled)

Targets are divided by the training std per horizon; a dataset given a
:class:`~foxhunt.data.scale.target.TargetScale` (:meth:`WindowDataset.with_target_scale`, what
training does) gives them divided by that scale instead (per window: its encoder's volatility).

The decoder's known-future inputs describe the bar times the calendar schedules after the
origin (:func:`foxhunt.data.market.calendar.project_bar_times`), not the bars that actually followed:
a live forecaster cannot know of a holiday or a data gap ahead, so neither may a training window
or a past origin in ``predict``. Where the next H rows are the scheduled times (almost every
window of intraday data) they are read from the table; the other windows get their decoder
rows from a small side array (``calendar_windows``; computed in
:mod:`foxhunt.data.features.calendar_decoder`). The row arrays come from
:func:`foxhunt.data.windows.row_arrays.row_arrays` (still importable from here).

Host memory is O(rows x features), not O(windows x window length x features).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl
import torch
from torch.utils.data import Dataset

from foxhunt.data.features.calendar_decoder import calendar_decoder_known
from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.market.calendars import DEFAULT_CALENDAR
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.scale.target import TargetScale
from foxhunt.data.windows.row_arrays import row_arrays
from foxhunt.data.windows.row_files import MappedRows
from foxhunt.errors import DataError
from foxhunt.model.batch import TFTBatch

__all__ = ["WindowDataset", "collate", "row_arrays"]

ROW_VALUE_BLOCK = 1 << 16
"""Rows :meth:`WindowDataset.row_values` reads between two releases of a mapped array's pages."""


class WindowDataset(Dataset):
    """Encoder/decoder windows over a (scaled) feature table, gathered on demand.

    Args:
        frame: feature table sorted by (symbol, ts) with every column of ``spec.inputs`` and,
            when ``with_target``, ``spec.targets``. At inference (``with_target=False``) it may
            end each symbol with synthetic future rows (see ``prepare_inference_data``).
        spec: the feature names.
        encoder_length: L, encoder bars per window.
        horizon: H, decoder bars (and targets) per window.
        stride: distance in rows between consecutive origins of a symbol (from the first
            valid origin).
        with_target: gather targets (training/evaluation) or not (inference).
        scaler: when given, ``frame`` is unscaled and is scaled while the arrays are filled
            (same result as ``apply_scaler`` first, without a scaled copy of the table).
            Without it the frame holds the model's inputs as they are, and the decoder rows
            computed from the calendar are left unscaled too.
        calendars: symbol -> calendar name (:data:`foxhunt.data.market.calendars.CALENDARS`) that
            schedules each symbol's decoder bar times; a symbol not in it (or None) follows
            ``globex``. Must be the calendars its known features were computed with.

    Raises:
        DataError: a column is missing or ``horizon`` does not match ``spec.targets``.
    """

    def __init__(
        self,
        frame: pl.DataFrame,
        spec: FeatureSpec,
        encoder_length: int,
        horizon: int,
        *,
        stride: int = 1,
        with_target: bool = True,
        scaler: ScalerParams | None = None,
        calendars: Mapping[str, str] | None = None,
    ) -> None:
        _check_sizes(spec, encoder_length, horizon, stride, with_target)
        needed = [*spec.inputs, *(spec.targets if with_target else ())]
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            raise DataError(f"feature table lacks column {missing[0]!r}")
        self.spec = spec
        self.encoder_length = encoder_length
        self.horizon = horizon
        self.stride = stride
        self.with_target = with_target
        self.target_scale: TargetScale | None = None

        # Symbol blocks: first row and length of each symbol (frame is sorted by symbol).
        blocks = frame.group_by("symbol", maintain_order=True).len()
        self.symbols: tuple[str, ...] = tuple(blocks["symbol"].to_list())
        lengths = blocks["len"].to_numpy().astype(np.int64)
        if (
            frame.select((pl.col("symbol") != pl.col("symbol").shift(1)).sum()).item()
            != max(len(self.symbols) - 1, 0)  # a table without rows: no symbol, no change
        ):
            raise DataError("feature table is not grouped by symbol (sort by symbol, ts)")

        self.historical, self.known, self.static, self.target = row_arrays(
            frame, spec, horizon, scaler, with_target=with_target
        )
        self._ts = frame.get_column("ts").dt.epoch("us").to_numpy()  # (N,) int64 µs
        self.calendars = dict(calendars or {})
        self._mapped: dict[str, MappedRows] = {}
        self._index(lengths, scaler)

    @classmethod
    def from_arrays(
        cls,
        spec: FeatureSpec,
        encoder_length: int,
        horizon: int,
        *,
        historical: torch.Tensor,
        known: torch.Tensor,
        static: torch.Tensor,
        target: torch.Tensor | None,
        ts: np.ndarray,
        symbols: Sequence[str],
        lengths: Sequence[int] | np.ndarray,
        stride: int = 1,
        scaler: ScalerParams | None = None,
        calendars: Mapping[str, str] | None = None,
    ) -> WindowDataset:
        """Windows over row arrays that are already filled (e.g. memory-mapped); nothing is copied.

        The arrays are those a dataset built from a frame holds: each symbol's rows one
        contiguous block, in the order of ``symbols``.

        Args:
            spec: the feature names.
            encoder_length: L.
            horizon: H.
            historical: (N, V_h) float32 rows.
            known: (N, V_k).
            static: (N, S).
            target: (N, H), or None for a dataset without targets.
            ts: (N,) int64, each row's time in epoch microseconds (UTC).
            symbols: the symbol of each block.
            lengths: rows per block (summing to N).
            stride: as for the constructor.
            scaler: the params the arrays were scaled with, so the decoder rows computed from
                the calendar are scaled alike; None when the arrays are unscaled.
            calendars: symbol -> calendar of its decoder schedule (as for the constructor).

        Raises:
            DataError: an array's shape does not match ``spec``, ``lengths`` or ``horizon``,
                or there is no symbol (no block of rows).
        """
        _check_sizes(spec, encoder_length, horizon, stride, target is not None)
        n = int(np.sum(lengths))
        want = {"historical": len(spec.historical), "known": len(spec.known)}
        want |= {"static": len(spec.static), "target": horizon}
        arrays = {"historical": historical, "known": known, "static": static, "target": target}
        for name, a in arrays.items():
            if a is not None and tuple(a.shape) != (n, want[name]):
                raise DataError(f"{name} rows have shape {tuple(a.shape)}, need {(n, want[name])}")
        if ts.shape != (n,) or len(symbols) != len(lengths):
            raise DataError(f"{len(symbols)} symbols, {len(lengths)} lengths, {ts.shape} times")
        if not len(lengths):
            raise DataError("no symbols: from_arrays needs at least one block of rows")
        self = cls.__new__(cls)
        self.spec = spec
        self.encoder_length = encoder_length
        self.horizon = horizon
        self.stride = stride
        self.with_target = target is not None
        self.target_scale = None
        self.symbols = tuple(symbols)
        self.historical, self.known, self.static, self.target = historical, known, static, target
        self._ts = ts
        self.calendars = dict(calendars or {})
        self._mapped = {}
        self._index(np.asarray(lengths, dtype=np.int64), scaler)
        return self

    @classmethod
    def from_files(
        cls,
        spec: FeatureSpec,
        encoder_length: int,
        horizon: int,
        files: Mapping[str, MappedRows],
        *,
        ts: np.ndarray,
        symbols: Sequence[str],
        lengths: Sequence[int] | np.ndarray,
        stride: int = 1,
        scaler: ScalerParams | None = None,
        calendars: Mapping[str, str] | None = None,
    ) -> WindowDataset:
        """:meth:`from_arrays` over the rows of ``files`` (``historical``, ``known``,
        ``static`` and, when present, ``target``), which batches then read from the files
        (:meth:`attach_mapped`). Raises as :meth:`from_arrays`."""
        target = files.get("target")
        ds = cls.from_arrays(
            spec,
            encoder_length,
            horizon,
            historical=files["historical"].tensor,
            known=files["known"].tensor,
            static=files["static"].tensor,
            target=None if target is None else target.tensor,
            ts=ts,
            symbols=symbols,
            lengths=lengths,
            stride=stride,
            scaler=scaler,
            calendars=calendars,
        )
        ds.attach_mapped(files)
        return ds

    def attach_mapped(self, files: Mapping[str, MappedRows]) -> None:
        """Record that arrays (``historical``, ``known``, ``static``, ``target``) are these
        files' tensors: batches then read their windows from the files (``preadv``, nothing
        mapped), and pickling this dataset pickles the files' names instead of their rows
        (:mod:`foxhunt.data.windows.row_files`)."""
        for name, m in files.items():
            if getattr(self, name) is not m.tensor:
                raise ValueError(f"{name} is not the tensor of {m.path}")
        self._mapped = dict(files)

    @property
    def mapped_arrays(self) -> tuple[str, ...]:
        """The arrays read from files (:meth:`attach_mapped`), in attach order."""
        return tuple(self._mapped)

    def release_pages(self) -> None:
        """Give back the pages of mapped arrays that reads made resident (nothing otherwise)."""
        for m in self._mapped.values():
            m.release()

    def row_values(self, name: str, rows: torch.Tensor, column: int) -> torch.Tensor:
        """``getattr(self, name)[rows, column]``, read :data:`ROW_VALUE_BLOCK` rows at a time
        with the pages given back after each block when the array is mapped (one column of
        every row touches every page of the array)."""
        a: torch.Tensor = getattr(self, name)
        if name not in self._mapped:
            return a[rows, column]
        parts = []
        for start in range(0, rows.numel(), ROW_VALUE_BLOCK):
            parts.append(a[rows[start : start + ROW_VALUE_BLOCK], column])
            self._mapped[name].release()
        return torch.cat(parts) if parts else a[rows, column]

    def row_range(self, name: str, start: int, stop: int) -> torch.Tensor:
        """Rows ``start .. stop - 1`` of array ``name`` (a copy read from its file when it has
        one, so no page of it is mapped; else a view)."""
        mapped = self._mapped.get(name)
        if mapped is not None:
            return torch.from_numpy(mapped.windows(np.array([start]), stop - start)[0])
        a: torch.Tensor = getattr(self, name)
        return a[start:stop]

    def __copy__(self) -> WindowDataset:
        out = type(self).__new__(type(self))
        out.__dict__.update(self.__dict__)
        return out

    def __getstate__(self) -> dict[str, Any]:
        """Pickled: mapped arrays as their files' names while the files exist, else as rows."""
        state = dict(self.__dict__)
        mapped = state.get("_mapped") or {}
        if mapped and all(m.path.is_file() for m in mapped.values()):
            for name in mapped:
                state[name] = None
        else:
            state["_mapped"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update({"_mapped": {}} | state)
        for name, m in self._mapped.items():
            setattr(self, name, m.tensor)

    def _index(self, lengths: np.ndarray, scaler: ScalerParams | None) -> None:
        """Window origins and symbol codes per block (``lengths`` rows each, in table order),
        and the calendar decoder side array."""
        L, H, stride, spec = self.encoder_length, self.horizon, self.stride, self.spec
        starts = (np.cumsum(lengths) - lengths).astype(np.int64)
        origins, codes = [], []
        for code, (start, n) in enumerate(zip(starts, lengths, strict=True)):
            local = np.arange(L - 1, n - H, stride, dtype=np.int64)  # full encoder and decoder
            origins.append(start + local)
            codes.append(np.full(local.shape, code, dtype=np.int32))
        self._origin = torch.from_numpy(
            np.concatenate(origins) if origins else np.empty(0, np.int64)
        )
        self._symbol_code = np.concatenate(codes) if codes else np.empty(0, np.int32)
        known_scaling = None
        if scaler is not None:
            pos = [scaler.columns.index(c) for c in spec.known]
            known_scaling = ([scaler.mean[i] for i in pos], [scaler.std[i] for i in pos])
        counts = [o.size for o in origins]
        block_calendars = [self.calendars.get(sym, DEFAULT_CALENDAR) for sym in self.symbols]
        self._decoder_slot, self._decoder_known = calendar_decoder_known(
            self._ts,
            self._origin.numpy(),
            starts,
            lengths,
            counts,
            H,
            spec.known,
            known_scaling,
            calendars=block_calendars,
            table_known=self.known.numpy(),
        )

    def with_target_scale(self, scale: TargetScale) -> WindowDataset:
        """The same windows (arrays shared, nothing copied) whose batches' targets are divided
        by ``scale`` (:meth:`TargetScale.standardise`) instead of the global std."""
        out = copy.copy(self)
        out.target_scale = scale
        return out

    def thinned(self, most: int) -> WindowDataset:
        """Every k-th window (k as small as keeps at most ``most``; arrays shared, nothing
        copied), each symbol's still in time order: for passes over a split that need its
        spread, not all of its overlapping windows (calibrating on a year of minutes)."""
        k = -(-len(self) // most) if len(self) > most else 1
        if k == 1:
            return self
        out = copy.copy(self)
        out._origin = self._origin[::k].clone()
        out._symbol_code = self._symbol_code[::k].copy()
        if self._decoder_slot is not None:
            out._decoder_slot = self._decoder_slot[::k].clone()
        return out

    def subset(self, keep: np.ndarray) -> WindowDataset:
        """The windows where the boolean mask ``keep`` (one per window) is true, in order
        (arrays shared, only the index copied)."""
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (len(self),):
            raise ValueError(f"mask of shape {keep.shape} for {len(self)} windows")
        out = copy.copy(self)
        index = torch.from_numpy(np.flatnonzero(keep))
        out._origin = self._origin[index].clone()
        out._symbol_code = self._symbol_code[keep].copy()
        if self._decoder_slot is not None:
            out._decoder_slot = self._decoder_slot[index].clone()
        return out

    @property
    def calendar_windows(self) -> int:
        """Windows whose decoder known inputs come from the calendar, not the next H rows."""
        return 0 if self._decoder_known is None else int(self._decoder_known.shape[0])

    def __len__(self) -> int:
        return int(self._origin.shape[0])

    @property
    def nbytes(self) -> int:
        """Bytes the dataset's arrays hold in memory (features, targets, index); arrays read
        from files (:meth:`attach_mapped`) are :attr:`file_bytes` instead."""
        rows = [self.historical, self.known, self.static]
        rows += [self.target] if self.target is not None else []
        arrays = [a for a in rows if all(a is not m.tensor for m in self._mapped.values())]
        arrays.append(self._origin)
        if self._decoder_known is not None and self._decoder_slot is not None:
            arrays += [self._decoder_known, self._decoder_slot]
        n = sum(a.numel() * a.element_size() for a in arrays)
        return n + self._ts.nbytes + self._symbol_code.nbytes

    @property
    def file_bytes(self) -> int:
        """Bytes of the arrays read from files (0 for arrays in memory)."""
        return sum(m.tensor.numel() * m.tensor.element_size() for m in self._mapped.values())

    def batch(self, indices: Sequence[int] | np.ndarray | torch.Tensor) -> TFTBatch:
        """Gather windows ``indices`` into one batch (vectorised, no Python loop).

        Args:
            indices: window indices in ``[0, len(self))``.

        Returns:
            A :class:`TFTBatch` with B = len(indices); target is None without targets.
        """
        idx = torch.as_tensor(np.asarray(indices), dtype=torch.long).reshape(-1)
        n = len(self)
        if idx.numel() and (int(idx.min()) < -n or int(idx.max()) >= n):
            raise IndexError(f"window index out of range for {n} windows")
        t = self._origin[idx]  # (B,)
        L, H = self.encoder_length, self.horizon
        known = self._rows("known", t - L + 1, L + H)  # (B, L+H, V_k)
        if self._decoder_slot is not None and self._decoder_known is not None:
            slot = self._decoder_slot[idx]  # (B,)
            hit = slot >= 0
            if bool(hit.any()):
                known[hit, self.encoder_length :] = self._decoder_known[slot[hit].long()]
        historical = self._rows("historical", t - L + 1, L)  # (B, L, V_h)
        target = None if self.target is None else self._rows("target", t, 1)[:, 0]  # (B, H)
        if target is not None and self.target_scale is not None:
            target = self.target_scale.standardise(target, historical, known)
        static = self._rows("static", t, 1)[:, 0]  # (B, S)
        return TFTBatch(static=static, historical=historical, known=known, target=target)

    def _rows(self, name: str, first: torch.Tensor, length: int) -> torch.Tensor:
        """Rows ``first[i] .. first[i] + length - 1`` of array ``name`` for each window i:
        read from its file when it has one (row_files.py), else indexed."""
        mapped = self._mapped.get(name)
        if mapped is not None:
            return torch.from_numpy(mapped.windows(first.numpy(), length))
        a: torch.Tensor = getattr(self, name)
        if length == 1:
            return a[first][:, None]
        return a[first[:, None] + torch.arange(length)[None, :]]

    def __getitem__(self, i: int) -> TFTBatch:
        return self.batch([i])

    def __getitems__(self, indices: list[int]) -> TFTBatch:
        return self.batch(indices)

    def origin_rows(self) -> np.ndarray:
        """Row of each window's origin in the feature table (int64, one per window)."""
        return self._origin.numpy().copy()

    def origins(self) -> pl.DataFrame:
        """One row per window index: ``symbol`` and ``ts`` (the origin bar's time, UTC)."""
        rows = self._origin.numpy()
        names = np.asarray(self.symbols, dtype=object)
        return pl.DataFrame(
            {
                "symbol": pl.Series(names[self._symbol_code], dtype=pl.String),
                "ts": pl.Series(self._ts[rows]).cast(pl.Datetime("us")).dt.replace_time_zone("UTC"),
            }
        )


def _check_sizes(
    spec: FeatureSpec, encoder_length: int, horizon: int, stride: int, with_target: bool
) -> None:
    if encoder_length < 1 or horizon < 1 or stride < 1:
        raise ValueError(f"need L, H, stride >= 1, got {encoder_length}, {horizon}, {stride}")
    if with_target and len(spec.targets) != horizon:
        raise DataError(f"spec has {len(spec.targets)} targets but horizon is {horizon}")


def collate(items: TFTBatch | Sequence[TFTBatch]) -> TFTBatch:
    """Concatenate batches along the batch dimension.

    Works as a ``DataLoader`` ``collate_fn`` both for a list of size-1 batches (from
    ``__getitem__``) and for one ready batch (from ``__getitems__`` with a batch sampler).
    """
    if isinstance(items, TFTBatch):
        return items
    items = list(items)
    if len(items) == 1:
        return items[0]
    target = None
    if all(b.target is not None for b in items):
        target = torch.cat([b.target for b in items])  # type: ignore[misc]
    return TFTBatch(
        static=torch.cat([b.static for b in items]),
        historical=torch.cat([b.historical for b in items]),
        known=torch.cat([b.known for b in items]),
        target=target,
    )
