"""``foxhunt train``: bars in, a self-describing run directory out.

:func:`run_training` takes the run directory's lock and resolves the run (fresh, ``--resume`` or
``--overwrite``; see :mod:`foxhunt.train.resolve`), checks the device and precision, prepares
the data, chooses the target scale and fits the baselines (:mod:`foxhunt.train.prepare`: in a
child process for the CLI), applies a memory budget, writes ``config.json``,
``features.json``, ``baselines.json`` and ``run.json``, calls :func:`foxhunt.train.loop.fit`
with SIGINT/SIGTERM turned into a clean stop, then writes the interpretation data and the
report. Under ``torchrun`` every rank runs this function (see :mod:`foxhunt.train.distributed`):
all ranks prepare the data and train; rank 0 alone writes the run directory's files. With
``--bars`` a feature store (``foxhunt features --shards``), no rank computes features: rank 0
builds the window arrays once and every rank reads its windows from them.
An interrupted run exits through ``KeyboardInterrupt`` (exit code 130) with every
complete epoch on disk; ``foxhunt train --resume RUN_DIR`` continues it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from foxhunt import runtime
from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.calibration import write_calibration
from foxhunt.artifacts.rundir import RunDir, features_record
from foxhunt.config import RunConfig
from foxhunt.data.market.instruments import instruments_to_dict
from foxhunt.data.prepared import PreparedData
from foxhunt.data.scale.target import TargetScale
from foxhunt.data.store.manifest import is_feature_store
from foxhunt.errors import InputError, ModelDirError
from foxhunt.memory.budget import check_above_baseline, training_peak
from foxhunt.memory.log import MemoryLog
from foxhunt.memory.process import measured_baseline
from foxhunt.memory.units import format_bytes, parse_bytes
from foxhunt.model.tft import TFT
from foxhunt.runtime import truncate_jsonl
from foxhunt.train.calibration.calibrate import fit_calibration
from foxhunt.train.distributed import World, process_group, rank_device, world_from_env
from foxhunt.train.head_init import standardised_target_quantiles, start_head
from foxhunt.train.loop import fit
from foxhunt.train.observer import Listener, Progress
from foxhunt.train.prepare import prepare, prepare_in_child, spill_folder
from foxhunt.train.reporting.interpret import SelectionWeights, write_interpretation
from foxhunt.train.resolve import hold_run, resolve_run, run_root
from foxhunt.train.resources.plan import (
    apply_budget,
    check_child_peak,
    child_fits_budget,
    data_bytes,
    warn_large_preparation,
)
from foxhunt.train.resources.threads import set_cpu_threads
from foxhunt.train.signals import signals_held, stop_on_signals
from foxhunt.version import __version__

log = logging.getLogger(__name__)

CALIBRATION_WINDOWS = 30_000
"""Validation windows calibration uses at most (every k-th; 100 k took 16 min at load 10)."""

ProgressFactory = Callable[[int, int], contextlib.AbstractContextManager[Progress]]
"""Makes a progress display from (epochs, first epoch)."""

ProcessSetup = Callable[[RunConfig], None]
"""Applies process-wide settings (the CLI: ``memory.allocator.apply_cpu_allocator``)."""


@dataclass(frozen=True)
class TrainedRun:
    """Where a finished training run is and how it ended.

    Attributes:
        root: The run directory.
        final: The final (best) weights; None on a non-main rank.
        best_epoch: Epoch of the best validation loss.
        best_val_loss: That loss.
        is_main: False on the other ranks of a torchrun job (rank 0 reports).
    """

    root: Path
    final: Path | None
    best_epoch: int
    best_val_loss: float
    is_main: bool = True


def run_training(
    cfg: RunConfig,
    bars: Path | None,
    out: Path | None,
    resume: Path | None,
    memory_budget: str | None,
    allow_precision_change: bool,
    *,
    progress: ProgressFactory | None = None,
    overwrite: bool = False,
    listeners: Sequence[Listener] = (),
    process_setup: ProcessSetup | None = None,
    isolate: bool = False,
) -> TrainedRun:
    """Train a TFT and write its run directory, holding its lock (:mod:`foxhunt.train.resolve`).

    Args:
        cfg: The resolved config (ignored with ``resume``: the run's own config.json is used).
        bars: Bars file, directory or glob (with ``resume``: default the run's own bars).
        out: Run directory; default ``runs/<preset>``.
        resume: Continue the run in this directory from its last complete epoch.
        memory_budget: e.g. ``1GB``: let the planner pick micro-batch, checkpointing and
            precision that fit (fresh runs only).
        allow_precision_change: Let the planner switch to bf16.
        progress: Makes the progress display, given ``(epochs, first_epoch)``; called on the
            main rank only. None: nothing is drawn (epoch lines are logged).
        overwrite: Replace a run already in ``out`` (its files are deleted once the new run's
            data is ready).
        listeners: Handed every metrics record and memory snapshot of the loop, on the main
            rank (:data:`foxhunt.train.observer.Listener`: TensorBoard, a tuning trial's pruner).
        process_setup: Called once with the final train config (``auto`` precision resolved,
            the budget planned, the data prepared), before the model is built: the CLI applies
            the CPU allocator there. The library itself changes no process-wide setting.
        isolate: Prepare the data in a child process (:mod:`foxhunt.train.prepare`; the CLI
            does, for one process from bars), so this one never holds pandas, scipy, arenas.

    Returns:
        The run directory and its best epoch.

    Raises:
        InputError: Bad arguments, bad data (DataError) or a bad run directory (ModelDirError),
            also one another process is writing (the message names its pid).
        KeyboardInterrupt: After SIGINT/SIGTERM, once the complete epochs are safely on disk.
    """
    started = time.perf_counter()
    root = run_root(cfg, out, resume)
    is_main = world_from_env().is_main
    with hold_run(root, resume=resume is not None, overwrite=overwrite, is_main=is_main):
        run, cfg, bars = resolve_run(cfg, bars, root, resume is not None, overwrite)
        device = _check_device(cfg)
        # torchrun: join the process group for the rest of the run (one process: no change).
        with process_group(device) as world:
            return _train(
                cfg,
                bars,
                run,
                resume,
                memory_budget,
                allow_precision_change,
                progress,
                process_setup,
                isolate=isolate,
                world=world,
                device=rank_device(world, device),
                started=started,
                listeners=listeners,
            )


def _train(
    cfg: RunConfig,
    bars: Path,
    run: RunDir,
    resume: Path | None,
    memory_budget: str | None,
    allow_precision_change: bool,
    progress_factory: ProgressFactory | None,
    process_setup: ProcessSetup | None,
    *,
    isolate: bool,
    world: World,
    device: torch.device,
    started: float,
    listeners: Sequence[Listener] = (),
) -> TrainedRun:
    """The body of :func:`run_training`, on one rank of ``world``."""
    if device != torch.device(cfg.train.device):
        cfg = cfg.replace(train={"device": str(device)})  # torchrun on CUDA: cuda:LOCAL_RANK
    requested_precision = cfg.train.precision
    # Resolved once; config.json stores the choice, so resume, evaluate and predict reuse it.
    cfg = cfg.replace(train={"precision": runtime.resolve_precision(requested_precision, device)})
    per_rank = world.per_rank_batch(cfg.train.batch_size)
    budget = memory_budget if resume is None else None
    baseline = measured_baseline()  # this process's RSS before the data (CPU plans use it)
    if budget is not None:  # refuse a budget below the import baseline before reading data
        check_above_baseline(cfg, parse_bytes(budget), baseline=baseline)
    set_cpu_threads(cfg.train.num_threads, device)  # and warn when the CPU is already busy

    fresh = resume is None or not ckpt.complete_epochs(run.checkpoints)
    wants = {"choose_scale": resume is None, "baselines": fresh and world.is_main}
    in_child = isolate and not world.distributed and not is_feature_store(bars)
    if in_child and budget is not None and device.type == "cpu":  # the child counts too
        in_child = child_fits_budget(cfg, budget, bars, baseline)
    # (a child warns itself: counting the rows imports pyarrow, 35 MiB this process would hold)
    if world.is_main and device.type == "cpu" and not is_feature_store(bars) and not in_child:
        warn_large_preparation(cfg, bars)
    if in_child:
        prepared = prepare_in_child(bars, cfg, scratch=run.root, **wants)
        if budget is not None and device.type == "cpu":
            check_child_peak(budget, baseline, prepared.peak_rss)
    elif is_feature_store(bars):  # rank 0 builds the window cache once
        prepared = prepare(bars, cfg, coordinator=world, **wants)
    else:  # the window arrays go to files in the run directory, mapped (row_files.py)
        with spill_folder(run.root) as rows:
            prepared = prepare(bars, cfg, coordinator=world, spill=rows, **wants)
    data, cfg = prepared.data, prepared.cfg
    if budget is not None:
        cfg = apply_budget(
            cfg, budget, allow_precision_change, per_rank, data_bytes(data), baseline,
            data_process=not in_child,
        )  # fmt: skip
    elif device.type == "cpu":  # no budget: the fastest settings, and what they will cost
        t = cfg.train
        peak = training_peak(
            cfg,
            t.micro_batch,
            t.checkpointing,
            t.precision,
            data_bytes=data_bytes(data),
            baseline=baseline,
        )
        log.info("estimated peak RSS %s (%s allocator, %s, recompute %s; docs/memory.md)",
                 format_bytes(peak), t.cpu_allocator, t.precision, t.recompute)  # fmt: skip
    if process_setup is not None:
        process_setup(cfg)
    if resume is not None:
        _check_same_data(run, data)
    memory_path = _memory_path(run, world)
    if world.is_main:
        if fresh:  # what a replaced run (--overwrite) or one that died before epoch 1 left
            run.clear()
        run.create()
        if fresh:
            assert prepared.baselines is not None and prepared.ends is not None
            _start_fresh(
                run,
                cfg,
                bars,
                data,
                prepared.baselines,
                (prepared.starts or {}, prepared.ends),
                memory_budget,
                requested_precision,
            )
    world.barrier()  # the other ranks start once rank 0 has laid out the run directory
    if fresh and not world.is_main:
        memory_path.unlink(missing_ok=True)

    torch.manual_seed(cfg.train.seed)  # same initial weights on every rank
    model = TFT(cfg.model)
    state = _load_last_epoch(run, model, world, memory_path) if resume is not None else None
    sidecar = {
        "config": cfg.to_dict(),
        "features": features_record(data.spec, data.scaler, data.fingerprint),
    }
    memory = MemoryLog(memory_path, device)
    # The network learns targets divided by the run's target scale (data/scale/target.py).
    scale = TargetScale.of(cfg.data, data.spec, data.scaler)
    train_windows, val_windows = (d.with_target_scale(scale) for d in (data.train, data.val))
    if state is None and cfg.model.monotone_quantiles:  # start at the scale-only forecast
        start = standardised_target_quantiles(train_windows, cfg.model.quantiles)
        start_head(model, start)
    stop = threading.Event()
    first_epoch = state["loop"]["epoch"] + 1 if state else 1
    make_progress = progress_factory if progress_factory and world.is_main else None
    with (
        stop_on_signals(stop),
        make_progress(cfg.train.epochs, first_epoch)
        if make_progress
        else contextlib.nullcontext() as progress,
    ):
        result = fit(
            model,
            train_windows,
            val_windows,
            cfg,
            run,
            sidecar=sidecar,
            memory=memory,
            resume=state,
            stop=stop,
            progress=progress,
            world=world,
            listeners=listeners,
        )

    if not world.is_main:  # DDP: the run directory's files are rank 0's
        if result.stop_reason == "interrupted":
            raise KeyboardInterrupt(f"rank {world.rank}: training interrupted")
        return TrainedRun(
            run.root, None, result.state.best_epoch, result.state.best_val_loss, is_main=False
        )
    _update_run_info(
        run,
        stop_reason=result.stop_reason,
        steps=result.state.step,
        epochs=result.state.epoch,
        micro_batch=result.state.micro_batch,
        seconds=time.perf_counter() - started,
        finished=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    )
    if result.stop_reason == "interrupted":
        _write_report(run)
        raise KeyboardInterrupt(
            f"training interrupted; resume with: foxhunt train --resume {run.root}"
        )

    cal_windows = val_windows.thinned(CALIBRATION_WINDOWS)
    weights = SelectionWeights(data.spec, len(cal_windows))  # filled by the calibration pass
    t = cfg.train
    calibration = fit_calibration(
        model, cal_windows, cfg.model.quantiles, batch_size=t.validation_batch_size,
        device=device, precision=t.precision, on_output=weights.add,
    )  # fmt: skip
    write_interpretation(run, model, data, cfg, device, weights.result())
    if calibration is not None:
        write_calibration(run.calibration, calibration)
    _write_report(run)
    return TrainedRun(
        run.root, result.final_weights, result.state.best_epoch, result.state.best_val_loss
    )


# --- setup -----------------------------------------------------------------------------------


def _check_device(cfg: RunConfig) -> torch.device:
    device = runtime.parse_device(cfg.train.device)
    if cfg.train.precision == "fp16" and device.type != "cuda":
        raise InputError("--precision fp16 needs a CUDA device (use bf16 on CPU)")
    return device


def _check_same_data(run: RunDir, data: PreparedData) -> None:
    rec = runtime.read_json(run.features, "features.json")
    if rec.get("fingerprint") != data.fingerprint:
        raise ModelDirError(
            f"{run.root}: these bars differ from the ones the run was trained on "
            f"(fingerprint {data.fingerprint[:12]} vs {str(rec.get('fingerprint'))[:12]}); "
            "resume needs the same bars"
        )


def _start_fresh(
    run: RunDir,
    cfg: RunConfig,
    bars: Path,
    data: PreparedData,
    baselines: dict[str, Any],
    span: tuple[dict[str, str], dict[str, str]],
    memory_budget: str | None,
    requested_precision: str,
) -> None:
    """Write the run's description files (``span``: ``data_start`` and ``data_end``,
    :class:`RunData`)."""
    cfg.save(run.config)
    runtime.atomic_write_json(
        run.features, features_record(data.spec, data.scaler, data.fingerprint)
    )
    runtime.atomic_write_json(run.baselines, baselines)
    if data.instruments is not None:  # an older feature store: none (globex, as its features)
        runtime.atomic_write_json(run.instruments, instruments_to_dict(data.instruments))
    runtime.atomic_write_json(
        run.run_info,
        {
            "bars": str(Path(bars).resolve()),
            "fingerprint": data.fingerprint,
            "symbols": list(data.train.symbols),
            "bar_interval_s": data.bar_interval_s,
            "data_start": span[0],
            "data_end": span[1],
            "windows": {"train": len(data.train), "val": len(data.val), "test": len(data.test)},
            "parameters": sum(p.numel() for p in TFT(cfg.model).parameters()),
            "memory_budget": memory_budget,
            "precision": {"requested": requested_precision, "used": cfg.train.precision},
            "cpu_allocator": cfg.train.cpu_allocator,
            "foxhunt_version": __version__,
            "torch_version": torch.__version__,
            "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "stop_reason": "running",
        },
    )


def _write_report(run: RunDir) -> None:
    with signals_held():  # a Ctrl-C inside matplotlib's C extensions' import aborted Python
        from foxhunt.train.reporting.report import (
            write_report,  # matplotlib (30 MiB): not while training
        )

    write_report(run)


def _memory_path(run: RunDir, world: World) -> Path:
    """``memory.jsonl`` for rank 0 (and single-process runs), ``memory.rankN.jsonl`` else."""
    return run.memory if world.is_main else run.root / f"memory.rank{world.rank}.jsonl"


def _load_last_epoch(
    run: RunDir, model: TFT, world: World, memory_path: Path
) -> dict[str, Any] | None:
    """Load the last complete epoch's weights into ``model``; return its resume state.

    Every rank loads the same checkpoint; each trims only the log files it writes.
    """
    epochs = ckpt.complete_epochs(run.checkpoints)
    if not epochs:
        log.info("%s: no complete epoch yet; starting from scratch", run.root)
        return None
    epoch = epochs[-1]
    weights, _ = ckpt.load_weights(ckpt.epoch_weights_path(run.checkpoints, epoch))
    try:
        model.load_state_dict(weights, strict=True)
    except RuntimeError as e:
        raise ModelDirError(
            f"{run.checkpoints}: epoch {epoch} weights do not fit config.json"
        ) from e
    state = ckpt.load_resume_state(ckpt.optimizer_path(run.checkpoints, epoch))
    # Drop what the discarded (partial) epoch logged; keep lines without a step (warnings).
    step = int(state["loop"]["step"])
    if world.is_main:
        truncate_jsonl(run.metrics, lambda r: r.get("step") is None or r["step"] <= step)
    truncate_jsonl(memory_path, lambda r: r.get("epoch") is None or r["epoch"] <= epoch)
    log.info("resuming %s after epoch %d (step %d)", run.root, epoch, state["loop"]["step"])
    return state


def _update_run_info(run: RunDir, **fields: Any) -> None:
    info = runtime.read_json(run.run_info, "run.json") if run.run_info.is_file() else {}
    info.update(fields)
    runtime.atomic_write_json(run.run_info, info)
