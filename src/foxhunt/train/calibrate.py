"""Conformal calibration of a trained run on its validation windows (``calibration.json``).

Conformalised quantile regression (Romano et al. 2019), per quantile level and horizon: the
offset of level ``q`` at horizon ``h`` is the ``ceil((n + 1) q)``-th smallest standardised
residual ``z_y - z_q`` of the n validation windows (target minus predicted quantile, both in
target-scale units). :func:`foxhunt.infer.quantiles.tft_quantiles` adds the offsets before the
scale is reapplied; :mod:`foxhunt.artifacts.calibration` stores them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from foxhunt.artifacts.calibration import Calibration
from foxhunt.data.windows import WindowDataset
from foxhunt.model.batch import TFTOutput
from foxhunt.runtime import autocast

OutputListener = Callable[[TFTOutput, range], None]
"""Called with each batch's model output and the window positions it covers."""


@torch.no_grad()
def standardised_predictions(
    model: nn.Module,
    windows: WindowDataset,
    *,
    batch_size: int,
    device: torch.device,
    precision: str = "fp32",
    on_output: OutputListener | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The model's standardised quantiles and the standardised targets of every window.

    Args:
        model: the TFT.
        windows: windows with targets, given the run's target scale
            (:meth:`WindowDataset.with_target_scale`).
        batch_size: windows per forward pass.
        device: where the model is.
        precision: autocast precision (CUDA only).
        on_output: also given every batch's output (e.g. the selection weights for the
            report's variable importance), so one pass serves both.

    Returns:
        ``(z_pred (N, H, Q), z_y (N, H))``, float64 on the CPU.
    """
    was_training = model.training
    model.eval()
    preds, ys = [], []
    try:
        for a in range(0, len(windows), batch_size):
            rows = range(a, min(a + batch_size, len(windows)))
            batch = windows.batch(rows)
            assert batch.target is not None
            with autocast(device, precision if device.type == "cuda" else "fp32"):  # type: ignore[arg-type]
                out = model(batch.to(device))
            preds.append(out.quantiles.double().cpu())
            ys.append(batch.target.double())
            if on_output is not None:
                on_output(out, rows)
    finally:
        model.train(was_training)
    return torch.cat(preds), torch.cat(ys)


def conformal_offsets(
    z_pred: torch.Tensor, z_y: torch.Tensor, quantiles: tuple[float, ...]
) -> torch.Tensor:
    """Per-level CQR offsets.

    Args:
        z_pred: (N, H, Q) predicted quantiles.
        z_y: (N, H) targets.
        quantiles: the Q levels.

    Returns:
        (H, Q): offset ``[h, k]`` is the ``ceil((N + 1) q_k)``-th smallest of
        ``z_y[:, h] - z_pred[:, h, k]`` (clipped to 1..N), so that at least a share ``q_k``
        of the N residuals lies at or below it.
    """
    n = z_pred.shape[0]
    resid = torch.sort(z_y[:, :, None] - z_pred, dim=0).values  # (N, H, Q) ascending
    ranks = [min(max(math.ceil((n + 1) * q), 1), n) - 1 for q in quantiles]
    idx = torch.tensor(ranks, dtype=torch.long)  # (Q,)
    return resid[idx, :, torch.arange(len(quantiles))].T  # (H, Q)


def fit_calibration(
    model: nn.Module,
    val: WindowDataset,
    quantiles: tuple[float, ...],
    *,
    batch_size: int,
    device: torch.device,
    precision: str = "fp32",
    on_output: OutputListener | None = None,
) -> Calibration | None:
    """The run's calibration on its validation windows, or None when there are none.

    Args:
        model: the trained TFT (the weights the run serves).
        val: validation windows with the run's target scale.
        quantiles: the run's levels.
        batch_size: windows per forward pass.
        device: where the model is.
        precision: autocast precision (CUDA only).
        on_output: see :func:`standardised_predictions`.
    """
    if len(val) == 0:
        return None
    z_pred, z_y = standardised_predictions(
        model, val, batch_size=batch_size, device=device, precision=precision, on_output=on_output
    )
    offsets = conformal_offsets(z_pred, z_y, quantiles)
    return Calibration(
        quantiles=tuple(quantiles),
        offsets=tuple(tuple(float(x) for x in row) for row in offsets.tolist()),
        windows=len(val),
    )
