"""Feature and target scaling: fitted on training rows only, stored as plain JSON-able params.

Inputs (observed, known, static) are z-scored with the training mean and standard deviation
(population, ddof 0; a constant column gets std 1, so it scales to 0). Targets are divided by
their training standard deviation per horizon and *not* centred, so a zero return stays zero
and quantiles map back with one multiplication.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from foxhunt.data.features.table import FeatureSpec
from foxhunt.errors import DataError

MIN_STD = 1e-12
"""Standard deviations below this are replaced by 1."""


@dataclass(frozen=True)
class ScalerParams:
    """Frozen scaling parameters (JSON-able via :meth:`to_dict`).

    Attributes:
        columns: input columns scaled, in order (historical, known, static).
        mean: training mean per column.
        std: training standard deviation per column (1 where it was below ``MIN_STD``).
        target_std: per horizon h = 1..H; targets are divided by it.
    """

    columns: tuple[str, ...]
    mean: tuple[float, ...]
    std: tuple[float, ...]
    target_std: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of lists."""
        return {
            "columns": list(self.columns),
            "mean": list(self.mean),
            "std": list(self.std),
            "target_std": list(self.target_std),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ScalerParams:
        """Inverse of :meth:`to_dict`.

        Raises:
            DataError: missing keys or lists of different lengths.
        """
        try:
            p = cls(
                columns=tuple(str(c) for c in d["columns"]),
                mean=tuple(float(x) for x in d["mean"]),
                std=tuple(float(x) for x in d["std"]),
                target_std=tuple(float(x) for x in d["target_std"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise DataError(f"invalid scaler params: {e!r}") from e
        if not (len(p.columns) == len(p.mean) == len(p.std)):
            raise DataError("invalid scaler params: columns, mean and std differ in length")
        return p


def _safe_std(x: float | None) -> float:
    return 1.0 if x is None or not math.isfinite(x) or x < MIN_STD else float(x)


def fit_scaler(train: pl.DataFrame, spec: FeatureSpec) -> ScalerParams:
    """Fit scaling parameters on training rows.

    Args:
        train: training feature rows (must hold ``spec.inputs`` and ``spec.targets``).
        spec: which columns are inputs and targets.

    Returns:
        The frozen parameters.

    Raises:
        DataError: ``train`` is empty or lacks a column.
    """
    if train.height == 0:
        raise DataError("cannot fit the scaler on an empty training split")
    cols = spec.inputs
    missing = [c for c in (*cols, *spec.targets) if c not in train.columns]
    if missing:
        raise DataError(f"training features lack column {missing[0]!r}")
    return fit_scaler_columns(train.get_column, spec)


def fit_scaler_columns(column: Callable[[str], pl.Series], spec: FeatureSpec) -> ScalerParams:
    """:func:`fit_scaler` on training columns given one at a time (``column(name)``: the
    training rows of that column, in table order), e.g. from row arrays built one symbol at a
    time (:mod:`foxhunt.data.windows.split_arrays`): the same values give the same params."""
    moments = [_moments(column(c)) for c in spec.inputs]
    return ScalerParams(
        columns=tuple(spec.inputs),
        mean=tuple(m for m, _ in moments),
        std=tuple(_safe_std(s) for _, s in moments),
        target_std=tuple(_safe_std(_moments(column(c))[1]) for c in spec.targets),
    )


def _moments(col: pl.Series) -> tuple[float, float | None]:
    """Mean and population std of one column, in float64.

    The column is made contiguous first: polars sums chunk by chunk, so the same values split
    into different chunks (which depends on thread count and on how the table was assembled,
    e.g. from bars or from per-symbol feature shards) would round differently in the last bit.
    """
    x = col.cast(pl.Float64).rechunk()
    mean = x.mean()
    return float(mean) if mean is not None else math.nan, x.std(ddof=0)  # type: ignore[arg-type]


def apply_scaler(df: pl.DataFrame, params: ScalerParams) -> pl.DataFrame:
    """Scale inputs (z-score) and targets (divide by std) with fitted params.

    Args:
        df: a feature table holding every ``params.columns``; ``target__h*`` columns are
            scaled when present.
        params: from :func:`fit_scaler`.

    Returns:
        The same columns, inputs and targets as Float32.

    Raises:
        DataError: an input column is missing.
    """
    missing = [c for c in params.columns if c not in df.columns]
    if missing:
        raise DataError(f"features lack column {missing[0]!r} required by the scaler")
    exprs = [
        ((pl.col(c).cast(pl.Float64) - m) / s).cast(pl.Float32).alias(c)
        for c, m, s in zip(params.columns, params.mean, params.std, strict=True)
    ]
    for h, s in enumerate(params.target_std, start=1):
        name = f"target__h{h}"
        if name in df.columns:
            exprs.append((pl.col(name) / s).cast(pl.Float32).alias(name))
    return df.with_columns(exprs)


def unscale_targets(values: Any, params: ScalerParams, *, horizon_axis: int = -1) -> Any:
    """Map scaled target-like values back to log returns (multiply by ``target_std``).

    Args:
        values: numpy array or torch tensor whose ``horizon_axis`` has length H, e.g. targets
            ``[B, H]`` (axis -1) or quantiles ``[B, H, Q]`` (axis 1).
        params: the fitted scaler.
        horizon_axis: which axis indexes h = 1..H.

    Returns:
        Same type and shape as ``values``.
    """
    import numpy as np

    std = np.asarray(params.target_std, dtype=np.float64)
    shape = [1] * np.ndim(values)
    shape[horizon_axis] = std.shape[0]
    std = std.reshape(shape)
    try:
        import torch

        if isinstance(values, torch.Tensor):
            return values * torch.as_tensor(std, dtype=values.dtype, device=values.device)
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    return np.asarray(values) * std
