"""Variable selection network (Lim et al. 2021, §4.2), batched and streaming.

For inputs ``x`` of shape ``(B, ..., V)`` (V real-valued variables per position):

1. **Selection weights** ``v = softmax(GRN_v(x, c_s))``, ``(B, ..., V)``. The paper feeds the
   flattened per-variable embeddings ``[ξ_1, ..., ξ_V]`` (width ``V * d_var``) to ``GRN_v``. Each
   embedding is affine in its scalar (``ξ_j = x_j w_j + b_j``), so the GRN's first layer and its
   linear skip, applied to the flattened embeddings, are affine maps of ``x`` itself: feeding ``x``
   (width ``V``) is an exact reparametrisation of the same function class at ``1/d_var`` of the
   FLOPs and parameters of that layer. (Departure from the paper's parametrisation, not from its
   function class.)
2. **Per-variable processing**: every variable's scalar is embedded (``(V, d_var)`` weights) and
   passed through its own GRN — all variables in one batched op (:class:`PerVariableGRN`).
3. **Weighted sum** over variables, in one of two modes:

   - ``faithful``: each variable's GRN maps ``d_var -> d_model`` (pytorch-forecasting's form of
     the paper) and the outputs are summed with weights ``v``.
   - ``fused`` (default): each variable's GRN stays at ``d_var -> d_var`` and is followed by its
     own linear lift ``L_j: d_var -> d_model``. The lift is fused into the weighted sum:
     ``sum_j v_j L_j(s_j) = [v_1 s_1, ..., v_V s_V] @ [W_1; ...; W_V] + v @ [b_1; ...; b_V]``, one
     matmul over the weight-scaled, concatenated states. ``(B, ..., V, d_model)`` never exists.

**Streaming**: with autograd recording, the selection GRN and each chunk of ``chunk`` variables
run under ``torch.utils.checkpoint`` (``use_reentrant=False``) and the weighted sum is accumulated
chunk by chunk. Only ``x``, the context and the weights ``v`` are kept for backward; the selection
GRN's internals and the per-variable states are recomputed. ``(N, V, width)`` tensors exist one
chunk at a time, and VSN activation memory grows with ``V`` only through ``x`` and ``v``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import torch
from torch import Tensor, nn
from torch.utils.checkpoint import checkpoint

from foxhunt.model.grn import GatedResidualNetwork
from foxhunt.model.variable_grn import PerVariableGRN, VariableWeights, split_views
from foxhunt.model.weighted_lift import WeightedLift, keeps_no_product

INFERENCE_CHUNK_BYTES = 8 * 2**20
"""Bytes of a no-grad chunk's widest per-variable tensor. Chunks of a few MiB stay below
glibc's mmap threshold (fresh pages cost more than the ops that fill them) and near the
caches: the historical VSN of a demo validation batch (256 windows) ran 1.3-2x faster in
chunks of 8-16 variables than of 32, TFT-225's 1.3-1.6x faster in chunks of 4-8
(docs/benchmarks.md, "Session 17", with the command)."""


class VariableSelectionNetwork(nn.Module):
    """Select and combine ``V`` real-valued variables into one ``d_model`` vector per position.

    Args:
        n_vars: Number of variables V.
        d_var: Per-variable width (embedding and, in ``fused`` mode, the per-variable GRN).
        d_model: Output width d.
        mode: ``fused`` or ``faithful`` (see the module docstring).
        dropout: Dropout inside the GRNs.
        d_context: Width of the static context fed to the selection GRN, or None.
        chunk: Variables per streaming chunk.
        streaming: Accumulate over chunks, each recomputed in backward (when autograd is
            recording; a single chunk when ``n_vars <= chunk``). False processes all variables at
            once and keeps their states for backward. A forward without autograd goes chunk by
            chunk either way (nothing to recompute).
    """

    def __init__(
        self,
        n_vars: int,
        d_var: int,
        d_model: int,
        mode: Literal["fused", "faithful"] = "fused",
        dropout: float = 0.0,
        d_context: int | None = None,
        chunk: int = 32,
        streaming: bool = True,
    ) -> None:
        super().__init__()
        if mode not in ("fused", "faithful"):
            raise ValueError(f"unknown VSN mode {mode!r}")
        self.n_vars, self.d_var, self.d_model = n_vars, d_var, d_model
        self.mode = mode
        self.chunk = chunk
        self.streaming = streaming
        # Per-variable scalar embedding, like V copies of nn.Linear(1, d_var).
        self.embed_weight = nn.Parameter(torch.empty(n_vars, d_var).uniform_(-1.0, 1.0))
        self.embed_bias = nn.Parameter(torch.empty(n_vars, d_var).uniform_(-1.0, 1.0))
        self.selection = GatedResidualNetwork(
            n_vars, min(d_model, n_vars), n_vars, dropout, d_context, project_skip=True
        )
        if mode == "fused":
            # the lift absorbs each variable's LayerNorm scale/shift, so the norm has none
            self.variable_grn = PerVariableGRN(
                n_vars, d_var, d_var, d_var, dropout, norm_affine=False
            )
            bound = 1.0 / math.sqrt(d_var)
            self.lift_weight: nn.Parameter | None = nn.Parameter(
                torch.empty(n_vars, d_var, d_model).uniform_(-bound, bound)
            )
            self.lift_bias: nn.Parameter | None = nn.Parameter(
                torch.empty(n_vars, d_model).uniform_(-bound, bound)
            )
        else:
            self.variable_grn = PerVariableGRN(n_vars, d_var, min(d_var, d_model), d_model, dropout)
            self.lift_weight = self.lift_bias = None

    def forward(
        self, x: Tensor, context: Tensor | None = None, chunk: int | None = None
    ) -> tuple[Tensor, Tensor]:
        """Select and combine.

        Args:
            x: (B, ..., V) real-valued inputs (e.g. (B, S) static or (B, T, V) time-varying).
            context: (B, d_context) static context for the selection weights, or None.
            chunk: Variables per chunk for this call instead of ``self.chunk`` (a forward of
                few positions without autograd, where one chunk of all V costs little memory
                and saves the per-chunk calls: the live forecaster's one new bar per symbol).

        Returns:
            ``(out, weights)``: (B, ..., d_model) combined embedding and (B, ..., V) selection
            weights (non-negative, summing to 1 over V).
        """
        lead = x.shape[:-1]
        stream = self.streaming and torch.is_grad_enabled()
        if stream:  # the selection GRN's (N, V)-wide internals are recomputed too
            weights = checkpoint(self._select, x, context, use_reentrant=False)
        else:
            weights = self._select(x, context)  # (B, ..., V)
        # Without autograd nothing is kept, so chunks cost no recomputation: a forward without
        # gradients (validation, inference) always goes chunk by chunk, chunks of a few MiB
        # (_inference_chunk), and its widest moment is one chunk's (Vc, d_var, N) states, not
        # all V variables' (docs/memory.md).
        if chunk is not None:
            step = chunk
        elif not torch.is_grad_enabled():
            step = self._inference_chunk(x)
        else:
            step = self.chunk if self.streaming else self.n_vars
        if step >= self.n_vars and not stream:  # one chunk: the tensors themselves, no splits
            # (each split costs a few microseconds: felt by a forward of one row)
            xs = [x.reshape(-1, self.n_vars)]
            vs = [weights.reshape(-1, self.n_vars)]
            emb_w, emb_b = [self.embed_weight], [self.embed_bias]
            grn_w = [self.variable_grn.weights()]
            lift_w: Sequence[Tensor | None] = [self.lift_weight]
            lift_b: Sequence[Tensor | None] = [self.lift_bias]
        else:  # one split per tensor (views): backward gathers each gradient with one concat
            xs = split_views(x.reshape(-1, self.n_vars), step, dim=1)  # (N, Vc) each
            vs = split_views(weights.reshape(-1, self.n_vars), step, dim=1)  # (N, Vc) each
            emb_w = split_views(self.embed_weight, step)
            emb_b = split_views(self.embed_bias, step)
            grn_w = self.variable_grn.split(step)
            lift_w, lift_b = [None] * len(xs), [None] * len(xs)
            if self.lift_weight is not None and self.lift_bias is not None:
                lift_w = split_views(self.lift_weight, step)
                lift_b = split_views(self.lift_bias, step)
        out: Tensor | None = None
        for i in range(len(xs)):
            args = (xs[i], vs[i], emb_w[i], emb_b[i], grn_w[i], lift_w[i], lift_b[i])
            if stream:
                part = checkpoint(self._combine, *args, use_reentrant=False)
            elif torch.is_grad_enabled():
                part = self._combine(*args)
            else:  # each chunk adds into the (N, d) sum: no (N, d) part and copy per chunk
                out = self._combine(*args, into=out)
                continue
            out = part if out is None else out + part  # (N, d)
        assert out is not None
        return out.view(*lead, self.d_model), weights

    def _inference_chunk(self, x: Tensor) -> int:
        """Variables per chunk of a forward without autograd: as many as keep the chunk's
        widest tensor (the gate's (Vc, 2 d_var, N)) within :data:`INFERENCE_CHUNK_BYTES`, at
        least one and at most ``self.chunk`` (so the memory estimate, made at ``chunk``, stays
        an upper bound)."""
        dev = x.device.type
        dtype = torch.get_autocast_dtype(dev) if torch.is_autocast_enabled(dev) else x.dtype
        rows = max(1, x.numel() // self.n_vars)
        width = 2 * (self.d_var if self.lift_weight is not None else self.d_model)
        per_var = width * rows * dtype.itemsize
        return max(1, min(self.chunk, INFERENCE_CHUNK_BYTES // per_var))

    def _select(self, x: Tensor, context: Tensor | None) -> Tensor:
        """Selection weights ``softmax(GRN_v(x, c))``, (B, ..., V)."""
        return torch.softmax(self.selection(x, context), dim=-1)

    def _combine(
        self,
        xc: Tensor,
        vc: Tensor,
        emb_w: Tensor,
        emb_b: Tensor,
        grn_w: VariableWeights,
        lift_w: Tensor | None,
        lift_b: Tensor | None,
        into: Tensor | None = None,
    ) -> Tensor:
        """Weighted sum over one chunk of Vc variables of their processed embeddings.

        Args:
            xc: (N, Vc) the chunk's inputs.
            vc: (N, Vc) the chunk's selection weights.
            emb_w: (Vc, d_var) embedding weights; ``emb_b`` likewise.
            emb_b: (Vc, d_var) embedding biases.
            grn_w: The chunk's per-variable GRN weights.
            lift_w: (Vc, d_var, d_model) lift weights (fused mode), or None (faithful).
            lift_b: (Vc, d_model) lift biases, or None.
            into: Without autograd, the (N, d_model) sum of the chunks before: this chunk's
                contribution is added into it, in place, and it is returned.

        Returns:
            (N, d_model) this chunk's contribution to the VSN output (added to ``into``).
        """
        n = xc.shape[0]
        # xc.t() made contiguous (N * Vc values): the per-variable GRNs run feature-major,
        # (Vc, width, N), each variable's N rows contiguous (PerVariableGRN.run_embedded)
        xt = xc.t().contiguous()[:, None, :]  # (Vc, 1, N)
        # the embedding x * emb_w + emb_b is folded into fc1 (PerVariableGRN.run_embedded)
        # every use of the states below (the weighted lift, a product, einsum) makes their
        # gradient afresh: the GRN's LayerNorm may write its own into it (Vc, d_var | d_model, N)
        state = self.variable_grn.run_embedded(xt, emb_w, emb_b, grn_w, grad_owned=True)
        if lift_w is None or lift_b is None:  # faithful
            part = torch.einsum("vdn,nv->nd", state, vc)
            return part if into is None else into.add_(part)
        # The product is laid out (Vc, d_var, N), so the reshape is a view and addmm reads it
        # transposed (no copy, forward or backward). The weights are a (Vc, 1, N) view of vc,
        # strided along N: WeightedLift keeps that view (the softmax keeps its storage anyway)
        weight = vc.t()[:, None, :]
        lift = lift_w.reshape(-1, self.d_model)
        if into is None and keeps_no_product(state):  # fp32 training: the product not kept
            return WeightedLift.apply(state, weight, lift) + vc @ lift_b  # (N, d)
        # contiguous rows in the states' dtype (half under autocast: an fp32 product would be
        # cast again by addmm): a product with the strided view is several times slower. (`to`
        # returns the view itself where the dtype already matches, whatever memory_format says)
        weight = weight.to(state.dtype, memory_format=torch.contiguous_format).contiguous()
        scaled = (state * weight).reshape(-1, n)  # (Vc * d_var, N)
        if into is None:
            return torch.addmm(vc @ lift_b, scaled.t(), lift)  # (N, d)
        # in place, outside autocast's casts: the weights in the sum's dtype
        return into.addmm_(scaled.t(), lift.to(into.dtype)).addmm_(
            vc.to(into.dtype), lift_b.to(into.dtype)
        )
