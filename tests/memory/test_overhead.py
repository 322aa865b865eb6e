"""The process overhead added to a CPU estimate: training's by default, inference's for a
no-grad forward, none on CUDA (whose peak counts tensors only)."""

from __future__ import annotations

from foxhunt.memory.overhead import (
    CPU_INFERENCE_OVERHEAD,
    CPU_TRAINING_OVERHEAD,
    process_overhead_bytes,
)


def test_training_is_the_default_and_inference_adds_less() -> None:
    assert process_overhead_bytes("cpu") == CPU_TRAINING_OVERHEAD == 105 * 2**20
    assert process_overhead_bytes("cpu", "train") == CPU_TRAINING_OVERHEAD
    assert process_overhead_bytes("cpu", "infer") == CPU_INFERENCE_OVERHEAD == 12 * 2**20
    assert process_overhead_bytes("cuda") == process_overhead_bytes("cuda", "infer") == 0
