"""Measure memory: the names callers imported from here before the split, re-exported.

The measuring code lives in one module per concept:

* :mod:`foxhunt.memory.counters`: process RSS / peak RSS and CUDA allocator counters;
* :mod:`foxhunt.memory.saved_tensors`: bytes the autograd graph retains for backward, per block;
* :mod:`foxhunt.memory.state`: parameter, gradient, optimizer and live-tensor bytes;
* :mod:`foxhunt.memory.log`: :class:`MemoryLog`, the run's ``memory.jsonl``;
* :mod:`foxhunt.memory.leaks`: the leak check over its epoch-end snapshots.

New code imports from those modules; this one keeps older imports working.
"""

from __future__ import annotations

from foxhunt.memory.counters import (
    Source,
    cpu_source,
    cuda_source,
    default_sources,
    peak_rss_bytes,
    reset_peak_rss,
    rss_bytes,
)
from foxhunt.memory.log import SNAPSHOT_POINTS, MemoryLog
from foxhunt.memory.saved_tensors import OTHER, saved_activation_bytes, saved_activations_by_block
from foxhunt.memory.state import live_tensor_stats, state_bytes

__all__ = [
    "OTHER",
    "SNAPSHOT_POINTS",
    "MemoryLog",
    "Source",
    "cpu_source",
    "cuda_source",
    "default_sources",
    "live_tensor_stats",
    "peak_rss_bytes",
    "reset_peak_rss",
    "rss_bytes",
    "saved_activation_bytes",
    "saved_activations_by_block",
    "state_bytes",
]
