"""Every baseline's quantile forecast for the windows ``evaluate`` (and ``backtest``) scores.

A baseline's forecast for window ``i`` is ``scale[i, h] * z[symbol of i, h, q]``:

* zero return: scale 1, z 0;
* empirical quantiles: scale 1, z the symbol's stored quantiles;
* the classical volatility models (:mod:`foxhunt.baselines.classical`): scale
  ``sqrt(V[origin, h])`` from the bars up to the window's origin, z the stored standardised
  quantiles.

The classical models filter each symbol's bars from the first bar of the file being scored,
starting from the variance fitted on the training split, with the parameters fixed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
import torch
from torch import Tensor

from foxhunt.artifacts.baselines import BASELINE_LABELS
from foxhunt.baselines.classical import MODELS, symbol_series, variance_path
from foxhunt.baselines.empirical import EmpiricalQuantiles
from foxhunt.errors import DataError, ModelDirError

LABELS = BASELINE_LABELS
"""Display name of every baseline."""


@dataclass(frozen=True)
class WindowForecast:
    """One baseline's forecasts for N windows.

    Attributes:
        scale: (N, H) per-window scale.
        z: (S, H, Q) per-symbol standardised quantiles; (1, H, Q) for the zero baseline of no
            window (one all-zero row is kept, so ``predict`` of an empty range has its shape).
        symbol: (N,) index into ``z`` of each window's symbol.
    """

    scale: Tensor
    z: Tensor
    symbol: Tensor

    def predict(self, start: int, stop: int) -> Tensor:
        """Windows ``start .. stop-1``: (B, H, Q) quantiles in log-return units."""
        return self.scale[start:stop, :, None] * self.z[self.symbol[start:stop]]


def _codes(symbols: Sequence[str]) -> tuple[list[str], Tensor]:
    names = list(dict.fromkeys(symbols))
    pos = {s: i for i, s in enumerate(names)}
    return names, torch.tensor([pos[s] for s in symbols], dtype=torch.long)


def simple_forecasts(
    empirical: EmpiricalQuantiles, symbols: Sequence[str], horizon: int
) -> dict[str, WindowForecast]:
    """Zero return and empirical quantiles for windows of ``symbols`` (one per window)."""
    names, code = _codes(symbols)
    ones = torch.ones(1, horizon, dtype=torch.float64).expand(len(symbols), -1)  # one row held
    q = len(empirical.quantiles)
    emp = empirical.predict(names) if names else torch.zeros(0, horizon, q, dtype=torch.float64)
    return {
        "zero": WindowForecast(ones, torch.zeros(max(len(names), 1), horizon, q).double(), code),
        "empirical": WindowForecast(ones, emp.double(), code),
    }


def classical_forecasts(
    record: Mapping[str, Any],
    closes: pl.DataFrame,
    origins: pl.DataFrame,
    horizon: int,
    n_quantiles: int,
) -> dict[str, WindowForecast]:
    """The stored classical baselines' forecasts for windows at ``origins``.

    Args:
        record: the ``classical`` entry of ``baselines.json`` (empty: none).
        closes: ``symbol``, ``ts``, ``close`` of the bars the windows come from.
        origins: ``symbol``, ``ts`` of each window's origin (``WindowDataset.origins()``).
        horizon: H.
        n_quantiles: Q.

    Returns:
        model -> forecasts, for the models the run stored, in :data:`MODELS` order. A symbol
        the run did not fit uses the ``fallback`` symbol's parameters.

    Raises:
        ModelDirError: a stored model is malformed.
        DataError: an origin is not one of its symbol's bars.
    """
    symbols = origins["symbol"].to_list()
    names, code = _codes(symbols)
    origin_us = origins["ts"].dt.epoch("us").to_numpy()
    series = {s: symbol_series(closes, s) for s in names}
    out: dict[str, WindowForecast] = {}
    for model in (m for m in MODELS if m in record):
        try:
            per_symbol, fallback = record[model]["per_symbol"], record[model]["fallback"]
            params = {s: per_symbol.get(s, per_symbol[fallback]) for s in names}
            z = torch.tensor([params[s]["z"] for s in names], dtype=torch.float64)
        except (KeyError, TypeError, ValueError) as e:
            raise ModelDirError(f"baselines.json: unreadable {model} baseline ({e})") from e
        if names and tuple(z.shape[1:]) != (horizon, n_quantiles):
            raise ModelDirError(f"baselines.json: {model} quantiles have shape {tuple(z.shape)}")
        scale = np.ones((len(symbols), horizon))
        for i, s in enumerate(names):
            ts_us, close = series[s]
            rows = np.flatnonzero(code.numpy() == i)
            at = np.searchsorted(ts_us, origin_us[rows])
            if np.any(at >= len(ts_us)) or np.any(
                ts_us[np.minimum(at, len(ts_us) - 1)] != origin_us[rows]
            ):
                raise DataError(f"{s}: a window's origin is not one of its bars")
            var = variance_path(model, params[s], ts_us, close, horizon)
            scale[rows] = np.sqrt(var[at])
        out[model] = WindowForecast(
            torch.from_numpy(scale), z if names else z.reshape(0, horizon, n_quantiles), code
        )
    return out
