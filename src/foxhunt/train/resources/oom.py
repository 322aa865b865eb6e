"""Out-of-memory back-off: split the batch finer instead of dying.

An optimizer step always sees ``batch_size`` samples. They are fed through the model in
micro-batches of ``micro`` samples and the gradients accumulate. When a micro-batch runs out of
memory, :meth:`MicroBatching.back_off` halves ``micro`` (so accumulation doubles), the partial
gradients are dropped, and the same samples are tried again: the effective batch and the data
seen are unchanged, only the arithmetic is chunked differently.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import torch

from foxhunt.memory.allocator import release_free_heap

log = logging.getLogger(__name__)


class OutOfMemoryAtMicroBatchOne(RuntimeError):
    """Out of memory even with one sample per micro-batch: nothing left to halve."""


_OOM_MESSAGES = (
    "out of memory",  # CUDA and other backends
    "can't allocate memory",  # torch's CPU allocator when malloc fails (Linux, macOS)
    "not enough memory",  # the same on Windows
)


def is_oom(exc: BaseException) -> bool:
    """Whether ``exc`` is an out-of-memory error: CUDA's or a backend's, or a failed CPU
    allocation (a plain RuntimeError from torch's CPU allocator). On Linux with overcommit a
    CPU process is usually killed before malloc fails; when it does fail (a ulimit, a cgroup
    without swap accounting, one huge tensor) the loop backs off like on CUDA."""
    if isinstance(exc, torch.OutOfMemoryError):
        return True
    return isinstance(exc, RuntimeError) and any(m in str(exc).lower() for m in _OOM_MESSAGES)


@dataclass
class MicroBatching:
    """How one optimizer step's batch is cut into micro-batches.

    Attributes:
        batch_size: Samples per optimizer step (never changes).
        micro: Samples per forward/backward (halved on OOM).
        backoffs: How many times :meth:`back_off` has halved ``micro``.
    """

    batch_size: int
    micro: int
    backoffs: int = 0

    @property
    def accumulation(self) -> int:
        """Micro-batches per full optimizer step, ceil(batch_size / micro)."""
        return math.ceil(self.batch_size / self.micro)

    def slices(self, n: int) -> list[tuple[int, int]]:
        """``(start, stop)`` of each micro-batch for a batch of ``n`` samples (the last may be
        short)."""
        return [(a, min(a + self.micro, n)) for a in range(0, n, self.micro)]

    def back_off(self, step: int, device: torch.device) -> str:
        """Halve the micro-batch after an OOM at optimizer step ``step``.

        Args:
            step: The optimizer step that failed (for the message).
            device: Where it failed; CUDA's cache is emptied so the retry starts clean.

        Returns:
            A one-line message saying what happened, also logged as a warning.

        Raises:
            OutOfMemoryAtMicroBatchOne: If ``micro`` is already 1.
        """
        if self.micro <= 1:
            raise OutOfMemoryAtMicroBatchOne(
                f"out of memory at step {step} even with micro-batch 1 on {device}; "
                "try --recompute, --checkpointing, --precision bf16, a smaller model or --memory-budget"
            )
        old = self.micro
        self.micro = max(1, old // 2)
        self.backoffs += 1
        empty_cache(device)
        msg = (
            f"out of memory at step {step} with micro-batch {old} on {device}: retrying the same "
            f"{self.batch_size} samples as {self.accumulation} micro-batches of {self.micro} "
            f"(effective batch {self.batch_size} unchanged)"
        )
        log.warning(msg)
        return msg


def empty_cache(device: torch.device) -> None:
    """Return cached, unused blocks: CUDA's caching allocator, or on CPU the free pages of
    glibc's heaps (:func:`foxhunt.memory.allocator.release_free_heap`)."""
    if device.type == "cuda":
        torch.cuda.empty_cache()
    elif device.type == "cpu":
        release_free_heap()
