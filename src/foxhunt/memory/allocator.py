"""Make the C allocator give freed tensor memory back to the OS (glibc only).

glibc ``malloc`` serves blocks above its *mmap threshold* with their own mappings and returns
them on ``free``; smaller ones come from heap arenas that only shrink from the top. The threshold
is dynamic: after a freed mapped block of size s it rises to s (up to 32 MiB), so after the first
large tensor is freed, tensors of tens of MB land in the heap and stay resident after they die.
For a training step that frees and reallocates hundreds of MB of activations per step this
inflates RSS well beyond the live tensors (measured at TFT-225 batch 32, 2 steps: 416 MB peak
RSS delta with glibc's defaults versus 297-304 MB with the thresholds below; docs/memory.md).

:func:`tune_cpu_allocator` fixes the mmap and trim thresholds (which also turns the dynamic
adjustment off). It changes process-wide allocator settings, so only entry points call it
(``foxhunt train``, ``foxhunt memory --measure``), never library code.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import logging
import os
import sys
from collections.abc import Iterator

from foxhunt.config import RunConfig

logger = logging.getLogger(__name__)

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

THP_ENV = "THP_MEM_ALLOC_ENABLE"
"""PyTorch's switch (read once, at its first CPU allocation) for transparent huge pages."""


def tune_cpu_allocator(mmap_threshold: int = 2**20, trim_threshold: int | None = 2**20) -> bool:
    """Serve allocations >= ``mmap_threshold`` from their own mappings and trim the heap eagerly.

    Args:
        mmap_threshold: bytes from which glibc maps blocks individually (returned on free).
        trim_threshold: free bytes at the top of the heap above which glibc returns them;
            None leaves glibc's value.

    Returns:
        True if the settings were applied; False where glibc is not the allocator (macOS,
        musl): a warning is logged and nothing changes.
    """
    global _tuned_trim
    if not sys.platform.startswith("linux"):
        logger.warning("tune_cpu_allocator: not on Linux/glibc; allocator left as is")
        return False
    try:
        mallopt = _libc().mallopt
    except (OSError, AttributeError) as e:
        logger.warning(
            "tune_cpu_allocator: glibc mallopt unavailable (%s); allocator left as is", e
        )
        return False
    ok = mallopt(_M_MMAP_THRESHOLD, int(mmap_threshold)) == 1
    if trim_threshold is not None:
        ok = mallopt(_M_TRIM_THRESHOLD, int(trim_threshold)) == 1 and ok
    if not ok:
        logger.warning("tune_cpu_allocator: mallopt refused the settings; allocator left as is")
    else:
        _tuned_trim = GLIBC_TRIM_DEFAULT if trim_threshold is None else int(trim_threshold)
    return ok


@functools.cache
def _libc() -> ctypes.CDLL:
    """The C library, looked up once (``find_library`` runs ``ldconfig``: not per pass)."""
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")


GLIBC_TRIM_DEFAULT = 128 * 1024
"""glibc's trim threshold, static once ``mallopt`` has turned the dynamic adjustment off."""

INFERENCE_TRIM_THRESHOLD = 256 * 2**20
"""The trim threshold while a forward without autograd runs (:func:`inference_heap`)."""

_tuned_trim: int | None = None
"""The trim threshold :func:`tune_cpu_allocator` left in force; None while glibc is untuned."""


@contextlib.contextmanager
def inference_heap() -> Iterator[None]:
    """While a pass without autograd runs (validation, calibration), keep freed heap memory.

    Once :func:`tune_cpu_allocator` has fixed the thresholds, glibc returns free memory at the
    top of its heap as soon as it passes the trim threshold (128 KiB unless set), so a forward
    that frees and reallocates tens of MB per batch faults its pages in again at every
    tensor. A demo validation batch (256 windows, ``balanced`` allocator) took 270-360 ms that
    way against 160-180 ms with the heap kept (session 17, docs/benchmarks.md). Inside this
    context the trim threshold is :data:`INFERENCE_TRIM_THRESHOLD`; on exit it is restored and
    the free heap returned (:func:`release_free_heap`), so RSS between passes is as before.
    A no-op where the allocator was not tuned (glibc's dynamic thresholds already keep it).
    """
    restore = _tuned_trim
    if restore is None:
        yield
        return
    libc = _libc()
    libc.mallopt(_M_TRIM_THRESHOLD, INFERENCE_TRIM_THRESHOLD)
    try:
        yield
    finally:
        libc.mallopt(_M_TRIM_THRESHOLD, restore)
        libc.malloc_trim(0)


BALANCED_MIN_BLOCK = 4 * 2**20
"""Below this per-variable block size the ``balanced`` allocator is glibc's own
(:data:`BALANCED_MMAP_RANGE`)."""

GLIBC_MMAP_MAX = 32 * 2**20
"""glibc's dynamic mmap threshold stops rising here (64-bit): blocks at least this large are
always mapped on their own and returned when freed, so a step whose largest activations are
this large leaves no more slack with glibc's defaults than with ``lean`` (measured: TFT-225
batch 128, 41 MiB per-variable tensors, 1,509 MiB peak RSS against an estimate of 1,577)."""

BALANCED_MMAP_RANGE = (BALANCED_MIN_BLOCK, GLIBC_MMAP_MAX)
"""Where ``balanced`` sets an mmap threshold: per-variable activations below 4 MiB are left to
glibc's own dynamic threshold (which then still maps blocks of a few MiB; fixed at 4 MiB it
would keep them in the heap: TFT-225 at micro-batch 4 peaked 595 MB instead of 560), and from
32 MiB glibc maps them anyway."""


def balanced_mmap_threshold(cfg: RunConfig) -> int | None:
    """The ``balanced`` allocator's mmap threshold: the bytes of the run's widest per-variable
    VSN activation ((V, rows, d_var) at the micro-batch), at most 32 MiB; None (glibc left as it
    is) where that is below 4 MiB (:data:`BALANCED_MMAP_RANGE`).

    Those blocks (and wider ones) are most of a step's activation bytes and, carved from glibc's
    heap, what leaves it fragmented and resident; mapped, they go back to the OS when freed,
    while the many smaller tensors keep reusing the heap without page faults. Measured at
    TFT-225 batch 32 bf16 (10.75 MB blocks, ``benchmarks/train_cli.py``, 2 threads, session 9):
    91-101 samples/s at 419-426 MB over the import baseline; glibc's 94-113 at 501-525 and
    lean's 77-78 at 414-415, both measured before the bf16 LSTM (docs/memory.md).
    """
    import torch  # not at CLI start

    from foxhunt.memory.activation_formulas import largest_variable_tensor
    from foxhunt.runtime import resolve_precision

    t = cfg.train
    precision = resolve_precision(t.precision, torch.device(t.device))
    widest = largest_variable_tensor(cfg, t.micro_batch, precision, t.recompute)
    low, high = BALANCED_MMAP_RANGE
    return None if widest < low else min(widest, high)


def apply_cpu_allocator(cfg: RunConfig) -> bool:
    """Apply ``cfg.train.cpu_allocator`` to this process (entry points call this, never a
    library), with ``auto`` precision already resolved.

    On a CPU run ``lean`` tunes glibc to map every block >= 1 MiB (:func:`tune_cpu_allocator`),
    ``balanced`` only blocks from :func:`balanced_mmap_threshold` (glibc's trim threshold left
    as it is; nothing where that is None); ``glibc`` or a CUDA run leaves the allocator as it is.

    Returns:
        True if the allocator was tuned.
    """
    t = cfg.train
    if t.device.startswith("cuda") or t.cpu_allocator == "glibc":
        return False
    if t.cpu_allocator == "lean":
        return tune_cpu_allocator()  # freed activations go back to the OS: RSS tracks tensors
    threshold = balanced_mmap_threshold(cfg)
    if threshold is None:  # small per-variable blocks: glibc's dynamic threshold does better
        return False
    return tune_cpu_allocator(threshold, trim_threshold=None)


def release_free_heap() -> bool:
    """Give the free pages of glibc's heaps back to the OS (``malloc_trim(0)``).

    Not a setting: nothing changes for later allocations. With glibc's default thresholds,
    memory freed by a training epoch and a validation pass of another batch size stays resident
    in the heap arenas and RSS creeps up epoch after epoch without any live object behind it;
    trimming between phases keeps the epoch-end RSS at the live level (the leak check compares
    those). No-op (False) where glibc is not the allocator.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        return bool(_libc().malloc_trim(0))
    except (OSError, AttributeError):
        return False


def enable_huge_pages() -> bool:
    """Ask PyTorch's CPU allocator for transparent huge pages (``THP_MEM_ALLOC_ENABLE=1``).

    Blocks of 2 MiB and more are then aligned to 2 MiB and ``madvise``d as huge pages, so a new
    activation costs one page fault per 2 MiB instead of 512: measured at TFT-225 batch 32
    (``foxhunt train``, 2 threads), 57-59 -> 72-86 samples/s with the ``lean`` allocator, which
    unmaps every freed block, and 88-96 -> 104 with glibc's (docs/memory.md). PyTorch reads the
    variable once, at its first CPU allocation: entry points call this before any tensor exists
    (the CLI, first thing), never library code. A value already in the environment is kept
    (``THP_MEM_ALLOC_ENABLE=0`` turns it off). Where the kernel's THP mode is ``never`` the
    advice is ignored and nothing changes.

    Returns:
        True if the variable is now on; False off Linux (it is a Linux feature) or when the
        environment turned it off.
    """
    if not sys.platform.startswith("linux"):
        return False
    os.environ.setdefault(THP_ENV, "1")
    return os.environ[THP_ENV].strip() == "1"
