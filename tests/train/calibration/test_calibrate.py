"""Conformal calibration: offsets are the documented order statistics, they fix a miscalibrated
forecast on the windows they were fitted on
(the end-to-end fit on a trained run: tests/infer/test_quantiles.py)."""

from __future__ import annotations

import math

import torch

from foxhunt.train.calibration.calibrate import conformal_offsets

LEVELS = (0.02, 0.1, 0.5, 0.9, 0.98)


def test_offsets_are_the_ceil_n_plus_1_q_order_statistic() -> None:
    n = 99
    y = torch.arange(n, dtype=torch.float64).flip(0)[:, None]  # (N, 1): 98 .. 0
    pred = torch.zeros(n, 1, len(LEVELS), dtype=torch.float64)
    off = conformal_offsets(pred, y, LEVELS)
    assert off.shape == (1, len(LEVELS))
    want = [min(math.ceil((n + 1) * q), n) - 1 for q in LEVELS]  # k-th smallest of 0..98
    assert off[0].tolist() == [float(w) for w in want]


def test_offsets_bring_coverage_to_nominal_per_horizon_and_level() -> None:
    g = torch.Generator().manual_seed(0)
    n, h = 4000, 3
    y = torch.randn(n, h, generator=g, dtype=torch.float64) * torch.tensor([1.0, 2.0, 3.0])
    # a forecast too narrow and shifted: the N(0,1) quantiles + 0.5 for every horizon
    normal = torch.distributions.Normal(0.0, 1.0)
    z = normal.icdf(torch.tensor(LEVELS, dtype=torch.float64)) + 0.5
    pred = z.expand(n, h, -1).clone()
    before = (y[:, :, None] <= pred).double().mean(0)
    off = conformal_offsets(pred, y, LEVELS)
    after = (y[:, :, None] <= pred + off[None]).double().mean(0)  # (H, Q)
    want = torch.tensor(LEVELS, dtype=torch.float64).expand(h, -1)
    assert (before - want).abs().max() > 0.05  # miscalibrated before
    assert (after - want).abs().max() <= 1.5 / n  # at nominal (up to ties/rounding) after
    assert (after >= want).all()
