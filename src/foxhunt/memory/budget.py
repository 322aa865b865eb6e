"""Fit a run into a memory budget before any step runs (``foxhunt train --memory-budget 1GB``).

The planner only reads the estimate (:func:`foxhunt.memory.estimate.estimate_memory`); it allocates
nothing. It walks the settings from cheapest in time to most frugal and keeps the first one whose
estimated training peak fits:

1. the configured micro-batch without checkpointing, then with checkpointing;
2. the micro-batch halved (rounded up), again without then with checkpointing, down to 1 — the
   effective batch stays the same through gradient accumulation;
3. if ``allow_precision_change`` and the run is fp32: the same walk in bf16 autocast.

Validation runs without autograd at its own batch size; the planner halves that batch until the
estimated inference peak fits too. When nothing fits it raises :class:`~foxhunt.errors.InputError`
with the smallest estimate it found.

What the budget bounds: the estimated live tensor bytes of a step (weights, gradients, AdamW state,
the batch, saved activations, the largest backward transient) -- CUDA's ``max_memory_allocated``
-- plus, on CPU, the process overhead beyond tensors, so it compares with a peak-RSS delta.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from foxhunt.config import Precision, RunConfig
from foxhunt.errors import InputError
from foxhunt.memory.estimate import (
    DeviceType,
    batch_bytes,
    estimate_memory,
    process_overhead_bytes,
)
from foxhunt.memory.units import format_bytes

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BudgetPlan:
    """The settings the planner chose, and why.

    Attributes:
        micro_batch: samples per forward/backward.
        accumulation: micro-batches per optimizer step, ``ceil(batch_size / micro_batch)`` (the
            last micro-batch of a step may be smaller).
        checkpointing: activation checkpointing on or off.
        precision: fp32 or the reduced precision chosen.
        validation_batch_size: samples per validation forward.
        estimated_peak: estimated training peak bytes at these settings.
        budget: the budget in bytes.
        reasons: one line per decision, in order.
    """

    micro_batch: int
    accumulation: int
    checkpointing: bool
    precision: Precision
    validation_batch_size: int
    estimated_peak: int
    budget: int
    reasons: list[str] = field(default_factory=list)

    def apply(self, cfg: RunConfig) -> RunConfig:
        """``cfg`` with this plan's micro-batch, checkpointing, precision and validation batch."""
        return cfg.replace(
            train={
                "micro_batch_size": self.micro_batch,
                "checkpointing": self.checkpointing,
                "precision": self.precision,
                "validation_batch_size": self.validation_batch_size,
            }
        )


def _device_type(device: str) -> DeviceType:
    return "cuda" if device.startswith("cuda") else "cpu"


def training_peak(
    cfg: RunConfig, micro_batch: int, checkpointing: bool, precision: Precision
) -> int:
    """Estimated training peak at these settings; the whole effective batch is resident.

    On CPU the process overhead (:func:`~foxhunt.memory.estimate.process_overhead_bytes`) is
    included, so the number compares with a peak-RSS delta; on CUDA it is tensor bytes.

    Args:
        cfg: the run (model, batch size, device).
        micro_batch: samples per forward/backward.
        checkpointing: activation checkpointing.
        precision: fp32/bf16/fp16.

    Returns:
        Bytes.
    """
    est = estimate_memory(
        cfg.model,
        micro_batch,
        precision=precision,
        checkpointing=checkpointing,
        device=_device_type(cfg.train.device),
    )
    full_batch = batch_bytes(cfg.model, cfg.train.batch_size)
    device = _device_type(cfg.train.device)
    overhead = process_overhead_bytes(device, "train")
    return est.training_peak_bytes - est.batch_bytes + full_batch + overhead


def _micro_batches(batch_size: int) -> list[int]:
    sizes = [batch_size]
    while sizes[-1] > 1:
        sizes.append(-(-sizes[-1] // 2))
    return sizes


def plan_budget(cfg: RunConfig, budget_bytes: int, *, allow_precision_change: bool) -> BudgetPlan:
    """Choose micro-batch, checkpointing and precision so the run fits ``budget_bytes``.

    Args:
        cfg: the run as configured (its batch size is the effective batch to keep).
        budget_bytes: the memory the run may use.
        allow_precision_change: may switch an fp32 run to bf16 autocast if fp32 cannot fit.

    Returns:
        The plan; ``plan.apply(cfg)`` gives the config to train with.

    Raises:
        InputError: even micro-batch 1 with checkpointing (and bf16, if allowed) does not fit,
            or validation at batch 1 does not fit.
    """
    if budget_bytes <= 0:
        raise InputError(f"memory budget must be positive, got {budget_bytes} bytes")
    train = cfg.train
    budget_text = format_bytes(budget_bytes)
    precisions: list[Precision] = [train.precision]
    if allow_precision_change and train.precision == "fp32":
        precisions.append("bf16")
    reasons: list[str] = []
    smallest: tuple[int, str] | None = None
    chosen: tuple[int, bool, Precision, int] | None = None
    for precision in precisions:
        for micro in _micro_batches(train.batch_size):
            for ckpt in (False, True):
                peak = training_peak(cfg, micro, ckpt, precision)
                what = f"micro-batch {micro}, checkpointing {'on' if ckpt else 'off'}, {precision}"
                if peak <= budget_bytes:
                    chosen = (micro, ckpt, precision, peak)
                    reasons.append(
                        f"{what}: estimated peak {format_bytes(peak)} fits {budget_text}"
                    )
                    break
                reasons.append(f"{what}: estimated peak {format_bytes(peak)} exceeds {budget_text}")
                if smallest is None or peak < smallest[0]:
                    smallest = (peak, what)
            if chosen:
                break
        if chosen:
            break
    if chosen is None:
        assert smallest is not None
        hint = (
            ""
            if allow_precision_change or train.precision != "fp32"
            else (" or allow bf16 with --allow-precision-change")
        )
        raise InputError(
            f"memory budget {budget_text} is too small for this model: even {smallest[1]} needs an "
            f"estimated {format_bytes(smallest[0])}; raise --memory-budget to at least "
            f"{format_bytes(smallest[0])}{hint}"
        )
    micro, ckpt, precision, peak = chosen
    accumulation = -(-train.batch_size // micro)
    if accumulation > 1:
        reasons.append(
            f"gradient accumulation over {accumulation} micro-batches keeps the effective batch "
            f"at {train.batch_size}"
        )
    val = _fit_validation(cfg, precision, budget_bytes, reasons)
    plan = BudgetPlan(
        micro_batch=micro,
        accumulation=accumulation,
        checkpointing=ckpt,
        precision=precision,
        validation_batch_size=val,
        estimated_peak=peak,
        budget=budget_bytes,
        reasons=reasons,
    )
    for line in reasons:
        logger.info("memory budget: %s", line)
    return plan


def _fit_validation(cfg: RunConfig, precision: Precision, budget: int, reasons: list[str]) -> int:
    """Largest validation batch (halving from the configured one) whose inference fits."""
    device = _device_type(cfg.train.device)
    size = cfg.train.validation_batch_size
    while True:
        est = estimate_memory(cfg.model, size, precision=precision, device=device)
        # Validation runs between training steps: the optimizer state is still resident.
        overhead = process_overhead_bytes(device, "train")
        peak = est.inference_peak_bytes + est.optimizer_bytes + est.parameter_bytes + overhead
        if peak <= budget:
            if size != cfg.train.validation_batch_size:
                reasons.append(
                    f"validation batch {size}: estimated {format_bytes(peak)} (with the optimizer "
                    f"state) fits"
                )
            return size
        reasons.append(f"validation batch {size}: estimated {format_bytes(peak)} does not fit")
        if size == 1:
            raise InputError(
                f"memory budget {format_bytes(budget)} is too small: validation at batch 1 needs "
                f"an estimated {format_bytes(peak)}"
            )
        size = -(-size // 2)
