"""Process counters: RSS and peak RSS."""

from __future__ import annotations

import torch

from foxhunt.memory.counters import peak_rss_bytes, rss_bytes

F32 = 4


def test_process_counters_are_plausible() -> None:
    rss, peak = rss_bytes(), peak_rss_bytes()
    assert 10 * 2**20 < rss <= peak < 2**40
    keep = torch.ones(64 * 2**20 // F32)  # touch 64 MiB
    keep.add_(1)
    assert rss_bytes() >= rss + 60 * 2**20
    assert peak_rss_bytes() >= rss + 60 * 2**20
    del keep
