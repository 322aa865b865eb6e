from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from model_refs import reference_variable_grn, saved_activation_bytes

from foxhunt.model.vsn import VariableSelectionNetwork


def reference_vsn(
    m: VariableSelectionNetwork, x: torch.Tensor, context: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Loop-over-variables oracle: one variable at a time, no batching, no streaming."""
    weights = torch.softmax(m.selection(x, context), dim=-1)
    out = torch.zeros(*x.shape[:-1], m.d_model)
    for j in range(m.n_vars):
        emb = x[..., j : j + 1] * m.embed_weight[j] + m.embed_bias[j]  # (..., d_var)
        state = reference_variable_grn(m.variable_grn, j, emb.reshape(-1, m.d_var))
        if m.lift_weight is not None:
            state = state @ m.lift_weight[j] + m.lift_bias[j]  # (N, d)
        out = out + weights[..., j : j + 1] * state.view(*x.shape[:-1], m.d_model)
    return out, weights


def _grads(m: torch.nn.Module, x: torch.Tensor, out: torch.Tensor) -> list[torch.Tensor]:
    g = torch.linspace(-1, 1, out.numel()).view_as(out)  # a fixed, non-uniform upstream grad
    params = [p for p in m.parameters()]
    return list(torch.autograd.grad(out, [x, *params], g))


@pytest.mark.parametrize("mode", ["fused", "faithful"])
def test_batched_vsn_equals_loop_reference(mode: str) -> None:
    torch.manual_seed(0)
    m = VariableSelectionNetwork(7, 4, 12, mode, dropout=0.0, d_context=5, chunk=3)
    x = torch.randn(2, 6, 7, requires_grad=True)
    ctx = torch.randn(2, 5)
    out, w = m(x, ctx)
    ref_out, ref_w = reference_vsn(m, x, ctx)
    assert out.shape == (2, 6, 12) and w.shape == (2, 6, 7)
    torch.testing.assert_close(out, ref_out, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(w, ref_w)
    for a, b in zip(_grads(m, x, out), _grads(m, x, ref_out), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["fused", "faithful"])
def test_streaming_equals_non_streaming(mode: str) -> None:
    torch.manual_seed(0)
    m = VariableSelectionNetwork(10, 4, 8, mode, dropout=0.0, d_context=None, chunk=4)
    x = torch.randn(3, 5, 10, requires_grad=True)
    streamed = m(x)[0]
    m.streaming = False
    plain = m(x)[0]
    torch.testing.assert_close(streamed, plain, rtol=1e-5, atol=1e-6)
    for a, b in zip(_grads(m, x, streamed), _grads(m, x, plain), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_static_vsn_weights_sum_to_one() -> None:
    m = VariableSelectionNetwork(5, 4, 8)
    out, w = m(torch.randn(9, 5))
    assert out.shape == (9, 8)
    torch.testing.assert_close(w.sum(-1), torch.ones(9))
    assert (w >= 0).all()


@settings(max_examples=20, deadline=None)
@given(
    n_vars=st.integers(1, 6),
    d_var=st.integers(1, 5),
    d_hidden=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)
def test_selection_from_raw_inputs_is_exact_reparametrisation(
    n_vars: int, d_var: int, d_hidden: int, seed: int
) -> None:
    """The paper's first selection layer over flattened embeddings equals an affine map of x."""
    g = torch.Generator().manual_seed(seed)
    emb_w, emb_b = torch.randn(n_vars, d_var, generator=g), torch.randn(n_vars, d_var, generator=g)
    w_flat = torch.randn(d_hidden, n_vars * d_var, generator=g, dtype=torch.float64)
    b_flat = torch.randn(d_hidden, generator=g, dtype=torch.float64)
    x = torch.randn(8, n_vars, generator=g, dtype=torch.float64)
    flat = (x[..., None] * emb_w + emb_b).reshape(8, -1)  # the paper's input, (N, V * d_var)
    paper = F.linear(flat, w_flat, b_flat)
    blocks = w_flat.view(d_hidden, n_vars, d_var)
    w_x = torch.einsum("hvw,vw->hv", blocks, emb_w.double())  # (d_hidden, V)
    b_x = b_flat + torch.einsum("hvw,vw->h", blocks, emb_b.double())
    torch.testing.assert_close(F.linear(x, w_x, b_x), paper)


def test_streaming_vsn_saved_memory_does_not_scale_with_per_variable_width() -> None:
    def measure(d_var: int) -> int:
        torch.manual_seed(0)
        m = VariableSelectionNetwork(64, d_var, 32, "fused", chunk=16)
        x = torch.randn(4, 10, 64, requires_grad=True)
        return saved_activation_bytes(lambda: m(x), m)

    # per-variable states ((V, N, d_var) tensors) are recomputed, never saved: width is free
    assert measure(4) == measure(64)


@pytest.mark.parametrize("mode", ["fused", "faithful"])
def test_no_grad_forward_in_byte_sized_chunks_equals_the_autograd_forward(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without autograd the VSN runs chunks sized by bytes and adds each into the sum in
    place; the result is the one-chunk autograd forward's."""
    from foxhunt.model import vsn

    torch.manual_seed(0)
    m = VariableSelectionNetwork(10, 4, 8, mode, dropout=0.0, d_context=3, chunk=4, streaming=False)
    x, ctx = torch.randn(3, 5, 10), torch.randn(3, 3)
    width = 2 * (4 if mode == "fused" else 8)
    # room for 3 variables per chunk: chunks of 3, 3, 3, 1
    monkeypatch.setattr(vsn, "INFERENCE_CHUNK_BYTES", 3 * width * 15 * 4 + 1)
    assert m._inference_chunk(x) == 3
    expected = m(x, ctx)[0]
    with torch.no_grad():
        got = m(x, ctx)[0]
    torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-6)
    monkeypatch.setattr(vsn, "INFERENCE_CHUNK_BYTES", 1)  # at least one variable
    assert m._inference_chunk(x) == 1
    monkeypatch.setattr(vsn, "INFERENCE_CHUNK_BYTES", 2**40)  # at most the configured chunk
    assert m._inference_chunk(x) == 4
