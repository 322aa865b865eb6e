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
