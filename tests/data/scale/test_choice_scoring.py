"""How the target-scale search scores its candidates fast (data/scale/choice.py): the parts of a
scale computed once per estimator and season serve every (decay, reversion), and the scaled
targets' quantiles come from numpy's partial sort, torch.quantile's values up to rounding."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from foxhunt.data.scale.choice import DECAYS, REVERSIONS, _mean_quantile_loss, _scored_loss
from foxhunt.data.scale.target import SEASON_BUCKETS, TargetScale

LEVELS = torch.tensor((0.02, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.98), dtype=torch.float64)


def _windows(b: int, t: int, h: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    hist = torch.randn(b, t, 2, generator=g, dtype=torch.float64)  # return, anchor columns
    angle = torch.rand(b, 1, generator=g, dtype=torch.float64) * 6.283 + torch.arange(t + h) * 0.02
    known = torch.stack([angle.sin(), angle.cos()], dim=-1)  # z-scored with (0, 1, 0, 1)
    return hist, known


@pytest.mark.parametrize("anchored", [False, True])
@pytest.mark.parametrize("seasonal", [False, True])
def test_the_parts_of_one_decay_and_reversion_serve_every_other(
    anchored: bool, seasonal: bool
) -> None:
    """``parts`` holds nothing of decay or reversion. (``scale`` is ``scale_of(parts)``, so the
    formula itself is checked by the hand computations of test_target_*.py, not here.)"""
    hist, known = _windows(7, 12, 4, seed=1)
    season = tuple(0.5 + (k % 7) / 4 for k in range(SEASON_BUCKETS)) if seasonal else ()
    first = TargetScale(
        "window", (1e-3, 1.4e-3, 1.7e-3, 2e-3), decay=0.8, ret_index=0, ret_mean=1e-4,
        ret_std=2e-3, reversion=0.5, season=season, tod_index=(0, 1),
        tod_affine=(0.0, 1.0, 0.0, 1.0), anchor_index=1 if anchored else -1,
        anchor_affine=(2e-3, 5e-4),
    )  # fmt: skip
    parts = first.parts(hist, known)
    for decay in DECAYS:
        for phi in REVERSIONS:
            other = dataclasses.replace(first, decay=decay, reversion=phi)
            assert torch.equal(other.scale_of(parts), other.scale(hist, known))


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 400),
    h=st.integers(1, 5),
    seed=st.integers(0, 10_000),
    ties=st.booleans(),
    rows=st.integers(1, 500),
)
def test_the_scored_loss_is_the_pinball_loss_of_torch_quantiles(
    n: int, h: int, seed: int, ties: bool, rows: int
) -> None:
    g = torch.Generator().manual_seed(seed)
    y = torch.randn(n, h, generator=g, dtype=torch.float64) * 1e-3
    if ties:  # repeated values, as flat bars give
        y = (y * 4e3).round() / 4e3
    scale = torch.rand(n, h, generator=g, dtype=torch.float64) * 2e-3 + 1e-4
    z = (y / scale).reshape(-1)
    q_z = torch.quantile(z, LEVELS)
    # numpy's partial sort gives torch.quantile's values (its interpolation rounds differently:
    # by a few ulps of the values it interpolates between, so a quantile near 0 between two
    # values far from it differs relatively more; seed 166, n=1, h=3: 5e-14)
    bound = 1e-14 * float(np.abs(z.numpy()).max())
    np.testing.assert_allclose(
        np.quantile(z.numpy(), LEVELS.numpy()), q_z.numpy(), rtol=1e-14, atol=bound
    )
    want = _mean_quantile_loss(y, scale[:, :, None] * q_z, LEVELS)
    # summed `rows` windows at a time: the same mean up to the order of the float sums
    assert _scored_loss(y, scale, LEVELS, rows=rows) == pytest.approx(want, rel=1e-13, abs=0)
