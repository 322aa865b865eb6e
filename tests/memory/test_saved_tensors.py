"""Bytes retained for backward, counted by the saved-tensors hook (exact numbers)."""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from foxhunt.memory.saved_tensors import OTHER, saved_activation_bytes, saved_activations_by_block
from memory_helpers import F32, TwoLayer


def test_saved_activation_bytes_counts_each_storage_once() -> None:
    torch.manual_seed(0)
    x = torch.randn(5, 4)

    def fn() -> torch.Tensor:
        y = x * torch.ones(4, requires_grad=True)  # mul saves x (grad of ones) -> 5*4 floats
        z = y.sin() + y.cos()  # sin and cos both save y: one storage, counted once
        return z.sum()

    assert saved_activation_bytes(fn) == (5 * 4 + 5 * 4) * F32
    assert saved_activation_bytes(fn, exclude=[x]) == 5 * 4 * F32


def test_saved_activations_by_block_attributes_to_first_saver() -> None:
    torch.manual_seed(0)
    model, x = TwoLayer(), torch.randn(5, 4)
    got = saved_activations_by_block(model, lambda: model(x))
    # a: addmm saves x (for a.weight's grad); x needs no grad so a.weight is not saved.
    # tanh (outside blocks) saves its output h (5, 8), which b's addmm saves again (same storage);
    # pow saves b's output (5, 1). Parameters (b.weight, saved for h's grad) are never counted.
    assert got == {"a": 5 * 4 * F32, "b": 0, OTHER: (5 * 8 + 5 * 1) * F32}
    assert saved_activations_by_block(model, lambda: model(x), exclude=[x])["a"] == 0
    # the hooks are removed afterwards
    assert not model.a._forward_pre_hooks and not model.a._forward_hooks


def test_saved_activations_under_checkpoint_count_only_region_inputs() -> None:
    torch.manual_seed(0)
    lin = nn.Linear(16, 16)
    x = torch.randn(8, 16, requires_grad=True)

    def plain() -> torch.Tensor:
        h = x + 1.0  # saves nothing
        return torch.tanh(lin(torch.relu(lin(h)))).sum()

    def ckpt() -> torch.Tensor:
        h = x + 1.0
        return checkpoint(
            lambda t: torch.tanh(lin(torch.relu(lin(t)))), h, use_reentrant=False
        ).sum()

    # plain: h, relu out, (lin out for relu's grad is relu's result) ... several (8, 16) tensors
    assert saved_activation_bytes(plain, exclude=[*lin.parameters()]) > 8 * 16 * F32
    # checkpoint keeps only its input h
    assert saved_activation_bytes(ckpt, exclude=[*lin.parameters()]) == 8 * 16 * F32
