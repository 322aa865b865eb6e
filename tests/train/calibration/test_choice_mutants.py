"""Edges of the calibration's cross-fit (train/calibration/choice.py) that `make mutate` found
untested: the levels' precision in the score, a one-window block, the empty-block message."""

from __future__ import annotations

import pytest
import torch

from foxhunt.train.calibration.choice import choose_shrinkage, crossfit_blocks, mean_quantile_loss

LEVELS = (0.02, 0.1, 0.5, 0.9, 0.98)  # none exact in float32


def test_the_score_uses_the_levels_in_float64() -> None:
    g = torch.Generator().manual_seed(5)
    z = torch.randn(40, 3, len(LEVELS), generator=g, dtype=torch.float64)
    y = torch.randn(40, 3, generator=g, dtype=torch.float64)
    scale = torch.rand(40, 3, generator=g, dtype=torch.float64) + 0.5
    pred = torch.sort(z, dim=-1).values * scale[:, :, None]
    err = (y * scale)[:, :, None] - pred
    q = torch.tensor(LEVELS, dtype=torch.float64)
    want = torch.maximum(q * err, (q - 1.0) * err).mean()  # the pinball, written out
    torch.testing.assert_close(mean_quantile_loss(z, y, scale, LEVELS), want, rtol=1e-13, atol=0)


def _zero(z: torch.Tensor, y: torch.Tensor, levels: tuple[float, ...]) -> torch.Tensor:
    return torch.zeros(z.shape[1], len(levels), dtype=z.dtype)


def test_a_block_of_one_window_is_scored() -> None:
    g = torch.Generator().manual_seed(0)
    z = torch.randn(5, 2, 3, generator=g, dtype=torch.float64)
    y = torch.randn(5, 2, generator=g, dtype=torch.float64)
    blocks = [torch.tensor([0, 1, 2, 3]), torch.tensor([4])]
    lam, choice = choose_shrinkage(
        z, y, torch.ones(5, 2, dtype=torch.float64), (0.1, 0.5, 0.9), blocks, _zero, embargo=0
    )
    assert choice.block_windows == (4, 1) and lam == 0.0


def test_an_empty_block_is_refused_naming_the_sizes() -> None:
    z = torch.zeros(4, 2, 3, dtype=torch.float64)
    blocks = crossfit_blocks(["A"] * 4, embargo=2)  # the second block is empty
    with pytest.raises(ValueError, match=r"empty cross-fitting block: sizes \[2, 0\]"):
        choose_shrinkage(z, z[:, :, 0], z[:, :, 0] + 1, (0.1, 0.5, 0.9), blocks, _zero, embargo=2)


def test_an_empty_block_is_still_an_index_tensor() -> None:
    # 4 windows, embargo 2: the second block is empty; it must index like the others (int64),
    # not be torch.tensor([])'s float32
    first, second = crossfit_blocks(["A"] * 4, embargo=2)
    assert second.numel() == 0
    assert first.dtype == second.dtype == torch.long
    assert torch.arange(4)[second].numel() == 0
