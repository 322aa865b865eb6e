"""A windows ``Dataset`` that never materialises windows.

The feature table is held once, as contiguous row-major float32 arrays (observed, known,
static, targets), with each symbol's rows a contiguous block — one block per symbol inside one
array, so a batch that mixes symbols is still one indexing operation. Window i is an *origin*
row t; its batch is gathered on demand:

* historical: rows t-L+1 .. t                  -> [B, L, V_h]
* known:      rows t-L+1 .. t+H                -> [B, L+H, V_k]
* static:     row t                            -> [B, S]
* target:     ``target__h1..hH`` at row t      -> [B, H]   (log(close[t+h]/close[t]), scaled)

Host memory is O(rows x features), not O(windows x window length x features).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
import torch
from torch.utils.data import Dataset

from foxhunt.data.features import FeatureSpec
from foxhunt.data.scaling import ScalerParams
from foxhunt.errors import DataError
from foxhunt.model.batch import TFTBatch


def _row_major(
    frame: pl.DataFrame,
    columns: Sequence[str],
    shift: Sequence[float] | None = None,
    scale: Sequence[float] | None = None,
) -> torch.Tensor:
    """``(frame[columns] - shift) / scale`` as a C-contiguous float32 tensor.

    Filled column by column, so the only full-size allocation is the result.
    """
    out = np.empty((frame.height, len(columns)), dtype=np.float32)
    for j, c in enumerate(columns):
        col = frame.get_column(c).to_numpy()
        if scale is not None:
            col = (col.astype(np.float64) - (shift[j] if shift is not None else 0.0)) / scale[j]
        out[:, j] = col
    return torch.from_numpy(out)


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
    ) -> None:
        if encoder_length < 1 or horizon < 1 or stride < 1:
            raise ValueError(f"need L, H, stride >= 1, got {encoder_length}, {horizon}, {stride}")
        if with_target and len(spec.targets) != horizon:
            raise DataError(f"spec has {len(spec.targets)} targets but horizon is {horizon}")
        needed = [*spec.inputs, *(spec.targets if with_target else ())]
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            raise DataError(f"feature table lacks column {missing[0]!r}")
        self.spec = spec
        self.encoder_length = encoder_length
        self.horizon = horizon
        self.stride = stride
        self.with_target = with_target

        # Symbol blocks: first row and length of each symbol (frame is sorted by symbol).
        blocks = frame.group_by("symbol", maintain_order=True).len()
        self.symbols: tuple[str, ...] = tuple(blocks["symbol"].to_list())
        lengths = blocks["len"].to_numpy().astype(np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        if (
            frame.select((pl.col("symbol") != pl.col("symbol").shift(1)).sum()).item()
            != len(self.symbols) - 1
        ):
            raise DataError("feature table is not grouped by symbol (sort by symbol, ts)")

        def block(cols: Sequence[str]) -> torch.Tensor:
            if scaler is None:
                return _row_major(frame, cols)
            pos = [scaler.columns.index(c) for c in cols]
            mean = [scaler.mean[i] for i in pos]
            std = [scaler.std[i] for i in pos]
            return _row_major(frame, cols, mean, std)

        if scaler is not None:
            missing = [c for c in spec.inputs if c not in scaler.columns]
            if missing:
                raise DataError(f"scaler params lack input {missing[0]!r}")
        self.historical = block(spec.historical)  # (N, V_h)
        self.known = block(spec.known)  # (N, V_k)
        self.static = block(spec.static)  # (N, S)
        self.target = None  # (N, H)
        if with_target:
            t_std = scaler.target_std[:horizon] if scaler is not None else None
            self.target = _row_major(frame, spec.targets, None, t_std)
        self._ts = frame.get_column("ts").dt.epoch("us").to_numpy()  # (N,) int64 µs

        L, H = encoder_length, horizon
        origins, codes = [], []
        for code, (start, n) in enumerate(zip(starts, lengths, strict=True)):
            local = np.arange(L - 1, n - H, stride, dtype=np.int64)  # full encoder and decoder
            origins.append(start + local)
            codes.append(np.full(local.shape, code, dtype=np.int32))
        self._origin = torch.from_numpy(
            np.concatenate(origins) if origins else np.empty(0, np.int64)
        )
        self._symbol_code = np.concatenate(codes) if codes else np.empty(0, np.int32)
        self._enc = torch.arange(-L + 1, 1)  # (L,)
        self._all = torch.arange(-L + 1, H + 1)  # (L+H,)

    def __len__(self) -> int:
        return int(self._origin.shape[0])

    @property
    def nbytes(self) -> int:
        """Bytes held by the dataset's arrays (features, targets, index)."""
        arrays = [self.historical, self.known, self.static, self._origin]
        arrays += [self.target] if self.target is not None else []
        n = sum(a.numel() * a.element_size() for a in arrays)
        return n + self._ts.nbytes + self._symbol_code.nbytes

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
        enc_rows = t[:, None] + self._enc[None, :]  # (B, L)
        all_rows = t[:, None] + self._all[None, :]  # (B, L+H)
        return TFTBatch(
            static=self.static[t],  # (B, S)
            historical=self.historical[enc_rows],  # (B, L, V_h)
            known=self.known[all_rows],  # (B, L+H, V_k)
            target=None if self.target is None else self.target[t],  # (B, H)
        )

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
