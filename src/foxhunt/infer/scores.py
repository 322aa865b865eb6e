"""Streaming scores of quantile forecasts (what ``evaluate`` and ``backtest`` report).

All in unscaled log-return units:

* **pinball loss** per quantile and horizon (mean over windows), and its mean over both;
* **q-risk** as in the TFT paper (Lim et al. 2021, §7): ``R_q = 2 Σ QL_q(y, ŷ_q) / Σ |y|``
  summed over windows and horizons, for P50 and P90 (zero-return persistence has P50 risk 1);
* **interval coverage**: the share of outcomes inside [q0.1, q0.9] (nominal 80 %) and
  [q0.02, q0.98] (nominal 96 %), when the model predicts those levels;
* **reliability**: for every level ``q``, the share of outcomes at or below the forecast
  quantile (``q`` when calibrated);
* **PIT histogram** over the Q + 1 bins the forecast quantiles cut the line into: the share of
  outcomes in each bin (the bin's width in levels when calibrated);
* **per-window losses** (each window's pinball loss per horizon, mean over quantiles), kept for
  the paired test of :mod:`foxhunt.infer.significance`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from foxhunt.model.quantile import quantile_loss_table

INTERVALS: dict[str, tuple[float, float]] = {"10-90": (0.1, 0.9), "2-98": (0.02, 0.98)}
"""Central intervals whose coverage is reported: name -> (lower, upper) quantile level."""

RISK_LEVELS: dict[str, float] = {"P50": 0.5, "P90": 0.9}
"""Quantile levels whose normalised q-risk is reported."""


def _level_index(quantiles: Sequence[float], level: float) -> int | None:
    return next((i for i, q in enumerate(quantiles) if abs(q - level) < 1e-9), None)


class QuantileScores:
    """Streaming scores of quantile forecasts: feed batches, read :meth:`result`.

    Args:
        quantiles: The Q levels, increasing.
        horizon: H.
        windows: How many windows will be fed, when known: the per-window losses and coverage
            are then written into arrays of that size as batches come (no list of pieces
            joined at the end, which held them twice: about 1 GB more at the peak of
            ``evaluate`` on 3.5 M windows). Feeding more raises ``ValueError``.
        window_coverage: Keep each window's coverage (:meth:`window_coverage`); the interval
            totals are kept either way. ``evaluate`` keeps it for the TFT only (its per-symbol
            coverage), not for the baselines: 16 bytes a window less for each.
    """

    def __init__(
        self,
        quantiles: Sequence[float],
        horizon: int,
        windows: int | None = None,
        *,
        window_coverage: bool = True,
    ) -> None:
        self.quantiles = tuple(float(q) for q in quantiles)
        self.levels = torch.tensor(self.quantiles, dtype=torch.float32)
        self.pinball_sum = torch.zeros(horizon, len(self.quantiles), dtype=torch.float64)
        self.abs_sum = torch.zeros(horizon, dtype=torch.float64)
        self.n = 0
        self.intervals = {
            name: (lo, hi)
            for name, (a, b) in INTERVALS.items()
            if (lo := _level_index(self.quantiles, a)) is not None
            and (hi := _level_index(self.quantiles, b)) is not None
        }
        self.covered = {name: torch.zeros(horizon, dtype=torch.float64) for name in self.intervals}
        self.below = torch.zeros(len(self.quantiles), dtype=torch.float64)
        self.pit = torch.zeros(len(self.quantiles) + 1, dtype=torch.float64)
        self._window_loss: list[Tensor] = []
        self._window_covered: dict[str, list[Tensor]] = {name: [] for name in self.intervals}
        self.windows = windows
        self.keeps_coverage = window_coverage
        if windows is not None:  # one piece each, filled in place
            self._window_loss = [torch.empty(windows, horizon, dtype=torch.float64)]
            for name in self.intervals if window_coverage else ():
                self._window_covered[name] = [torch.empty(windows, dtype=torch.float64)]

    def update(self, pred: Tensor, target: Tensor) -> None:
        """Add a batch.

        Args:
            pred: (B, H, Q) quantiles in return units, sorted along Q.
            target: (B, H) realised log returns.
        """
        b = target.shape[0]
        if b == 0:
            return
        if self.windows is not None and self.n + b > self.windows:
            raise ValueError(f"{self.n + b} windows fed to scores sized for {self.windows}")
        pred, target = pred.double().cpu(), target.double().cpu()
        self.pinball_sum += quantile_loss_table(pred, target, self.levels).double() * b
        self.abs_sum += target.abs().sum(dim=0)
        for name, (lo, hi) in self.intervals.items():
            inside = (target >= pred[..., lo]) & (target <= pred[..., hi])  # (B, H)
            self.covered[name] += inside.double().sum(dim=0)
            if self.keeps_coverage:
                self._keep(self._window_covered[name], inside.double().mean(dim=1))
        below = target[..., None] <= pred  # (B, H, Q)
        self.below += below.double().sum(dim=(0, 1))
        bins = below.logical_not().sum(dim=-1).reshape(-1)  # quantiles under y: its PIT bin
        self.pit += torch.bincount(bins, minlength=len(self.quantiles) + 1).double()
        levels = torch.tensor(self.quantiles, dtype=torch.float64)
        e = target[..., None] - pred
        self._keep(self._window_loss, torch.maximum(levels * e, (levels - 1) * e).mean(dim=-1))
        self.n += b

    def _keep(self, pieces: list[Tensor], values: Tensor) -> None:
        """Record a batch's per-window values: into the preallocated array at the windows fed
        so far, else as one more piece."""
        if self.windows is None:
            pieces.append(values)
        else:
            pieces[0][self.n : self.n + values.shape[0]] = values

    def _joined(self, pieces: list[Tensor], empty: Tensor) -> Tensor:
        if self.windows is not None:
            return pieces[0][: self.n]
        return torch.cat(pieces) if pieces else empty

    def window_losses(self) -> Tensor:
        """(N, H) each window's pinball loss per horizon (mean over quantiles), in update order."""
        empty = torch.zeros(0, self.pinball_sum.shape[0], dtype=torch.float64)
        return self._joined(self._window_loss, empty)

    def window_coverage(self) -> dict[str, Tensor]:
        """{interval: (N,)} each window's share of horizons inside the interval, in update
        order (per-symbol coverage is the mean over a symbol's windows).

        Raises:
            ValueError: the scores were made with ``window_coverage=False``.
        """
        if not self.keeps_coverage:
            raise ValueError("these scores keep no per-window coverage (window_coverage=False)")
        empty = torch.zeros(0, dtype=torch.float64)
        return {name: self._joined(parts, empty) for name, parts in self._window_covered.items()}

    def result(self) -> dict[str, Any]:
        """Scores so far (JSON-able).

        Returns:
            ``n_windows``, ``mean_pinball``, ``pinball`` [H][Q], ``pinball_per_horizon`` [H],
            ``pinball_per_quantile`` {level: value}, ``q_risk`` {P50, P90},
            ``coverage`` {interval: share}, ``coverage_per_horizon`` {interval: [H]},
            ``observed_levels`` {level: share of outcomes <= the quantile}, ``pit`` [Q + 1]
            shares of outcomes per bin between consecutive quantiles.
        """
        n = max(self.n, 1)
        pinball = self.pinball_sum / n  # (H, Q)
        total_abs = float(self.abs_sum.sum())
        q_risk = {}
        for name, level in RISK_LEVELS.items():
            i = _level_index(self.quantiles, level)
            if i is not None:
                q_risk[name] = (
                    2 * float(self.pinball_sum[:, i].sum()) / total_abs
                    if total_abs > 0
                    else math.nan
                )
        return {
            "n_windows": self.n,
            "mean_pinball": float(pinball.mean()),
            "pinball": pinball.tolist(),
            "pinball_per_horizon": pinball.mean(dim=1).tolist(),
            "pinball_per_quantile": {
                f"{q:g}": float(v) for q, v in zip(self.quantiles, pinball.mean(dim=0), strict=True)
            },
            "q_risk": q_risk,
            "coverage": {
                name: float(c.sum()) / (n * c.shape[0]) for name, c in self.covered.items()
            },
            "coverage_per_horizon": {name: (c / n).tolist() for name, c in self.covered.items()},
            "observed_levels": {
                f"{q:g}": float(v) / (n * self.pinball_sum.shape[0])
                for q, v in zip(self.quantiles, self.below, strict=True)
            },
            "pit": (self.pit / (n * self.pinball_sum.shape[0])).tolist(),
        }
