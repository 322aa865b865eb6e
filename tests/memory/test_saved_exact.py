"""The fp32 saved-activation estimate is exact on the CPU, block by block, in every switch
combination: VSN mode, the VSNs' and LSTMs' own recompute, block checkpointing, dropout.

``make mutate`` (memory.activation_formulas) found the checkpointed inputs and the
non-streaming VSN terms pinned by nothing, and this comparison found one wrong: with
checkpointing on and recompute off, the post-LSTM gate keeps the selected embeddings as well
(the LSTM keeps a copy of its input instead of them); the estimate counted one (B, T, d) too
few."""

from __future__ import annotations

import dataclasses

import pytest

from foxhunt.memory.estimate import estimate_saved_activations
from foxhunt.memory.saved_tensors import saved_activations_by_block
from foxhunt.model.recompute import set_internal_recompute
from memory_helpers import TINY, loss_closure


@pytest.mark.parametrize("mode", ["fused", "faithful"])
@pytest.mark.parametrize("recompute", [True, False])
@pytest.mark.parametrize("checkpointing", [False, True])
@pytest.mark.parametrize(("batch", "dropout", "chunk"), [(6, 0.1, 16), (5, 0.0, 7)])
def test_every_block_exactly(
    mode: str, recompute: bool, checkpointing: bool, batch: int, dropout: float, chunk: int
) -> None:
    cfg = dataclasses.replace(TINY, vsn_mode=mode, dropout=dropout, vsn_chunk=chunk)
    model, fn, inputs = loss_closure(cfg, batch, checkpointing=checkpointing)
    set_internal_recompute(model, recompute)
    measured = saved_activations_by_block(model, fn, exclude=inputs)
    estimated = estimate_saved_activations(
        cfg, batch, recompute=recompute, checkpointing=checkpointing
    )
    assert estimated == measured
