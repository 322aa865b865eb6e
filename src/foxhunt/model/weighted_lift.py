"""The fused VSN's weighted lift, ``(states * weights)ᵀ @ lift``, keeping no product for backward.

In fused mode each chunk's contribution is ``sum_j v_j L_j(s_j)``: the per-variable states
``s`` (Vc, d_var, N), scaled by their selection weights ``v`` (Vc, 1, N), go through one matmul
with the stacked lifts (:mod:`foxhunt.model.vsn`). Left to autograd, the matmul keeps the scaled
states for the lift's gradient: one more (Vc, d_var, N) tensor, though the states (kept by their
LayerNorm) and the weights (kept by the softmax) are kept anyway. :class:`WeightedLift` keeps
those two and the lift, and multiplies them again in backward: one elementwise pass for a
(Vc, d_var, N) tensor fewer (21.5 MB of TFT-225's 262 MB at batch 32 in fp32).

Its backward also makes the states' gradient as the matmul lays it out, (Vc * d_var, N) rows,
where autograd's was a transposed view that the weighting's two products then read across
(strided), and it holds no more at once than autograd did: two (Vc, d_var, N) tensors, the
states' gradient and the recomputed product (the weights' gradient is summed a row at a time,
:func:`foxhunt.model.variable_grn.axis1_dot`, without a product).

The weights arrive as a view of the softmax's (N, Vc) output, strided along N; multiplied in
that layout, each product took 5 ms on TFT-225's (210, 16, 1,600) states against 0.7 from a
contiguous (Vc, 1, N) copy (0.2 ms to make). So each direction makes that copy (1.3 MB, not
kept: the view shares the softmax's storage, which its backward keeps anyway) and multiplies
by it (docs/benchmarks.md, "Session 50").

Neither direction makes the whole (Vc, d_var, N) product either: it is made for a few variables
at a time (:func:`product_rows`, at most :data:`PRODUCT_BYTES`), each part going into its
matmul while it is in the cache, and the parts' matmuls add into one (N, d) output (forward) or
write their rows of the lift's gradient (backward). Two fresh state-sized tensors a step fewer:
at TFT-225 batch 32 in fp32 each was 21.5 MB of new pages (the ``balanced`` allocator maps
blocks that large), and a product of one variable chunk is reused from the heap.

fp32 only (:func:`keeps_no_product`): under autocast the matmul's casts belong to autocast, and
the half-precision path keeps its (half-width) product as before.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from foxhunt.model.variable_grn import axis1_dot

PRODUCT_BYTES = 2**20
"""Bytes of the weighted product made at a time (a whole number of variables, at least one):
below 1 MiB, the smallest block the allocators map on their own (``lean``), so the parts come
from the heap and stay near the cache. TFT-225 batch 32 fp32: 10 variables at a time."""


def product_rows(states: Tensor) -> int:
    """Variables per part of the weighted product of (Vc, d_var, N) ``states``."""
    per_var = states[0].numel() * states.element_size()
    return max(1, PRODUCT_BYTES // max(per_var, 1))


class WeightedLift(torch.autograd.Function):
    """``(states * weights).reshape(-1, N).t() @ lift``: (N, d) from states (Vc, d_var, N),
    weights (Vc, 1, N) and lift (Vc * d_var, d); keeps only its three inputs."""

    @staticmethod
    def forward(ctx: Any, states: Tensor, weights: Tensor, lift: Tensor) -> Tensor:  # noqa: D102
        ctx.save_for_backward(states, weights, lift)
        weights = weights.contiguous()
        n, width, step = states.shape[-1], states.shape[1], product_rows(states)
        out: Tensor | None = None
        for a in range(0, states.shape[0], step):
            part = torch.mul(states[a : a + step], weights[a : a + step]).view(-1, n)
            rows = lift[a * width : (a + step) * width]
            out = torch.mm(part.t(), rows) if out is None else out.addmm_(part.t(), rows)
            del part  # before the next part is made
        assert out is not None
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:  # noqa: D102
        states, weights, lift = ctx.saved_tensors
        weights = weights.contiguous()  # (Vc, 1, N) rows (see the module's docstring)
        need_states, need_weights, need_lift = ctx.needs_input_grad
        n, width = states.shape[-1], states.shape[1]
        grad_scaled = torch.mm(lift, grad.t()).view(states.shape)  # (Vc, d_var, N)
        # the weights' gradient summed a row at a time: no (Vc, d_var, N) product
        grad_weights = axis1_dot(grad_scaled, states) if need_weights else None
        grad_lift = None
        if need_lift:  # the product recomputed a few variables at a time, beside the gradient
            grad_lift = torch.empty_like(lift)
            step = product_rows(states)
            for a in range(0, states.shape[0], step):
                part = torch.mul(states[a : a + step], weights[a : a + step]).view(-1, n)
                torch.mm(part, grad, out=grad_lift[a * width : (a + step) * width])
                del part
        grad_states = grad_scaled.mul_(weights) if need_states else None
        return grad_states, grad_weights, grad_lift


def keeps_no_product(states: Tensor) -> bool:
    """Whether :class:`WeightedLift` applies: autograd records, in fp32 without autocast, and
    not while traced for export (a forward without autograd keeps nothing either way)."""
    return (
        torch.is_grad_enabled()
        and states.requires_grad
        and states.dtype == torch.float32
        and not torch.is_autocast_enabled(states.device.type)
        and not torch.jit.is_tracing()
    )
