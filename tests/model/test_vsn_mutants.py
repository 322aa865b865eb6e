"""VariableSelectionNetwork construction contracts that `make mutate` found unguarded."""

from __future__ import annotations

import math

import pytest
import torch
from model_refs import saved_activation_bytes
from torch import nn

from foxhunt.model.dropout import ByteDropout
from foxhunt.model.vsn import VariableSelectionNetwork


def _spans(p: torch.Tensor, lo: float, hi: float) -> bool:
    """Values lie in [lo, hi] and reach within 10 % of both ends (uniform init over the range)."""
    margin = 0.1 * (hi - lo)
    return bool(p.min() >= lo and p.max() <= hi and p.min() < lo + margin and p.max() > hi - margin)


def test_embeddings_start_uniform_on_minus_one_one() -> None:
    torch.manual_seed(0)
    m = VariableSelectionNetwork(64, 16, 8)
    assert _spans(m.embed_weight.detach(), -1.0, 1.0)
    assert _spans(m.embed_bias.detach(), -1.0, 1.0)


def test_the_fused_lift_starts_uniform_within_one_over_sqrt_width() -> None:
    torch.manual_seed(0)
    d_var = 16
    m = VariableSelectionNetwork(64, d_var, 8, "fused")
    bound = 1.0 / math.sqrt(d_var)
    assert m.lift_weight is not None and m.lift_bias is not None
    assert _spans(m.lift_weight.detach(), -bound, bound)
    assert _spans(m.lift_bias.detach(), -bound, bound)


def test_modes_build_their_documented_layers() -> None:
    fused = VariableSelectionNetwork(5, 3, 8, "fused", dropout=0.25)
    faithful = VariableSelectionNetwork(5, 3, 8, "faithful", dropout=0.25)
    assert (fused.mode, faithful.mode) == ("fused", "faithful")
    # fused: per-variable GRN w -> w with no LayerNorm affine of its own, then a lift w -> d
    assert fused.lift_weight is not None and fused.lift_weight.shape == (5, 3, 8)
    assert fused.variable_grn.norm_weight is None and fused.variable_grn.norm_bias is None
    # faithful: per-variable GRN w -> d with its LayerNorm affine, no lift
    assert faithful.lift_weight is None and faithful.lift_bias is None
    assert faithful.variable_grn.norm_weight is not None
    for m in (fused, faithful):  # the dropout reaches the per-variable GRNs
        assert (
            isinstance(m.variable_grn.dropout, ByteDropout) and m.variable_grn.dropout.rate == 0.25
        )
    # both: the selection GRN V -> V with a linear (projected) skip, as the paper's
    for m in (fused, faithful):
        assert isinstance(m.selection.skip, nn.Linear) and m.selection.skip.in_features == 5


def test_unknown_mode_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=r"^unknown VSN mode 'bogus'$"):
        VariableSelectionNetwork(5, 3, 8, "bogus")


def test_no_dropout_by_default() -> None:
    torch.manual_seed(0)
    m = VariableSelectionNetwork(5, 3, 8)
    x = torch.randn(4, 6, 5)
    m.train()
    trained = m(x)[0]
    m.eval()
    torch.testing.assert_close(trained, m(x)[0])


def test_without_streaming_the_per_variable_states_are_saved() -> None:
    """The other side of test_vsn.py's streaming check: streaming off keeps (V, N, d_var)
    states for backward, so what is saved grows with the per-variable width."""

    def measure(d_var: int) -> int:
        torch.manual_seed(0)
        m = VariableSelectionNetwork(16, d_var, 8, "fused", chunk=4)
        m.streaming = False
        x = torch.randn(2, 5, 16, requires_grad=True)
        return saved_activation_bytes(lambda: m(x), m)

    assert measure(32) > measure(4) + 2 * 5 * 16 * (32 - 4) * 4


@pytest.mark.parametrize("mode", ["fused", "faithful"])
def test_the_context_reaches_the_selection_without_autograd_too(mode: str) -> None:
    torch.manual_seed(0)
    m = VariableSelectionNetwork(6, 3, 8, mode, d_context=4, chunk=2)
    x, context = torch.randn(2, 5, 6), torch.randn(2, 4)
    recorded = m(x, context)  # streaming with autograd: selection through a checkpoint
    with torch.no_grad():
        plain = m(x, context)  # no autograd: the direct path
    torch.testing.assert_close(plain[1], recorded[1].detach())
    torch.testing.assert_close(plain[0], recorded[0].detach())
    other = m(x, torch.randn(2, 4))[1]
    assert not torch.allclose(other, recorded[1])  # and the context matters


@pytest.mark.parametrize(
    ("grad", "autocast", "streaming", "applied"),
    [
        (True, False, False, 1),  # fp32 training: the product is not kept
        (True, False, True, 2),  # and in each streamed chunk (forward, then its recompute)
        (True, True, False, 0),  # bf16 autocast: the matmul's casts are autocast's
        (False, False, False, 0),  # no autograd: nothing to keep, the sum goes in place
    ],
)
def test_the_weighted_lift_runs_in_fp32_training_only(
    monkeypatch: pytest.MonkeyPatch, grad: bool, autocast: bool, streaming: bool, applied: int
) -> None:
    """The fused VSN's weighted sum goes through ``WeightedLift`` exactly where it keeps no
    product (fp32 with autograd recording, not under autocast) and through the plain matmul
    elsewhere; both give the same sum, so only which one ran tells them apart."""
    from foxhunt.model import vsn as vsn_module

    calls: list[int] = []
    apply = vsn_module.WeightedLift.apply
    monkeypatch.setattr(vsn_module.WeightedLift, "apply", lambda *a: calls.append(1) or apply(*a))
    torch.manual_seed(0)
    m = VariableSelectionNetwork(6, 4, 8, streaming=streaming, chunk=8).train()
    x = torch.randn(2, 5, 6)
    with torch.set_grad_enabled(grad), torch.autocast("cpu", torch.bfloat16, enabled=autocast):
        out, _ = m(x)
    if grad:
        out.float().sum().backward()
    assert len(calls) == applied


@pytest.mark.parametrize(("grad", "autocast"), [(True, False), (True, True), (False, False)])
def test_the_selection_weights_multiply_the_states_as_contiguous_rows(
    grad: bool, autocast: bool
) -> None:
    """Every product of the (Vc, d_var, N) states with the (Vc, 1, N) selection weights, forward
    and backward, takes the weights as contiguous rows: the softmax's (N, Vc) output seen as
    (Vc, 1, N) is strided along N, and such a product ran ~7x slower (docs/benchmarks.md,
    "Session 50"). The values are the same either way, so only the layout tells them apart."""
    from torch.utils._python_dispatch import TorchDispatchMode

    seen: list[bool] = []

    class Products(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            a, b = (args + (None, None))[:2]
            if func in (
                torch.ops.aten.mul.Tensor,
                torch.ops.aten.mul_.Tensor,
                torch.ops.aten.mul.out,
            ):
                if isinstance(b, torch.Tensor) and b.dim() == 3 and b.shape[1] == 1:
                    if isinstance(a, torch.Tensor) and a.dim() == 3 and a.shape[1] == 4:
                        seen.append(b.is_contiguous())
            return func(*args, **(kwargs or {}))

    torch.manual_seed(0)
    m = VariableSelectionNetwork(6, 4, 8).train()
    x = torch.randn(2, 5, 6)
    with Products():
        with torch.set_grad_enabled(grad), torch.autocast("cpu", torch.bfloat16, enabled=autocast):
            out, _ = m(x)
        if grad:
            out.float().sum().backward()
    assert seen and all(seen), seen


def test_the_vsn_owns_the_gradient_of_its_states(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every use of the states in the VSN (the weighted lift, a product, einsum) makes their
    gradient afresh, so the VSN says so (``grad_owned``) in every mode and precision."""
    from foxhunt.model.variable_grn import PerVariableGRN

    said: list[bool] = []
    run = PerVariableGRN.run_embedded

    def spy(self, *args, grad_owned: bool = False):  # noqa: ANN001, ANN202
        said.append(grad_owned)
        return run(self, *args, grad_owned=grad_owned)

    monkeypatch.setattr(PerVariableGRN, "run_embedded", spy)
    for mode in ("fused", "faithful"):
        vsn = VariableSelectionNetwork(5, 4, 8, mode=mode, chunk=2)
        vsn(torch.randn(3, 5))[0].sum().backward()
    assert said and all(said)
