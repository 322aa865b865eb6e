"""Measurement plumbing shared by the fresh-process step scripts (``pf_step.py``, ``foxhunt_step.py``).

Both step scripts run one setting in one fresh process and print ONE JSON line. This module holds
what they must do identically, so the two libraries are measured the same way:

- thread pinning (environment before ``import torch``, ``torch.set_num_threads`` after);
- process memory: current RSS (psutil), the peak RSS high-water mark (``VmHWM`` from
  ``/proc/self/status``, reset through ``/proc/self/clear_refs`` once the baseline is taken, so
  import-time spikes do not hide the step's peak; ``resource.getrusage`` ``ru_maxrss`` where
  ``/proc`` is missing);
- a step timer that drops warm-up calls and stops early on a time budget;
- the synthetic inputs (same seed, same shapes) that both libraries consume.

It imports only the standard library at module level (torch is imported lazily), and it must not
import foxhunt: ``pf_step.py`` runs in ``.venv-bench``, where only pytorch-forecasting is promised.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
QUANTILES = (0.02, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.98)


def set_thread_env(n: int) -> None:
    """Fix the BLAS/OpenMP thread pools to ``n`` threads. Call before ``import torch``.

    Args:
        n: Threads for OpenMP, MKL and OpenBLAS.
    """
    for key in THREAD_ENV:
        os.environ[key] = str(n)


def pin_torch_threads(n: int) -> None:
    """``torch.set_num_threads(n)`` and one inter-op thread (no concurrent ops on 2 cores).

    Args:
        n: Intra-op threads.
    """
    import torch

    torch.set_num_threads(n)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set (or parallel work already started): keep going
        pass


# --- memory --------------------------------------------------------------------------------


def _proc_status_kib(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def rss_bytes() -> int:
    """Resident set size of this process now, in bytes (psutil; ``/proc`` as fallback)."""
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except ImportError:
        kib = _proc_status_kib("VmRSS")
        if kib is None:
            raise RuntimeError("cannot read RSS: neither psutil nor /proc/self/status") from None
        return kib * 1024


def peak_rss_bytes() -> int:
    """High-water mark of RSS in bytes since the last :func:`reset_peak_rss` (or process start)."""
    kib = _proc_status_kib("VmHWM")
    if kib is not None:
        return kib * 1024
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(maxrss) * (1 if sys.platform == "darwin" else 1024)


def reset_peak_rss() -> bool:
    """Reset the kernel's RSS high-water mark to the current RSS (Linux ``clear_refs`` 5).

    Returns:
        True if the reset worked; False where it is unsupported (the peak then counts from process
        start, which can only overstate, never understate, the step's peak).
    """
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


@dataclass
class MemoryWindow:
    """Peak RSS over a window of work, relative to a baseline taken at :meth:`start`."""

    baseline: int = 0
    reset_ok: bool = False

    def start(self) -> None:
        """Take the baseline RSS and reset the high-water mark."""
        self.baseline = rss_bytes()
        self.reset_ok = reset_peak_rss()

    def peak_over_baseline(self) -> int:
        """Peak RSS since :meth:`start` minus the baseline, in bytes."""
        return max(rss_bytes(), peak_rss_bytes()) - self.baseline


# --- timing --------------------------------------------------------------------------------


def time_calls(
    fn: Callable[[], object], warmup: int, steps: int, max_seconds: float | None = None
) -> list[float]:
    """Seconds per call of ``fn`` after ``warmup`` untimed calls.

    Args:
        fn: The work to time (one training step, one inference pass).
        warmup: Calls run first and not recorded.
        steps: Timed calls wanted.
        max_seconds: Stop once the timed calls have taken this long (at least 3 are kept, when
            ``steps`` >= 3), so slow settings fit a budget. None means no budget.

    Returns:
        One wall-clock duration per timed call, in seconds.
    """
    for _ in range(warmup):
        fn()
    out: list[float] = []
    began = time.perf_counter()
    for _ in range(steps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
        spent = time.perf_counter() - began
        if max_seconds is not None and spent > max_seconds and len(out) >= min(3, steps):
            break
    return out


def summarize_times(times: list[float], batch_size: int) -> dict[str, float]:
    """Median / min / max seconds and samples per second from per-call durations."""
    med = statistics.median(times)
    return {
        "median_s": med,
        "min_s": min(times),
        "max_s": max(times),
        "samples_per_s": batch_size / med,
    }


# --- synthetic inputs ----------------------------------------------------------------------


@dataclass
class SyntheticBatch:
    """One batch of standard-normal inputs, as plain tensors (shared by both libraries).

    Attributes:
        static: [B, S]
        historical: [B, T_enc, V_h]
        known: [B, T_enc + T_dec, V_k]
        target: [B, T_dec]
    """

    static: torch.Tensor
    historical: torch.Tensor
    known: torch.Tensor
    target: torch.Tensor


def synthetic_batch(
    batch_size: int,
    n_static: int,
    n_historical: int,
    n_known: int,
    encoder_length: int,
    horizon: int,
    seed: int = 0,
) -> SyntheticBatch:
    """Seeded standard-normal inputs of the given shapes (identical for both libraries)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    b, t_enc, t_dec = batch_size, encoder_length, horizon
    return SyntheticBatch(
        static=torch.randn(b, n_static, generator=g),  # (B, S)
        historical=torch.randn(b, t_enc, n_historical, generator=g),  # (B, T_enc, V_h)
        known=torch.randn(b, t_enc + t_dec, n_known, generator=g),  # (B, T_enc+T_dec, V_k)
        target=torch.randn(b, t_dec, generator=g),  # (B, T_dec)
    )


# --- output --------------------------------------------------------------------------------


ISA_CAPS = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS")
"""The variables that cap the instruction sets PyTorch's kernels use (``make test-avx2``)."""


def _cpuinfo() -> str:
    """``/proc/cpuinfo``'s text, or "" where there is none (not Linux)."""
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""


def cpu_isa(cpuinfo: str | None = None) -> dict[str, Any]:
    """Whether the CPU has native bf16 (``avx512_bf16``) and the instruction-set caps in force:
    a result measured under ``make test-avx2``'s caps says so. No torch import.

    Args:
        cpuinfo: ``/proc/cpuinfo``'s text when the caller has read it already.
    """
    flags = _cpuinfo() if cpuinfo is None else cpuinfo
    return {
        "avx512_bf16": "avx512_bf16" in flags,
        "isa_caps": {k: os.environ[k] for k in ISA_CAPS if k in os.environ},
    }


def environment() -> dict[str, Any]:
    """Versions and machine facts recorded with every result."""
    import torch

    info = _cpuinfo()
    cpu = platform.processor() or ""
    for line in info.splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "cpu": cpu,
        "logical_cpus": os.cpu_count(),
        **cpu_isa(info),
    }


def measurement(
    times: list[float], batch_size: int, warmup: int, mem: MemoryWindow, import_s: float
) -> dict[str, Any]:
    """The fields every step worker reports: timings, peak memory over the baseline, imports."""
    return {
        "warmup": warmup,
        "steps": len(times),
        "times_s": times,
        **summarize_times(times, batch_size),
        "peak_rss_over_baseline_bytes": mem.peak_over_baseline(),
        "baseline_rss_bytes": mem.baseline,
        "peak_reset": mem.reset_ok,
        "import_s": import_s,
    }


def emit(record: dict[str, Any]) -> None:
    """Print the result as ONE JSON line on stdout (the orchestrator reads the last such line)."""
    sys.stdout.write(json.dumps(record, sort_keys=True) + "\n")
    sys.stdout.flush()


GIB = 1024**3
