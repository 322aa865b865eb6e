"""Hyper-parameter search with Optuna (``foxhunt tune``): short training runs, pruned on their
validation losses, each inside a memory budget, the best config written as a file.

Each trial is an ordinary training run (:func:`foxhunt.train.run.run_training`) of the base
config with the sampled values, in ``OUT/trials/NNN``; a listener on the loop's records
(:data:`foxhunt.train.observer.Listener`) reports every epoch's validation loss to Optuna and
stops the run when the pruner says so. The trial's score is the validation loss of the weights it kept (the start's when no epoch
beat them, as its ``best.json`` says). Before a
trial trains, the memory planner (:func:`foxhunt.memory.budget.plan_budget`) fits it into the
budget (micro-batch, checkpointing, validation batch); a trial that cannot fit is skipped and
recorded as ``over budget``. Trials keep their metrics and report; their checkpoints are deleted
(tuning's product is the config: train it with ``foxhunt train --config OUT/best.toml``).

The search space (:func:`suggest`), around the base config:

- ``train.lr``: log-uniform in [base / 10, base x 10];
- ``train.weight_decay``: log-uniform in [1e-4, 1e-1];
- ``train.batch_size``: half, same or double the base;
- ``model.hidden``: half, same or double the base (multiples of ``n_heads``);
- ``model.dropout``: uniform in [0, 0.3];
- ``model.encoder_length``: half or same as the base.

Deterministic for a seed: the sampler (TPE) is seeded with it, and every trial trains with the
base config's seed.

The study lives in ``OUT/study.log`` (Optuna's journal file storage) and ``OUT/trials.json`` is
rewritten after every trial, so a search stopped by Ctrl-C or SIGTERM (or killed) keeps its
finished trials; ``resume`` continues it up to ``trials`` in all, the sampler and the pruner
seeing the earlier trials. A resumed search is not the same as one never stopped: the
sampler is seeded with the seed plus the number of earlier trials (seeded with the seed alone,
its random start replayed the first trial's values, and the resumed trial was wasted).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import optuna

from foxhunt.artifacts.outputs import clear_outputs, refuse_held_outputs
from foxhunt.config import RunConfig
from foxhunt.config_files import write_config_file
from foxhunt.errors import InputError
from foxhunt.memory.budget import plan_budget, training_peak
from foxhunt.memory.units import parse_bytes
from foxhunt.runtime import atomic_write_json
from foxhunt.train.observer import Listener
from foxhunt.train.resources.plan import plan_margin
from foxhunt.train.run import ProgressFactory, run_training

log = logging.getLogger(__name__)

OUTPUTS = ("best.toml", "trials.json", "trials", "study.log", "study.log.lock")
"""What a search writes in its ``OUT`` (refused there without ``overwrite``, cleared with it)."""

TrialState = Literal["complete", "pruned", "over budget", "failed"]


@dataclass(frozen=True)
class TuneSettings:
    """How ``foxhunt tune`` searches.

    Attributes:
        trials: Trials to run (skipped and pruned ones count).
        seed: Seed of the sampler.
        memory_budget: e.g. ``1GB``: each trial must fit it (None: no budget).
        epochs: Epochs per trial (None: the base config's).
        max_steps: Optimizer steps per trial (None: no limit).
    """

    trials: int
    seed: int = 0
    memory_budget: str | None = None
    epochs: int | None = None
    max_steps: int | None = None

    def __post_init__(self) -> None:
        if self.trials < 1:
            raise InputError(f"--trials must be >= 1, got {self.trials}")


@dataclass(frozen=True)
class TrialResult:
    """One trial as it ended.

    Attributes:
        number: Trial number, from 0.
        params: The sampled values, by dotted config key (``train.lr``).
        state: ``complete``, ``pruned`` (by the pruner), ``over budget`` (skipped before
            training) or ``failed`` (bad input for these values; ``message`` says why).
        val_loss: Validation loss of the weights the trial kept (the start's when no epoch beat
            them); of its best epoch so far when pruned (None: no epoch ran).
        epochs: Epochs it ran.
        estimated_peak: Estimated training peak bytes at the settings it ran (or would have).
        seconds: Wall time.
        message: Why it failed or was skipped.
    """

    number: int
    params: Mapping[str, Any]
    state: TrialState
    val_loss: float | None
    epochs: int
    estimated_peak: int
    seconds: float
    message: str = ""


@dataclass(frozen=True)
class TuneResult:
    """The search's outcome: every trial, the best one and where its config was written."""

    trials: list[TrialResult]
    best: TrialResult
    best_config: RunConfig
    best_path: Path


def suggest(trial: optuna.Trial, base: RunConfig) -> dict[str, Any]:
    """Sample one point of the search space around ``base`` (see the module docstring)."""
    m, t = base.model, base.train
    hidden = sorted({max(m.n_heads, _round_to(m.hidden * f, m.n_heads)) for f in (0.5, 1, 2)})
    batch = sorted({max(1, t.batch_size // 2), t.batch_size, t.batch_size * 2})
    encoder = sorted({max(1, m.encoder_length // 2), m.encoder_length})
    return {
        "train.lr": trial.suggest_float("train.lr", t.lr / 10, t.lr * 10, log=True),
        "train.weight_decay": trial.suggest_float("train.weight_decay", 1e-4, 1e-1, log=True),
        "train.batch_size": trial.suggest_categorical("train.batch_size", batch),
        "model.hidden": trial.suggest_categorical("model.hidden", hidden),
        "model.dropout": trial.suggest_float("model.dropout", 0.0, 0.3),
        "model.encoder_length": trial.suggest_categorical("model.encoder_length", encoder),
    }


def apply_params(base: RunConfig, params: Mapping[str, Any]) -> RunConfig:
    """``base`` with dotted keys (``train.lr``) replaced; the micro-batch follows a new batch."""
    sections: dict[str, dict[str, Any]] = {}
    for key, value in params.items():
        section, name = key.split(".", 1)
        sections.setdefault(section, {})[name] = value
    if "batch_size" in sections.get("train", {}):
        sections["train"]["micro_batch_size"] = None
    return base.replace(**sections)


def pruning_listener(trial: optuna.Trial, losses: list[float]) -> Listener:
    """Report each epoch's validation loss to ``trial`` (and append it to ``losses``); raise
    TrialPruned when the pruner says the trial should stop."""

    def listen(record: Mapping[str, Any]) -> None:
        if record.get("kind") != "epoch":
            return
        losses.append(float(record["val_loss"]))
        trial.report(losses[-1], step=int(record["epoch"]))
        if trial.should_prune():
            raise optuna.TrialPruned(f"pruned after epoch {record['epoch']}")

    return listen


def tune(
    base: RunConfig,
    bars: Path,
    out: Path,
    settings: TuneSettings,
    *,
    progress: ProgressFactory | None = None,
    on_trial: Callable[[TrialResult], None] | None = None,
    overwrite: bool = False,
    resume: bool = False,
) -> TuneResult:
    """Search around ``base`` on ``bars``; write the best config to ``OUT/best.toml``.

    The best config is ``base`` with the best trial's values (fitted into the budget): the
    per-trial ``epochs`` and ``max_steps`` of ``settings`` are not carried into it.

    Args:
        base: The config the search starts from (a preset or a ``--config`` file).
        bars: Bars to train and validate every trial on.
        out: Directory for the trials (``trials/NNN``) and ``best.toml``.
        settings: Trials, seed, budget and per-trial length.
        progress: Progress display of each trial's training (as for ``run_training``).
        on_trial: Called with each trial's result as it ends.
        overwrite: Replace a search already in ``out`` (its :data:`OUTPUTS` are deleted
            before the first trial); without it (or ``resume``) such an ``out`` is refused.
        resume: Continue the search in ``out`` (its ``study.log`` and ``trials.json``) up to
            ``settings.trials`` trials in all; the base config, bars and per-trial settings
            must be the ones it started with.

    Returns:
        Every trial and the best one.

    Raises:
        InputError: ``out`` holds a search and neither ``overwrite`` nor ``resume`` is given;
            ``resume`` of no search or of one started otherwise; no trial completed (the first
            failure's message, or every one over budget).
        KeyboardInterrupt: Interrupted (SIGINT or SIGTERM); the finished trials are in
            ``OUT/trials.json`` and the study in ``OUT/study.log`` (``resume`` continues it).
    """
    out = Path(out)
    short = {"epochs": settings.epochs, "max_steps": settings.max_steps}
    trial_base = base.replace(train={k: v for k, v in short.items() if v is not None})
    search = json.loads(
        json.dumps(
            {"base": trial_base.to_dict(), "bars": str(bars), "budget": settings.memory_budget},
            default=str,
        )
    )  # as the study stores it
    if resume:
        if overwrite:
            raise InputError("--overwrite starts a new search; it cannot be used with --resume")
        results = _earlier_trials(out, search)
    else:
        refuse_held_outputs(out, OUTPUTS, "search", overwrite)
        clear_outputs(out, OUTPUTS)
        results = []
    out.mkdir(parents=True, exist_ok=True)
    # a resumed search's sampler must not replay the stream its first trials drew from
    sampler = optuna.samplers.TPESampler(seed=(settings.seed + len(results)) % 2**32)
    pruner = optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=0)
    study = optuna.create_study(
        study_name=STUDY,
        storage=_storage(out),
        load_if_exists=resume,
        direction="minimize",
        sampler=sampler,
        pruner=pruner,
    )
    if not resume:
        study.set_user_attr("search", search)

    def objective(trial: optuna.Trial) -> float:
        result = _run_trial(trial, trial_base, bars, out, settings.memory_budget, progress)
        results.append(result)
        atomic_write_json(out / "trials.json", [asdict(r) for r in results])
        if on_trial is not None:
            on_trial(result)
        if result.state != "complete":
            raise optuna.TrialPruned(result.state)
        assert result.val_loss is not None
        return result.val_loss

    remaining = settings.trials - len(results)
    if remaining > 0:
        with _sigterm_interrupts():
            study.optimize(objective, n_trials=remaining)
    done = [r for r in results if r.state == "complete"]
    if not done:
        why = next((r.message for r in results if r.state == "failed"), "")
        raise InputError(why or f"no trial completed ({', '.join(r.state for r in results)})")
    best = min(done, key=lambda r: (r.val_loss, r.number))
    best_config = _trial_config(base, best.params, settings.memory_budget)
    best_path = Path(out) / "best.toml"
    write_config_file(best_config, best_path)
    return TuneResult(results, best, best_config, best_path)


STUDY = "foxhunt-tune"
"""Name of the Optuna study in ``OUT/study.log``."""


def _storage(out: Path) -> optuna.storages.BaseStorage:
    from optuna.storages.journal import JournalFileBackend, JournalFileOpenLock, JournalStorage

    path = str(out / "study.log")
    return JournalStorage(JournalFileBackend(path, lock_obj=JournalFileOpenLock(path)))


def _earlier_trials(out: Path, search: Mapping[str, Any]) -> list[TrialResult]:
    """The finished trials of the search in ``out`` to resume (InputError: none there, or it
    was started with another base config, bars or budget)."""
    log_path, trials_path = out / "study.log", out / "trials.json"
    if not log_path.is_file():
        raise InputError(f"{out}: no search to resume (no study.log); start one without --resume")
    stored = optuna.load_study(study_name=STUDY, storage=_storage(out)).user_attrs.get("search")
    if stored != search:
        differ = [k for k in ("base", "bars", "budget") if (stored or {}).get(k) != search[k]]
        what = {"base": "config", "bars": "bars", "budget": "--memory-budget"}
        raise InputError(
            f"{out}: the search was started with another "
            f"{', '.join(what[k] for k in differ) or 'setting'}; resume it with the same "
            "--preset/--config, --bars, --epochs, --max-steps and --memory-budget"
        )
    if not trials_path.is_file():
        return []  # stopped before its first trial ended
    return [TrialResult(**r) for r in json.loads(trials_path.read_text())]


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM between trials stops the search as Ctrl-C does (inside a trial, training's own
    handler stops it cleanly after the step, :mod:`foxhunt.train.signals`)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_trial(
    trial: optuna.Trial,
    base: RunConfig,
    bars: Path,
    out: Path,
    budget: str | None,
    progress: ProgressFactory | None,
) -> TrialResult:
    started = time.perf_counter()
    params = suggest(trial, base)
    cfg = apply_params(base, params)
    peak = training_peak(cfg, cfg.train.micro_batch, cfg.train.checkpointing, cfg.train.precision)

    losses: list[float] = []

    def ended(state: TrialState, loss: float | None = None, message: str = "") -> TrialResult:
        epochs, seconds = len(losses), time.perf_counter() - started
        return TrialResult(trial.number, params, state, loss, epochs, peak, seconds, message)

    try:
        cfg = _trial_config(base, params, budget)
    except InputError as e:
        return ended("over budget", message=str(e))
    if budget is not None:
        peak = training_peak(
            cfg, cfg.train.micro_batch, cfg.train.checkpointing, cfg.train.precision
        )
    root = Path(out) / "trials" / f"{trial.number:03d}"
    kept: float | None = None
    try:
        kept = run_training(
            cfg,
            bars=bars,
            out=root,
            resume=None,
            memory_budget=None,  # planned above
            allow_precision_change=False,
            progress=progress,
            overwrite=True,
            listeners=[pruning_listener(trial, losses)],
            # each trial's data preparation in a child, as `foxhunt train` does: in this process
            # its peak was measured on top of the trials before it (770 MB against an estimated
            # 577 for a trial of 6,306 daily bars), and its arenas stayed (until session 54)
            isolate=True,
        ).best_val_loss
        state: TrialState = "complete"
    except optuna.TrialPruned:
        state = "pruned"
        _mark_pruned(root)
    except InputError as e:
        return ended("failed", message=str(e))
    finally:
        shutil.rmtree(root / "checkpoints", ignore_errors=True)
    # A complete trial scores the weights it kept (the start's when no epoch beat them);
    # a pruned one its best finite epoch so far (its last epoch's loss when none is finite).
    finite = [x for x in losses if math.isfinite(x)]
    loss = kept if kept is not None else (min(finite) if finite else (losses or [None])[-1])
    if loss is not None and not math.isfinite(loss):
        return ended("failed", message=f"trial {trial.number}: validation loss is {loss}")
    return ended(state, loss)


def _trial_config(base: RunConfig, params: Mapping[str, Any], budget: str | None) -> RunConfig:
    """The trial's config, fitted into ``budget`` by the planner (InputError: it cannot fit)."""
    cfg = apply_params(base, params)
    if budget is None:
        return cfg
    plan = plan_budget(
        cfg, parse_bytes(budget), allow_precision_change=False, margin=plan_margin(cfg)
    )  # with the same margin as ``foxhunt train``
    return plan.apply(cfg)


def _mark_pruned(root: Path) -> None:
    """Say in the trial's ``run.json`` that the pruner stopped it (it would say ``running``)."""
    from foxhunt.artifacts.rundir import RunDir
    from foxhunt.runtime import atomic_write_json, read_json

    info_path = RunDir(root).run_info
    if info_path.is_file():
        atomic_write_json(info_path, {**read_json(info_path, "run.json"), "stop_reason": "pruned"})


def _round_to(x: float, multiple: int) -> int:
    return int(round(x / multiple)) * multiple
