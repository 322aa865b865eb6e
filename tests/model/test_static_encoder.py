from __future__ import annotations

import torch

from foxhunt.model.static_encoder import StaticCovariateEncoders


def test_four_distinct_contexts() -> None:
    torch.manual_seed(0)
    m = StaticCovariateEncoders(8)
    ctx = m(torch.randn(5, 8))
    assert len(ctx) == 4 and all(c.shape == (5, 8) for c in ctx)
    assert ctx._fields == ("selection", "enrichment", "cell", "hidden")
    for i in range(4):
        for j in range(i + 1, 4):
            assert not torch.allclose(ctx[i], ctx[j])
