"""Helpers for the memory tests: a tiny config and a real forward + loss to measure."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from foxhunt.config import TFTConfig
from foxhunt.memory.saved_tensors import saved_activations_by_block
from foxhunt.model import TFT, quantile_loss, set_checkpointing
from foxhunt.model.batch import random_batch

TINY = TFTConfig(
    n_static=3,
    n_historical=40,
    n_known=5,
    hidden=16,
    n_heads=4,
    lstm_layers=2,
    encoder_length=6,
    horizon=4,
    quantiles=(0.1, 0.5, 0.9),
    variable_width=8,
    vsn_chunk=16,
)
"""Small but complete: the historical VSN streams (40 > 16 variables), dropout is on."""


def loss_closure(
    config: TFTConfig, batch_size: int, *, checkpointing: bool = False, precision: str = "fp32"
) -> tuple[TFT, Callable[[], torch.Tensor], list[torch.Tensor]]:
    """A training-mode TFT, a closure running forward + pinball loss, and the batch tensors."""
    torch.manual_seed(0)
    model = TFT(config).train()
    set_checkpointing(model, checkpointing)
    batch = random_batch(config, batch_size)
    q = torch.tensor(config.quantiles)

    def fn() -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
            pred = model(batch).quantiles
        return quantile_loss(pred, batch.target, q)

    return model, fn, [batch.static, batch.historical, batch.known, batch.target]


def measured_saved(
    config: TFTConfig, batch_size: int, *, checkpointing: bool = False, precision: str = "fp32"
) -> dict[str, int]:
    """Saved-activation bytes per block of one real forward + loss."""
    model, fn, batch = loss_closure(
        config, batch_size, checkpointing=checkpointing, precision=precision
    )
    return saved_activations_by_block(model, fn, exclude=batch)


F32 = 4


class TwoLayer(nn.Module):
    """a: Linear(4, 8), then tanh outside any block, b: Linear(8, 1), loss outside."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 8)
        self.b = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.tanh(self.a(x))).pow(2).mean()
