"""The fused VSN's weighted lift: autograd's gradients, without keeping the product."""

from __future__ import annotations

import pytest
import torch

from foxhunt.model.vsn import VariableSelectionNetwork
from foxhunt.model.weighted_lift import WeightedLift, keeps_no_product


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


def test_backward_holds_two_state_sized_tensors_at_once() -> None:
    """The states' gradient and the recomputed product: the weights' gradient is summed a row
    at a time, without a third state-sized tensor."""
    from foxhunt.memory.tensor_peak import tensor_peak_bytes

    states = torch.randn(20, 8, 500, requires_grad=True)
    weights = torch.softmax(torch.randn(500, 20), 1).requires_grad_()
    lift = torch.randn(20 * 8, 16, requires_grad=True)
    out = WeightedLift.apply(states, weights.t()[:, None, :], lift)
    grad = torch.randn_like(out)
    peak = tensor_peak_bytes(lambda: out.backward(grad))
    one = states.numel() * 4  # 320 kB
    small = (weights.numel() + lift.numel()) * 4 * 2  # the weights' and the lift's gradients
    assert 2 * one <= peak <= 2 * one + small
