"""docs/model.md, "Selection from the raw inputs", checked on a VariableSelectionNetwork itself.

The paper's selection GRN reads the flattened per-variable embeddings (width V·w); ours reads x
(width V). For any paper GRN, giving ours the affine image of its first layer and linear skip
(through the VSN's own embedding weights) and the same later layers makes the VSN's selection
weights equal the paper's.
"""

from __future__ import annotations

import pytest
import torch

from foxhunt.model.grn import GatedResidualNetwork
from foxhunt.model.vsn import VariableSelectionNetwork


def _through_embedding(layer: torch.nn.Linear, emb_w: torch.Tensor, emb_b: torch.Tensor):
    """(weight, bias) of ``x -> layer(flat_embeddings(x))`` as a linear map of x itself."""
    n_vars, d_var = emb_w.shape
    blocks = layer.weight.view(layer.out_features, n_vars, d_var)
    return (
        torch.einsum("ovw,vw->ov", blocks, emb_w),
        layer.bias + torch.einsum("ovw,vw->o", blocks, emb_b),
    )


@pytest.mark.parametrize("mode", ["fused", "faithful"])
@pytest.mark.parametrize("streaming", [True, False])
def test_vsn_selection_weights_equal_the_papers_over_flattened_embeddings(
    mode: str, streaming: bool
) -> None:
    torch.manual_seed(0)
    n_vars, d_var, d_model, d_context = 5, 3, 8, 4
    vsn = VariableSelectionNetwork(
        n_vars, d_var, d_model, mode, dropout=0.0, d_context=d_context, chunk=2
    ).double()
    vsn.streaming = streaming
    paper = GatedResidualNetwork(
        n_vars * d_var, min(d_model, n_vars), n_vars, 0.0, d_context, project_skip=True
    ).double()
    with torch.no_grad():
        ours = vsn.selection
        for name in ("context", "fc2", "gate"):  # the layers after the first are shared
            getattr(ours, name).load_state_dict(getattr(paper, name).state_dict())
        for name in ("fc1", "skip"):
            weight, bias = _through_embedding(
                getattr(paper, name), vsn.embed_weight, vsn.embed_bias
            )
            getattr(ours, name).weight.copy_(weight)
            getattr(ours, name).bias.copy_(bias)
    x = torch.randn(3, 6, n_vars, dtype=torch.float64, requires_grad=True)
    context = torch.randn(3, d_context, dtype=torch.float64)
    flat = (x[..., None] * vsn.embed_weight + vsn.embed_bias).reshape(3, 6, n_vars * d_var)
    expected = torch.softmax(paper(flat, context), dim=-1)
    _, weights = vsn(x, context)
    torch.testing.assert_close(weights, expected)
    # and the reparametrised first layer is a real saving: V inputs instead of V·w
    assert ours.fc1.in_features == n_vars and paper.fc1.in_features == n_vars * d_var
