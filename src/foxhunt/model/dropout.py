"""Inverted dropout whose mask costs one random byte per element.

``torch.nn.Dropout`` on CPU draws one Bernoulli sample per element and keeps a mask as wide as
its input (a float per element). The per-variable GRNs of a 210-variable selection network drop
a ``(V, N, d_var)`` tensor every step, and those draws were a fifth of a demo training step
(``benchmarks/step_variants.py``). :class:`ByteDropout` draws 64-bit random integers viewed as
bytes (8 elements per draw) and keeps those bytes for backward: 1 byte per element instead of 2
(bf16) or 4 (fp32).

Both directions turn the bytes into a 0/1 mask in the tensor's own dtype (a copy and a
comparison, in place) and multiply by it. On the CPU that is 3-4x faster than ``masked_fill``
with a bool mask, and than making the bool mask itself, both several times slower there than a
pass over memory: measured on TFT-225's (210, 16, 1,600) fp32 states, 6-8 ms a
``masked_fill`` and 3 ms a bool comparison against 0.4 ms the copy and 0.7 ms the comparison
(docs/benchmarks.md, "Session 49").

The rate is rounded to a multiple of 1/256 (0.1 becomes 26/256 = 0.1016), at most 255/256; the kept elements
are scaled by ``1 / (1 - rate)`` with that rounded rate, so the expected output equals the
input. Masks come from torch's global generator, so seeding and checkpoint recomputation
(which restores the RNG state) reproduce them.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

_LEVELS = 256


def random_bytes(shape: torch.Size, device: torch.device) -> Tensor:
    """Uniform random bytes (uint8) of ``shape``, drawn 8 at a time from torch's generator."""
    n = shape.numel()
    words = torch.randint(-(2**63), 2**63 - 1, ((n + 7) // 8,), dtype=torch.int64, device=device)
    return words.view(torch.uint8)[:n].view(shape)


def _kept(x: Tensor, draws: Tensor, threshold: int, scale: float) -> Tensor:
    """``x`` where the drawn byte is at least ``threshold``, 0 where below, times ``scale``: a
    new tensor (``x`` is not changed).

    The bytes become a 0/1 mask in ``x``'s dtype (0-255 are exact in every float dtype), which
    then takes the product in place; multiplying by 1 first and by ``scale`` after keeps the
    result bit for bit what ``x.masked_fill(dropped, 0) * scale`` gives, in half precision too
    (``scale`` is not rounded to it).
    """
    mask = torch.empty_like(x).copy_(draws)
    torch.ge(mask, threshold, out=mask)
    return mask.mul_(x).mul_(scale)


def _kept_in_place(x: Tensor, draws: Tensor, threshold: int, scale: float) -> Tensor:
    """:func:`_kept` into ``x`` itself, (A, R, C), a row of axis 1 at a time: one (A, 1, C)
    0/1 mask is made and reused, not an ``x``-sized one (a fresh block of pages at TFT-225's
    (210, 16, 1,600) fp32: 2.2 against 3.3 ms, docs/benchmarks.md "Session 51"). Bit for bit
    :func:`_kept`'s values."""
    mask = torch.empty_like(x[:, :1])
    for j in range(x.shape[1]):
        torch.ge(mask.copy_(draws[:, j : j + 1]), threshold, out=mask)
        x[:, j : j + 1].mul_(mask).mul_(scale)
    return x


class _ByteMask(torch.autograd.Function):
    """Dropout that keeps its random bytes, not a mask, for backward (see the module docstring)."""

    @staticmethod
    def forward(  # noqa: D102
        ctx: Any, x: Tensor, threshold: int, scale: float, inplace: bool
    ) -> Tensor:
        draws = random_bytes(x.shape, x.device)
        if draws.numel() % 8:  # a view of the drawn words: saved alone, exactly one byte each
            draws = draws.clone()
        ctx.save_for_backward(draws)
        ctx.threshold, ctx.scale, ctx.inplace = threshold, scale, inplace
        if inplace:
            ctx.mark_dirty(x)
            return _kept_in_place(x, draws, threshold, scale)
        return _kept(x, draws, threshold, scale)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None, None, None]:  # noqa: D102
        (draws,) = ctx.saved_tensors
        if ctx.inplace and grad.is_contiguous():  # the caller's promise (ByteDropout.inplace)
            return _kept_in_place(grad, draws, ctx.threshold, ctx.scale), None, None, None
        return _kept(grad, draws, ctx.threshold, ctx.scale), None, None, None


class ByteDropout(nn.Module):
    """Dropout with a byte-resolution rate whose mask is one random byte per element (see the
    module docstring).

    Args:
        p: Requested drop probability in [0, 1); :attr:`rate` is it rounded to 1/256, at
            most 255/256 (a ``p`` that rounds to 1 would drop everything and scale by 1/0).
        inplace: Drop in the input itself, and in backward in the output's gradient: for a
            3-D input that is the caller's own (nothing else uses or keeps it) and whose
            output goes to an op alone whose backward makes that gradient afresh (a matmul):
            the per-variable GRNs' dropout before their gate. Neither direction then makes an
            input-sized tensor (:func:`_kept_in_place`).
    """

    def __init__(self, p: float, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout probability must be in [0, 1), got {p}")
        self.threshold = min(round(p * _LEVELS), _LEVELS - 1)
        self.rate = self.threshold / _LEVELS
        self.scale = 1.0 / (1.0 - self.rate)
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        """Zero each element with probability :attr:`rate` in training; identity in eval."""
        if not self.training or self.threshold == 0:
            return x
        inplace = self.inplace and x.dim() == 3 and not torch.jit.is_tracing()
        return _ByteMask.apply(x, self.threshold, self.scale, inplace)

    def extra_repr(self) -> str:
        return f"rate={self.rate:.4f}" + (", inplace" if self.inplace else "")


def dropout_layer(p: float, inplace: bool = False) -> nn.Module:
    """A :class:`ByteDropout` for ``p > 0``, else the identity."""
    return ByteDropout(p, inplace) if p > 0 else nn.Identity()
