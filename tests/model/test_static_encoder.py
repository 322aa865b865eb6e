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


def test_every_context_grn_drops_at_the_encoders_rate() -> None:
    enc = StaticCovariateEncoders(8, dropout=0.25)
    for grn in (enc.selection, enc.enrichment, enc.cell, enc.hidden):
        assert grn.gate.glu.dropout.rate == 0.25  # type: ignore[union-attr]
