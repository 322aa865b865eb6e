"""A feature table's rows as contiguous row-major float32 arrays, scaled while they are filled.

:class:`~foxhunt.data.windows.dataset.WindowDataset` holds these arrays (historical, known, static,
targets) and gathers windows from them on demand; the feature store's window cache writes the
same arrays to ``.npy`` files (:mod:`foxhunt.data.store.cache`). Filling column by column keeps
the only full-size allocation the result: there is no scaled copy of the table.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
import torch

from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.errors import DataError


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


def row_arrays(
    frame: pl.DataFrame,
    spec: FeatureSpec,
    horizon: int,
    scaler: ScalerParams | None,
    *,
    with_target: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """A feature table's rows as the row-major float32 arrays a :class:`WindowDataset` holds.

    Args:
        frame: Feature rows with every column of ``spec.inputs`` (and ``spec.targets``).
        spec: The feature names.
        horizon: H (targets kept).
        scaler: When given, inputs are z-scored and targets divided by their std while the
            arrays are filled; None keeps the values as they are.
        with_target: Whether to return the targets.

    Returns:
        ``(historical (N, V_h), known (N, V_k), static (N, S), target (N, H) or None)``.

    Raises:
        DataError: ``scaler`` lacks one of the inputs.
    """

    def block(cols: Sequence[str]) -> torch.Tensor:
        if scaler is None:
            return _row_major(frame, cols)
        pos = [scaler.columns.index(c) for c in cols]
        return _row_major(frame, cols, [scaler.mean[i] for i in pos], [scaler.std[i] for i in pos])

    if scaler is not None:
        missing = [c for c in spec.inputs if c not in scaler.columns]
        if missing:
            raise DataError(f"scaler params lack input {missing[0]!r}")
    target = None
    if with_target:
        t_std = scaler.target_std[:horizon] if scaler is not None else None
        target = _row_major(frame, spec.targets, None, t_std)
    return block(spec.historical), block(spec.known), block(spec.static), target
