"""A run's memory plan: the planner's choice (micro-batch, checkpointing, precision, allocator,
validation batch) applied to its config, for the bars it holds."""

from __future__ import annotations

import logging
import math
from pathlib import Path

from foxhunt.config import RunConfig
from foxhunt.data.prepared import PreparedData
from foxhunt.data.read.row_count import estimate_file_rows
from foxhunt.errors import DataError, InputError
from foxhunt.memory.budget import plan_budget
from foxhunt.memory.preparation import preparation_peak
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
    """Bytes the prepared data holds in the process for the whole run: what the datasets hold
    in memory (their index, and the arrays unless they are read from files) and the bars'
    closes (kept for the report)."""
    return sum(ds.nbytes for ds in (data.train, data.val, data.test)) + data.closes_nbytes


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


def child_fits_budget(cfg: RunConfig, budget: str, bars: Path, baseline: int) -> bool:
    """Where a budgeted CPU run prepares its data, so that the preparation counts against the
    budget: its peak (:func:`~foxhunt.memory.preparation.preparation_peak`, from the bars the
    files hold, :func:`~foxhunt.data.read.row_count.estimate_rows`) plus, when a child process
    prepares, this process's ``baseline`` beside it.

    Returns:
        True: in a child (both fit in :func:`plan_margin` of the budget); False: in this
        process (only the preparation's own peak fits; the process then keeps what preparing
        loaded, and the plan measures it, :func:`apply_budget`).

    Raises:
        InputError: the preparation alone does not fit; the message names the budget that does.
    """
    limit = parse_bytes(budget) * plan_margin(cfg)
    peak, n = _preparation_estimate(cfg, bars)
    if baseline + peak <= limit:
        log.info(
            "memory budget %s: the data preparation child (about %s for %s bars, estimated) and "
            "this process (%s) fit",
            budget, format_bytes(peak), f"{n:,}", format_bytes(baseline),
        )  # fmt: skip
        return True
    if peak <= limit:
        log.info(
            "memory budget %s: the data is prepared in this process (about %s for %s bars, "
            "estimated): a child would hold that beside this process's %s, over the budget",
            budget, format_bytes(peak), f"{n:,}", format_bytes(baseline),
        )  # fmt: skip
        return False
    raise InputError(
        f"memory budget {budget}: preparing the data ({n:,} bars) needs an estimated "
        f"{format_bytes(peak)} on its own (docs/memory.md); raise --memory-budget to at least "
        f"{format_bytes(math.ceil(peak / plan_margin(cfg)))}"
    )


LARGE_PREPARATION_SHARE = 0.5
"""A preparation estimated over this share of the machine's memory gets a warning."""


def _preparation_estimate(cfg: RunConfig, bars: Path) -> tuple[int, int]:
    """``(estimated peak of preparing bars, bars)`` from the files' estimated rows, before
    they are read; the largest file stands for the largest symbol (each vendor file is one
    symbol's, as a rule; a file of several symbols makes the estimate an upper bound).

    Raises:
        DataError: nothing readable at ``bars``.
    """
    per_file = estimate_file_rows(bars)
    n, largest = sum(per_file), max(per_file, default=0)
    if cfg.data.bar_minutes:  # aggregated when read: as many K-minute bars as 1-minute ones / K
        n, largest = n // cfg.data.bar_minutes, largest // cfg.data.bar_minutes
    m = cfg.model
    return preparation_peak(n, m.n_static + m.n_historical + m.n_known, m.horizon, largest), n


def warn_large_preparation(cfg: RunConfig, bars: Path, total_memory: int | None = None) -> int:
    """One warning when preparing ``bars`` in memory (the window arrays and the largest
    symbol's feature table, :func:`~foxhunt.memory.preparation.preparation_peak`) is estimated at more than half
    of ``total_memory`` (default: this machine's), naming the feature store, which prepares one
    symbol at a time and memory-maps the windows (docs/memory.md, "The feature store").

    Returns:
        The estimated peak in bytes (0 when the bars cannot be counted; reading them will say
        why).
    """
    import psutil

    from foxhunt.data.features.inputs import is_standard  # lazily: the trainer's imports stay lean

    try:
        peak, n = _preparation_estimate(cfg, bars)
    except DataError:
        return 0
    total = psutil.virtual_memory().total if total_memory is None else total_memory
    if peak > LARGE_PREPARATION_SHARE * total:
        how = (
            "`foxhunt features --bars BARS --shards --out DIR` and then `foxhunt train --bars "
            "DIR` prepare one symbol at a time and memory-map the windows"
            if is_standard(cfg.data)
            else "a feature store holds only the default features, so fewer bars or symbols "
            "per run is the way down"
        )
        log.warning(
            "preparing %s bars in memory needs an estimated %s, %.0f %% of this machine's %s; "
            "%s (docs/memory.md)",
            f"{n:,}", format_bytes(peak), 100 * peak / total, format_bytes(total), how,
        )  # fmt: skip
    return peak


def check_child_peak(budget: str, baseline: int, child_peak: int) -> None:
    """One warning when the data preparation child's measured peak, with this process's
    ``baseline`` beside it, went over ``budget`` (the estimate erred; docs/memory.md)."""
    if child_peak and baseline + child_peak > parse_bytes(budget):
        log.warning(
            "memory budget %s exceeded while preparing the data: its child process peaked at "
            "%s beside this process's %s (%s together); the estimate was low (docs/memory.md)",
            budget, format_bytes(child_peak), format_bytes(baseline),
            format_bytes(baseline + child_peak),
        )  # fmt: skip
