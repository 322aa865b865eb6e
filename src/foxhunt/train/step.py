"""One optimizer step and one validation pass: the two things the loop does with a batch.

:func:`train_step` cuts the step's samples into micro-batches; each runs forward under
autocast, its quantile loss is scaled by its share of the batch (so accumulated gradients
equal the full-batch mean) and backpropagated; then gradients are unscaled (fp16), clipped, the
optimizer steps and gradients are cleared with ``set_to_none=True``. An out-of-memory error
halves the micro-batch and retries the same samples (:mod:`foxhunt.train.resources.oom`).
:func:`validate` is the mean loss under ``model.eval()`` + ``torch.inference_mode()``.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from foxhunt.config import Precision
from foxhunt.memory.allocator import inference_heap
from foxhunt.memory.log import MemoryLog
from foxhunt.model.batch import TFTBatch
from foxhunt.model.quantile import quantile_loss
from foxhunt.runtime import autocast
from foxhunt.train.observer import Progress
from foxhunt.train.optimizer.optim import Optimizer
from foxhunt.train.resources.oom import MicroBatching, is_oom
from foxhunt.train.source import WindowSource


def train_step(
    model: nn.Module,
    batch: TFTBatch,
    optimizer: Optimizer,
    grad_scaler: torch.amp.GradScaler,
    micro: MicroBatching,
    *,
    quantiles: torch.Tensor,
    precision: Precision,
    grad_clip: float,
    step: int,
    memory: MemoryLog | None = None,
    grad_weight: float = 1.0,
    before_optimizer_step: Callable[[int], None] | None = None,
) -> tuple[float, float, list[str]]:
    """One optimizer step over ``batch``, in micro-batches; on OOM, finer micro-batches.

    Args:
        model: The model, in train mode.
        batch: All samples of this step (on the host; micro-batches are moved to the device).
        optimizer: Its optimizer (learning rate already set).
        grad_scaler: Loss scaler (enabled for fp16 only).
        micro: Micro-batching; halved in place on OOM.
        quantiles: (Q,) quantile levels on the device.
        precision: Autocast precision.
        grad_clip: Max global gradient norm (0: no clipping).
        step: Step number, for messages.
        memory: Memory log for the ``oom_retry`` snapshot.
        grad_weight: Factor on the loss that is backpropagated (not on the one returned); DDP
            uses it so the gradient averaged over ranks is the global batch's mean.
        before_optimizer_step: Called with ``step`` once gradients are complete, before the
            optimizer steps (memory measurement counts gradient and optimizer bytes there).

    Returns:
        ``(mean loss over the batch, gradient norm before clipping, back-off messages)``.
    """
    device = quantiles.device
    messages: list[str] = []
    while True:
        try:
            loss = _accumulate_gradients(
                model, batch, grad_scaler, micro, quantiles, precision, grad_weight
            )
            break
        except Exception as e:  # only OOM is handled; everything else propagates
            if not is_oom(e):
                raise
        # Outside the except block, so the exception and the activations its frames hold are
        # gone before the retry allocates again.
        optimizer.zero_grad(set_to_none=True)
        messages.append(micro.back_off(step, device))
        if memory is not None:
            memory.snapshot("oom_retry", step=step, micro_batch=micro.micro)
    grad_scaler.unscale_(optimizer)
    params = [p for g in optimizer.param_groups for p in g["params"]]
    if grad_clip > 0:
        grad_norm = float(torch.nn.utils.clip_grad_norm_(params, grad_clip))
    else:
        grad_norm = float(
            torch.nn.utils.get_total_norm([p.grad for p in params if p.grad is not None])
        )
    if before_optimizer_step is not None:
        before_optimizer_step(step)
    grad_scaler.step(optimizer)
    grad_scaler.update()
    optimizer.zero_grad(set_to_none=True)  # no gradient tensors live between steps
    return loss, grad_norm, messages


def _accumulate_gradients(
    model: nn.Module,
    batch: TFTBatch,
    grad_scaler: torch.amp.GradScaler,
    micro: MicroBatching,
    quantiles: torch.Tensor,
    precision: Precision,
    grad_weight: float,
) -> float:
    """Forward/backward every micro-batch of ``batch``; returns the batch's mean loss."""
    n = batch.size
    total = torch.zeros((), device=quantiles.device)
    slices = micro.slices(n)
    for i, (a, b) in enumerate(slices):
        mb = batch.slice(a, b).to(quantiles.device, non_blocking=True)
        # DDP: gradients are all-reduced only in the last micro-batch's backward.
        last = i == len(slices) - 1
        ddp = isinstance(model, DistributedDataParallel)
        sync = model.no_sync() if ddp and not last else contextlib.nullcontext()
        with sync:
            with autocast(quantiles.device, precision):
                out = model(mb)
            loss = quantile_loss(out.quantiles.float(), mb.target, quantiles)
            share = (b - a) / n  # micro-batch losses are means; weight them into the batch mean
            grad_scaler.scale(loss * share * grad_weight).backward()
        total += loss.detach() * share
    return float(total)


def output_is_constant(model: nn.Module) -> bool:
    """The TFT's output layer has a zero weight: its forecast does not depend on its inputs."""
    head = getattr(getattr(model, "module", model), "output", None)
    return isinstance(head, nn.Linear) and not bool(head.weight.any())


def validate(
    model: nn.Module,
    val: WindowSource,
    *,
    batch_size: int,
    quantiles: torch.Tensor,
    precision: Precision,
    memory: MemoryLog | None = None,
    epoch: int | None = None,
    step: int | None = None,
    progress: Progress | None = None,
) -> float:
    """Mean quantile loss over ``val`` under eval mode and inference mode.

    Args:
        model: The model (returned to train mode afterwards).
        val: Validation windows.
        batch_size: Windows per forward pass (no autograd state, so it can be large).
        quantiles: (Q,) levels on the device.
        precision: Autocast precision on CUDA; on CPU validation runs fp32.
        memory: Memory log for ``validation_start``/``validation_end``.
        epoch: For the snapshots.
        step: For the snapshots.
        progress: Progress bars.

    Returns:
        The sample-weighted mean loss.
    """
    device = quantiles.device
    n = len(val)
    if memory is not None:
        memory.snapshot("validation_start", epoch=epoch, step=step)
    if progress:
        progress.start_validation(math.ceil(n / batch_size))
    model.eval()
    total = torch.zeros((), device=device, dtype=torch.float64)
    # On CPU in fp32, as calibration, evaluate and predict run the model: the loss is the
    # served forecast's, and a forward without autograd is no faster in bf16 there (demo
    # batch 256: 215 ms fp32 vs 350 ms bf16 on a Zen 5 CPU; session 17, docs/benchmarks.md)
    infer_precision: Precision = precision if device.type == "cuda" else "fp32"
    # A network whose output layer is zero (a fresh run's start: train/head_init.py) forecasts
    # the same quantiles for every window: the first batch runs through it, and the others are
    # scored against that batch's first forecast, not run (what the forward would give, without
    # the forward: a demo validation pass 0.2 s instead of 2).
    constant = output_is_constant(model)
    fixed: torch.Tensor | None = None
    with torch.inference_mode(), inference_heap():
        for start in range(0, n, batch_size):
            batch = val.batch(list(range(start, min(start + batch_size, n)))).to(device)
            if fixed is None:
                with autocast(device, infer_precision):
                    q = model(batch).quantiles.float()
                if constant and bool(torch.isfinite(q).all()):
                    fixed = q[:1]
            else:
                q = fixed.expand(batch.size, -1, -1)
            total += quantile_loss(q, batch.target, quantiles).double() * batch.size
            if progress:
                progress.validation_step()
    model.train()
    loss = float(total) / max(n, 1)
    if memory is not None:
        memory.snapshot("validation_end", epoch=epoch, step=step, val_loss=loss)
    return loss
