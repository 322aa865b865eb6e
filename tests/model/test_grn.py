from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from foxhunt.model.grn import GatedResidualNetwork


def _reference(grn: GatedResidualNetwork, a: torch.Tensor, c: torch.Tensor | None) -> torch.Tensor:
    h = a @ grn.fc1.weight.T + grn.fc1.bias
    if c is not None:
        assert grn.context is not None
        h = h + c @ grn.context.weight.T
    h = F.elu(h) @ grn.fc2.weight.T + grn.fc2.bias
    g = h @ grn.gate.glu.proj.weight.T + grn.gate.glu.proj.bias
    d = g.shape[-1] // 2
    skip = a if grn.skip is None else a @ grn.skip.weight.T + grn.skip.bias
    return F.layer_norm(skip + g[..., :d] * torch.sigmoid(g[..., d:]), (d,))


def test_grn_with_broadcast_context_equals_expanded_context() -> None:
    torch.manual_seed(0)
    grn = GatedResidualNetwork(6, 5, 6, d_context=3)
    a, c = torch.randn(2, 4, 6), torch.randn(2, 3)
    expected = _reference(grn, a, c.unsqueeze(1).expand(2, 4, 3))
    torch.testing.assert_close(grn(a, c), expected)


def test_grn_projects_skip_when_widths_differ() -> None:
    torch.manual_seed(0)
    grn = GatedResidualNetwork(6, 5, 3)
    assert grn.skip is not None
    a = torch.randn(4, 6)
    torch.testing.assert_close(grn(a), _reference(grn, a, None))
    assert GatedResidualNetwork(4, 4, 4).skip is None
    assert GatedResidualNetwork(4, 4, 4, project_skip=True).skip is not None


def test_grn_context_mismatch_raises() -> None:
    with pytest.raises(ValueError, match="^this GRN needs a context vector$"):
        GatedResidualNetwork(4, 4, 4, d_context=2)(torch.randn(1, 4))
    with pytest.raises(ValueError, match="^this GRN was built without a context$"):
        GatedResidualNetwork(4, 4, 4)(torch.randn(1, 4), torch.randn(1, 2))


def test_elu_runs_in_place_so_fc2s_input_is_the_only_copy_backward_keeps() -> None:
    """ELU in place saves its output, which fc2 saves anyway; out of place it would also keep
    its input: one more (B, T, d_hidden) tensor per GRN (the 210 per-variable GRNs of TFT-225
    run this code)."""
    torch.manual_seed(0)
    grn = GatedResidualNetwork(6, 5, 6, d_context=3)
    a, c = torch.randn(2, 4, 6, requires_grad=True), torch.randn(2, 3)
    saved: list[torch.Tensor] = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        grn(a, c).sum().backward()
    hidden = {  # storages of 2 x 4 x 5 floats (fc2 and the gate's linear save theirs as views)
        t.untyped_storage().data_ptr() for t in saved if t.untyped_storage().nbytes() == 160
    }
    assert len(hidden) == 2  # fc2's input (= ELU's output) and the gate's input (fc2's output)


def test_the_gate_drops_with_the_grns_rate() -> None:
    grn = GatedResidualNetwork(6, 5, 6, dropout=0.25)
    assert grn.gate.glu.dropout.rate == 0.25  # type: ignore[union-attr]
    assert isinstance(GatedResidualNetwork(6, 5, 6).gate.glu.dropout, torch.nn.Identity)
