"""Fit a run into a memory budget before any step runs (``foxhunt train --memory-budget 1GB``).

The planner only reads the estimates; it allocates nothing. What the budget bounds:

* on CPU, the **peak RSS of the whole process** (:func:`foxhunt.memory.process.process_training_peak`):
  the import baseline (torch, polars, foxhunt), the prepared data, the tensors of a step, the
  process overhead and the allocator's slack. A budget below the import baseline plus the data is
  refused with those figures;
* on CUDA, the tensor peak of a step (``max_memory_allocated``).

It walks the settings from fastest to most frugal and keeps the first whose estimated peak fits:

1. the configured micro-batch keeping every activation, then with the heavy blocks checkpointed,
   then with the VSNs streamed and the LSTMs recomputed (``TrainConfig.recompute``), then both;
   a slower option is tried only where it lowers the estimate below the faster ones' (with the
   VSNs streamed, their chunk recompute dominates the presets' peak, so block checkpointing
   lowers nothing there and is skipped);
2. the micro-batch halved (rounded up), again without then with checkpointing, down to 1 -- the
   effective batch stays the same through gradient accumulation;
3. on CPU with glibc's allocator (the default, fastest): the same walk with the ``lean``
   allocator, which returns freed activations to the OS (no slack, about half the step rate);
4. if ``allow_precision_change`` and the run is fp32: all of the above in bf16 autocast.

Validation runs without autograd at its own batch size; the planner halves that batch until the
estimated inference peak fits too. When nothing fits it raises :class:`~foxhunt.errors.InputError`
with the smallest estimate it found.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass, field

import torch

from foxhunt.config import CpuAllocator, Precision, RunConfig
from foxhunt.errors import InputError
from foxhunt.memory.cuda_libraries import cuda_library_bytes
from foxhunt.memory.estimate import (
    DeviceType,
    batch_bytes,
    estimate_memory,
    process_overhead_bytes,
)
from foxhunt.memory.process import (
    ACTIVATION_RSS_FACTOR,
    IMPORT_BASELINE_BYTES,
    process_overhead,
    process_training_peak,
)
from foxhunt.memory.units import format_bytes
from foxhunt.runtime import resolve_precision

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
        estimated_peak: estimated training peak bytes at these settings (CPU: process RSS).
        budget: the budget in bytes.
        reasons: one line per decision, in order.
        cpu_allocator: ``glibc``, ``balanced`` or ``lean`` (CPU runs).
        recompute: VSN streaming and LSTM recomputation on or off.
    """

    micro_batch: int
    accumulation: int
    checkpointing: bool
    precision: Precision
    validation_batch_size: int
    estimated_peak: int
    budget: int
    reasons: list[str] = field(default_factory=list)
    cpu_allocator: CpuAllocator = "balanced"
    recompute: bool = False

    def apply(self, cfg: RunConfig) -> RunConfig:
        """``cfg`` with this plan's micro-batch, checkpointing, precision, validation batch and
        allocator."""
        return cfg.replace(
            train={
                "micro_batch_size": self.micro_batch,
                "checkpointing": self.checkpointing,
                "precision": self.precision,
                "validation_batch_size": self.validation_batch_size,
                "cpu_allocator": self.cpu_allocator,
                "recompute": self.recompute,
            }
        )


def _device_type(device: str) -> DeviceType:
    return "cuda" if device.startswith("cuda") else "cpu"


def training_peak(
    cfg: RunConfig,
    micro_batch: int,
    checkpointing: bool,
    precision: Precision,
    allocator: CpuAllocator | None = None,
    data_bytes: int = 0,
    recompute: bool | None = None,
    baseline: int = IMPORT_BASELINE_BYTES,
) -> int:
    """Estimated training peak at these settings; the whole effective batch is resident.

    On CPU: the peak RSS of the whole process (import baseline, ``data_bytes``, tensors, process
    overhead, allocator slack; :func:`~foxhunt.memory.process.process_training_peak`). On CUDA:
    tensor bytes (``max_memory_allocated``).

    Args:
        cfg: the run (model, batch size, device, allocator).
        micro_batch: samples per forward/backward.
        checkpointing: activation checkpointing.
        precision: fp32/bf16/fp16.
        allocator: CPU allocator (default: ``cfg.train.cpu_allocator``).
        data_bytes: the prepared data held by the process (CPU).
        recompute: VSN streaming and LSTM recomputation (default: ``cfg.train.recompute``).
        baseline: the process's RSS before data (CPU; default: the import-baseline constant).

    Returns:
        Bytes.
    """
    recompute = cfg.train.recompute if recompute is None else recompute
    if _device_type(cfg.train.device) == "cpu":
        return process_training_peak(
            cfg,
            micro_batch=micro_batch,
            checkpointing=checkpointing,
            precision=precision,
            allocator=allocator,
            data_bytes=data_bytes,
            recompute=recompute,
            import_baseline=baseline,
        ).total
    est = estimate_memory(
        cfg.model,
        micro_batch,
        precision=precision,
        checkpointing=checkpointing,
        device="cuda",
        recompute=recompute,
        weight_average=bool(cfg.train.weight_average),
    )
    return est.training_peak_bytes - est.batch_bytes + batch_bytes(cfg.model, cfg.train.batch_size)


def _micro_batches(batch_size: int) -> list[int]:
    sizes = [batch_size]
    while sizes[-1] > 1:
        sizes.append(-(-sizes[-1] // 2))
    return sizes


def check_above_baseline(
    cfg: RunConfig, budget_bytes: int, data_bytes: int = 0, baseline: int = IMPORT_BASELINE_BYTES
) -> None:
    """Refuse a CPU budget below what the process holds before training starts.

    Args:
        cfg: the run (its device).
        budget_bytes: the budget.
        data_bytes: the prepared data the process holds.
        baseline: the process's RSS before data (default: the import-baseline constant).

    Raises:
        InputError: not positive, or (CPU) below the import baseline plus ``data_bytes``.
    """
    if budget_bytes <= 0:
        raise InputError(f"memory budget must be positive, got {budget_bytes} bytes")
    if _device_type(cfg.train.device) != "cpu":
        return
    floor = baseline + data_bytes
    if budget_bytes < floor:
        data = f" plus {format_bytes(data_bytes)} of prepared data" if data_bytes else ""
        raise InputError(
            f"memory budget {format_bytes(budget_bytes)} is too small: below what the process "
            f"holds before training, an import baseline of {format_bytes(baseline)} "
            f"(torch, polars, foxhunt){data}; the budget bounds the whole process's peak RSS"
        )


def plan_budget(
    cfg: RunConfig,
    budget_bytes: int,
    *,
    allow_precision_change: bool,
    data_bytes: int = 0,
    baseline: int = IMPORT_BASELINE_BYTES,
    margin: float = 1.0,
) -> BudgetPlan:
    """Choose micro-batch, checkpointing, allocator and precision so the run fits ``budget_bytes``.

    Args:
        cfg: the run as configured (its batch size is the effective batch to keep; its precision
            resolved, not ``auto``).
        budget_bytes: the memory the run may use (CPU: peak process RSS).
        allow_precision_change: may switch an fp32 run to bf16 autocast if fp32 cannot fit.
        data_bytes: the prepared data the process holds (CPU).
        baseline: the process's RSS before data (CPU): ``foxhunt train`` measures its own
            (:func:`foxhunt.memory.process.measured_baseline`); the default is the constant.
        margin: plan estimates up to ``margin * budget_bytes`` (``foxhunt train`` on CPU keeps
            a margin for the estimate's error: ``foxhunt.train.resources.plan.CPU_PLAN_MARGIN``).

    Returns:
        The plan; ``plan.apply(cfg)`` gives the config to train with.

    Raises:
        InputError: a budget below the import baseline, or even micro-batch 1 with checkpointing
            (the lean allocator, bf16 if allowed) does not fit, or validation at batch 1 does not.
    """
    check_above_baseline(cfg, budget_bytes, data_bytes, baseline)
    device = torch.device("cuda" if _device_type(cfg.train.device) == "cuda" else "cpu")
    cfg = cfg.replace(train={"precision": resolve_precision(cfg.train.precision, device)})
    train = cfg.train
    budget_text = format_bytes(budget_bytes)
    fit = int(budget_bytes * margin)
    if margin < 1:
        budget_text += f" ({100 * margin:.0f} %: {format_bytes(fit)})"
    precisions: list[Precision] = [train.precision]  # type: ignore[list-item]
    if allow_precision_change and train.precision == "fp32":
        precisions.append("bf16")
    allocators: list[CpuAllocator] = [train.cpu_allocator]
    if _device_type(train.device) == "cpu":  # then the leaner ones, fastest first
        leaner: list[CpuAllocator] = ["glibc", "balanced", "lean"]
        allocators = leaner[leaner.index(train.cpu_allocator) :]
    reasons: list[str] = []
    smallest: tuple[int, str] | None = None
    for precision in precisions:
        for allocator in allocators:
            for micro in _micro_batches(train.micro_batch):
                options = _options(cfg, micro, precision, allocator, data_bytes, baseline)
                for rec, ckpt, peak in options:
                    what = (
                        f"micro-batch {micro}, checkpointing {'on' if ckpt else 'off'}, "
                        f"recompute {'on' if rec else 'off'}, {precision}"
                        + (f", {allocator} allocator" if len(allocators) > 1 else "")
                    )
                    if peak <= fit:
                        reasons.append(
                            f"{what}: estimated peak {format_bytes(peak)} fits {budget_text}"
                        )
                        plan = _plan(cfg, micro, ckpt, precision, allocator, peak, fit,
                                     reasons, data_bytes, baseline)  # fmt: skip
                        return dataclasses.replace(plan, recompute=rec)
                    reasons.append(
                        f"{what}: estimated peak {format_bytes(peak)} exceeds {budget_text}"
                    )
                    if smallest is None or peak < smallest[0]:
                        smallest = (peak, what)
    assert smallest is not None
    hint = (
        ""
        if allow_precision_change or train.precision != "fp32"
        else (" or allow bf16 with --allow-precision-change")
    )
    need = math.ceil(smallest[0] / margin)
    kept = f" (with the planner's {100 - 100 * margin:.0f} % margin)" if margin < 1 else ""
    raise InputError(
        f"memory budget {format_bytes(budget_bytes)} is too small for this model: even "
        f"{smallest[1]} needs an estimated {format_bytes(smallest[0])}; raise --memory-budget "
        f"to at least {format_bytes(need)}{kept}{hint}"
    )


def _options(
    cfg: RunConfig,
    micro: int,
    precision: Precision,
    allocator: CpuAllocator,
    data: int,
    baseline: int = IMPORT_BASELINE_BYTES,
) -> list[tuple[bool, bool, int]]:
    """``(recompute, checkpointing, peak)`` at one micro-batch, fastest first; a slower option
    only where it lowers the peak below every faster one."""
    out: list[tuple[bool, bool, int]] = []
    for rec, ckpt in ((False, False), (False, True), (True, False), (True, True)):
        peak = training_peak(cfg, micro, ckpt, precision, allocator, data, rec, baseline)
        if not out or peak < min(p for _, _, p in out):
            out.append((rec, ckpt, peak))
    return out


def _plan(
    cfg: RunConfig,
    micro: int,
    ckpt: bool,
    precision: Precision,
    allocator: CpuAllocator,
    peak: int,
    budget_bytes: int,
    reasons: list[str],
    data_bytes: int,
    baseline: int = IMPORT_BASELINE_BYTES,
) -> BudgetPlan:
    batch_size = cfg.train.batch_size
    accumulation = -(-batch_size // micro)
    if accumulation > 1:
        reasons.append(
            f"gradient accumulation over {accumulation} micro-batches keeps the effective batch "
            f"at {batch_size}"
        )
    val = _fit_validation(cfg, precision, budget_bytes, reasons, data_bytes, baseline, allocator)
    plan = BudgetPlan(
        micro_batch=micro,
        accumulation=accumulation,
        checkpointing=ckpt,
        precision=precision,
        validation_batch_size=val,
        estimated_peak=peak,
        budget=budget_bytes,
        reasons=reasons,
        cpu_allocator=allocator,
    )
    for line in reasons:
        logger.info("memory budget: %s", line)
    return plan


def _fit_validation(
    cfg: RunConfig,
    precision: Precision,
    budget: int,
    reasons: list[str],
    data_bytes: int,
    baseline: int = IMPORT_BASELINE_BYTES,
    allocator: CpuAllocator | None = None,
) -> int:
    """Largest validation batch (halving from the configured one) whose inference fits; on CPU
    with the allocator's slack on the inference activations, as for training steps. Without it
    (TFT-225 batch 32, ``--memory-budget 900MB``, validation batch 128 estimated 890 MB) the
    bf16 validation pass peaked at 927 MB and the fp32 calibration pass at 1,005 MB."""
    device = _device_type(cfg.train.device)
    size = cfg.train.validation_batch_size
    fixed = baseline + data_bytes if device == "cpu" else 0
    # On CPU the end-of-run calibration pass (and evaluate) run fp32 at this batch size.
    infer_precision: Precision = "fp32" if device == "cpu" else precision
    while True:
        est = estimate_memory(
            cfg.model,
            size,
            precision=infer_precision,
            device=device,
            weight_average=bool(cfg.train.weight_average),
        )
        # Validation runs between training steps: the optimizer state is still resident, and
        # on CPU the training process's overhead (the same constant as its steps').
        overhead = (
            process_overhead(precision)
            if device == "cpu"
            else process_overhead_bytes(device, "train")
        )
        # the weight average (if any) is resident beside the optimizer's weights
        peak = est.inference_peak_bytes + est.optimizer_bytes + est.parameter_bytes + overhead
        peak += est.average_bytes
        if device == "cuda":  # training's library buffers stay; the inference peak counts one
            peak += est.library_bytes - cuda_library_bytes(cfg.model, "infer")
        peak += fixed
        if device == "cpu":
            factor = ACTIVATION_RSS_FACTOR[allocator or cfg.train.cpu_allocator]
            activations = est.inference_peak_bytes - est.parameter_bytes - est.batch_bytes
            peak += int(max(activations, 0) * (factor - 1))
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
