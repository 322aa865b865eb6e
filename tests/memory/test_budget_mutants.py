"""Budget planner details that `make mutate` found unguarded."""

from __future__ import annotations

import dataclasses
import re

import pytest

from foxhunt.config import RunConfig, TrainConfig
from foxhunt.errors import InputError
from foxhunt.memory.budget import _fit_validation
from foxhunt.memory.estimate import estimate_memory, process_overhead_bytes
from foxhunt.memory.units import format_bytes
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


def test_one_byte_short_halves_again_and_the_size_stays_an_int() -> None:
    cfg = CFG.replace(train={"precision": "fp32"})
    budget = _validation_peak(cfg, 16, "fp32", "cpu") - 1  # 16 misses by one byte
    assert _validation_peak(cfg, 8, "fp32", "cpu") <= budget
    reasons: list[str] = []
    size = _fit_validation(cfg, "fp32", budget, reasons)
    assert size == 8 and type(size) is int
    assert [r.split(":")[0] for r in reasons] == [
        "validation batch 32",
        "validation batch 16",
        "validation batch 8",
    ]
    assert reasons[-1].endswith("(with the optimizer state) fits")


def test_no_reason_is_added_when_the_configured_validation_batch_fits() -> None:
    reasons: list[str] = []
    assert _fit_validation(CFG, "fp32", 10**12, reasons) == 32 and reasons == []


def test_validation_that_cannot_fit_at_batch_one_is_refused_with_both_numbers() -> None:
    budget = _validation_peak(CFG, 1, "fp32", "cpu") - 1
    need = format_bytes(_validation_peak(CFG, 1, "fp32", "cpu"))
    reasons: list[str] = []
    expected = (
        f"memory budget {format_bytes(budget)} is too small: validation at batch 1 needs "
        f"an estimated {need}"
    )
    with pytest.raises(InputError, match=f"^{re.escape(expected)}$"):
        _fit_validation(CFG, "fp32", budget, reasons)
    assert [r.split(":")[0] for r in reasons][-2:] == ["validation batch 2", "validation batch 1"]


def test_only_cuda_devices_are_cuda() -> None:
    from foxhunt.memory.budget import _device_type

    assert [_device_type(d) for d in ("cpu", "cuda", "cuda:1", "mps")] == [
        "cpu",
        "cuda",
        "cuda",
        "cpu",
    ]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_training_peak_holds_the_whole_effective_batch(device: str) -> None:
    from foxhunt.memory.budget import training_peak
    from foxhunt.memory.estimate import batch_bytes

    cfg = CFG.replace(train={"device": device})
    micro = estimate_memory(cfg.model, 8, device=device)
    extra = batch_bytes(cfg.model, 64) - batch_bytes(cfg.model, 8)  # 56 more samples resident
    overhead = process_overhead_bytes(device, "train")
    assert extra > 0
    assert training_peak(cfg, 8, False, "fp32") == micro.training_peak_bytes + extra + overhead


def test_a_zero_budget_is_refused_and_a_tiny_one_is_too_small() -> None:
    from foxhunt.memory.budget import plan_budget

    with pytest.raises(InputError, match=r"^memory budget must be positive, got 0 bytes$"):
        plan_budget(CFG, 0, allow_precision_change=False)
    with pytest.raises(InputError, match=r"^memory budget 1 B is too small for this model"):
        plan_budget(CFG, 1, allow_precision_change=False)


def test_reasons_quote_the_budget() -> None:
    from foxhunt.memory.budget import plan_budget, training_peak

    budget = training_peak(CFG, 64, False, "fp32") - 1
    plan = plan_budget(CFG, budget, allow_precision_change=False)
    assert plan.reasons[0].endswith(f"exceeds {format_bytes(budget)}")
    assert any(r.endswith(f"fits {format_bytes(budget)}") for r in plan.reasons)


def test_reasons_name_each_setting_tried() -> None:
    from foxhunt.memory.budget import plan_budget, training_peak

    budget = training_peak(CFG, 64, False, "fp32") - 1  # the full batch without misses
    plan = plan_budget(CFG, budget, allow_precision_change=False)
    assert [r.split(":")[0] for r in plan.reasons[:2]] == [
        "micro-batch 64, checkpointing off, fp32",
        "micro-batch 64, checkpointing on, fp32",
    ]


def test_the_too_small_message_suggests_bf16_only_when_it_could_help() -> None:
    from foxhunt.memory.budget import plan_budget

    hint = " or allow bf16 with --allow-precision-change"
    for cfg, allow, hinted in (
        (CFG, False, True),
        (CFG, True, False),
        (CFG.replace(train={"precision": "bf16"}), False, False),
    ):
        with pytest.raises(InputError) as refused:
            plan_budget(cfg, 1000, allow_precision_change=allow)
        message = str(refused.value)
        assert message.endswith(hint) == hinted, message
        tail = r"raise --memory-budget to at least [\d.,]+ [KMGT]?B"
        assert re.search(tail + ("" if not hinted else re.escape(hint)) + "$", message), message


def test_accumulation_is_an_int() -> None:
    from foxhunt.memory.budget import plan_budget, training_peak

    plan = plan_budget(CFG, training_peak(CFG, 32, False, "fp32"), allow_precision_change=False)
    assert plan.micro_batch == 32 and plan.accumulation == 2 and type(plan.accumulation) is int
