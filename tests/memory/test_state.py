"""Parameter, gradient, optimizer and live-tensor bytes."""

from __future__ import annotations

import pytest
import torch

from foxhunt.memory.state import live_tensor_stats, state_bytes
from memory_helpers import F32, TwoLayer


def test_state_bytes_adamw() -> None:
    model = TwoLayer()
    n_params = 4 * 8 + 8 + 8 * 1 + 1
    opt = torch.optim.AdamW(model.parameters())
    before = state_bytes(model, opt)
    assert before == {
        "parameter_bytes": n_params * F32,
        "buffer_bytes": 0,
        "gradient_bytes": 0,
        "optimizer_bytes": 0,
    }
    model(torch.randn(3, 4)).backward()
    opt.step()
    after = state_bytes(model, opt)
    assert after["gradient_bytes"] == n_params * F32
    # exp_avg + exp_avg_sq per parameter, plus one fp32 step scalar per parameter tensor (4)
    assert after["optimizer_bytes"] == 2 * n_params * F32 + 4 * F32
    opt.zero_grad(set_to_none=True)
    assert state_bytes(model, opt)["gradient_bytes"] == 0


@pytest.mark.slow
def test_live_tensor_stats_sees_new_tensors() -> None:
    before = live_tensor_stats()
    keep = [torch.zeros(1000) for _ in range(3)]
    after = live_tensor_stats()
    assert after["live_tensor_count"] >= before["live_tensor_count"] + 3
    assert after["live_tensor_bytes"] >= before["live_tensor_bytes"] + 3 * 1000 * F32
    del keep
