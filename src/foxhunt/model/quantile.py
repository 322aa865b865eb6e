"""Quantile (pinball) loss (Lim et al. 2021, eq. 24).

For quantile level ``q`` and error ``e = y - ŷ``: ``max(q e, (q - 1) e)``. The paper does not
force the quantiles to be ordered; :func:`monotone_quantiles` (the head of a model with
``monotone_quantiles``) does, so they never cross in training or inference. Consumers still
sort at inference (a no-op for a monotone head; runs trained without it need it).
"""

from __future__ import annotations

import torch
from torch import Tensor


def pinball(pred: Tensor, target: Tensor, quantiles: Tensor, scale: Tensor | None = None) -> Tensor:
    """Elementwise pinball loss ``max(q e, (q - 1) e)`` with ``e = (y - ŷ) · scale``: the one
    definition (training loss, evaluation, calibration and baseline choices all call it).

    Computed in the dtypes given (no casts, no shape checks: :func:`quantile_loss` checks).

    Args:
        pred: (..., Q) predicted quantiles.
        target: (...) observed values.
        quantiles: (Q,) quantile levels in (0, 1).
        scale: (...) a positive factor per target (e.g. a window's target scale), or None.

    Returns:
        (..., Q) losses.
    """
    err = target.unsqueeze(-1) - pred  # (..., Q)
    if scale is not None:
        err = err * scale.unsqueeze(-1)
    return torch.maximum(quantiles * err, (quantiles - 1.0) * err)


def _checked_fp32(pred: Tensor, target: Tensor, quantiles: Tensor) -> Tensor:
    """Elementwise pinball loss, (B, H, Q), computed in fp32."""
    if pred.dim() != 3 or target.shape != pred.shape[:2] or quantiles.shape != pred.shape[2:]:
        raise ValueError(
            f"expected pred (B, H, Q), target (B, H), quantiles (Q,); got {tuple(pred.shape)}, "
            f"{tuple(target.shape)}, {tuple(quantiles.shape)}"
        )
    q = quantiles.to(device=pred.device, dtype=torch.float32)
    return pinball(pred.float(), target.float(), q)


def monotone_quantiles(raw: Tensor) -> Tensor:
    """Map unconstrained head outputs to non-decreasing quantiles along the last axis.

    ``q_0 = raw_0`` and ``q_k = q_{k-1} + softplus(raw_k)``: the lowest quantile is free, every
    step up is positive, so quantiles never cross whatever the inputs.

    Args:
        raw: (..., Q) outputs of the linear head.

    Returns:
        (..., Q), non-decreasing along the last axis (strictly, up to float rounding).
    """
    steps = torch.nn.functional.softplus(raw[..., 1:])  # (..., Q-1) > 0
    return torch.cat([raw[..., :1], raw[..., :1] + torch.cumsum(steps, dim=-1)], dim=-1)


def quantile_loss(pred: Tensor, target: Tensor, quantiles: Tensor) -> Tensor:
    """Mean pinball loss over batch, horizons and quantiles.

    Args:
        pred: (B, H, Q) predicted quantiles.
        target: (B, H) observed values.
        quantiles: (Q,) quantile levels in (0, 1).

    Returns:
        Scalar fp32 loss.

    Raises:
        ValueError: If the shapes do not line up.
    """
    return _checked_fp32(pred, target, quantiles).mean()


def quantile_loss_table(pred: Tensor, target: Tensor, quantiles: Tensor) -> Tensor:
    """Pinball loss per horizon and quantile, averaged over the batch (for evaluation).

    Args:
        pred: (B, H, Q) predicted quantiles.
        target: (B, H) observed values.
        quantiles: (Q,) quantile levels in (0, 1).

    Returns:
        (H, Q) fp32 mean loss.

    Raises:
        ValueError: If the shapes do not line up.
    """
    return _checked_fp32(pred, target, quantiles).mean(dim=0)
