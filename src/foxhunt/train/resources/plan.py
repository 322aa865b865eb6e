"""A run's memory plan: the planner's choice (micro-batch, checkpointing, precision, allocator,
validation batch) applied to its config, for the bars it holds."""

from __future__ import annotations

import logging

from foxhunt.config import RunConfig
from foxhunt.data.prepared import PreparedData
from foxhunt.memory.budget import plan_budget
from foxhunt.memory.process import IMPORT_BASELINE_BYTES, resident_before_training
from foxhunt.memory.units import format_bytes, parse_bytes

log = logging.getLogger(__name__)

CPU_PLAN_MARGIN = 0.9
"""On CPU the planner fits its estimate into this share of ``--memory-budget``: the process
estimate errs by up to about 10 % either way (docs/memory.md), and a budget is a bound. Measured
(session 6, TFT-225 batch 32, 4,000 demo bars, ``--memory-budget 600MB`` planned to the whole
budget): estimated 597 MB, peak 656 MB (``/usr/bin/time -v``); what the start's validation pass
leaves in glibc's heap (about 50 MiB) is the largest part the estimate misses."""


def plan_margin(cfg: RunConfig) -> float:
    """The share of a budget the planner fills: :data:`CPU_PLAN_MARGIN` on CPU, all on CUDA
    (where the budget bounds reserved device memory, which the estimate tracks closely)."""
    return 1.0 if cfg.train.device.startswith("cuda") else CPU_PLAN_MARGIN


def data_bytes(data: PreparedData) -> int:
    """Bytes of the window arrays the process holds for the whole run."""
    return sum(ds.nbytes for ds in (data.train, data.val, data.test))


def apply_budget(
    cfg: RunConfig,
    budget: str,
    allow_precision_change: bool,
    per_rank_batch: int,
    data: int,
    baseline: int = IMPORT_BASELINE_BYTES,
    *,
    data_process: bool = True,
) -> RunConfig:
    """Let the memory planner pick micro-batch, checkpointing, precision, allocator and
    validation batch (CPU: the budget bounds the process's peak RSS, ``data`` bytes included).

    The budget is per process: under torchrun it plans for one rank's share of the batch.
    ``baseline`` is the process's RSS before it read the data (``measured_baseline``); on CPU
    the plan uses what the process holds once the data is prepared and the modules the run
    imports later are loaded (``resident_before_training``), when that is more.
    ``data_process``: this process prepared the data (False: a child did,
    :func:`foxhunt.train.prepare.prepare_in_child`, and the windows are memory-mapped).
    """
    if not cfg.train.device.startswith("cuda"):
        baseline = max(baseline, resident_before_training(data, prepared_here=data_process))
        log.info("memory budget: the process holds %s before training (imports, data "
                 "preparation) plus %s of windows", format_bytes(baseline), format_bytes(data))  # fmt: skip
    margin = plan_margin(cfg)
    micro = min(cfg.train.micro_batch, per_rank_batch)
    rank_cfg = cfg.replace(train={"batch_size": per_rank_batch, "micro_batch_size": micro})
    plan = plan_budget(
        rank_cfg,
        parse_bytes(budget),
        allow_precision_change=allow_precision_change,
        data_bytes=data,
        baseline=baseline,
        margin=margin,
    )
    log.info(
        "memory budget %s: micro-batch %d x %d accumulation, checkpointing %s, %s, %s allocator, "
        "validation batch %d, estimated peak %s",
        budget,
        plan.micro_batch,
        plan.accumulation,
        "on" if plan.checkpointing else "off",
        plan.precision,
        plan.cpu_allocator,
        plan.validation_batch_size,
        format_bytes(plan.estimated_peak),
    )
    return plan.apply(cfg)
