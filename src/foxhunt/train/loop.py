"""The training loop, top to bottom: one function, :func:`fit`, and a few named helpers.

Per optimizer step (:func:`train_step`): the step's samples are cut into micro-batches; each runs
forward under autocast, its quantile loss is scaled by its share of the batch (so accumulated
gradients equal the full-batch mean) and backpropagated; then gradients are unscaled (fp16),
clipped, the optimizer steps and gradients are cleared with ``set_to_none=True``. An
out-of-memory error halves the micro-batch and retries the same samples (:mod:`oom`).

Per epoch (:func:`fit`): shuffle with a generator seeded by (seed, epoch); train; empty the CUDA
cache; validate under ``model.eval()`` + ``torch.inference_mode()`` with the validation batch
size (:func:`validate`); write the epoch checkpoint; stop early after ``patience`` epochs without
improvement. At the end the best weights are loaded and written as the final checkpoint.

Data parallel (:mod:`distributed`, under ``torchrun``): each rank takes its share of every
global batch, the model is wrapped in DDP (gradients are averaged in the last micro-batch's
backward; earlier ones run under ``no_sync``), losses are averaged over ranks, validation is
sharded, and only rank 0 writes files. With one process all of this is a no-op.

Resuming: the learning rate is a pure function of the step, the shuffle a pure function of the
epoch, and the optimizer, grad scaler, RNG and loop counters are restored from the last complete
epoch, so an interrupted and resumed run ends with the same weights as an uninterrupted one.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.rundir import RunDir
from foxhunt.config import Precision, RunConfig
from foxhunt.errors import ModelDirError
from foxhunt.memory.probes import MemoryLog
from foxhunt.model.batch import TFTBatch
from foxhunt.model.quantile import quantile_loss
from foxhunt.model.recompute import set_checkpointing
from foxhunt.runtime import autocast
from foxhunt.train.distributed import ShardedWindows, World
from foxhunt.train.oom import MicroBatching, empty_cache, is_oom
from foxhunt.train.optim import build_optimizer
from foxhunt.train.progress import TrainProgress
from foxhunt.train.schedule import lr_at

log = logging.getLogger(__name__)

StopReason = Literal["epochs", "early_stop", "max_steps", "interrupted"]
RESUME_FORMAT = 1


class WindowSource(Protocol):
    """What the loop needs from a dataset: its length and a vectorised batch of windows."""

    def __len__(self) -> int: ...

    def batch(self, indices: Sequence[int]) -> TFTBatch: ...


@dataclass
class LoopState:
    """Counters that make a run resumable (plain numbers, saved in the resume state).

    Attributes:
        epoch: Epochs completed.
        step: Optimizer steps taken.
        samples_seen: Training samples that went into an optimizer step.
        best_val_loss: Lowest validation loss so far.
        best_epoch: Epoch of ``best_val_loss`` (0: none yet).
        epochs_without_improvement: Epochs since ``best_epoch``.
        micro_batch: Current micro-batch size (smaller after OOM back-offs).
    """

    epoch: int = 0
    step: int = 0
    samples_seen: int = 0
    best_val_loss: float = math.inf
    best_epoch: int = 0
    epochs_without_improvement: int = 0
    micro_batch: int = 0


@dataclass
class FitResult:
    """How a call to :func:`fit` ended.

    Attributes:
        state: Loop counters at the end.
        stop_reason: ``epochs`` (all done), ``early_stop``, ``max_steps`` or ``interrupted``.
        final_weights: The final checkpoint written (None when interrupted before any epoch
            completed, or when interrupted at all: the run is to be resumed).
        backoffs: One message per OOM back-off.
    """

    state: LoopState
    stop_reason: StopReason
    final_weights: Path | None
    backoffs: list[str] = field(default_factory=list)


def fit(
    model: nn.Module,
    train: WindowSource,
    val: WindowSource,
    cfg: RunConfig,
    run: RunDir,
    *,
    sidecar: Mapping[str, Any],
    memory: MemoryLog,
    resume: Mapping[str, Any] | None = None,
    stop: threading.Event | None = None,
    progress: TrainProgress | None = None,
    world: World | None = None,
) -> FitResult:
    """Train ``model`` on ``train``, validate on ``val``, checkpoint into ``run``.

    Args:
        model: A TFT (or anything mapping a TFTBatch to a TFTOutput); its weights are the
            starting point (fresh, or the last complete epoch when resuming).
        train: Training windows (with targets).
        val: Validation windows (with targets).
        cfg: The run's config; ``cfg.train`` drives the loop.
        run: Run directory; checkpoints and ``metrics.jsonl`` are written there.
        sidecar: JSON-able metadata embedded in every checkpoint sidecar (config, features).
        memory: Memory log; a snapshot is taken at every named point of the run.
        resume: The resume state of the last complete epoch (see :func:`resume_state`).
        stop: When set (e.g. by SIGINT), the loop stops before the next optimizer step and
            discards the epoch in progress.
        progress: Progress bars; None draws nothing.
        world: This process's place in a data-parallel job; None: one process.

    Returns:
        The loop's end state and why it stopped.

    Raises:
        FloatingPointError: If the training loss stops being finite.
        OutOfMemoryAtMicroBatchOne: If a single sample does not fit.
    """
    tc = cfg.train
    world = world or World()
    device = torch.device(tc.device)
    model.to(device)
    if tc.checkpointing:
        set_checkpointing(model, True)  # recompute block activations in backward
    # DDP: `net` trains (gradients averaged over ranks); `model` is validated and saved.
    net = world.wrap(model, device)
    local_batch = world.per_rank_batch(tc.batch_size)
    optimizer = build_optimizer(model, lr=tc.lr, weight_decay=tc.weight_decay)
    grad_scaler = torch.amp.GradScaler(device.type, enabled=tc.precision == "fp16")
    quantiles = torch.tensor(cfg.model.quantiles, dtype=torch.float32, device=device)
    steps_per_epoch = world.steps_per_epoch(len(train), tc.batch_size)
    total_steps = min(tc.epochs * steps_per_epoch, tc.max_steps or math.inf)
    state = LoopState(micro_batch=tc.micro_batch)
    if resume is not None:
        state = _restore(resume, optimizer, grad_scaler, device)
    micro = MicroBatching(local_batch, min(state.micro_batch, local_batch))
    stop = stop or threading.Event()
    backoffs: list[str] = []

    def emit(record: Mapping[str, Any]) -> None:
        if world.is_main:  # DDP: one metrics.jsonl, written by rank 0
            _append_jsonl(run.metrics, record)

    memory.snapshot("run_start", epoch=state.epoch, step=state.step)
    stop_reason: StopReason = "epochs" if state.step < total_steps else "max_steps"
    mem_bytes: int | None = None  # shown in the progress bar, refreshed every log_every steps
    for epoch in range(state.epoch + 1, tc.epochs + 1):
        if stop_reason != "epochs":
            break
        # --- train one epoch ------------------------------------------------------------------
        memory.snapshot("epoch_start", epoch=epoch, step=state.step)
        model.train()
        order = epoch_order(len(train), seed=tc.seed, epoch=epoch)
        n_steps = min(steps_per_epoch, int(total_steps - state.step))
        if progress:
            progress.start_epoch(epoch, n_steps)
        t0, epoch_samples, loss_sum, window_loss, window_steps = time.perf_counter(), 0, 0.0, 0.0, 0
        for start in range(0, n_steps * tc.batch_size, tc.batch_size):
            if world.any(stop.is_set(), device):  # DDP: a signal on any rank stops all of them
                stop_reason = "interrupted"
                break
            global_batch = order[start : start + tc.batch_size]
            batch = train.batch(world.shard(global_batch))  # DDP: this rank's share
            lr = lr_at(
                state.step,
                peak_lr=tc.lr,
                warmup_steps=tc.warmup_steps,
                total_steps=int(total_steps),
            )
            for group in optimizer.param_groups:
                group["lr"] = lr
            loss, grad_norm, messages = train_step(
                net,
                batch,
                optimizer,
                grad_scaler,
                micro,
                quantiles=quantiles,
                precision=tc.precision,
                grad_clip=tc.grad_clip,
                step=state.step,
                memory=memory,
                grad_weight=world.grad_weight(batch.size, len(global_batch)),
            )
            loss = world.mean(loss, batch.size, device)  # DDP: the global batch's mean loss
            for m in messages:
                backoffs.append(m)
                emit({"kind": "oom", "epoch": epoch, "step": state.step, "message": m})
                if progress:
                    progress.note(m)
            if not math.isfinite(loss):
                raise FloatingPointError(
                    f"training loss is {loss} at step {state.step} (epoch {epoch}); "
                    f"lower --lr (now {tc.lr}) or use --precision fp32"
                )
            state.step += 1
            world.maybe_fail(state.step)  # test hook (FOXHUNT_DDP_FAIL); no-op otherwise
            state.samples_seen += len(global_batch)
            epoch_samples += len(global_batch)
            loss_sum += loss * len(global_batch)
            window_loss, window_steps = window_loss + loss, window_steps + 1
            samples_per_s = epoch_samples / max(time.perf_counter() - t0, 1e-9)
            if state.step % tc.log_every == 0:
                snap = memory.snapshot("train_step", epoch=epoch, step=state.step)
                mem_bytes = snap.get("cuda_allocated_bytes", snap.get("rss_bytes"))
                emit(
                    {
                        "kind": "step",
                        "epoch": epoch,
                        "step": state.step,
                        "lr": lr,
                        "loss": window_loss / window_steps,
                        "grad_norm": grad_norm,
                        "samples_per_s": samples_per_s,
                        "micro_batch": micro.micro,
                        "accumulation": micro.accumulation,
                    },
                )
                window_loss, window_steps = 0.0, 0
            if progress:
                progress.step(loss=loss, samples_per_s=samples_per_s, memory_bytes=mem_bytes)
        if stop_reason == "interrupted":
            kept = f"epoch {state.epoch} kept" if state.epoch else "no complete epoch yet"
            log.warning(
                "interrupted at step %d: epoch %d discarded, %s; continue with: "
                "foxhunt train --resume %s",
                state.step,
                epoch,
                kept,
                run.root,
            )
            break
        memory.snapshot("after_training", epoch=epoch, step=state.step)

        # --- validate -------------------------------------------------------------------------
        empty_cache(device)  # training's cached blocks go back before validation allocates
        memory.snapshot("before_validation", epoch=epoch, step=state.step)
        # DDP: each rank validates its shard; the sample-weighted mean is reduced over ranks.
        val_shard = ShardedWindows(val, world) if world.distributed else val
        val_loss = validate(
            model,
            val_shard,
            batch_size=tc.validation_batch_size,
            quantiles=quantiles,
            precision=tc.precision,
            memory=memory,
            epoch=epoch,
            step=state.step,
            progress=progress,
        )
        val_loss = world.mean(val_loss, len(val_shard), device)

        # --- checkpoint, early stopping -------------------------------------------------------
        state.epoch = epoch
        state.micro_batch = micro.micro
        improved = val_loss < state.best_val_loss
        if improved:
            state.best_val_loss, state.best_epoch = val_loss, epoch
            state.epochs_without_improvement = 0
        else:
            state.epochs_without_improvement += 1
        train_loss = loss_sum / max(epoch_samples, 1)
        metrics = {"train_loss": train_loss, "val_loss": val_loss}
        if world.is_main:  # DDP: one checkpoint set, written by rank 0
            save_epoch(
                run,
                model,
                optimizer,
                grad_scaler,
                state,
                sidecar,
                metrics,
                improved,
                int(total_steps),
            )
        memory.snapshot("after_checkpoint", epoch=epoch, step=state.step)
        seconds = time.perf_counter() - t0
        emit(
            {
                "kind": "epoch",
                "epoch": epoch,
                "step": state.step,
                **metrics,
                "best": improved,
                "samples_seen": state.samples_seen,
                "seconds": seconds,
            },
        )
        line = (
            f"epoch {epoch}/{tc.epochs}: train {train_loss:.4f} · val {val_loss:.4f}"
            f"{' (best)' if improved else ''} · {state.step} steps · {seconds:.1f} s"
        )
        if progress:
            progress.end_epoch(line)
        else:
            log.info(line)
        memory.snapshot("epoch_end", epoch=epoch, step=state.step)
        if state.epochs_without_improvement >= tc.patience:
            stop_reason = "early_stop"
            log.info("early stop: no improvement for %d epochs", tc.patience)
        elif state.step >= total_steps and epoch < tc.epochs:
            stop_reason = "max_steps"

    final = None
    if stop_reason != "interrupted" and state.best_epoch > 0 and world.is_main:
        final = save_final(run, model, state, sidecar, stop_reason)
    for leak in memory.check_leaks():
        emit({"kind": "memory_warning", "message": leak})
    memory.snapshot("run_end", epoch=state.epoch, step=state.step)
    return FitResult(state, stop_reason, final, backoffs)


def train_step(
    model: nn.Module,
    batch: TFTBatch,
    optimizer: torch.optim.Optimizer,
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
    grad_weight: float = 1.0,
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
    progress: TrainProgress | None = None,
) -> float:
    """Mean quantile loss over ``val`` under eval mode and inference mode.

    Args:
        model: The model (returned to train mode afterwards).
        val: Validation windows.
        batch_size: Windows per forward pass (no autograd state, so it can be large).
        quantiles: (Q,) levels on the device.
        precision: Autocast precision.
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
    with torch.inference_mode():
        for start in range(0, n, batch_size):
            batch = val.batch(list(range(start, min(start + batch_size, n)))).to(device)
            with autocast(device, precision):
                out = model(batch)
            total += (
                quantile_loss(out.quantiles.float(), batch.target, quantiles).double() * batch.size
            )
            if progress:
                progress.validation_step()
    model.train()
    loss = float(total) / max(n, 1)
    if memory is not None:
        memory.snapshot("validation_end", epoch=epoch, step=step, val_loss=loss)
    return loss


def epoch_order(n: int, *, seed: int, epoch: int) -> list[int]:
    """The shuffled sample order of ``epoch``: a pure function of (n, seed, epoch)."""
    g = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    return torch.randperm(n, generator=g).tolist()


# --- checkpoints -----------------------------------------------------------------------------


def resume_state(
    optimizer: torch.optim.Optimizer,
    grad_scaler: torch.amp.GradScaler,
    state: LoopState,
    total_steps: int,
) -> dict[str, Any]:
    """Everything beyond the weights that resuming needs, as weights_only-loadable values."""
    rng: dict[str, Any] = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        rng["cuda"] = torch.cuda.get_rng_state_all()
    return {
        "format": RESUME_FORMAT,
        "optimizer": optimizer.state_dict(),
        "grad_scaler": grad_scaler.state_dict(),
        "rng": rng,
        "loop": asdict(state),
        "total_steps": total_steps,
    }


def _restore(
    resume: Mapping[str, Any],
    optimizer: torch.optim.Optimizer,
    grad_scaler: torch.amp.GradScaler,
    device: torch.device,
) -> LoopState:
    """Load optimizer, scaler and RNG state; return the loop counters."""
    if resume.get("format") != RESUME_FORMAT:
        raise ModelDirError(f"resume state format {resume.get('format')!r} is not {RESUME_FORMAT}")
    optimizer.load_state_dict(resume["optimizer"])
    if resume["grad_scaler"]:
        grad_scaler.load_state_dict(resume["grad_scaler"])
    torch.set_rng_state(resume["rng"]["torch"])
    if "cuda" in resume["rng"] and device.type == "cuda":
        torch.cuda.set_rng_state_all(resume["rng"]["cuda"])
    return LoopState(**resume["loop"])


def save_epoch(
    run: RunDir,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    grad_scaler: torch.amp.GradScaler,
    state: LoopState,
    sidecar: Mapping[str, Any],
    metrics: Mapping[str, float],
    improved: bool,
    total_steps: int,
) -> None:
    """Write epoch ``state.epoch``: resume state, weights, then the sidecar (the completion
    marker); mark it best if it ``improved``; keep only the two newest resume states."""
    epoch, d = state.epoch, run.checkpoints
    ckpt.save_resume_state(
        ckpt.optimizer_path(d, epoch), resume_state(optimizer, grad_scaler, state, total_steps)
    )
    meta = {
        **sidecar,
        "epoch": epoch,
        "step": state.step,
        "metrics": dict(metrics),
        "best": improved,
    }
    ckpt.save_weights(ckpt.epoch_weights_path(d, epoch), model.state_dict(), meta)
    if improved:
        ckpt.mark_best(d, epoch, metrics["val_loss"])
    for old in range(1, epoch - 1):
        ckpt.optimizer_path(d, old).unlink(missing_ok=True)


def save_final(
    run: RunDir,
    model: nn.Module,
    state: LoopState,
    sidecar: Mapping[str, Any],
    stop_reason: StopReason,
) -> Path:
    """Load the best epoch's weights into ``model`` and write them as the final checkpoint."""
    d = run.checkpoints
    weights, best_meta = ckpt.load_weights(ckpt.epoch_weights_path(d, state.best_epoch))
    model.load_state_dict(weights)
    path = ckpt.final_weights_path(d, state.epoch)
    meta = {
        **sidecar,
        "epoch": state.epoch,
        "step": state.step,
        "best_epoch": state.best_epoch,
        "stop_reason": stop_reason,
        "metrics": best_meta.get("metrics", {}),
    }
    ckpt.save_weights(path, weights, meta)
    ckpt.mark_best(d, state.best_epoch, state.best_val_loss)
    return path


def _append_jsonl(path: Path, record: Mapping[str, Any]) -> None:
    """Append one JSON line and flush it (a crash loses at most the line being written)."""
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
