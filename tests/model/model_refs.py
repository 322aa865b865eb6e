"""Helpers shared by the model tests: random batches, saved-tensor accounting, loop references.

Imported as ``from model_refs import ...`` (pytest puts this folder on sys.path).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from foxhunt.config import TFTConfig
from foxhunt.model.batch import TFTBatch
from foxhunt.model.variable_grn import PerVariableGRN


def make_batch(config: TFTConfig, batch_size: int, seed: int = 0) -> TFTBatch:
    """A random batch shaped for ``config``."""
    g = torch.Generator().manual_seed(seed)
    c = config
    return TFTBatch(
        static=torch.randn(batch_size, c.n_static, generator=g),
        historical=torch.randn(batch_size, c.encoder_length, c.n_historical, generator=g),
        known=torch.randn(batch_size, c.total_length, c.n_known, generator=g),
        target=torch.randn(batch_size, c.horizon, generator=g),
    )


def saved_activation_bytes(
    fn: Callable[[], Any], model: nn.Module, exclude: Iterable[torch.Tensor] = ()
) -> int:
    """Bytes autograd saves for backward while ``fn`` runs, deduplicated by storage.

    Storages of ``model``'s parameters (and views of them) and of ``exclude`` (e.g. the input
    batch) are not counted: they are state and data, not activations.
    """
    skip = {t.untyped_storage().data_ptr() for t in [*model.parameters(), *exclude]}
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        s = t.untyped_storage()
        if s.data_ptr() not in skip:
            seen[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    del out
    return sum(seen.values())


def batch_tensors(batch: TFTBatch) -> list[torch.Tensor]:
    """The batch's tensors (to exclude from activation counts)."""
    return [t for t in (batch.static, batch.historical, batch.known, batch.target) if t is not None]


def reference_variable_grn(m: PerVariableGRN, j: int, a: torch.Tensor) -> torch.Tensor:
    """Variable ``j``'s GRN, written out plainly for one (N, d_in) input."""
    h = F.elu(a @ m.fc1_weight[j] + m.fc1_bias[j])
    h = h @ m.fc2_weight[j] + m.fc2_bias[j]
    g = F.glu(h @ m.gate_weight[j] + m.gate_bias[j], dim=-1)
    skip = a if m.skip_weight is None else a @ m.skip_weight[j] + m.skip_bias[j]
    weight = None if m.norm_weight is None else m.norm_weight[j]
    bias = None if m.norm_bias is None else m.norm_bias[j]
    return F.layer_norm(skip + g, (m.d_out,), weight, bias)
