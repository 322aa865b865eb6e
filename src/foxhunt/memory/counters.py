"""Process and CUDA memory counters: RSS, peak RSS, and the CUDA caching allocator's numbers.

These are *process* numbers: they include allocator overhead, code pages and caches, and vary
from run to run. A :class:`~foxhunt.memory.log.MemoryLog` reads them through *sources*
(:func:`default_sources`) at named points of a run.
"""

from __future__ import annotations

import re
import resource
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import psutil
import torch

Source = Callable[[], Mapping[str, int | float]]
"""A snapshot source: returns named numbers, or raises if it cannot read them."""


def rss_bytes() -> int:
    """Resident set size of this process now, in bytes (psutil)."""
    return int(psutil.Process().memory_info().rss)


def _proc_status_kib(field: str) -> int | None:
    """A ``VmXXX`` field of ``/proc/self/status`` in KiB (Linux), else None."""
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    m = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
    return int(m.group(1)) if m else None


def reset_peak_rss() -> bool:
    """Reset this process's peak RSS to its current RSS (Linux ``/proc/self/clear_refs``).

    Call it right after taking a baseline, so the peak measures only what follows. Without it
    ``ru_maxrss`` on Linux also keeps the high-water mark of the process *before* ``exec``: a
    child started by a parent holding 500 MB would report a peak of at least 500 MB.

    Returns:
        True if the kernel's high-water mark (``VmHWM``) was reset; False elsewhere.
    """
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return _proc_status_kib("VmHWM") is not None


def peak_rss_bytes() -> int:
    """Peak resident set size of this process, in bytes.

    Linux's ``VmHWM`` (resettable, see :func:`reset_peak_rss`) where available, else
    ``getrusage`` ``ru_maxrss`` (KiB on Linux, bytes on macOS). The kernel updates its
    high-water mark lazily, so it can trail the current RSS by a few pages; the result is never
    below :func:`rss_bytes`.
    """
    hwm = _proc_status_kib("VmHWM")
    if hwm is not None:
        peak = hwm * 1024
    else:
        maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        peak = int(maxrss if sys.platform == "darwin" else maxrss * 1024)
    return max(peak, rss_bytes())


def cpu_source() -> dict[str, int]:
    """Snapshot source for the process: ``rss_bytes`` and ``peak_rss_bytes``."""
    return {"rss_bytes": rss_bytes(), "peak_rss_bytes": peak_rss_bytes()}


def cuda_source(device: torch.device) -> Source:
    """Snapshot source for one CUDA device's allocator counters.

    Args:
        device: a CUDA device.

    Returns:
        A callable returning ``cuda_allocated_bytes``, ``cuda_max_allocated_bytes``,
        ``cuda_reserved_bytes``, ``cuda_free_bytes`` and ``cuda_total_bytes``.
    """

    def read() -> dict[str, int]:
        free, total = torch.cuda.mem_get_info(device)
        return {
            "cuda_allocated_bytes": int(torch.cuda.memory_allocated(device)),
            "cuda_max_allocated_bytes": int(torch.cuda.max_memory_allocated(device)),
            "cuda_reserved_bytes": int(torch.cuda.memory_reserved(device)),
            "cuda_free_bytes": int(free),
            "cuda_total_bytes": int(total),
        }

    return read


def default_sources(device: torch.device) -> dict[str, Source]:
    """The sources a ``MemoryLog`` reads on ``device``: ``cpu`` always, ``cuda`` on CUDA."""
    sources: dict[str, Source] = {"cpu": cpu_source}
    if device.type == "cuda":
        sources["cuda"] = cuda_source(device)
    return sources
