"""Start a monotone quantile head at the scale-only forecast.

With the per-window target scale (:mod:`foxhunt.data.scale.target`) the standardised targets
``z = y / scale`` have nearly the same distribution for every window and horizon, and the
forecast ``Q_z x scale`` — ``Q_z`` the empirical quantiles of the training split's ``z`` —
already beats the empirical-quantile and EWMA-normal baselines (docs/recipe.md). A fresh run
therefore starts there: the head's weight is zeroed and its bias set so that the monotone head
(:func:`foxhunt.model.quantile.monotone_quantiles`) outputs ``Q_z`` (averaged over horizons)
for every input; training then learns the departures from it. Like a zero-initialised last
layer, the zero weight still gets gradients on the first step.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.model.tft import TFT

MIN_STEP = 1e-4
"""Smallest gap between neighbouring starting quantiles (softplus cannot reach 0)."""


def standardised_target_quantiles(
    train: WindowDataset, quantiles: tuple[float, ...], *, batch_size: int = 1024
) -> torch.Tensor:
    """(Q,) empirical quantiles of the training windows' standardised targets, pooled over
    horizons (float64)."""
    ys = []
    for a in range(0, len(train), batch_size):
        batch = train.batch(range(a, min(a + batch_size, len(train))))
        assert batch.target is not None
        ys.append(batch.target.double().reshape(-1))
    z = torch.cat(ys).numpy()
    # numpy, not torch.quantile: torch refuses inputs over 2**24 values (1.7 M windows x H 10)
    return torch.from_numpy(np.quantile(z, np.asarray(quantiles, dtype=np.float64)))


@torch.no_grad()
def init_monotone_head(head: nn.Linear, start: torch.Tensor) -> None:
    """Make ``monotone_quantiles(head(x)) == start`` for every ``x``.

    Args:
        head: the TFT's ``output`` layer, ``Linear(d, Q)``.
        start: (Q,) non-decreasing starting quantiles.
    """
    steps = torch.diff(start).clamp_min(MIN_STEP)  # (Q-1,)
    raw_steps = steps + torch.log(-torch.expm1(-steps))  # softplus^-1
    bias = torch.cat([start[:1], raw_steps]).to(head.bias.dtype)
    head.weight.zero_()
    head.bias.copy_(bias)


@torch.no_grad()
def start_head(model: TFT, start: torch.Tensor) -> None:
    """Start ``model``'s monotone head at ``start`` (:func:`init_monotone_head`) and, with a
    ``fixed`` location, pin its median at the start's median for good.

    Args:
        model: a TFT with ``monotone_quantiles``.
        start: (Q,) non-decreasing starting quantiles (:func:`standardised_target_quantiles`).
    """
    init_monotone_head(model.output, start)
    if model.config.location == "fixed":
        model.median.fill_(float(start[model.config.quantiles.index(0.5)]))
