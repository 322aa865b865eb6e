"""Many small GRNs, one per variable, run as one batched op.

The variable selection network gives each input variable its own GRN. Instead of ``V`` modules
called in a Python loop, the weights of all of them live in tensors with a leading variable axis
(``(V, d_in, d_hidden)`` ...) and one ``torch.baddbmm`` applies every variable's layer at once to
activations laid out ``(V, width, N)`` (feature-major: :meth:`PerVariableGRN.run_embedded`). A
chunk of consecutive variables can be run on its own with its slice of the weights
(:meth:`PerVariableGRN.split`), which is what the streaming VSN does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from foxhunt.model.dropout import dropout_layer


def _uniform(shape: tuple[int, ...], fan_in: int) -> nn.Parameter:
    """A parameter initialised like ``nn.Linear`` does (uniform in ±1/sqrt(fan_in))."""
    bound = 1.0 / math.sqrt(fan_in)
    return nn.Parameter(torch.empty(shape).uniform_(-bound, bound))


def split_views(t: Tensor, size: int, dim: int = 0) -> Sequence[Tensor]:
    """``t.split(size, dim)``. While traced by the TorchScript ONNX exporter, the same views made
    by ``narrow``: that exporter writes a split whose last part is smaller as equal parts (a
    Split whose sizes overrun the axis, which onnxruntime refuses to load)."""
    if not torch.jit.is_tracing():
        return t.split(size, dim)
    n = t.shape[dim]
    return [t.narrow(dim, a, min(size, n - a)) for a in range(0, n, size)]


class VariableWeights(NamedTuple):
    """The weights of a range of variables' GRNs, each with a leading (Vc,) axis."""

    fc1_weight: Tensor
    fc1_bias: Tensor
    fc2_weight: Tensor
    fc2_bias: Tensor
    gate_weight: Tensor
    gate_bias: Tensor
    skip_weight: Tensor | None
    skip_bias: Tensor | None
    norm_weight: Tensor | None
    norm_bias: Tensor | None


class PerVariableGRN(nn.Module):
    """``V`` independent GRNs ``d_in -> d_out`` (no context), batched over the variable axis.

    For variable ``j``: ``LayerNorm_j(skip_j(a) + GLU_j(W2_j ELU(W1_j a + b1_j) + b2_j))`` with
    ``skip_j`` the identity when ``d_in == d_out`` and a per-variable linear map otherwise.

    Args:
        n_vars: Number of variables V.
        d_in: Input width per variable.
        d_hidden: Inner width per variable.
        d_out: Output width per variable.
        dropout: Dropout before the gate.
        norm_affine: Give each variable's LayerNorm a learned scale and shift. Redundant (and
            left out) when a per-variable linear map follows, which absorbs them exactly.
    """

    def __init__(
        self,
        n_vars: int,
        d_in: int,
        d_hidden: int,
        d_out: int,
        dropout: float = 0.0,
        norm_affine: bool = True,
    ) -> None:
        super().__init__()
        self.d_out = d_out
        self.fc1_weight = _uniform((n_vars, d_in, d_hidden), d_in)
        self.fc1_bias = _uniform((n_vars, d_hidden), d_in)
        self.fc2_weight = _uniform((n_vars, d_hidden, d_hidden), d_hidden)
        self.fc2_bias = _uniform((n_vars, d_hidden), d_hidden)
        self.gate_weight = _uniform((n_vars, d_hidden, 2 * d_out), d_hidden)
        self.gate_bias = _uniform((n_vars, 2 * d_out), d_hidden)
        if d_in != d_out:
            self.skip_weight: nn.Parameter | None = _uniform((n_vars, d_in, d_out), d_in)
            self.skip_bias: nn.Parameter | None = _uniform((n_vars, d_out), d_in)
        else:
            self.skip_weight = self.skip_bias = None
        if norm_affine:
            self.norm_weight: nn.Parameter | None = nn.Parameter(torch.ones(n_vars, d_out))
            self.norm_bias: nn.Parameter | None = nn.Parameter(torch.zeros(n_vars, d_out))
        else:
            self.norm_weight = self.norm_bias = None
        # in place: its input is fc2's fresh output, its output goes to the gate's matmul alone
        self.dropout = dropout_layer(dropout, inplace=True)

    def weights(self) -> VariableWeights:
        """All variables' weights."""
        return VariableWeights(
            self.fc1_weight,
            self.fc1_bias,
            self.fc2_weight,
            self.fc2_bias,
            self.gate_weight,
            self.gate_bias,
            self.skip_weight,
            self.skip_bias,
            self.norm_weight,
            self.norm_bias,
        )

    def split(self, size: int) -> list[VariableWeights]:
        """The weights in consecutive chunks of ``size`` variables.

        Views made by one ``Tensor.split`` per parameter, so backward gathers each parameter's
        gradient with one concatenation instead of zero-filling it once per chunk.

        Args:
            size: Variables per chunk (the last chunk may be smaller).

        Returns:
            One :class:`VariableWeights` per chunk.
        """
        parts = [None if w is None else split_views(w, size) for w in self.weights()]
        n_chunks = len(parts[0] or ())
        return [
            VariableWeights(*(None if p is None else p[i] for p in parts)) for i in range(n_chunks)
        ]

    def forward(self, a: Tensor) -> Tensor:
        """Run every variable's GRN.

        Args:
            a: (V, N, d_in) inputs, one row block per variable.

        Returns:
            (V, N, d_out).
        """
        return self.run_chunk(a, self.weights())

    def run_chunk(self, a: Tensor, w: VariableWeights) -> Tensor:
        """Run the GRNs of a chunk of variables with that chunk's weights.

        A method rather than ``__call__``: the weights are views made by the caller, and
        module-hook tools (e.g. ``FlopCounterMode``'s tracker) cannot take no-grad views of
        parameters as module inputs. Inside, activations are feature-major (see
        :meth:`run_embedded`); the input and output here are views in the row-major layout.

        Args:
            a: (Vc, N, d_in) inputs, one row block per variable.
            w: Those variables' weights (a chunk from :meth:`split`).

        Returns:
            (Vc, N, d_out).
        """
        at = a.transpose(1, 2)  # (Vc, d_in, N)
        h = torch.baddbmm(w.fc1_bias[:, :, None], w.fc1_weight.transpose(1, 2), at)
        if w.skip_weight is not None and w.skip_bias is not None:
            skip = torch.baddbmm(w.skip_bias[:, :, None], w.skip_weight.transpose(1, 2), at)
            return self._from_hidden(h, skip, w, own_skip=True).transpose(1, 2)
        return self._from_hidden(h, at, w, own_skip=False).transpose(1, 2)  # at: the input

    def run_embedded(
        self,
        x: Tensor,
        emb_w: Tensor,
        emb_b: Tensor,
        w: VariableWeights,
        grad_owned: bool = False,
    ) -> Tensor:
        """The GRNs of a chunk of variables applied to their embeddings ``x * emb_w + emb_b``.

        Each embedding is an affine map of one scalar, so fc1 of it (and a projected skip) is
        one too: ``fc1(x e_w + e_b) = x (e_w W1) + (e_b W1 + b1)``. Folding the embedding into
        the weights ((Vc, d_hidden) products of weights, not of activations) means fc1 is an
        elementwise op instead of a batched matmul and no (Vc, d_in, N) embedding is kept for
        its backward. Under autocast every per-variable activation is in the autocast dtype.

        **Feature-major layout.** Activations are laid out ``(Vc, width, N)``: rows innermost.
        Every elementwise op, broadcast (the folded fc1, the skip) and reduction (LayerNorm's
        statistics) then runs along N contiguous values, and GLU's two halves are contiguous
        blocks. Laid out ``(Vc, N, width)`` with a width of 4-16, each of those ran along a
        few values at a time: a demo training step (batch 64) took 0.33-0.35 CPU s in fp32 and
        0.45 in bf16 that way, 0.27 and 0.29-0.31 now (docs/benchmarks.md, "Session 17").

        Args:
            x: (Vc, 1, N) the chunk's inputs, one row of N values per variable.
            emb_w: (Vc, d_in) embedding weights.
            emb_b: (Vc, d_in) embedding biases.
            w: Those variables' GRN weights (a chunk from :meth:`split`).
            grad_owned: The caller's op on the result makes the result's gradient afresh
                (a product or a matmul; not a view, a sum or anything that passes its
                gradient on), so the LayerNorm's backward may write into it
                (:func:`feature_norm`'s ``grad_inplace``).

        Returns:
            (Vc, d_out, N); the same as :meth:`run_chunk` of the embeddings (transposed), up
            to rounding.
        """
        dev = x.device.type
        if torch.is_autocast_enabled(dev):
            half = torch.get_autocast_dtype(dev)
            x, emb_w, emb_b = x.to(half), emb_w.to(half), emb_b.to(half)
        ew, eb = emb_w[:, :, None], emb_b[:, :, None]  # (Vc, d_in, 1)
        w1 = w.fc1_weight.transpose(1, 2)  # (Vc, dh, d_in)
        h = row_affine(torch.baddbmm(w.fc1_bias[:, :, None], w1, eb), torch.bmm(w1, ew), x)
        if w.skip_weight is not None and w.skip_bias is not None:
            ws = w.skip_weight.transpose(1, 2)
            skip_b = torch.baddbmm(w.skip_bias[:, :, None], ws, eb)
            skip = RowSkip(skip_b, torch.bmm(ws, ew), x)
        else:
            skip = RowSkip(eb, ew, x)  # the embedding itself
        return self._from_hidden(h.to(x.dtype), skip, w, own_skip=True, grad_owned=grad_owned)

    def _from_hidden(
        self,
        h: Tensor,
        skip: Tensor | RowSkip,
        w: VariableWeights,
        own_skip: bool,
        grad_owned: bool = False,
    ) -> Tensor:
        """The GRN after fc1, feature-major ((Vc, width, N)): ELU, fc2, dropout, gate, GLU,
        add the skip, LayerNorm over the width (+ affine).

        ``skip``: a :class:`RowSkip` (the embedded chunk's) is added into the GLU output
        without being made (:func:`add_row_affine`). A tensor is added to it; ``own_skip``:
        that tensor was made for this call and nothing keeps it for backward, so the GLU output
        is added into it in place. Either way the sum is this call's own tensor, which the
        LayerNorm then normalises in place: at the LayerNorm, the widest moment of the forward,
        the skip, the GLU output, their sum and the result are one tensor, not four (each a
        fresh block of pages too: TFT-225 batch 32 fp32 makes 21.5 MB ones). Its backward
        writes into its incoming gradient where that is made afresh for it: by the affine
        after it, or by the caller's op (``grad_owned``, :meth:`run_embedded`)."""
        h = torch.baddbmm(w.fc2_bias[:, :, None], w.fc2_weight.transpose(1, 2), elu_in_place(h))
        g = torch.baddbmm(w.gate_bias[:, :, None], w.gate_weight.transpose(1, 2), self.dropout(h))
        g = F.glu(g, dim=1)  # (Vc, d_out, N)
        if isinstance(skip, RowSkip):
            summed = add_row_affine(g, *skip)
        elif own_skip:
            summed = skip.add_(g)
        else:
            summed = skip + g
        del g, skip
        affine = w.norm_weight is not None and w.norm_bias is not None
        y = feature_norm(summed, inplace=True, grad_inplace=grad_owned or affine)
        if w.norm_weight is None or w.norm_bias is None:
            return y
        return torch.addcmul(w.norm_bias[:, :, None], y, w.norm_weight[:, :, None])


class RowSkip(NamedTuple):
    """A skip ``shift + scale * x`` of (Vc, w, 1) ``shift`` and ``scale`` and (Vc, 1, N) ``x``
    (each variable's one row of inputs mapped to ``w`` rows), added where it is needed
    (:func:`add_row_affine`) instead of made on its own."""

    shift: Tensor
    scale: Tensor
    x: Tensor


class _EluInPlace(torch.autograd.Function):
    """ELU in place, whose backward writes the input gradient into the output's gradient.

    Only for :meth:`PerVariableGRN._from_hidden`, where the ELU's output goes to fc2 alone,
    whose backward makes its input's gradient afresh: nothing else sees that tensor, so it can
    become the ELU's input gradient instead of a new (Vc, width, N) one."""

    @staticmethod
    def forward(ctx: Any, h: Tensor) -> Tensor:  # noqa: D102
        F.elu(h, inplace=True)
        ctx.mark_dirty(h)
        ctx.save_for_backward(h)
        return h

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:  # noqa: D102
        (out,) = ctx.saved_tensors
        if not grad.is_contiguous():  # not a matmul's (an expanded one cannot be written)
            return torch.ops.aten.elu_backward(grad, 1.0, 1, 1, True, out)
        return torch.ops.aten.elu_backward.grad_input(grad, 1.0, 1, 1, True, out, grad_input=grad)


def elu_in_place(h: Tensor) -> Tensor:
    """``F.elu(h, inplace=True)``; with autograd recording, its backward in place too
    (:class:`_EluInPlace`)."""
    if torch.is_grad_enabled() and h.requires_grad and not torch.jit.is_tracing():
        return _EluInPlace.apply(h)
    return F.elu(h, inplace=True)


class _RowAffineInto(torch.autograd.Function):
    """``g + scale * x + shift`` into ``g`` (see :func:`add_row_affine`)."""

    @staticmethod
    def forward(ctx: Any, g: Tensor, shift: Tensor, scale: Tensor, x: Tensor) -> Tensor:  # noqa: D102
        _, _, need_scale, need_x = ctx.needs_input_grad
        ctx.save_for_backward(x if need_scale else None, scale if need_x else None)
        g.addcmul_(scale, x).add_(shift)
        ctx.mark_dirty(g)
        return g

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:  # noqa: D102
        x, scale = ctx.saved_tensors
        need_g, *needs = ctx.needs_input_grad
        return grad if need_g else None, *_row_affine_grads(grad, x, scale, *needs)


def add_row_affine(g: Tensor, shift: Tensor, scale: Tensor, x: Tensor) -> Tensor:
    """``g + (shift + scale * x)``, into ``g`` (returned): the skip of the embedded chunk
    (:class:`RowSkip`) added to the GLU output without a (Vc, w, N) skip of its own. In place
    the broadcast product and sum took 0.7 ms on TFT-225's (210, 16, 1,600) fp32 against 2.9
    for the skip made on its own and added (docs/benchmarks.md, "Session 51"). Its backward is
    :func:`row_affine`'s, with the gradient passed through to ``g``."""
    if torch.jit.is_tracing():
        return g + scale * x + shift
    if torch.is_grad_enabled() and any(t.requires_grad for t in (g, shift, scale, x)):
        return _RowAffineInto.apply(g, shift, scale, x)
    return g.addcmul_(scale, x).add_(shift)


class _RowAffine(torch.autograd.Function):
    """``shift + scale * x`` for (Vc, w, 1) ``shift`` and ``scale`` and (Vc, 1, N) ``x``: each
    variable's one row of inputs mapped to ``w`` rows (see :func:`row_affine`)."""

    @staticmethod
    def forward(ctx: Any, shift: Tensor, scale: Tensor, x: Tensor) -> Tensor:  # noqa: D102
        _, need_scale, need_x = ctx.needs_input_grad
        ctx.save_for_backward(x if need_scale else None, scale if need_x else None)
        return torch.mul(scale, x).add_(shift)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:  # noqa: D102
        x, scale = ctx.saved_tensors
        return _row_affine_grads(grad, x, scale, *ctx.needs_input_grad)


def _row_affine_grads(
    grad: Tensor, x: Tensor, scale: Tensor, need_shift: bool, need_scale: bool, need_x: bool
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """The gradients of ``shift``, ``scale`` and ``x`` in ``shift + scale * x`` (the shapes
    of :func:`row_affine`): the sums over N and over w as batched products, so nothing
    (Vc, w, N) is made."""
    d_shift = grad.sum(-1, keepdim=True) if need_shift else None
    d_scale = torch.bmm(grad, x.transpose(1, 2)) if need_scale else None
    d_x = torch.bmm(scale.transpose(1, 2), grad) if need_x else None
    return d_shift, d_scale, d_x


def row_affine(shift: Tensor, scale: Tensor, x: Tensor) -> Tensor:
    """``shift + scale * x``, broadcast to (Vc, w, N) from (Vc, w, 1) ``shift`` and ``scale``
    and (Vc, 1, N) ``x``: the folded fc1 and the skip of :meth:`PerVariableGRN.run_embedded`.

    ``torch.addcmul`` gives the same, but over these broadcasts it took 3.4 ms on TFT-225's
    (210, 16, 1,600) against 1.6 for a product and an in-place sum, and its backward made a
    (Vc, w, N) product of the gradient and ``x`` to sum over N (4 ms against 0.6 for the
    batched products here; docs/benchmarks.md, "Session 49").
    """
    if torch.is_grad_enabled() and not torch.jit.is_tracing():
        return _RowAffine.apply(shift, scale, x)
    return torch.mul(scale, x).add_(shift)


_EPS = 1e-5  # F.layer_norm's default
_WHOLE_UP_TO = 1 << 20
"""Elements (4 MiB in fp32) up to which the feature norm works on the whole tensor at once;
above, a width row at a time (:func:`_normalise`, and the half-precision backward)."""


class _FeatureNorm(torch.autograd.Function):
    """LayerNorm without affine over axis 1 of (Vc, width, N) activations, statistics in fp32.

    Keeps its output and the per-row ``1/std`` for backward (the weighting after it keeps the
    same output: one tensor for both), where ``F.layer_norm`` would keep its input, the mean
    and ``1/std``. Backward: ``dx = (dy - mean(dy) - y mean(dy y)) / std``.
    """

    @staticmethod
    def forward(ctx: Any, x: Tensor, inplace: bool, grad_inplace: bool) -> Tensor:  # noqa: D102
        y, rstd = _normalise(x, into=x if inplace else None)
        if inplace:
            ctx.mark_dirty(x)
        ctx.save_for_backward(y, rstd)
        ctx.grad_inplace = grad_inplace
        return y

    @staticmethod
    def backward(ctx: Any, dy: Tensor) -> Tensor:  # noqa: D102
        y, rstd = ctx.saved_tensors
        f32 = torch.float32
        mean_dy = dy.mean(1, keepdim=True, dtype=f32)
        if y.numel() > _WHOLE_UP_TO and y.dtype == dy.dtype == f32:
            mean_dy_y = axis1_dot(dy, y).div_(y.shape[1])  # no (Vc, width, N) product
        else:
            mean_dy_y = (dy * y).mean(1, keepdim=True, dtype=f32)
        into = ctx.grad_inplace and dy.is_contiguous() and dy.dtype == y.dtype
        if y.numel() > _WHOLE_UP_TO and y.dtype != f32:
            dx = _norm_backward_rows(dy, y, rstd, mean_dy, mean_dy_y, dy if into else None)
            return dx, None, None
        if into and dy.dtype == f32:  # into the incoming gradient (see feature_norm)
            dx = dy.addcmul_(y, mean_dy_y.neg_())
            return dx.sub_(mean_dy).mul_(rstd), None, None
        # one fp32 (Vc, width, N) tensor, updated in place: a half-precision step's transient
        # stays at five half-width tensors (dy, y, this one, the result), not eight
        dx = y * mean_dy_y.neg_()
        return dx.add_(dy).sub_(mean_dy).mul_(rstd).to(dy.dtype), None, None


def axis1_dot(a: Tensor, b: Tensor) -> Tensor:
    """``(a * b).sum(1, keepdim=True)`` for (Vc, width, N) tensors, a width row at a time into
    one (Vc, 1, N) sum: no (Vc, width, N) product is made (a fresh tensor of tens of MB faults
    its pages in). TFT-225's (210, 16, 1,600) fp32: 1.6 against 2.5 ms ("Session 50")."""
    acc = torch.mul(a[:, :1], b[:, :1])
    for j in range(1, a.shape[1]):
        acc.addcmul_(a[:, j : j + 1], b[:, j : j + 1])
    return acc


def _norm_backward_rows(
    dy: Tensor,
    y: Tensor,
    rstd: Tensor,
    mean_dy: Tensor,
    mean_dy_y: Tensor,
    into: Tensor | None = None,
) -> Tensor:
    """``_FeatureNorm``'s input gradient in half precision, a width row at a time in fp32.

    On the CPU every op between a half-precision and an fp32 tensor first makes an fp32 copy of
    the half one: the whole-tensor form then held three fp32 (Vc, width, N) tensors at once (the
    peak of a demo step in bf16 with recompute off). Row by row only (Vc, 1, N) ones are made.
    ``into``: where the gradient goes (``dy`` itself: row j is read before it is written).
    """
    f32 = torch.float32
    dx = torch.empty_like(dy) if into is None else into
    for j in range(y.shape[1]):
        row = y[:, j : j + 1].to(f32).mul_(mean_dy_y).neg_()
        row.add_(dy[:, j : j + 1].to(f32)).sub_(mean_dy).mul_(rstd)
        dx[:, j : j + 1] = row
    return dx


def _normalise(x: Tensor, into: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """``((x - mean) / std`` in x's dtype, ``1/std`` in fp32), over axis 1; the statistics and
    the normalisation in fp32, from a half-precision ``x`` without an fp32 copy of it.

    Above ``_WHOLE_UP_TO`` elements a width row at a time: the whole-tensor form holds the
    centred states and their square beside ``x`` (with recompute off, the widest moment of a
    step: one more (V, width, N) fp32 tensor, 172 MB of TFT-225 at batch 256, on an H200 too),
    and on the CPU an op between a half-precision ``x`` and the fp32 mean first copies ``x`` to
    fp32. Row by row, only ``x``, the result and (Vc, 1, N) rows are live, and it is faster on
    the CPU from a few MB up (``var`` and ``vector_norm`` over the middle axis are 20-30x
    slower than either form). An fp32 ``x`` is centred into the result in one pass and only
    the squares are summed row by row: the same live tensors. Below the limit (a streamed
    chunk's) the whole-tensor form is the faster.

    ``into``: where the result goes (``x`` itself: normalised in place); None, a new tensor.
    """
    f32 = torch.float32
    mean = x.mean(1, keepdim=True, dtype=f32)
    if x.numel() <= _WHOLE_UP_TO:
        xc = x - mean  # fp32
        rstd = torch.rsqrt((xc * xc).mean(1, keepdim=True).add_(_EPS))
        y = xc.mul_(rstd).to(x.dtype)
        return (y if into is None else into.copy_(y)), rstd
    width = x.shape[1]
    acc = torch.zeros_like(mean)
    if x.dtype == f32:  # centred into the result itself, then scaled in place: bit for bit the
        # rows' arithmetic, two passes fewer (TFT-225: 4.4 against 6.8 ms, "Session 50")
        y = torch.sub(x, mean) if into is None else torch.sub(x, mean, out=into)
        for j in range(width):
            row = y[:, j : j + 1]
            acc.addcmul_(row, row)
        return y.mul_(acc.div_(width).add_(_EPS).rsqrt_()), acc
    for j in range(width):
        row = x[:, j : j + 1].to(f32) - mean
        acc.addcmul_(row, row)
    del row
    rstd = acc.div_(width).add_(_EPS).rsqrt_()
    y = torch.empty_like(x) if into is None else into  # row j is read before it is written
    for j in range(width):
        y[:, j : j + 1] = (x[:, j : j + 1].to(f32) - mean).mul_(rstd)
    return y, rstd


def feature_norm(x: Tensor, inplace: bool = False, grad_inplace: bool = False) -> Tensor:
    """LayerNorm (no affine) over axis 1 of feature-major ``(Vc, width, N)`` activations.

    In the input's dtype (half under autocast, where ``layer_norm`` would run in fp32 and keep
    an fp32 copy of its input and output), statistics in fp32. With autograd recording it
    keeps its output and ``1/std`` (:class:`_FeatureNorm`); without, or while traced for
    export, it is plain tensor ops. ``inplace``: normalise ``x`` itself (a tensor nothing
    keeps for backward; not while traced), where a new tensor would be a fresh block of pages.
    ``grad_inplace``: the op after it makes its output's gradient afresh and hands it to
    nothing else (a product or a matmul), so backward writes the input's gradient into it
    (where it is contiguous and in the output's dtype).
    """
    inplace = inplace and not torch.jit.is_tracing()
    if torch.is_grad_enabled() and x.requires_grad and not torch.jit.is_tracing():
        return _FeatureNorm.apply(x, inplace, grad_inplace)
    return _normalise(x, into=x if inplace else None)[0]
