"""The simple baselines a TFT must beat, in unscaled log-return units (the classical volatility
models are fitted in :mod:`foxhunt.baselines.classical`, forecast in
:mod:`foxhunt.baselines.forecasts`).

* **Zero-return persistence**: tomorrow's price is today's, so every quantile of the h-bar
  return is 0. As a quantile forecast it is degenerate (no spread); its P50 q-risk is exactly 1.
* **Empirical quantiles of recent returns**: for each horizon h, the quantiles of the h-bar
  forward log returns over the most recent training windows of the same symbol (all symbols
  pooled for a symbol the model never saw). They are fitted on the training split while the
  run's data is prepared (:mod:`foxhunt.baselines.fit`) and stored in ``baselines.json``, so
  evaluation needs no training data.

``baselines.json`` and its schema: :mod:`foxhunt.artifacts.baselines`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from foxhunt.artifacts.baselines import READABLE_FORMATS
from foxhunt.errors import ModelDirError
from foxhunt.runtime import read_json


def zero_forecast(batch_size: int, horizon: int, n_quantiles: int) -> Tensor:
    """Zero-return persistence: every quantile of every horizon is 0.

    Returns:
        (B, H, Q) zeros.
    """
    return torch.zeros(batch_size, horizon, n_quantiles)


@dataclass(frozen=True)
class EmpiricalQuantiles:
    """Per-symbol return quantiles per horizon.

    Attributes:
        quantiles: The Q levels.
        per_symbol: symbol -> (H, Q) quantiles of h-bar log returns.
        pooled: (H, Q) over all symbols (for symbols not seen in training).
        recent_windows: How many most recent training windows per symbol were used.
    """

    quantiles: tuple[float, ...]
    per_symbol: Mapping[str, Tensor]
    pooled: Tensor
    recent_windows: int

    def predict(self, symbols: Sequence[str]) -> Tensor:
        """The forecast for windows of these symbols.

        Returns:
            (B, H, Q) quantiles, the same for every window of a symbol.
        """
        rows = [self.per_symbol.get(s, self.pooled) for s in symbols]
        if not rows:
            return self.pooled.new_zeros(0, *self.pooled.shape)
        return torch.stack(rows)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EmpiricalQuantiles:
        """Read the ``baselines.json`` dict.

        Raises:
            KeyError, TypeError, ValueError: If it does not follow the schema.
        """
        if d.get("format") not in READABLE_FORMATS:
            raise ValueError(f"format {d.get('format')!r} is not one of {READABLE_FORMATS}")
        pooled = torch.tensor(d["pooled"], dtype=torch.float64)
        q = tuple(float(x) for x in d["quantiles"])
        if pooled.shape != (int(d["horizon"]), len(q)):
            raise ValueError(f"pooled quantiles have shape {tuple(pooled.shape)}")
        per_symbol = {s: torch.tensor(v, dtype=torch.float64) for s, v in d["per_symbol"].items()}
        return cls(q, per_symbol, pooled, int(d["recent_windows"]))


def load_empirical(path: Path, quantiles: Sequence[float], horizon: int) -> EmpiricalQuantiles:
    """Read ``baselines.json`` and check it matches the model's quantiles and horizon.

    Raises:
        ModelDirError: If the file is missing, corrupt or does not match.
    """
    return load_baselines(path, quantiles, horizon)[0]


def load_baselines(
    path: Path, quantiles: Sequence[float], horizon: int
) -> tuple[EmpiricalQuantiles, dict[str, Any]]:
    """Read ``baselines.json``: the empirical quantiles and the classical models' record
    (empty for a run from before them, format 1).

    Raises:
        ModelDirError: If the file is missing, corrupt or does not match.
    """
    d = read_json(path, "baselines.json")
    try:
        base = EmpiricalQuantiles.from_dict(d)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ModelDirError(f"{path}: unreadable baselines ({e})") from e
    if base.quantiles != tuple(quantiles) or base.pooled.shape[0] != horizon:
        raise ModelDirError(
            f"{path}: baselines are for quantiles {base.quantiles} and horizon "
            f"{base.pooled.shape[0]}, the model has {tuple(quantiles)} and {horizon}"
        )
    classical = d.get("classical", {})
    if not isinstance(classical, dict):
        raise ModelDirError(f"{path}: unreadable baselines (classical is not an object)")
    return base, classical
