"""Quantile-loss contracts that `make mutate` found unguarded (mutation/mutate.py)."""

from __future__ import annotations

import pytest
import torch

from foxhunt.model.quantile import quantile_loss, quantile_loss_table


def test_a_scalar_quantile_level_is_rejected_for_two_dim_predictions() -> None:
    # pred (B, H) with a 0-d level tensor: every shape clause but ``pred.dim() != 3`` agrees
    pred, target = torch.zeros(2, 3), torch.zeros(2, 3)
    with pytest.raises(ValueError, match=r"expected pred \(B, H, Q\)"):
        quantile_loss(pred, target, torch.tensor(0.5))


@pytest.mark.parametrize("pred_dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_the_loss_is_fp32_whatever_the_level_and_prediction_dtypes(
    pred_dtype: torch.dtype,
) -> None:
    levels = torch.tensor([0.1, 0.5, 0.9], dtype=torch.float64)
    pred = torch.tensor([[[0.0, 1.0, 2.0]]], dtype=pred_dtype)
    target = torch.tensor([[1.0]], dtype=pred_dtype)
    loss = quantile_loss(pred, target, levels)
    table = quantile_loss_table(pred, target, levels)
    assert loss.dtype == torch.float32 and table.dtype == torch.float32
    # errors 1, 0, -1 -> 0.1 * 1, 0, (0.9 - 1) * -1
    torch.testing.assert_close(table, torch.tensor([[0.1, 0.0, 0.1]]))


def test_levels_follow_the_predictions_device() -> None:
    # the meta device stands in for CUDA: levels stay on the CPU, predictions live elsewhere
    pred = torch.zeros(2, 3, 4, device="meta")
    target = torch.zeros(2, 3, device="meta")
    loss = quantile_loss(pred, target, torch.tensor([0.1, 0.5, 0.7, 0.9]))
    assert loss.device.type == "meta" and loss.shape == ()


def test_a_scale_multiplies_each_windows_errors_before_the_pinball() -> None:
    """``pinball(..., scale)``: e = (y - y_hat) * scale, one factor per target, broadcast over
    the quantiles (evaluation scores log-return units this way)."""
    from foxhunt.model.quantile import pinball

    levels = torch.tensor([0.1, 0.5, 0.9], dtype=torch.float64)
    pred = torch.tensor([[[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]]], dtype=torch.float64)  # (1, 2, 3)
    target = torch.tensor([[1.0, 3.0]], dtype=torch.float64)  # (1, 2)
    scale = torch.tensor([[2.0, 0.5]], dtype=torch.float64)  # (1, 2)
    got = pinball(pred, target, levels, scale)
    # errors (1, 0, -1) x 2 and (2, 2, 2) x 0.5; loss max(q e, (q - 1) e)
    want = torch.tensor([[[0.2, 0.0, 0.2], [0.1, 0.5, 0.9]]], dtype=torch.float64)
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(pinball(pred, target, levels), got / scale.unsqueeze(-1))
