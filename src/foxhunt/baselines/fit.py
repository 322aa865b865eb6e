"""Fitting every baseline of a run on the training split, while the run's data is prepared
(:func:`foxhunt.train.prepare.prepare`): the empirical quantiles of recent returns here, the classical
volatility models in :mod:`foxhunt.baselines.classical`. The record is ``baselines.json``
(format: :mod:`foxhunt.artifacts.baselines`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl
import torch

from foxhunt.artifacts.baselines import BASELINES_FORMAT
from foxhunt.baselines.classical import fit_classical
from foxhunt.data.scale.scaler import ScalerParams, unscale_targets
from foxhunt.data.windows.dataset import WindowDataset

RECENT_WINDOWS = 2000
"""Most recent training windows per symbol behind the empirical-quantile baseline."""


def recent_return_quantiles(
    train: WindowDataset,
    scaler: ScalerParams,
    quantiles: tuple[float, ...],
    recent: int = RECENT_WINDOWS,
) -> dict[str, Any]:
    """The empirical-quantile baseline: per symbol, quantiles of the h-bar log returns of its
    ``recent`` latest training windows (the ``baselines.json`` schema of
    :mod:`foxhunt.baselines.empirical`)."""
    assert train.target is not None
    symbols = train.origins()["symbol"].to_numpy()
    rows = train.origin_rows()
    levels = torch.tensor(quantiles, dtype=torch.float64)
    per_symbol, pooled = {}, []
    for sym in dict.fromkeys(symbols.tolist()):
        idx = rows[symbols == sym][-recent:]  # windows are in time order within a symbol
        returns = unscale_targets(train.target[torch.from_numpy(idx)].double(), scaler)  # (n, H)
        per_symbol[sym] = _quantiles(returns, levels)  # (H, Q)
        pooled.append(returns)
    return {
        "format": BASELINES_FORMAT,
        "quantiles": list(quantiles),
        "horizon": train.horizon,
        "recent_windows": recent,
        "per_symbol": per_symbol,
        "pooled": _quantiles(torch.cat(pooled), levels),
    }


def _quantiles(returns: torch.Tensor, levels: torch.Tensor) -> list[list[float]]:
    """(H, Q) quantiles of (n, H) returns along n, as lists; numpy's, since torch.quantile
    refuses inputs over 2**24 values (many symbols x H x the recent windows)."""
    return np.quantile(returns.numpy(), levels.numpy(), axis=0).T.tolist()


def fit_baselines(
    train: WindowDataset,
    val: WindowDataset,
    closes: pl.DataFrame,
    scaler: ScalerParams,
    quantiles: tuple[float, ...],
    calendars: Mapping[str, str] | None = None,
    *,
    classical: bool = True,
) -> dict[str, Any]:
    """Every baseline of a run (the ``baselines.json`` record): the empirical quantiles and the
    classical volatility models, fitted on the training split (the EWMA decays chosen on
    ``val``).

    Args:
        train: training windows (their last origin per symbol ends the training bars).
        val: validation windows.
        closes: ``symbol``, ``ts``, ``close`` of the bars (``PreparedData.closes``).
        scaler: the run's scaler (targets back to log returns).
        quantiles: the Q levels.
        calendars: symbol -> calendar of its bar schedule.
        classical: fit the volatility models; they model the close's log returns, so a run
            with another target (``--target``) stores none and is compared with the empirical
            quantiles and zero only.
    """
    record = recent_return_quantiles(train, scaler, quantiles)
    if not classical:
        return record
    ends = train.origins().group_by("symbol", maintain_order=True).agg(pl.col("ts").max())
    train_end = dict(zip(ends["symbol"].to_list(), ends["ts"].to_list(), strict=True))
    record["classical"] = fit_classical(
        closes, train_end, val.origins(), quantiles, train.horizon, calendars
    )
    return record
