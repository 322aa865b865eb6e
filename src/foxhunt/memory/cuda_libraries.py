"""Device memory CUDA's libraries hold beside a TFT's tensors: cuBLAS workspaces, cuDNN's
dropout state.

Both go through PyTorch's caching allocator, so ``torch.cuda.max_memory_allocated`` counts them,
and both stay allocated for the life of the process. Read off the caching allocator's trace
(``torch.cuda.memory._record_memory_history``) on an NVIDIA H200 (compute capability 9.0, 132
multiprocessors; PyTorch 2.11, CUDA 13) and checked in total by ``benchmarks/cuda_step.py``
(docs/memory.md, "On CUDA"):

* a cuBLAS workspace per (thread, stream) that runs a matrix product: training has two, the
  caller's thread and autograd's device thread, 33,554,432 bytes each on the H200;
* cuDNN's dropout state, when a stacked LSTM applies dropout between its layers in training:
  6,488,064 bytes on the H200 (49,152 bytes per multiprocessor).

Where no GPU is visible (an estimate made ahead of a run elsewhere) the H200's sizes are used:
the larger cuBLAS default, and a large multiprocessor count.
"""

from __future__ import annotations

import os
import re
from typing import Literal

from foxhunt.config import TFTConfig

MIB = 2**20

CUBLAS_ENV = "CUBLAS_WORKSPACE_CONFIG"
"""PyTorch reads a cuBLAS workspace's size from this variable: ``:SIZE_KIB:COUNT`` pairs."""

HOPPER_WORKSPACE = 32 * MIB
"""PyTorch's default cuBLAS workspace from compute capability 9.0 on (measured: 33,554,432)."""

EARLIER_WORKSPACE = 4096 * 1024 * 2 + 16 * 1024 * 8
"""PyTorch's default (``:4096:2:16:8``) before compute capability 9.0 (not measured here)."""

DROPOUT_STATE_PER_SM = 49_152
"""cuDNN dropout-state bytes per multiprocessor (6,488,064 on the H200's 132)."""

DEFAULT_SM_COUNT = 132
"""Multiprocessors assumed when no GPU is visible (the H100/H200's)."""


def _visible_gpu() -> tuple[tuple[int, int], int] | None:
    """(compute capability, multiprocessors) of the current CUDA device; None without one."""
    import torch

    if not torch.cuda.is_available():
        return None
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return (props.major, props.minor), props.multi_processor_count


def cublas_workspace_bytes(
    capability: tuple[int, int] | None = None, env: str | None = None
) -> int:
    """One cuBLAS workspace as PyTorch sizes it.

    Args:
        capability: the GPU's compute capability; None: the visible GPU's, or 9.0 without one.
        env: ``CUBLAS_WORKSPACE_CONFIG``; None: read from the environment.

    Returns:
        The sum of ``SIZE_KIB * COUNT`` KiB over the variable's pairs when it names any, else
        32 MiB from compute capability 9.0 on and 8 MiB + 128 KiB before.
    """
    env = os.environ.get(CUBLAS_ENV, "") if env is None else env
    pairs = re.findall(r":(\d+):(\d+)", env)
    if pairs:
        return sum(int(size) * int(count) for size, count in pairs) * 1024
    if capability is None:
        gpu = _visible_gpu()
        capability = gpu[0] if gpu else (9, 0)
    return HOPPER_WORKSPACE if capability >= (9, 0) else EARLIER_WORKSPACE


def cudnn_dropout_state_bytes(sm_count: int | None = None) -> int:
    """cuDNN's dropout state: 49,152 bytes per multiprocessor (None: the visible GPU's count,
    or 132 without one)."""
    if sm_count is None:
        gpu = _visible_gpu()
        sm_count = gpu[1] if gpu else DEFAULT_SM_COUNT
    return DROPOUT_STATE_PER_SM * sm_count


def cuda_library_bytes(config: TFTConfig, mode: Literal["train", "infer"] = "train") -> int:
    """What the libraries hold during a CUDA run of ``config``.

    Training: two cuBLAS workspaces (the caller's thread and autograd's) and, when the LSTMs
    have dropout between layers, cuDNN's dropout state. Inference: one workspace.
    """
    if mode == "infer":
        return cublas_workspace_bytes()
    dropout = config.lstm_layers > 1 and config.dropout > 0
    return 2 * cublas_workspace_bytes() + (cudnn_dropout_state_bytes() if dropout else 0)
