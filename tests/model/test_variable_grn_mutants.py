"""PerVariableGRN helpers that ``make mutate`` (model.variable_grn) found unguarded: the
export-time split, the initialisation bound, and fp32 statistics for half-precision inputs."""

from __future__ import annotations

import math

import pytest
import torch

from foxhunt.model import variable_grn as vg


@pytest.mark.parametrize(
    ("shape", "size", "dim"), [((7, 2), 3, 0), ((2, 10, 3), 4, 1), ((5,), 5, 0)]
)
def test_the_traced_split_makes_the_eager_splits_views(monkeypatch, shape, size, dim) -> None:  # noqa: ANN001
    """While traced for export the split is made with ``narrow``: the same parts (the last one
    smaller), views of the same storage, as ``Tensor.split`` gives eagerly."""
    t = torch.arange(math.prod(shape), dtype=torch.float32).reshape(shape)
    eager = vg.split_views(t, size, dim)
    monkeypatch.setattr(torch.jit, "is_tracing", lambda: True)
    traced = vg.split_views(t, size, dim)
    assert [p.shape for p in traced] == [p.shape for p in eager]
    assert all(torch.equal(a, b) for a, b in zip(traced, eager, strict=True))
    assert all(p.untyped_storage().data_ptr() == t.untyped_storage().data_ptr() for p in traced)


def test_uniform_initialisation_bound() -> None:
    """Like ``nn.Linear``: uniform in ±1/sqrt(fan_in), reaching close to the bound."""
    torch.manual_seed(0)
    p = vg._uniform((64, 64), 16)
    assert p.abs().max() <= 0.25 and p.abs().max() > 0.24


def test_half_precision_statistics_are_fp32() -> None:
    """A bf16 input far from zero: its mean taken in bf16 would be off by whole units and the
    normalised output wrong; in fp32 it matches a float64 reference to bf16's precision."""
    torch.manual_seed(0)
    x64 = 300.0 + torch.randn(2, 256, 5, dtype=torch.float64)
    x = x64.to(torch.bfloat16)
    want = x.double()
    want = (want - want.mean(1, keepdim=True)) / (
        want.var(1, unbiased=False, keepdim=True) + 1e-5
    ).sqrt()
    got = vg.feature_norm(x)
    assert got.dtype == torch.bfloat16
    assert (got.double() - want).abs().max() < 0.05
