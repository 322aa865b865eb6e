"""TFTBatch and random_batch: a seeded batch drawn from its own generator, slices and moves
that keep a missing target missing."""

from __future__ import annotations

import torch

from foxhunt.config import TFTConfig
from foxhunt.model.batch import random_batch


def test_random_batch_draws_from_its_own_seeded_generator(tiny_config: TFTConfig) -> None:
    c = tiny_config
    torch.manual_seed(1)
    a = random_batch(c, 3)
    torch.manual_seed(2)  # the global generator plays no part
    b = random_batch(c, 3, seed=0)
    g = torch.Generator().manual_seed(0)
    want = [
        torch.randn(3, c.n_static, generator=g),
        torch.randn(3, c.encoder_length, c.n_historical, generator=g),
        torch.randn(3, c.total_length, c.n_known, generator=g),
        torch.randn(3, c.horizon, generator=g),
    ]
    for batch in (a, b):
        got = [batch.static, batch.historical, batch.known, batch.target]
        assert all(torch.equal(x, y) for x, y in zip(got, want, strict=True))
    assert a.size == 3
    assert not torch.equal(random_batch(c, 3, seed=1).static, a.static)


def test_slice_and_move_keep_a_missing_target_missing(tiny_config: TFTConfig) -> None:
    full = random_batch(tiny_config, 4)
    part = full.slice(1, 3)
    assert part.size == 2 and torch.equal(part.target, full.target[1:3])
    assert torch.equal(part.known, full.known[1:3])
    served = type(full)(full.static, full.historical, full.known)  # inference: no target
    assert served.slice(0, 2).target is None and served.slice(0, 2).size == 2
    moved = served.to("meta")
    assert moved.target is None
    assert {t.device.type for t in (moved.static, moved.historical, moved.known)} == {"meta"}
    assert full.to("meta").target.device.type == "meta"
