"""Process memory beyond tensors: what a CPU run adds to a tensor-level estimate.

Code pages of the kernels, oneDNN's primitive cache and JIT kernels, thread arenas and stacks,
Python objects: none of it is a tensor, all of it is in the peak RSS a user sees. On CUDA memory
is quoted as ``max_memory_allocated``, which counts tensors only, so the overhead is 0 there.
"""

from __future__ import annotations

from typing import Literal

from foxhunt.memory.activation_formulas import DeviceType

CPU_TRAINING_OVERHEAD = 105 * 2**20
"""CPU process memory a training run adds beyond its tensors: code pages of the backward kernels
(about 29 MB of RssFile), oneDNN's primitive cache and JIT kernels, thread arenas and stacks,
Python objects. Fitted to peak-RSS deltas (VmHWM reset at the baseline) at TFT-225 batch 8, 32
and 64 (docs/memory.md)."""

CPU_INFERENCE_OVERHEAD = 12 * 2**20
"""The same for a no-grad forward (fewer kernels, no optimizer)."""


def process_overhead_bytes(device: DeviceType, mode: Literal["train", "infer"] = "train") -> int:
    """Bytes a process adds beyond its tensors when quoting CPU peak RSS; 0 on CUDA.

    On CUDA memory is quoted as ``max_memory_allocated``, which counts tensors only.

    Args:
        device: ``cpu`` or ``cuda``.
        mode: ``train`` or ``infer``.

    Returns:
        Bytes to add to a tensor-level estimate to compare with a CPU peak-RSS delta.
    """
    if device == "cuda":
        return 0
    return CPU_TRAINING_OVERHEAD if mode == "train" else CPU_INFERENCE_OVERHEAD
