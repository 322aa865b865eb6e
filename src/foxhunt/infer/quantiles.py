"""The TFT's forecast of a batch as log-return quantiles: the one place that makes them.

``evaluate``, ``predict`` and the streaming ``Forecaster`` all call :func:`tft_quantiles`:
model forward (standardised quantiles) -> conformal offsets (when the run has
``calibration.json``) -> times the target scale (global std per horizon, or the window's causal
volatility; :mod:`foxhunt.data.scale.target`) -> sorted along Q (a no-op for a monotone head
without calibration; it keeps quantiles from crossing in every other case). The steps after the
forward are :meth:`foxhunt.artifacts.calibration.QuantileMap.to_returns`, which the layers
below ``infer`` (the quantisation comparison, the training report's fan chart) call directly.

A seed ensemble (:class:`foxhunt.artifacts.ensemble.EnsembleTFT`, ``foxhunt train --ensemble
N``) goes through the same function: each member makes its quantiles as above with its own
calibration, one member after another over the same batch (the activation peak is one
member's), and the ensemble's are their mean, sorted.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from foxhunt.artifacts.calibration import QuantileMap, quantile_map
from foxhunt.artifacts.ensemble import EnsembleTFT
from foxhunt.model.batch import TFTBatch
from foxhunt.runtime import autocast

__all__ = ["QuantileMap", "plain_forward", "quantile_map", "tft_quantiles"]

Forward = Callable[[nn.Module, TFTBatch], Tensor]
"""A TFT and a batch -> its (B, H, Q) standardised quantiles (the plain forward by default)."""


def plain_forward(model: nn.Module, batch: TFTBatch) -> Tensor:
    """``model(batch)``'s standardised quantiles: the forward every caller gets by default."""
    return model(batch).quantiles


@torch.inference_mode()
def tft_quantiles(
    model: nn.Module,
    batch: TFTBatch,
    qmap: QuantileMap,
    *,
    device: torch.device,
    precision: str = "fp32",
    forward: Forward = plain_forward,
) -> Tensor:
    """Forecast ``batch`` as sorted log-return quantiles.

    Args:
        model: the TFT (in eval mode), or a seed ensemble's :class:`EnsembleTFT`.
        batch: windows as the dataset gives them (any device; moved to ``device``).
        qmap: the run's :class:`QuantileMap` (:func:`quantile_map`); an ensemble's members
            use their own (``qmap`` is not used for them).
        device: where the model is.
        precision: autocast precision (used on CUDA only).
        forward: how a TFT makes the batch's standardised quantiles: ``model(batch)``, or the
            live forecaster's, which reuses what it computed for earlier windows
            (:class:`foxhunt.infer.incremental.selected.SelectedRows`).

    Returns:
        (B, H, Q) float64 on the CPU, non-decreasing along Q; for an ensemble the mean of its
        members' quantiles, per window, horizon and level.
    """
    if isinstance(model, EnsembleTFT):
        batch = batch.to(device)  # moved once, shared by the members
        each = [
            tft_quantiles(
                member, batch, member_map, device=device, precision=precision, forward=forward
            )
            for member, member_map in zip(model.members, model.maps, strict=True)
        ]  # N x (B, H, Q), computed one member at a time
        return torch.sort(torch.stack(each).mean(dim=0), dim=-1).values
    with autocast(device, precision if device.type == "cuda" else "fp32"):  # type: ignore[arg-type]
        z = forward(model, batch.to(device))  # (B, H, Q) standardised
    return qmap.to_returns(z, batch.historical, batch.known)
