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


class _NoStorage(torch.Tensor):
    """A tensor whose storage cannot be read (as FunctionalTensor's, left alive by tracing)."""

    def untyped_storage(self) -> torch.UntypedStorage:  # type: ignore[override]
        raise RuntimeError("no storage")


def test_live_tensor_stats_counts_tensors_once_per_storage_and_skips_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import foxhunt.memory.state as state

    a, b = torch.zeros(1000), torch.zeros(10, dtype=torch.float64)
    alive = [a, a[10:20], b, torch.zeros(3).as_subclass(_NoStorage), "not a tensor", [a]]
    monkeypatch.setattr(state.gc, "get_objects", lambda: alive)
    assert live_tensor_stats() == {
        "live_tensor_count": 3,  # a, its view and b
        "live_tensor_bytes": 1000 * F32 + 10 * 8,  # the view shares a's storage
    }
