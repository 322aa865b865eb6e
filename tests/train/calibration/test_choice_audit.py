"""Calibration choice, planted bug of issue 28: on a tie of the cross-fitted scores the
smaller shrinkage wins (the docstring's promise: the smaller intervention, so no calibration
when the offsets cannot help)."""

from __future__ import annotations

import torch

from foxhunt.train.calibration.choice import SHRINKAGES, choose_shrinkage, crossfit_blocks

LEVELS = (0.1, 0.5, 0.9)
N, H = 40, 2


def _zero_offsets(
    z_pred: torch.Tensor, z_y: torch.Tensor, levels: tuple[float, ...]
) -> torch.Tensor:
    """Offsets of exactly 0: every shrinkage serves the same quantiles, so every score ties."""
    return torch.zeros(z_pred.shape[1], len(levels), dtype=z_pred.dtype)


def _windows() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    z = torch.randn(N, H, len(LEVELS), generator=g, dtype=torch.float64)
    y = torch.randn(N, H, generator=g, dtype=torch.float64)
    return z, y, torch.ones(N, H, dtype=torch.float64)


def test_a_tie_goes_to_the_smallest_shrinkage() -> None:
    z, y, scale = _windows()
    blocks = crossfit_blocks(["A"] * N, embargo=H)
    lam, choice = choose_shrinkage(z, y, scale, LEVELS, blocks, _zero_offsets, embargo=H)
    assert len(set(choice.pinball)) == 1  # an exact tie over all five candidates
    assert choice.candidates == SHRINKAGES
    assert lam == 0.0
    # Not "0 happens to be first": a tie among candidates without 0 goes to the smallest too.
    lam, _ = choose_shrinkage(
        z, y, scale, LEVELS, blocks, _zero_offsets, embargo=H, candidates=(0.5, 0.75, 1.0)
    )
    assert lam == 0.5


def test_a_tie_between_the_two_best_goes_to_the_smaller_of_them() -> None:
    """Quantiles 0, targets 0.375, offsets 1: served quantiles sit at lambda, so lambda 0.25
    and 0.5 are both 0.125 off and tie exactly for the lowest score (every number here is
    dyadic, so the tie is exact in float64); the smaller, 0.25, wins."""
    levels = (0.25, 0.5, 0.75)
    z = torch.zeros(N, H, len(levels), dtype=torch.float64)
    y = torch.full((N, H), 0.375, dtype=torch.float64)
    scale = torch.ones(N, H, dtype=torch.float64)
    blocks = crossfit_blocks(["A"] * N, embargo=H)

    def fit(zp: torch.Tensor, zy: torch.Tensor, lv: tuple[float, ...]) -> torch.Tensor:
        return torch.ones(H, len(lv), dtype=torch.float64)

    lam, choice = choose_shrinkage(z, y, scale, levels, blocks, fit, embargo=H)
    scores = dict(zip(choice.candidates, choice.pinball, strict=True))
    assert scores[0.25] == scores[0.5] < min(scores[0.0], scores[0.75], scores[1.0])
    assert lam == 0.25
