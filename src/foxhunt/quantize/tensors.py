"""Symmetric INT8 tensors: quantise a float tensor to int8 codes and scales, and back.

One scheme everywhere: ``q = clamp(round(w / s), -127, 127)`` with ``s = max|w| / 127`` over
the reduced dimensions (``-128`` is never used, so ``-q`` is always representable). The scale
has the tensor's shape with the reduced dimensions kept as size 1, so ``q * s`` broadcasts back.

* weights of a matmul ``x @ W.T`` (``nn.Linear``, ``nn.LSTM``): one scale per output row,
  reduce over the input dimension;
* per-variable weight stacks ``(V, d_in, d_out)`` of the variable selection network: one scale
  per variable, reduce over both inner dimensions (a per-column scale would cost 25-50 % extra
  bytes at ``d_in`` 8-16 for no measurable gain in accuracy);
* activations at run time: one scale per row (dynamic) or one calibrated scale (static).
"""

from __future__ import annotations

import torch
from torch import Tensor

QMAX = 127
"""Largest int8 code used (symmetric range [-127, 127])."""

_TINY = 1e-30
"""Scale floor: an all-zero row gets this scale (its codes are all 0)."""


def quantize_int8(w: Tensor, reduce_dims: tuple[int, ...]) -> tuple[Tensor, Tensor]:
    """Quantise ``w`` to int8 codes with one float32 scale per slice over ``reduce_dims``.

    Args:
        w: Float tensor.
        reduce_dims: Dimensions that share one scale (e.g. ``(1,)`` for per-row scales of a
            2-D weight, ``(1, 2)`` for one scale per leading index of a 3-D stack).

    Returns:
        ``(codes, scale)``: int8 codes shaped like ``w`` and float32 scales shaped like ``w``
        with ``reduce_dims`` of size 1.
    """
    w32 = w.detach().float()
    amax = w32.abs().amax(dim=reduce_dims, keepdim=True)
    scale = (amax / QMAX).clamp_min(_TINY)
    codes = torch.round(w32 / scale).clamp_(-QMAX, QMAX).to(torch.int8)
    return codes, scale


def dequantize_int8(codes: Tensor, scale: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """``codes * scale`` in ``dtype`` (the inverse of :func:`quantize_int8` up to rounding)."""
    return (codes.to(torch.float32) * scale).to(dtype)


def quantize_rows(x: Tensor, scale: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Quantise the rows of a 2-D activation for an int8 x int8 matmul.

    Args:
        x: (N, K) float activations.
        scale: A calibrated scalar scale (static quantisation); None computes one scale per
            row from the row's max magnitude (dynamic quantisation).

    Returns:
        ``(codes, scale)``: (N, K) int8 and (N, 1) or scalar float32 scales.
    """
    x32 = x.float()
    if scale is None:
        scale = (x32.abs().amax(dim=1, keepdim=True) / QMAX).clamp_min(_TINY)  # (N, 1)
    codes = torch.round(x32 / scale).clamp_(-QMAX, QMAX).to(torch.int8)
    return codes, scale
