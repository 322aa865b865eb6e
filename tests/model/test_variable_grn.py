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
