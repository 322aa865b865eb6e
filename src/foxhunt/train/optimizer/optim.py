"""AdamW with decoupled weight decay on matrices only.

Weight decay pulls weights towards zero; on biases, LayerNorm gains and other vectors that only
shift or scale activations it is harmful, so (as in nanoGPT and most transformer recipes) only
parameters with two or more dimensions decay. The TFT's variable selection stores per-variable
parameters stacked over variables (``fc1_bias`` is (V, w), ``norm_weight`` is (V, w)), so a
parameter whose name ends in ``bias`` or mentions ``norm`` never decays, whatever its shape.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from foxhunt.train.optimizer.adamw import AdamW

Optimizer = AdamW | torch.optim.AdamW
"""What :func:`build_optimizer` returns: foxhunt's AdamW on CPU, torch's on CUDA."""


def decays(name: str, param: torch.Tensor) -> bool:
    """Whether ``param`` gets weight decay: >= 2-D and neither a bias nor a norm gain."""
    return param.ndim >= 2 and not name.endswith("bias") and "norm" not in name


def param_groups(model: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """Split trainable parameters into a decayed and a non-decayed group.

    Args:
        model: The network.
        weight_decay: Decay for the >= 2-D group.

    Returns:
        Two AdamW parameter groups (``decay``: weight_decay; ``no_decay``: 0.0), each with a
        ``names`` entry listing parameter names (used by tests and logs; AdamW ignores it).
    """
    decay: list[tuple[str, nn.Parameter]] = []
    no_decay: list[tuple[str, nn.Parameter]] = []
    for name, p in model.named_parameters():
        if p.requires_grad:
            (decay if decays(name, p) else no_decay).append((name, p))
    return [
        {
            "params": [p for _, p in decay],
            "weight_decay": weight_decay,
            "names": [n for n, _ in decay],
        },
        {
            "params": [p for _, p in no_decay],
            "weight_decay": 0.0,
            "names": [n for n, _ in no_decay],
        },
    ]


def build_optimizer(model: nn.Module, *, lr: float, weight_decay: float) -> Optimizer:
    """AdamW over :func:`param_groups`.

    Args:
        model: The network, already on its device.
        lr: Initial learning rate (the schedule overwrites it every step).
        weight_decay: Decoupled decay for >= 2-D weights.

    Returns:
        On CPU :class:`foxhunt.train.optimizer.adamw.AdamW`: ``torch.optim.AdamW(fused=True)``'s
        arithmetic (torch's fused kernel) and state dict without importing torch's compiler
        (50-70 MiB of host RSS, 1.4 s). On CUDA
        ``torch.optim.AdamW`` itself, whose ``foreach`` path batches the update over tensors
        (host memory is not what a CUDA budget bounds). Checkpoints load into either.
    """
    groups = param_groups(model, weight_decay)
    if any(p.is_cuda for p in model.parameters()):
        return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.999))
    return AdamW(groups, lr=lr, betas=(0.9, 0.999))
