from __future__ import annotations

import pytest
import torch
from model_refs import reference_variable_grn

from foxhunt.model.variable_grn import PerVariableGRN


@pytest.mark.parametrize(("d_in", "d_hidden", "d_out"), [(4, 4, 4), (3, 3, 8)])
def test_batched_equals_loop(d_in: int, d_hidden: int, d_out: int) -> None:
    torch.manual_seed(0)
    m = PerVariableGRN(5, d_in, d_hidden, d_out)
    with torch.no_grad():  # non-trivial norm affine
        m.norm_weight.uniform_(0.5, 1.5)
        m.norm_bias.uniform_(-0.5, 0.5)
    a = torch.randn(5, 11, d_in)
    batched = m(a)
    looped = torch.stack([reference_variable_grn(m, j, a[j]) for j in range(5)])
    torch.testing.assert_close(batched, looped, rtol=1e-6, atol=1e-6)
    # a sub-range uses that range's weights
    torch.testing.assert_close(
        m.run_chunk(a[2:4], m.split(2)[1]), looped[2:4], rtol=1e-6, atol=1e-6
    )
    assert [c.fc1_weight.shape[0] for c in m.split(2)] == [2, 2, 1]


@pytest.mark.parametrize(("dtype", "tol"), [(torch.float32, 1e-5), (torch.bfloat16, 2e-2)])
def test_feature_norm_is_layer_norm_over_the_width_axis(dtype: torch.dtype, tol: float) -> None:
    """Feature-major LayerNorm (statistics in fp32) against F.layer_norm of the transposed
    input in fp32: values and input gradient, in fp32 and in bf16."""
    import torch.nn.functional as F

    from foxhunt.model.variable_grn import feature_norm

    torch.manual_seed(0)
    x32 = (torch.randn(3, 8, 50) * 2 + 5).requires_grad_()  # an offset mean, as skip + GLU has
    g = torch.randn(3, 8, 50)
    ref = F.layer_norm(x32.transpose(1, 2), (8,)).transpose(1, 2)
    (ref_grad,) = torch.autograd.grad(ref, x32, g)
    x = x32.detach().to(dtype).requires_grad_()
    y = feature_norm(x)
    assert y.dtype == dtype
    (grad,) = torch.autograd.grad(y, x, g.to(dtype))
    torch.testing.assert_close(y.float(), ref.detach(), rtol=tol, atol=tol)
    torch.testing.assert_close(grad.float(), ref_grad, rtol=tol, atol=tol)
    with torch.no_grad():  # the plain path without autograd gives the same values
        torch.testing.assert_close(feature_norm(x), y.detach(), rtol=0, atol=0)


def test_an_identity_skip_leaves_the_input_alone() -> None:
    """With d_in == d_out the skip is the input itself: the GLU output is added to a copy,
    not into the caller's tensor (the projected and embedded skips are added into in place)."""
    torch.manual_seed(0)
    m = PerVariableGRN(3, 4, 4, 4)
    a = torch.randn(3, 7, 4)
    before = a.clone()
    m(a)
    assert torch.equal(a, before)


@pytest.mark.parametrize(("d_in", "d_out"), [(4, 4), (3, 5)])
def test_gradients_through_the_in_place_sum_match_the_loop(d_in: int, d_out: int) -> None:
    """Input and weight gradients of both paths whose skip takes the GLU output in place (a
    projected skip, the embedded chunk of the fused VSN) against the per-variable loop of
    F.layer_norm GRNs; autograd would also refuse a kept tensor changed in place."""
    torch.manual_seed(0)
    m = PerVariableGRN(2, d_in, 3, d_out)
    a = torch.randn(2, 5, d_in, requires_grad=True)
    g = torch.randn(2, 5, d_out)

    def grads(out: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return torch.autograd.grad(out, [a, m.fc1_weight, m.gate_weight], g)

    looped = grads(torch.stack([reference_variable_grn(m, j, a[j]) for j in range(2)]))
    for got, want in zip(grads(m.run_chunk(a, m.weights())), looped, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    # the embedded chunk against run_chunk of the same embeddings (made out of place)
    x = torch.randn(2, 1, 5, requires_grad=True)
    ew, eb = torch.randn(2, d_in), torch.randn(2, d_in)
    emb = x.transpose(1, 2) * ew[:, None, :] + eb[:, None, :]  # (2, 5, d_in)
    gt = g.transpose(1, 2)
    (want,) = torch.autograd.grad(m.run_chunk(emb, m.weights()).transpose(1, 2), x, gt)
    (got,) = torch.autograd.grad(m.run_embedded(x, ew, eb, m.weights()), x, gt)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("dtype", "tol"), [(torch.float32, 1e-6), (torch.bfloat16, 1e-2)])
def test_the_row_by_row_norm_equals_the_whole_tensor_one(monkeypatch, dtype, tol) -> None:  # noqa: ANN001
    """Above the size limit the norm and its backward go a width row at a time: the same values,
    ``1/std`` and input gradient as the whole-tensor form, in fp32 and in bf16."""
    from foxhunt.model import variable_grn as vg

    torch.manual_seed(0)
    x = (torch.randn(3, 16, 12) * 2 + 5).to(dtype)  # fewer rows than the width: the loops
    g = torch.randn(3, 16, 12).to(dtype)  # run over the width axis, not the rows

    def run(limit: int) -> tuple[torch.Tensor, ...]:
        monkeypatch.setattr(vg, "_WHOLE_UP_TO", limit)
        xr = x.clone().requires_grad_()
        y = vg.feature_norm(xr)
        (grad,) = torch.autograd.grad(y, xr, g)
        return (y, vg._normalise(x)[1], grad)

    whole, rows = run(1 << 30), run(0)
    for a, b in zip(rows, whole, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        torch.testing.assert_close(a, b, rtol=tol, atol=tol)
    assert rows[0].dtype == dtype and rows[1].dtype == torch.float32


def test_feature_norm_holds_one_input_sized_tensor_at_its_widest() -> None:
    """Above 1 Mi elements the norm goes a width row at a time: its peak is its output plus
    four (Vc, 1, N) rows (the mean, 1/std, the row at work and its product), not the output
    plus the centred states' square (2x the input)."""
    from foxhunt.memory.tensor_peak import tensor_peak_bytes
    from foxhunt.model.variable_grn import feature_norm

    x = torch.randn(4, 16, 20_000)  # 1.28 Mi elements, 5.1 MB
    rows = 4 * 20_000 * 4  # one fp32 statistic per (variable, row)
    with torch.no_grad():
        peak = tensor_peak_bytes(lambda: feature_norm(x))
    assert x.nbytes <= peak <= x.nbytes + 4 * rows


def test_the_fp32_norm_backward_holds_one_input_sized_tensor_at_its_widest() -> None:
    """Above 1 Mi elements the fp32 backward's peak is the input gradient plus (Vc, 1, N)
    rows: one input-sized tensor at a time (a ``dy * y`` product, where one is made, is freed
    before the gradient is; ``axis1_dot`` makes none, which saves its page faults, not peak)."""
    from foxhunt.memory.tensor_peak import tensor_peak_bytes
    from foxhunt.model.variable_grn import feature_norm

    x = torch.randn(4, 16, 20_000, requires_grad=True)  # 1.28 Mi elements, 5.1 MB
    y = feature_norm(x)
    g = torch.randn_like(y)
    rows = 4 * 20_000 * 4
    peak = tensor_peak_bytes(lambda: torch.autograd.grad(y, x, g))
    assert x.nbytes <= peak <= x.nbytes + 4 * rows


def _state_sized(path: str, monkeypatch: pytest.MonkeyPatch | None) -> tuple[int, int, int]:
    """Allocations of one (Vc, d_out, N) fp32 size in a GRN chunk's forward and backward
    (each a fresh block of pages at TFT-225's sizes), and the forward's tensor peak, in
    those sizes. With ``monkeypatch``: the skip, the sum, the norm and the ELU's gradient made
    as new tensors, as before session 51."""
    import torch.nn.functional as F
    from torch.profiler import ProfilerActivity, profile

    from foxhunt.memory.tensor_peak import allocation_events, tensor_peak_bytes
    from foxhunt.model import variable_grn as vg

    if monkeypatch is not None:
        norm = vg.feature_norm
        monkeypatch.setattr(
            vg, "feature_norm", lambda x, inplace=False, grad_inplace=False: norm(x)
        )
        monkeypatch.setattr(vg, "add_row_affine", lambda g, *skip: vg.row_affine(*skip).add_(g))
        monkeypatch.setattr(vg, "elu_in_place", lambda h: F.elu(h, inplace=True))
    torch.manual_seed(0)
    vc, n, d = 4, 40_000, 8  # 1.28 Mi elements: the norm's row-by-row form, as TFT-225's
    m = PerVariableGRN(vc, 1 if path == "embedded" else 3, d, d, dropout=0.1)
    w = m.weights()
    a = torch.randn(vc, n, 3, requires_grad=True)
    x = torch.randn(vc, 1, n, requires_grad=True)
    ew, eb = torch.randn(vc, 1), torch.randn(vc, 1)

    def run() -> torch.Tensor:
        return m.run_chunk(a, w) if path == "projected" else m.run_embedded(x, ew, eb, w)

    size = vc * d * n * 4
    out: list[torch.Tensor] = []
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as forward:
        out.append(run())
    g = torch.randn_like(out[0])
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as backward:
        torch.autograd.grad(out[0], [a if path == "projected" else x, *m.parameters()], g)
    counts = [sum(b == size for _, b in allocation_events(p)) for p in (forward, backward)]
    return counts[0], counts[1], tensor_peak_bytes(run) // size


@pytest.mark.parametrize(("path", "fewer"), [("projected", 1), ("embedded", 2)])
def test_the_glu_output_takes_the_skip_and_the_norm_in_place(
    monkeypatch: pytest.MonkeyPatch, path: str, fewer: int
) -> None:
    """Forward: the norm normalises the sum in place (and the embedded skip is added into the
    GLU output without being made): one state-sized tensor fewer at the widest moment, one or
    two fewer made. Backward: the ELU's input gradient is written into its output's, and the
    norm's into the one its affine made: two fewer made."""
    fwd, bwd, peak = _state_sized(path, None)
    old_fwd, old_bwd, old_peak = _state_sized(path, monkeypatch)
    assert (old_fwd - fwd, old_bwd - bwd, old_peak - peak) == (fewer, 2, 1)


def test_the_in_place_skip_and_elu_have_exact_gradients() -> None:
    from foxhunt.model.variable_grn import add_row_affine, elu_in_place

    torch.manual_seed(0)
    d = torch.float64
    g, x = torch.randn(2, 3, 5, dtype=d), torch.randn(2, 1, 5, dtype=d)
    shift, scale = torch.randn(2, 3, 1, dtype=d), torch.randn(2, 3, 1, dtype=d)
    args = [t.requires_grad_() for t in (g, shift, scale, x)]
    assert torch.autograd.gradcheck(lambda g, *s: add_row_affine(g.clone(), *s), args)
    want = g + (shift + scale * x)
    torch.testing.assert_close(add_row_affine(g.clone(), shift, scale, x), want)
    with torch.no_grad():
        torch.testing.assert_close(add_row_affine(g.clone(), shift, scale, x), want)
    h = (torch.randn(2, 3, 5, dtype=d) * 2).requires_grad_()
    assert torch.autograd.gradcheck(lambda h: elu_in_place(h.clone()), [h])


@pytest.mark.parametrize("needs", [(True, True, True), (True, True, False), (False, False, True)])
def test_row_affine_is_addcmul_with_exact_gradients(needs: tuple[bool, bool, bool]) -> None:
    """The folded fc1 and the skip: ``shift + scale * x`` over (Vc, w, 1) and (Vc, 1, N), its
    backward's batched products checked against finite differences in float64, and its value
    and gradients against ``torch.addcmul``'s in fp32."""
    from foxhunt.model.variable_grn import _RowAffine, row_affine

    torch.manual_seed(0)
    shapes = [(3, 5, 1), (3, 5, 1), (3, 1, 7)]
    args = [
        torch.randn(s, dtype=torch.float64, requires_grad=r)
        for s, r in zip(shapes, needs, strict=True)
    ]
    assert torch.autograd.gradcheck(_RowAffine.apply, tuple(args))
    f32 = [a.detach().float().requires_grad_(a.requires_grad) for a in args]
    out = row_affine(*f32)
    ref = torch.addcmul(*f32)
    torch.testing.assert_close(out, ref)
    grad = torch.randn_like(ref)
    wanted = [a for a in f32 if a.requires_grad]
    for got, expected in zip(
        torch.autograd.grad(out, wanted, grad),
        torch.autograd.grad(ref, wanted, grad),
        strict=True,
    ):
        torch.testing.assert_close(got, expected)


@pytest.mark.parametrize(("scale_grad", "kept"), [(True, 1), (False, 0)])
def test_row_affine_keeps_only_what_its_gradients_need(scale_grad: bool, kept: int) -> None:
    """The one (Vc, 1, N) row of inputs for the scale's gradient (the inputs need none), as
    ``addcmul`` kept it, and nothing where only the shift needs a gradient."""
    from foxhunt.model.variable_grn import row_affine

    shift = torch.randn(3, 5, 1, requires_grad=True)
    scale = torch.randn(3, 5, 1, requires_grad=scale_grad)
    x = torch.randn(3, 1, 7)
    saved: list[torch.Tensor] = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        row_affine(shift, scale, x)
    assert len(saved) == kept and all(t is x for t in saved)
    with torch.no_grad():
        assert not row_affine(shift, scale, x).requires_grad


def test_row_affine_backward_makes_nothing_as_wide_as_its_output() -> None:
    """Its backward sums the gradient over N and over w by batched products: its tensor peak
    is a few (Vc, w, 1) and (Vc, 1, N) results, where autograd's ``mul`` and ``addcmul`` make
    a (Vc, w, N) product of the gradient first."""
    from foxhunt.memory.tensor_peak import tensor_peak_bytes
    from foxhunt.model.variable_grn import row_affine

    vc, w, n = 4, 16, 4096
    shift = torch.randn(vc, w, 1, requires_grad=True)
    scale = torch.randn(vc, w, 1, requires_grad=True)
    x = torch.randn(vc, 1, n, requires_grad=True)
    grad = torch.randn(vc, w, n)
    out = row_affine(shift, scale, x)
    peak = tensor_peak_bytes(lambda: torch.autograd.grad(out, (shift, scale, x), grad))
    assert peak <= 4 * (2 * vc * w + vc * n) + 4096
    ref = torch.addcmul(shift, scale, x)
    assert tensor_peak_bytes(lambda: torch.autograd.grad(ref, (shift, scale, x), grad)) > peak


@pytest.mark.filterwarnings("ignore:`torch.jit.trace` is deprecated:DeprecationWarning")
def test_row_affine_traces_to_plain_ops_with_autograd_on() -> None:
    """While traced for export (autograd recording or not) it is a product and a sum: the
    TorchScript ONNX exporter cannot write a Python autograd function."""
    from foxhunt.model.variable_grn import row_affine

    args = (torch.randn(2, 3, 1), torch.randn(2, 3, 1, requires_grad=True), torch.randn(2, 1, 5))
    traced = torch.jit.trace(row_affine, args)
    kinds = {node.kind() for node in traced.graph.nodes()}
    assert "prim::PythonOp" not in kinds and "aten::mul" in kinds


def test_axis1_dot_sums_the_products_without_making_them() -> None:
    """``axis1_dot`` is ``(a * b).sum(1, keepdim=True)``; its widest tensor is the (Vc, 1, N) sum
    (and one row's product), never a (Vc, width, N) one."""
    from foxhunt.memory.tensor_peak import tensor_peak_bytes
    from foxhunt.model.variable_grn import axis1_dot

    torch.manual_seed(0)
    a, b = torch.randn(6, 5, 300), torch.randn(6, 5, 300)
    got = axis1_dot(a, b)
    assert got.shape == (6, 1, 300)
    torch.testing.assert_close(got, (a * b).sum(1, keepdim=True))
    assert torch.equal(axis1_dot(a[:, :1], b[:, :1]), a[:, :1] * b[:, :1])  # one row
    row = 6 * 300 * 4
    assert tensor_peak_bytes(lambda: axis1_dot(a, b)) <= 2 * row < a.nbytes


def test_the_half_precision_norm_backward_sums_dy_y_in_fp32(monkeypatch) -> None:  # noqa: ANN001
    """Above the size limit the bf16 backward's ``mean(dy * y)`` is still summed in fp32 (the
    row-by-row sum without a product is for fp32 tensors only). With ``dy`` nearly along ``y``,
    the direction LayerNorm's gradient removes, a bf16 running sum would be off by a few
    tenths of ``dy``'s scale: all of the small gradient that is left."""
    from foxhunt.model import variable_grn as vg

    monkeypatch.setattr(vg, "_WHOLE_UP_TO", 0)
    torch.manual_seed(0)
    x = torch.randn(3, 16, 40).to(torch.bfloat16)
    xr = x.clone().requires_grad_()
    y = vg.feature_norm(xr)
    dy = (100 * y.detach().float() + torch.randn(3, 16, 40)).to(torch.bfloat16)
    (got,) = torch.autograd.grad(y, xr, dy)
    y64, dy64 = y.detach().double(), dy.double()
    rstd = vg._normalise(x)[1].double()
    want = (dy64 - dy64.mean(1, keepdim=True) - y64 * (dy64 * y64).mean(1, keepdim=True)) * rstd
    err = (got.double() - want).abs().mean() / want.abs().mean()
    assert err < 0.15, err  # 0.065 here (the products rounded to bf16); a bf16 sum: 0.34


@pytest.mark.parametrize(("dtype", "n"), [(torch.float32, 50), (torch.float32, 40_000),
                                          (torch.bfloat16, 40_000)])  # fmt: skip
def test_the_norm_backward_writes_into_a_gradient_made_for_it(dtype: torch.dtype, n: int) -> None:
    """``grad_inplace``: the input gradient is written into the incoming one (a product's,
    made afresh) where the dtypes allow (fp32 whole, half row by row), with the values of the
    gradient made apart (fp32 to rounding: the same terms in another order; bf16 the same)."""
    from foxhunt.model.variable_grn import feature_norm

    torch.manual_seed(0)
    x0 = (torch.randn(4, 8, n) * 2 + 5).to(dtype)
    c = torch.randn(4, 8, n).to(dtype)
    got = []
    for grad_inplace in (False, True):
        x = x0.clone().requires_grad_()
        seen: list[torch.Tensor] = []
        xi = x * 1  # the norm's input, whose gradient is the norm's backward's result
        xi.register_hook(lambda g: seen.append(g))  # noqa: B023
        y = feature_norm(xi, grad_inplace=grad_inplace)
        y.register_hook(lambda g: seen.append(g))  # noqa: B023
        (dx,) = torch.autograd.grad((y * c).sum(), x)
        got.append(dx)
        # the product's gradient of y is what the norm's backward wrote into, or not
        assert (seen[0].data_ptr() == seen[1].data_ptr()) == grad_inplace
    tol = 1e-5 if dtype == torch.float32 else 0
    torch.testing.assert_close(got[1], got[0], rtol=tol, atol=tol)


def test_the_embedded_chunk_hands_its_norm_the_callers_gradient_when_owned() -> None:
    """``run_embedded(..., grad_owned=True)`` (the VSN's use): one state-sized tensor fewer in
    backward, the same gradients to rounding."""

    torch.manual_seed(0)
    vc, n, d = 4, 40_000, 8
    m = PerVariableGRN(vc, 1, d, d, dropout=0.0, norm_affine=False)  # the fused VSN's
    w = m.weights()
    x = torch.randn(vc, 1, n, requires_grad=True)
    ew, eb = torch.randn(vc, 1), torch.randn(vc, 1)
    c = torch.randn(vc, d, n)
    out = []
    for owned in (False, True):
        state = m.run_embedded(x, ew, eb, w, grad_owned=owned)
        loss = (state * c).sum()
        grads: list[torch.Tensor] = []
        count = _allocations_of(
            lambda: grads.extend(torch.autograd.grad(loss, [x, *m.parameters()])),  # noqa: B023
            vc * d * n * 4,
        )
        out.append((count, grads))
    assert out[0][0] - out[1][0] == 1
    for a, b in zip(out[0][1], out[1][1], strict=True):  # sums over 160,000 values
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


def _allocations_of(fn, size: int) -> int:  # noqa: ANN001
    from torch.profiler import ProfilerActivity, profile

    from foxhunt.memory.tensor_peak import allocation_events

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    return sum(b == size for _, b in allocation_events(prof))


@pytest.mark.parametrize("which", [0, 1, 2, 3])
def test_the_in_place_skip_records_whichever_input_needs_a_gradient(which: int) -> None:
    """g, shift, scale or x alone requiring a gradient gets it (the function's own backward,
    or autograd's record of the plain in-place ops where the guard does not see it)."""
    from foxhunt.model.variable_grn import add_row_affine

    torch.manual_seed(0)
    d = torch.float64
    ins = [torch.randn(2, 3, 5, dtype=d), torch.randn(2, 3, 1, dtype=d),
           torch.randn(2, 3, 1, dtype=d), torch.randn(2, 1, 5, dtype=d)]  # fmt: skip
    ins[which].requires_grad_()
    g = ins[0] * 1 if which == 0 else ins[0].clone()  # not a leaf: it is changed in place
    out = add_row_affine(g, ins[1], ins[2], ins[3])
    want = ins[0] + ins[1] + ins[2] * ins[3]
    (got,) = torch.autograd.grad(out.sum(), ins[which])
    (ref,) = torch.autograd.grad(want.sum(), ins[which])
    torch.testing.assert_close(got, ref)


@pytest.mark.filterwarnings("ignore:`torch.jit.trace` is deprecated:DeprecationWarning")
def test_the_in_place_skip_traces_to_the_same_sum() -> None:
    """While traced for export it is plain ops (no custom function, nothing in place), with
    the values of the in-place form."""
    from foxhunt.model.variable_grn import add_row_affine

    torch.manual_seed(0)
    args = (torch.randn(2, 3, 5), torch.randn(2, 3, 1), torch.randn(2, 3, 1), torch.randn(2, 1, 5))
    traced = torch.jit.trace(lambda g, *s: add_row_affine(g, *s), args)
    want = add_row_affine(args[0].clone(), *args[1:])
    torch.testing.assert_close(traced(*args), want)


@pytest.mark.parametrize(("dtype", "n"), [(torch.float32, 50), (torch.float32, 40_000),
                                          (torch.bfloat16, 40_000)])  # fmt: skip
def test_without_autograd_the_elu_and_the_norm_work_in_their_input(
    dtype: torch.dtype, n: int
) -> None:
    """Validation and inference pass no gradient: the ELU and the norm asked to work in place
    return their input itself, with the values of the out-of-place forms."""
    import torch.nn.functional as F

    from foxhunt.model.variable_grn import elu_in_place, feature_norm

    torch.manual_seed(0)
    x = (torch.randn(4, 8, n) * 2 + 5).to(dtype)
    with torch.no_grad():
        for fn, ref in (
            (elu_in_place, F.elu),
            (lambda t: feature_norm(t, inplace=True), feature_norm),
        ):
            want = ref(x.clone())
            t = x.clone()
            got = fn(t)
            assert got.data_ptr() == t.data_ptr()
            torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_a_gradient_passed_on_is_not_written_into_by_default() -> None:
    """Without ``grad_owned`` the norm's backward makes its own gradient: here the states'
    gradient also goes, as the same tensor, to the other input of a sum, an op made before the
    GRN (so autograd runs its backward after the GRN's), whose gradient must stay the
    product's weights."""
    torch.manual_seed(0)
    vc, n, d = 4, 40_000, 8
    m = PerVariableGRN(vc, 1, d, d, dropout=0.0, norm_affine=False)
    leaf = torch.zeros(vc, d, n, requires_grad=True)
    other = leaf * 1  # its backward reads the sum's gradient last
    x = torch.randn(vc, 1, n, requires_grad=True)
    state = m.run_embedded(x, torch.randn(vc, 1), torch.randn(vc, 1), m.weights())
    c = torch.randn(vc, d, n)
    ((state + other) * c).sum().backward()
    assert torch.equal(leaf.grad, c)


def test_the_in_place_elu_makes_a_gradient_it_cannot_write_into() -> None:
    """A sum's gradient (one value expanded over every element) cannot take the ELU's input
    gradient in place: it is made apart, with autograd's values."""
    import torch.nn.functional as F

    from foxhunt.model.variable_grn import elu_in_place

    h = torch.randn(2, 3, 5, requires_grad=True)
    (got,) = torch.autograd.grad(elu_in_place(h * 1).sum(), h)
    (want,) = torch.autograd.grad(F.elu(h).sum(), h)
    torch.testing.assert_close(got, want)
