"""Budget planner details that `make mutate` found unguarded."""

from __future__ import annotations

import dataclasses

import pytest

from foxhunt.config import RunConfig, TrainConfig
from foxhunt.memory.budget import _fit_validation
from foxhunt.memory.estimate import estimate_memory, process_overhead_bytes
from memory_helpers import TINY

CFG = RunConfig(
    model=dataclasses.replace(TINY, encoder_length=48, horizon=8),
    train=TrainConfig(batch_size=64, validation_batch_size=32),
    preset="test",
)


def _validation_peak(cfg: RunConfig, size: int, precision: str, device: str) -> int:
    """The documented validation peak: inference at ``size`` with weights and AdamW state."""
    est = estimate_memory(cfg.model, size, precision=precision, device=device)
    overhead = process_overhead_bytes(device, "train")
    return est.inference_peak_bytes + est.optimizer_bytes + est.parameter_bytes + overhead


@pytest.mark.parametrize(
    ("precision", "device"), [("bf16", "cpu"), ("fp32", "cuda"), ("bf16", "cuda")]
)
def test_validation_batch_is_sized_at_the_runs_precision_and_device(
    precision: str, device: str
) -> None:
    cfg = CFG.replace(train={"device": device, "precision": precision})
    budget = _validation_peak(cfg, 16, precision, device)
    assert _validation_peak(cfg, 32, precision, device) > budget  # 32 must be halved ...
    reasons: list[str] = []
    assert _fit_validation(cfg, precision, budget, reasons) == 16  # ... and 16 fits exactly
    assert reasons[0].startswith("validation batch 32: estimated ")
    assert reasons[-1].startswith("validation batch 16: estimated ")
