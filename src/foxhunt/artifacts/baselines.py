"""``baselines.json``: the empirical-quantile baseline a run stores when training ends, so
evaluation needs no training data. Written and its format defined here; read by
:func:`foxhunt.infer.baselines.load_empirical`.

Schema::

    {"format": 1, "quantiles": [Q floats], "horizon": H, "recent_windows": N,
     "per_symbol": {"ES": [[Q floats] x H], ...}, "pooled": [[Q floats] x H]}
"""

from __future__ import annotations

from typing import Any

import torch

from foxhunt.data.scaling import ScalerParams, unscale_targets
from foxhunt.data.windows import WindowDataset

BASELINES_FORMAT = 1
"""Version of the ``baselines.json`` schema."""

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
    :mod:`foxhunt.infer.baselines`)."""
    assert train.target is not None
    symbols = train.origins()["symbol"].to_numpy()
    rows = train.origin_rows()
    levels = torch.tensor(quantiles, dtype=torch.float64)
    per_symbol, pooled = {}, []
    for sym in dict.fromkeys(symbols.tolist()):
        idx = rows[symbols == sym][-recent:]  # windows are in time order within a symbol
        returns = unscale_targets(train.target[torch.from_numpy(idx)].double(), scaler)  # (n, H)
        per_symbol[sym] = torch.quantile(returns, levels, dim=0).T.tolist()  # (H, Q)
        pooled.append(returns)
    return {
        "format": BASELINES_FORMAT,
        "quantiles": list(quantiles),
        "horizon": train.horizon,
        "recent_windows": recent,
        "per_symbol": per_symbol,
        "pooled": torch.quantile(torch.cat(pooled), levels, dim=0).T.tolist(),
    }
