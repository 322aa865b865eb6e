"""Inverted dropout whose mask costs one random byte per element.

``torch.nn.Dropout`` on CPU draws one Bernoulli sample per element and keeps a mask as wide as
its input (a float per element). The per-variable GRNs of a 210-variable selection network drop
a ``(V, N, d_var)`` tensor every step, and those draws were a fifth of a demo training step
(``benchmarks/step_variants.py``). :class:`ByteDropout` fills the mask from 64-bit random integers
viewed as bytes (8 elements per draw) and keeps it as a bool tensor: 1 byte per element saved
for backward instead of 2 (bf16) or 4 (fp32).

The rate is rounded to a multiple of 1/256 (0.1 becomes 26/256 = 0.1016), at most 255/256; the kept elements
are scaled by ``1 / (1 - rate)`` with that rounded rate, so the expected output equals the
input. Masks come from torch's global generator, so seeding and checkpoint recomputation
(which restores the RNG state) reproduce them.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

_LEVELS = 256


def random_bytes(shape: torch.Size, device: torch.device) -> Tensor:
    """Uniform random bytes (uint8) of ``shape``, drawn 8 at a time from torch's generator."""
    n = shape.numel()
    words = torch.randint(-(2**63), 2**63 - 1, ((n + 7) // 8,), dtype=torch.int64, device=device)
    return words.view(torch.uint8)[:n].view(shape)


class ByteDropout(nn.Module):
    """Dropout with a byte-resolution rate and a bool mask (see the module docstring).

    Args:
        p: Requested drop probability in [0, 1); :attr:`rate` is it rounded to 1/256, at
            most 255/256 (a ``p`` that rounds to 1 would drop everything and scale by 1/0).
    """

    def __init__(self, p: float) -> None:
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout probability must be in [0, 1), got {p}")
        self.threshold = min(round(p * _LEVELS), _LEVELS - 1)
        self.rate = self.threshold / _LEVELS
        self.scale = 1.0 / (1.0 - self.rate)

    def forward(self, x: Tensor) -> Tensor:
        """Zero each element with probability :attr:`rate` in training; identity in eval."""
        if not self.training or self.threshold == 0:
            return x
        drop = random_bytes(x.shape, x.device) < self.threshold  # (x.shape) bool
        # masked_fill saves only `drop` and reads it as bool in both directions (a multiply by
        # the mask would first copy it to a float tensor, forward and backward); mul_ saves
        # nothing
        return x.masked_fill(drop, 0.0).mul_(self.scale)

    def extra_repr(self) -> str:
        return f"rate={self.rate:.4f}"


def dropout_layer(p: float) -> nn.Module:
    """A :class:`ByteDropout` for ``p > 0``, else the identity."""
    return ByteDropout(p) if p > 0 else nn.Identity()
