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
    with pytest.raises(ValueError, match="needs a context"):
        GatedResidualNetwork(4, 4, 4, d_context=2)(torch.randn(1, 4))
    with pytest.raises(ValueError, match="without a context"):
        GatedResidualNetwork(4, 4, 4)(torch.randn(1, 4), torch.randn(1, 2))
