"""The scale a window's targets are divided by: global per horizon, or per window (causal).

The network predicts quantiles of *standardised* cumulative log returns ``z = y / scale``; the
scale is reapplied outside the network (:meth:`TargetScale.to_returns`). Two scales:

* ``global``: ``scale[h] = target_std[h]``, the training split's std of the h-bar return (the
  behaviour of every run trained before this option; ``data/scaling.py``).
* ``window``: ``scale[b, h] = sigma_b * sqrt(h)``, where ``sigma_b**2`` is the exponentially
  weighted variance of the one-bar log returns of window ``b``'s encoder bars, up to and
  including the origin (RiskMetrics with normalised weights, as
  :func:`foxhunt.data.volatility.ewma_variance` without ``initial``). This is what
  pytorch-forecasting's ``EncoderNormalizer`` does: the scale is a function of the encoder
  alone, so training, ``evaluate``, ``predict`` and the streaming ``Forecaster`` compute the
  same number from the same bars, and it never sees a bar after the origin. It is floored at
  ``WINDOW_FLOOR x target_std[h]`` so a flat encoder cannot blow a target up.

  With ``reversion`` ``phi < 1`` the window's variance reverts to the training split's mean
  squared one-bar return ``v`` as a GARCH(1,1) forecast does: the k-th bar ahead has variance
  ``v + phi^(k-1) (sigma_b**2 - v)`` and ``scale[b, h]**2`` is their sum over k = 1..h
  (``phi = 1``: ``sigma_b**2 x h``, the scale above). ``v`` is read from the fitted scaler
  (``std**2 + mean**2`` of the return input), so inference reproduces it.

The one-bar returns are read back from the batch's observed input ``obs__ret1_lag0`` (z-scored
with the training mean and std; undone here in float64).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch
from torch import Tensor

from foxhunt.config import DataConfig, TargetScaleMode
from foxhunt.data.features import FeatureSpec
from foxhunt.data.scaling import ScalerParams
from foxhunt.data.volatility import VARIANCE_FLOOR

log = logging.getLogger(__name__)

RETURN_FEATURE = "obs__ret1_lag0"
"""The observed input holding the bar's one-bar log return."""
WINDOW_FLOOR = 0.1
"""Smallest window scale, as a fraction of the global per-horizon std."""


@dataclass(frozen=True)
class TargetScale:
    """How targets are standardised, with everything needed to do it from a batch.

    Attributes:
        mode: ``global`` or ``window`` (see the module docstring).
        target_std: (H,) training std of the h-bar return, h = 1..H.
        decay: EWMA decay of the window scale (RiskMetrics lambda).
        ret_index: column of :data:`RETURN_FEATURE` in the batch's historical inputs.
        ret_mean: training mean the return input was centred with.
        ret_std: training std the return input was divided by.
        reversion: mean reversion ``phi`` of the window variance towards the training mean
            squared return (1: none).
    """

    mode: TargetScaleMode
    target_std: tuple[float, ...]
    decay: float = 0.94
    ret_index: int = 0
    ret_mean: float = 0.0
    ret_std: float = 1.0
    reversion: float = 1.0

    @classmethod
    def of(cls, data: DataConfig, spec: FeatureSpec, scaler: ScalerParams) -> TargetScale:
        """The scale of a run (its data config, its spec and fitted scaler).

        ``window`` needs the close's one-bar return among the inputs and a price target: a run
        with a custom feature set without :data:`RETURN_FEATURE`, or a ``return:COLUMN`` target
        (another series than the close), gets the ``global`` scale, with a warning. The choice
        is a pure function of the stored config and features, so training and inference agree.
        """
        mode, decay = data.target_scale, data.target_scale_decay
        if mode == "window" and (
            RETURN_FEATURE not in spec.historical
            or RETURN_FEATURE not in scaler.columns
            or data.target.startswith("return:")
        ):
            log.warning(
                "target_scale 'window' needs the input %s and a price target; using 'global'",
                RETURN_FEATURE,
            )
            mode = "global"
        if mode == "global":
            return cls("global", tuple(scaler.target_std), decay)
        col = scaler.columns.index(RETURN_FEATURE)
        return cls(
            "window",
            tuple(scaler.target_std),
            decay,
            spec.historical.index(RETURN_FEATURE),
            scaler.mean[col],
            scaler.std[col],
            data.target_scale_reversion,
        )

    def scale(self, historical: Tensor) -> Tensor:
        """Each window's scale per horizon, in log-return units.

        Args:
            historical: (B, T_enc, V_h) observed inputs as the model gets them (z-scored).

        Returns:
            (B, H) float64 on ``historical``'s device.
        """
        std = torch.tensor(self.target_std, dtype=torch.float64, device=historical.device)
        b = historical.shape[0]
        if self.mode == "global":
            return std.expand(b, -1)  # (B, H)
        r = historical[:, :, self.ret_index].double() * self.ret_std + self.ret_mean  # (B, T_enc)
        var = ewma_last(r, self.decay)  # (B,)
        if self.reversion < 1.0:
            window = reverting_variance(var, self.long_run_var, self.reversion, len(std)).sqrt()
        else:
            h = torch.arange(1, len(self.target_std) + 1, dtype=torch.float64, device=r.device)
            window = var.sqrt()[:, None] * h.sqrt()[None, :]  # (B, H)
        return torch.maximum(window, WINDOW_FLOOR * std[None, :])

    @property
    def long_run_var(self) -> float:
        """The training split's mean squared one-bar return (what the window variance reverts
        to)."""
        return self.ret_std**2 + self.ret_mean**2

    def standardise(self, target: Tensor, historical: Tensor) -> Tensor:
        """Globally scaled targets ``y / target_std`` (B, H) -> ``y / scale`` (same dtype)."""
        if self.mode == "global":
            return target
        std = torch.tensor(self.target_std, dtype=torch.float64, device=target.device)
        return (target.double() * std / self.scale(historical)).to(target.dtype)

    def to_returns(self, z: Tensor, historical: Tensor) -> Tensor:
        """Standardised quantiles (B, H, Q) -> log-return quantiles (float64, same device)."""
        return z.double() * self.scale(historical)[:, :, None]


def reverting_variance(var: Tensor, long_run: float, phi: float, horizon: int) -> Tensor:
    """Cumulative variance over h = 1..H bars when each bar's variance reverts to ``long_run``.

    Args:
        var: (B,) the variance of the next bar.
        long_run: the variance it reverts to.
        phi: reversion per bar in [0, 1] (1: none, ``var x h``).
        horizon: H.

    Returns:
        (B, H) float64: ``sum_{k=1..h} long_run + phi^(k-1) (var - long_run)``.
    """
    k = torch.arange(horizon, dtype=torch.float64, device=var.device)
    per_bar = long_run + (phi**k)[None, :] * (var.double()[:, None] - long_run)  # (B, H)
    return per_bar.cumsum(dim=1)


def ewma_last(returns: Tensor, decay: float) -> Tensor:
    """The EWMA variance after the last of each row's returns, with normalised weights.

    Equals ``ewma_variance(r, decay)[-1]`` (no ``initial``) of :mod:`foxhunt.data.volatility`
    for every row, vectorised over the batch.

    Args:
        returns: (B, T) one-bar returns, oldest first.
        decay: in (0, 1).

    Returns:
        (B,) float64, floored at :data:`~foxhunt.data.volatility.VARIANCE_FLOOR`.
    """
    if not 0.0 < decay < 1.0:
        raise ValueError(f"decay must be in (0, 1), got {decay}")
    t = returns.shape[1]
    w = decay ** torch.arange(t - 1, -1, -1, dtype=torch.float64, device=returns.device)  # (T,)
    var = (returns.double().square() * w).sum(dim=1) / w.sum()
    return var.clamp_min(VARIANCE_FLOOR)
