"""The training loop, top to bottom: one function, :func:`fit`, and a few named helpers.

Per optimizer step: :func:`foxhunt.train.step.train_step` (micro-batches, backward, clipping,
optimizer step, gradients cleared; finer micro-batches after an out-of-memory error).

Per epoch (:func:`fit`): a permutation of all training windows seeded by (seed, epoch), of which
the epoch takes at most ``epoch_steps`` batches (:mod:`foxhunt.train.sampling`); train; empty
the CUDA cache; validate under ``model.eval()`` + ``torch.inference_mode()`` with the validation
batch size (:func:`validate`) on a fixed seeded subsample of the validation windows when they
are many; write the epoch checkpoint; stop early after ``patience`` epochs without improvement
once the learning rate is half-way down its cosine (:data:`EARLY_STOP_FROM`), or once
``max_minutes`` of wall clock are spent (:mod:`foxhunt.train.deadline`: the epoch in progress
ends at that step boundary and is validated). At the end the best weights are loaded
and written as the final checkpoint. With ``weight_average`` the epoch's validation and
checkpoint are of the weights' moving average (:mod:`foxhunt.train.averaging`).

The starting point competes for the final checkpoint: a fresh run validates the model before
the first epoch and saves it (``checkpoints/tft_start.safetensors``, its loss in the loop state);
when no epoch's validation loss is below the start's, the final checkpoint holds the starting
weights (``best_epoch`` 0). The start is epoch 0 of the "best" marks: an epoch's line says
"(best)", ``metrics.jsonl`` ``"best": true`` and ``best.json`` names it only when it beats the
start and every earlier epoch, and early stopping counts epochs since the best of them all.
A monotone head starts at the scale-only forecast (:mod:`foxhunt.train.head_init`), so the
served model is never worse on validation than it.

Data parallel (:mod:`distributed`, under ``torchrun``): each rank takes its share of every
global batch, the model is wrapped in DDP (gradients are averaged in the last micro-batch's
backward; earlier ones run under ``no_sync``), losses are averaged over ranks, validation is
sharded, and only rank 0 writes files. With one process all of this is a no-op.

Resuming: the learning rate is a pure function of the step, the shuffle a pure function of the
epoch, and the optimizer, grad scaler, RNG and loop counters are restored from the last complete
epoch, so an interrupted and resumed run ends with the same weights as an uninterrupted one.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.resume import restore, save_epoch, save_final
from foxhunt.artifacts.rundir import RunDir
from foxhunt.config import RunConfig, TrainConfig
from foxhunt.memory.log import MemoryLog
from foxhunt.model.recompute import set_checkpointing, set_internal_recompute
from foxhunt.train.averaging import WeightAverage, averaged, start_average
from foxhunt.train.deadline import Clock, Deadline
from foxhunt.train.distributed import ShardedWindows, World
from foxhunt.train.loop_state import LoopState
from foxhunt.train.observer import Listener, LoopObserver, Progress
from foxhunt.train.optimizer.optim import Optimizer, build_optimizer
from foxhunt.train.optimizer.schedule import decay_progress, lr_at
from foxhunt.train.resources.oom import MicroBatching, empty_cache
from foxhunt.train.sampling import epoch_order, epoch_sample, validation_windows
from foxhunt.train.source import WindowSource
from foxhunt.train.step import train_step, validate

log = logging.getLogger(__name__)

__all__ = ["START_WEIGHTS", "FitResult", "LoopState", "epoch_order", "fit"]

StopReason = Literal["epochs", "early_stop", "max_steps", "max_minutes", "interrupted"]

START_WEIGHTS = ckpt.START_WEIGHTS
"""The model as training found it, in the run's checkpoints folder (the epoch-0 candidate)."""

EARLY_STOP_FROM = 0.5
"""Share of the learning-rate decay (:func:`~foxhunt.train.optimizer.schedule.decay_progress`:
steps or, with ``--max-minutes``, the time budget) before ``patience`` can stop a run."""


@dataclass
class FitResult:
    """How a call to :func:`fit` ended.

    Attributes:
        state: Loop counters at the end.
        stop_reason: ``epochs`` (all done), ``early_stop``, ``max_steps``, ``max_minutes`` or
            ``interrupted``.
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
    progress: Progress | None = None,
    world: World | None = None,
    listeners: Sequence[Listener] = (),
    clock: Clock | None = None,
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
        resume: The resume state of the last complete epoch
            (see :func:`foxhunt.artifacts.resume.resume_state`).
        stop: When set (e.g. by SIGINT), the loop stops before the next optimizer step and
            discards the epoch in progress.
        progress: A progress display; None draws nothing.
        world: This process's place in a data-parallel job; None: one process.
        listeners: See every metrics record and memory snapshot (TensorBoard, tuning);
            one that raises ends the run there.
        clock: Wall clock for ``max_minutes`` (default ``time.monotonic``; tests inject one).

    Returns:
        The loop's end state and why it stopped.

    Raises:
        FloatingPointError: If the training loss stops being finite.
        OutOfMemoryAtMicroBatchOne: If a single sample does not fit.
    """
    tc = cfg.train
    world = world or World()
    device = torch.device(tc.device)
    kit, state = _setup(model, len(train), cfg, world, device, resume)
    optimizer, grad_scaler, total_steps = kit.optimizer, kit.grad_scaler, kit.total_steps
    deadline = Deadline(tc.max_minutes, state.train_seconds, *([clock] if clock else []))
    val = validation_windows(val, kit.steps_per_epoch * tc.batch_size, tc.validation_windows,
                             tc.seed)  # fmt: skip
    obs = LoopObserver.for_fit(run.metrics, world.is_main, memory, progress, tc, listeners)
    stop = stop or threading.Event()
    obs.snapshot("run_start", epoch=state.epoch, step=state.step)
    if resume is None:  # the start competes for the final checkpoint (_save_final)
        loss = _validate(model, val, kit, tc, world, memory, 0, 0, progress)
        _start_is_best(run, model, state, loss, sidecar, world.is_main)
        empty_cache(device)  # what validating the start left cached is not training's
    stop_reason: StopReason = "epochs" if state.step < total_steps else "max_steps"
    backoffs: list[str] = []
    for epoch in range(state.epoch + 1, tc.epochs + 1):
        if stop_reason != "epochs":
            break
        n_steps = min(kit.steps_per_epoch, total_steps - state.step)
        train_loss = _train_epoch(
            kit, train, tc, world, state, epoch, n_steps, stop, obs, backoffs, deadline
        )
        if train_loss is None:
            stop_reason = "interrupted"
            obs.interrupted(epoch, state.step, state.epoch, run.root)
            break
        obs.snapshot("after_training", epoch=epoch, step=state.step)
        empty_cache(device)  # training's cached blocks go back before validation allocates
        obs.snapshot("before_validation", epoch=epoch, step=state.step)
        with averaged(kit.average) as train_weights:  # validate and save the average, if any
            val_loss = _validate(model, val, kit, tc, world, memory, epoch, state.step, progress)
            empty_cache(device)  # and validation's, so epoch ends compare live memory
            improved = state.end_epoch(epoch, val_loss, kit.micro.micro)
            state.train_seconds = deadline.seconds
            metrics = {"train_loss": train_loss, "val_loss": val_loss}
            if world.is_main:  # DDP: one checkpoint set, written by rank 0
                save_epoch(
                    run, model, optimizer, grad_scaler, asdict(state), sidecar, metrics,
                    improved, total_steps, train_weights,
                )  # fmt: skip
        obs.epoch_end(epoch, state.step, metrics, improved, state.samples_seen)
        stop_reason = _stop_after(state, epoch, tc, total_steps, deadline)

    final = None
    if stop_reason != "interrupted" and state.epoch > 0 and world.is_main:
        final = _save_final(run, model, state, sidecar, stop_reason)
    obs.run_end(state.epoch, state.step)
    return FitResult(state, stop_reason, final, backoffs)


def _validate(
    model: nn.Module,
    val: WindowSource,
    kit: _StepKit,
    tc: TrainConfig,
    world: World,
    memory: MemoryLog,
    epoch: int,
    step: int,
    progress: Progress | None,
) -> float:
    """The validation loss; DDP: each rank validates its shard, the sample-weighted mean is
    reduced over ranks."""
    shard = ShardedWindows(val, world) if world.distributed else val
    loss = validate(
        model, shard, batch_size=tc.validation_batch_size, quantiles=kit.quantiles,
        precision=tc.precision, memory=memory, epoch=epoch, step=step, progress=progress,
    )  # fmt: skip
    return world.mean(loss, len(shard), kit.quantiles.device)


def _start_is_best(
    run: RunDir,
    model: nn.Module,
    state: LoopState,
    loss: float,
    sidecar: Mapping[str, Any],
    is_main: bool,
) -> None:
    """The starting weights, validated (``loss``), are epoch 0: saved as ``tft_start`` and the
    best so far, so an epoch is "best" (its line, ``metrics.jsonl``, ``best.json``, early
    stopping) only when it beats them and every earlier epoch."""
    state.start_val_loss = loss
    if math.isfinite(loss):
        state.best_val_loss, state.best_epoch = loss, 0
    if is_main:
        meta = {**sidecar, "epoch": 0, "step": 0, "metrics": {"val_loss": loss}}
        ckpt.save_weights(run.checkpoints / START_WEIGHTS, model.state_dict(), meta)
        if math.isfinite(loss):
            ckpt.mark_best(run.checkpoints, 0, loss)


def _save_final(
    run: RunDir, model: nn.Module, state: LoopState, sidecar: Mapping[str, Any], reason: str
) -> Path | None:
    """The best epoch's weights as the final checkpoint; the starting weights when no epoch
    beat them (``state`` then says best epoch 0 with the start's loss); None when no loss was
    finite."""
    if state.best_epoch > 0 and not state.start_val_loss < state.best_val_loss:
        return save_final(run, model, asdict(state), sidecar, reason)
    if not math.isfinite(state.start_val_loss):
        return None
    state.best_epoch, state.best_val_loss = 0, state.start_val_loss
    path = save_final(run, model, asdict(state), sidecar, reason)
    log.info(
        "no epoch beat the starting weights (validation loss %.6g): kept them", state.best_val_loss
    )
    return path


@dataclass(frozen=True)
class _StepKit:
    """What every optimizer step of a run uses."""

    net: nn.Module
    optimizer: Optimizer
    grad_scaler: torch.amp.GradScaler
    micro: MicroBatching
    quantiles: torch.Tensor
    total_steps: int
    steps_per_epoch: int
    average: WeightAverage | None = None


def _setup(
    model: nn.Module,
    n_train: int,
    cfg: RunConfig,
    world: World,
    device: torch.device,
    resume: Mapping[str, Any] | None,
) -> tuple[_StepKit, LoopState]:
    """Model on the device (recomputation on if asked), optimizer, scaler, micro-batching and
    the loop counters: fresh, or restored from ``resume``."""
    tc = cfg.train
    model.to(device)
    if tc.checkpointing:
        set_checkpointing(model, True)  # recompute block activations in backward
    set_internal_recompute(model, tc.recompute)  # VSN streaming and LSTM recompute (or not)
    optimizer = build_optimizer(model, lr=tc.lr, weight_decay=tc.weight_decay)
    grad_scaler = torch.amp.GradScaler(device.type, enabled=tc.precision == "fp16")
    epoch_windows = (
        n_train if tc.epoch_steps is None else min(n_train, tc.epoch_steps * tc.batch_size)
    )
    steps_per_epoch = world.steps_per_epoch(epoch_windows, tc.batch_size)
    state = LoopState(micro_batch=tc.micro_batch)
    if resume is not None:
        state = LoopState(**restore(resume, optimizer, grad_scaler, device))
    average = start_average(model, tc.weight_average, state.step, resume)
    local_batch = world.per_rank_batch(tc.batch_size)
    kit = _StepKit(
        net=world.wrap(model, device),  # DDP: `net` trains; `model` is validated and saved
        optimizer=optimizer,
        grad_scaler=grad_scaler,
        micro=MicroBatching(local_batch, min(state.micro_batch, local_batch)),
        quantiles=torch.tensor(cfg.model.quantiles, dtype=torch.float32, device=device),
        total_steps=int(min(tc.epochs * steps_per_epoch, tc.max_steps or math.inf)),
        steps_per_epoch=steps_per_epoch,
        average=average,
    )
    return kit, state


def _train_epoch(
    kit: _StepKit,
    train: WindowSource,
    tc: TrainConfig,
    world: World,
    state: LoopState,
    epoch: int,
    n_steps: int,
    stop: threading.Event,
    obs: LoopObserver,
    backoffs: list[str],
    deadline: Deadline,
) -> float | None:
    """``n_steps`` optimizer steps of ``epoch`` (fewer when ``deadline`` passes: at least one);
    the sample-weighted mean training loss, or None when ``stop`` was set (the epoch is then
    discarded)."""
    device = kit.quantiles.device
    obs.epoch_start(epoch, state.step, n_steps)
    kit.net.train()
    order = epoch_sample(len(train), n_steps * tc.batch_size, seed=tc.seed, epoch=epoch).tolist()
    loss_sum, samples = 0.0, 0
    for start in range(0, n_steps * tc.batch_size, tc.batch_size):
        if world.any(stop.is_set(), device):  # DDP: a signal on any rank stops all of them
            return None
        if samples and world.any(deadline.passed(), device):  # DDP: all ranks stop together
            break
        global_batch = order[start : start + tc.batch_size]
        batch = train.batch(world.shard(global_batch))  # DDP: this rank's share
        lr = lr_at(
            state.step,
            peak_lr=tc.lr,
            warmup_steps=tc.warmup_steps,
            total_steps=kit.total_steps,
            time_fraction=deadline.fraction(),  # --max-minutes: the cosine ends with the budget
        )
        for group in kit.optimizer.param_groups:
            group["lr"] = lr
        loss, grad_norm, messages = train_step(
            kit.net,
            batch,
            kit.optimizer,
            kit.grad_scaler,
            kit.micro,
            quantiles=kit.quantiles,
            precision=tc.precision,
            grad_clip=tc.grad_clip,
            step=state.step,
            memory=obs.memory,
            grad_weight=world.grad_weight(batch.size, len(global_batch)),
        )
        loss = world.mean(loss, batch.size, device)  # DDP: the global batch's mean loss
        backoffs += messages
        obs.oom(epoch, state.step, messages)
        if not math.isfinite(loss):
            raise FloatingPointError(
                f"training loss is {loss} at step {state.step} (epoch {epoch}); "
                f"lower --lr (now {tc.lr}) or use --precision fp32"
            )
        state.step += 1
        if kit.average is not None:
            kit.average.update()
        world.maybe_fail(state.step)  # test hook (FOXHUNT_DDP_FAIL); no-op otherwise
        state.samples_seen += len(global_batch)
        samples += len(global_batch)
        loss_sum += loss * len(global_batch)
        obs.step(
            epoch,
            state.step,
            len(global_batch),
            loss,
            lr=lr,
            grad_norm=grad_norm,
            micro_batch=kit.micro.micro,
            accumulation=kit.micro.accumulation,
        )
    return loss_sum / max(samples, 1)


def _stop_after(
    state: LoopState, epoch: int, tc: TrainConfig, total_steps: int, deadline: Deadline
) -> StopReason:
    """Why the run stops after ``epoch`` (``tc.epochs``: it goes on, or ends with the last one).

    Early stopping (``tc.patience`` epochs without improvement) waits until the learning rate's
    cosine is :data:`EARLY_STOP_FROM` of the way down: a plateau at the peak rate says little
    about the network the lower rates settle (a 30-minute run on a year of 1-minute bars, stopped
    by patience 3 after 8.5 minutes, had improved again at 6 of its 12 later epochs in another
    run; docs/recipe.md, "A fixed median and early stopping that waits").
    """
    if deadline.passed() and (epoch < tc.epochs and state.step < total_steps):
        log.info("--max-minutes: %.1f minutes of training spent", deadline.seconds / 60)
        return "max_minutes"
    if state.epochs_without_improvement >= tc.patience:
        progress = decay_progress(
            state.step,
            warmup_steps=tc.warmup_steps,
            total_steps=total_steps,
            time_fraction=deadline.fraction(),
        )
        if progress >= EARLY_STOP_FROM:
            log.info("early stop: no improvement for %d epochs", tc.patience)
            return "early_stop"
        if epoch < tc.epochs and state.step < total_steps:
            log.info(
                "no improvement for %d epochs; early stopping waits until the learning rate "
                "is %.0f %% of its way down (%.0f %% now)",
                state.epochs_without_improvement, 100 * EARLY_STOP_FROM, 100 * progress,
            )  # fmt: skip
    if state.step >= total_steps and epoch < tc.epochs:
        return "max_steps"
    return "epochs"
