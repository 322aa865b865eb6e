"""The fused VSN's weighted lift: autograd's gradients, without keeping the product."""

from __future__ import annotations

import pytest
import torch

from foxhunt.model import weighted_lift
from foxhunt.model.vsn import VariableSelectionNetwork
from foxhunt.model.weighted_lift import WeightedLift, keeps_no_product, product_rows


def _inputs(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    states = torch.randn(6, 4, 9, dtype=dtype, requires_grad=True)
    weights = torch.softmax(torch.randn(9, 6, dtype=dtype), 1).requires_grad_()
    lift = torch.randn(6 * 4, 5, dtype=dtype, requires_grad=True)
    return states, weights, lift


def _reference(states: torch.Tensor, weights: torch.Tensor, lift: torch.Tensor) -> torch.Tensor:
    return ((states * weights.t()[:, None, :]).reshape(-1, states.shape[-1])).t() @ lift


def test_gradients_are_autograds() -> None:
    states, weights, lift = _inputs(torch.float64)
    assert torch.autograd.gradcheck(
        lambda s, w, x: WeightedLift.apply(s, w.t()[:, None, :], x), (states, weights, lift)
    )
    grad = torch.randn(9, 5, dtype=torch.float64)
    want = torch.autograd.grad(_reference(states, weights, lift), (states, weights, lift), grad)
    got = torch.autograd.grad(
        WeightedLift.apply(states, weights.t()[:, None, :], lift), (states, weights, lift), grad
    )
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, rtol=1e-12, atol=1e-12)


def test_it_keeps_only_its_inputs() -> None:
    """The states, the weights and the lift are kept (by storage, as the memory tests count
    them): no (Vc, d_var, N) product, where autograd's matmul keeps one."""
    states, weights, lift = _inputs(torch.float32)
    kept: list[torch.Tensor] = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: kept.append(t) or t, lambda t: t):
        WeightedLift.apply(states, weights.t()[:, None, :], lift)
    storages = {t.untyped_storage().data_ptr() for t in kept}
    inputs = {t.untyped_storage().data_ptr() for t in (states, weights, lift)}
    assert storages == inputs
    kept.clear()
    with torch.autograd.graph.saved_tensors_hooks(lambda t: kept.append(t) or t, lambda t: t):
        _reference(states, weights, lift)
    assert {t.untyped_storage().data_ptr() for t in kept} - inputs  # the product


def test_the_vsn_uses_it_in_fp32_training_only() -> None:
    states = torch.randn(3, 2, 5, requires_grad=True)
    assert keeps_no_product(states)
    with torch.no_grad():
        assert not keeps_no_product(states)
    with torch.autocast("cpu", torch.bfloat16):
        assert not keeps_no_product(states)
    assert not keeps_no_product(states.detach().to(torch.bfloat16).requires_grad_())


@pytest.mark.parametrize("streaming", [False, True])
def test_a_vsn_trains_to_the_same_gradients_either_way(
    monkeypatch: pytest.MonkeyPatch, streaming: bool
) -> None:
    """The VSN with the weighted lift and with autograd's product: same output and gradients."""
    import foxhunt.model.vsn as vsn_module

    torch.manual_seed(1)
    vsn = VariableSelectionNetwork(7, 4, 16, d_context=16, chunk=3, streaming=streaming)
    x, context = torch.randn(5, 6, 7), torch.randn(5, 16)

    def run() -> list[torch.Tensor]:
        vsn.zero_grad()
        out, weights = vsn(x, context)
        (out.square().sum() + weights.sum()).backward()
        return [out.detach(), *(p.grad.clone() for p in vsn.parameters() if p.grad is not None)]

    fused = run()
    monkeypatch.setattr(vsn_module, "keeps_no_product", lambda states: False)
    plain = run()
    assert len(fused) == len(plain)
    for a, b in zip(fused, plain, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_a_frozen_lift_gets_no_gradient_and_the_others_theirs() -> None:
    states, weights, lift = _inputs(torch.float64)
    lift.requires_grad_(False)
    out = WeightedLift.apply(states, weights.t()[:, None, :], lift)
    out.sum().backward()
    assert lift.grad is None
    want = torch.autograd.grad(_reference(states, weights, lift).sum(), (states, weights))
    torch.testing.assert_close(states.grad, want[0])
    torch.testing.assert_close(weights.grad, want[1])


def _peaks(monkeypatch: pytest.MonkeyPatch, product_bytes: int) -> tuple[int, int]:
    """Tensor peaks of the forward and of the backward of (20, 8, 500) fp32 states (16,000
    bytes a variable) with the product made ``product_bytes`` at a time."""
    from foxhunt.memory.tensor_peak import tensor_peak_bytes

    monkeypatch.setattr(weighted_lift, "PRODUCT_BYTES", product_bytes)
    torch.manual_seed(0)
    states = torch.randn(20, 8, 500, requires_grad=True)
    weights = torch.softmax(torch.randn(500, 20), 1).requires_grad_()
    lift = torch.randn(20 * 8, 16, requires_grad=True)
    forward = tensor_peak_bytes(lambda: WeightedLift.apply(states, weights.t()[:, None, :], lift))
    out = WeightedLift.apply(states, weights.t()[:, None, :], lift)
    grad = torch.randn_like(out)
    return forward, tensor_peak_bytes(lambda: out.backward(grad))


def test_the_product_is_made_a_few_variables_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forward: the weights' contiguous copy (40,000 bytes), the (N, d) output (32,000) and one
    part of the product: 3 variables (48,000) at 48,000 bytes a part, all 20 (320,000) when
    they fit. Backward: the states' gradient (320,000), the weights' gradient and copy (2 x
    40,000), the lift's gradient (10,240) and one part: never a whole product beside the
    states' gradient."""
    small, state = 40_000 + 32_000, 320_000
    assert _peaks(monkeypatch, 48_000) == (small + 48_000, state + 90_240 + 48_000)
    assert _peaks(monkeypatch, 2**20) == (small + state, state + 90_240 + state)


@pytest.mark.parametrize("product_bytes", [1, 3 * 288, 4 * 288 + 287, 2**20])
def test_parts_of_any_size_give_autograds_gradients(
    monkeypatch: pytest.MonkeyPatch, product_bytes: int
) -> None:
    """288 bytes a variable (4 x 9 float64): one variable a part, two parts of 3, a part of 4
    and a last part of 2, and all 6 at once."""
    import warnings

    monkeypatch.setattr(weighted_lift, "PRODUCT_BYTES", product_bytes)
    states, weights, lift = _inputs(torch.float64)
    grad = torch.randn(9, 5, dtype=torch.float64)
    out = WeightedLift.apply(states, weights.t()[:, None, :], lift)
    torch.testing.assert_close(out, _reference(states, weights, lift), rtol=1e-12, atol=1e-12)
    want = torch.autograd.grad(_reference(states, weights, lift), (states, weights, lift), grad)
    with warnings.catch_warnings():  # each part's rows of the lift's gradient exactly (torch
        warnings.simplefilter("error")  # resizes a mis-sized out= view with only a warning)
        got = torch.autograd.grad(out, (states, weights, lift), grad)
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, rtol=1e-12, atol=1e-12)


def test_parts_hold_a_whole_number_of_variables_and_at_least_one() -> None:
    assert product_rows(torch.empty(210, 16, 1600)) == 10  # TFT-225 batch 32: 102,400 each
    assert product_rows(torch.empty(210, 16, 1600, dtype=torch.float64)) == 5
    assert product_rows(torch.empty(3, 16, 20_000)) == 1  # 1.28 MB a variable
    assert product_rows(torch.empty(3, 1, 1)) == 2**18
    assert product_rows(torch.empty(3, 1, 1, dtype=torch.uint8)) == 2**20  # one byte each
