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
