"""Quantile (pinball) loss (Lim et al. 2021, eq. 24).

For quantile level ``q`` and error ``e = y - ŷ``: ``max(q e, (q - 1) e)``. The model does not force
its quantiles to be ordered (neither does the paper); consumers sort at inference.
"""

from __future__ import annotations

import torch
from torch import Tensor


def _pinball(pred: Tensor, target: Tensor, quantiles: Tensor) -> Tensor:
    """Elementwise pinball loss, (B, H, Q), computed in fp32."""
    if pred.dim() != 3 or target.shape != pred.shape[:2] or quantiles.shape != pred.shape[2:]:
        raise ValueError(
            f"expected pred (B, H, Q), target (B, H), quantiles (Q,); got {tuple(pred.shape)}, "
            f"{tuple(target.shape)}, {tuple(quantiles.shape)}"
        )
    q = quantiles.to(device=pred.device, dtype=torch.float32)
    err = target.float().unsqueeze(-1) - pred.float()  # (B, H, Q)
    return torch.maximum(q * err, (q - 1.0) * err)


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
    return _pinball(pred, target, quantiles).mean()


def pinball_per_quantile_horizon(pred: Tensor, target: Tensor, quantiles: Tensor) -> Tensor:
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
    return _pinball(pred, target, quantiles).mean(dim=0)
