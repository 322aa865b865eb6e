from __future__ import annotations

import torch

from foxhunt.model.glu import GateAddNorm, GatedLinearUnit


def test_glu_matches_formula() -> None:
    torch.manual_seed(0)
    glu = GatedLinearUnit(5, 3)
    x = torch.randn(4, 5)
    w, b = glu.proj.weight, glu.proj.bias
    expected = (x @ w[:3].T + b[:3]) * torch.sigmoid(x @ w[3:].T + b[3:])
    torch.testing.assert_close(glu(x), expected)


def test_gate_add_norm_is_layernorm_of_skip_plus_gate() -> None:
    torch.manual_seed(0)
    gan = GateAddNorm(5, 3)
    x, skip = torch.randn(2, 7, 5), torch.randn(2, 7, 3)
    expected = torch.nn.functional.layer_norm(skip + gan.glu(x), (3,))
    torch.testing.assert_close(gan(x, skip), expected)
    assert gan(x, skip).shape == (2, 7, 3)


def test_closed_gate_passes_skip_through() -> None:
    gan = GateAddNorm(4, 4)
    with torch.no_grad():
        gan.glu.proj.weight.zero_()
        gan.glu.proj.bias.zero_()
        gan.glu.proj.bias[4:] = -50.0  # sigmoid -> 0
    skip = torch.randn(3, 4)
    torch.testing.assert_close(
        gan(torch.randn(3, 4), skip), torch.nn.functional.layer_norm(skip, (4,))
    )
