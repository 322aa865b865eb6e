"""``foxhunt train --ensemble N``: N complete training runs, one per seed, then one model.

Member ``k`` is an ordinary run directory, ``OUT/members/<k>``, trained by
:func:`foxhunt.train.run.run_training` with ``train.seed = seed + k`` and nothing else changed.
The members train one after another in this process, so the process's peak is one member's
(each member's peak RSS is measured from a reset high-water mark, Linux ``VmHWM``; so the
process's ``ru_maxrss``, seen from outside, ends as the last member's peak). When the
last has finished, the ensemble's own files are written beside them
(:mod:`foxhunt.artifacts.ensemble`): evaluate, predict, backtest scoring and the Python API
then load ``OUT`` as one model.

States of ``OUT``: ``ensemble.json``, ``config.json`` (the base config) and ``run.json``
(``stop_reason: running``) are written first; ``--resume OUT`` then skips finished members,
resumes the one that has complete epochs and trains the rest; the ensemble is finished (and
loadable) once ``run.json`` says ``finished``.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from foxhunt import runtime
from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.ensemble import (
    EnsemblePlan,
    is_ensemble_dir,
    member_root,
    read_plan,
    write_plan,
)
from foxhunt.artifacts.rundir import RunDir, read_config
from foxhunt.config import RunConfig
from foxhunt.errors import InputError, ModelDirError
from foxhunt.memory.counters import peak_rss_bytes, reset_peak_rss
from foxhunt.train.distributed import world_from_env
from foxhunt.train.resolve import hold_run, run_root
from foxhunt.train.run import ProcessSetup, ProgressFactory, run_training
from foxhunt.version import __version__

log = logging.getLogger(__name__)

_COPIED = ("config.json", "features.json", "baselines.json", "instruments.json")
"""Member 0's files the ensemble's directory holds (the members' are identical but for the
seed in config.json; features are checked)."""


@dataclass(frozen=True)
class MemberDone:
    """One member's training, as ``run.json`` records it.

    Attributes:
        index: k.
        seed: its training seed.
        dir: its run directory, relative to the ensemble's.
        seconds: wall time of the call that finished its training (a resumed member's
            earlier, interrupted part is not counted).
        peak_rss_bytes: this process's peak RSS while it trained (reset before it started;
            a data preparation in a child, ``isolate``, logs its own peak).
        best_epoch: its best epoch.
        best_val_loss: its validation loss there.
    """

    index: int
    seed: int
    dir: str
    seconds: float
    peak_rss_bytes: int
    best_epoch: int
    best_val_loss: float


@dataclass(frozen=True)
class EnsembleRun:
    """A finished ensemble: its directory and members (``seconds``, ``peak_rss_bytes``: the
    total time and the largest member's peak)."""

    root: Path
    members: tuple[MemberDone, ...]
    seconds: float
    peak_rss_bytes: int


def train_ensemble(
    cfg: RunConfig,
    n: int | None,
    *,
    bars: Path | None,
    out: Path | None,
    resume: Path | None,
    memory_budget: str | None = None,
    allow_precision_change: bool = False,
    progress: ProgressFactory | None = None,
    overwrite: bool = False,
    process_setup: ProcessSetup | None = None,
    isolate: bool = False,
    on_member: Callable[[int, int, int], None] | None = None,
    on_member_done: Callable[[MemberDone, int], None] | None = None,
) -> EnsembleRun:
    """Train (or, with ``resume``, finish) a seed ensemble of ``n`` members.

    Args:
        cfg: the base config (member k trains with ``train.seed + k``); ignored with
            ``resume`` (the ensemble's own ``config.json``).
        n: members (>= 2 for a fresh ensemble; None or the recorded count with ``resume``).
        bars: bars for every member (with ``resume``: default the ensemble's own).
        out: the ensemble's directory (default ``runs/<preset>``).
        resume: continue the ensemble in this directory.
        memory_budget, allow_precision_change, progress, process_setup, isolate: as for
            :func:`foxhunt.train.run.run_training`, for every member (with ``isolate`` each
            member prepares its data in its own child, so this process never holds the
            preparation's arenas, which the next member would otherwise start on top of).
        overwrite: replace a run or ensemble already in ``out`` (deleted before member 0).
        on_member: called with ``(k, n, seed)`` before member k trains.
        on_member_done: called with each member's record and ``n`` once it has finished.

    Raises:
        InputError: bad arguments, a taken ``out``, a finished ensemble to resume, torchrun.
        ModelDirError: members whose features or data differ.
        KeyboardInterrupt: after SIGINT/SIGTERM; the finished members and the interrupted
            member's complete epochs are kept (``--resume OUT`` continues).
    """
    if world_from_env().size > 1:
        raise InputError(
            "--ensemble trains its members in one process; it cannot run under torchrun"
        )
    started = time.perf_counter()
    root = run_root(cfg, out, resume)
    with hold_run(root, resume=resume is not None, overwrite=overwrite, is_main=True):
        if resume is not None:
            cfg, bars, plan, done = _resumed(root, n, bars)
        else:
            plan, done = _fresh(root, cfg, n, bars, overwrite), {}
            bars = Path(str(bars))
        members: list[MemberDone] = []
        for k, seed in enumerate(plan.seeds):
            if k in done:
                members.append(done[k])
                continue
            if on_member is not None:
                on_member(k, len(plan.seeds), seed)
            member = _train_member(
                root, k, cfg.replace(train={"seed": seed}), bars,
                memory_budget=memory_budget, allow_precision_change=allow_precision_change,
                progress=progress, process_setup=process_setup, isolate=isolate,
            )  # fmt: skip
            members.append(member)
            _update(root, members=[asdict(m) for m in members])
            if on_member_done is not None:
                on_member_done(member, len(plan.seeds))
        _finish(root, plan, members)
    seconds = sum(m.seconds for m in members)
    log.info(
        "ensemble %s: %d members, %.1f s in this call",
        root,
        len(members),
        time.perf_counter() - started,
    )
    return EnsembleRun(root, tuple(members), seconds, max(m.peak_rss_bytes for m in members))


def _fresh(
    root: Path, cfg: RunConfig, n: int | None, bars: Path | None, overwrite: bool
) -> EnsemblePlan:
    """Check that ``root`` may take a new ensemble; write its plan, base config and run.json."""
    if n is None or n < 2:
        raise InputError(f"--ensemble must be >= 2 for an ensemble, got {n}")
    if bars is None:
        raise InputError("foxhunt train: --bars FILE is required (or --resume RUN_DIR)")
    run = RunDir(root)
    if overwrite:
        run.clear()
    elif is_ensemble_dir(root):
        raise InputError(
            f"{root} already holds an ensemble; continue it with --resume {root}, start over "
            "with --overwrite, or choose another --out"
        )
    elif ckpt.final_weights(run.checkpoints) or ckpt.complete_epochs(run.checkpoints):
        raise InputError(
            f"{root} already holds a trained run; replace it with --overwrite or choose another --out"
        )
    plan = EnsemblePlan.of(cfg.train.seed, n)
    cfg.save(run.config)
    runtime.atomic_write_json(
        run.run_info,
        {
            "bars": str(Path(bars).resolve()),
            "ensemble": plan.to_dict(),
            "foxhunt_version": __version__,
            "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "stop_reason": "running",
        },
    )
    write_plan(root, plan)
    return plan


def _resumed(
    root: Path, n: int | None, bars: Path | None
) -> tuple[RunConfig, Path, EnsemblePlan, dict[int, MemberDone]]:
    """The ensemble's config, bars, plan and the members already finished."""
    if not is_ensemble_dir(root):
        raise ModelDirError(f"{root}: not an ensemble (no ensemble.json)")
    plan = read_plan(root)
    if n is not None and n != len(plan.members):
        raise InputError(f"--ensemble {n}: {root} is an ensemble of {len(plan.members)} members")
    run = RunDir(root)
    info = runtime.read_json(run.run_info, "run.json")
    if not isinstance(info, dict):
        raise ModelDirError(f"{run.run_info}: not a JSON object")
    if info.get("stop_reason") == "finished":
        raise InputError(f"{root}: this ensemble already finished; nothing to resume")
    cfg = read_config(run)
    if bars is None:
        if not info.get("bars"):
            raise ModelDirError(f"{run.run_info}: no bars path recorded; pass --bars FILE")
        bars = Path(info["bars"])
    recorded = {int(m["index"]): MemberDone(**m) for m in info.get("members", [])}
    done = {
        k: m
        for k, m in recorded.items()
        if ckpt.final_weights(member_root(root, k) / "checkpoints")
    }
    return cfg, Path(bars), plan, done


def _train_member(root: Path, k: int, cfg: RunConfig, bars: Path, **kwargs: Any) -> MemberDone:
    """Train member k (resuming it when it has complete epochs), timed, with its own peak."""
    where = member_root(root, k)
    checkpoints = where / "checkpoints"
    if ckpt.final_weights(checkpoints) is not None:  # finished before run.json recorded it
        return _recorded_member(where, k, cfg.train.seed)
    resume = where if ckpt.complete_epochs(checkpoints) else None
    reset_peak_rss()  # VmHWM from here: this member's peak, not the process's so far
    t0 = time.perf_counter()
    try:
        done = run_training(cfg, bars=bars, out=where, resume=resume, **kwargs)
    except KeyboardInterrupt:
        log.warning("ensemble interrupted in member %d; resume it with: foxhunt train --resume %s", k, root)  # fmt: skip
        raise
    seconds = time.perf_counter() - t0
    return MemberDone(
        k, cfg.train.seed, f"members/{k}", seconds, peak_rss_bytes(), done.best_epoch,
        done.best_val_loss,
    )  # fmt: skip


def _recorded_member(where: Path, k: int, seed: int) -> MemberDone:
    """A finished member the ensemble's run.json does not list: its numbers from its own files
    (seconds from its run.json, peak RSS from its memory snapshots)."""
    run = RunDir(where)
    info = runtime.read_json(run.run_info, "run.json")
    peak = max((int(r.get("peak_rss_bytes", 0)) for r in runtime.read_jsonl(run.memory)), default=0)
    best = ckpt.read_best(run.checkpoints) or {}
    loss = float(best.get("val_loss", float("nan")))
    seconds = float(info.get("seconds", float("nan")))
    return MemberDone(k, seed, f"members/{k}", seconds, peak, int(best.get("epoch", 0)), loss)


def _finish(root: Path, plan: EnsemblePlan, members: list[MemberDone]) -> None:
    """Write the ensemble's own files from member 0's, after checking the members agree."""
    first = RunDir(member_root(root, 0))
    features = runtime.read_json(first.features, "features.json")
    keys = ("spec", "scaler", "fingerprint")
    for k in range(1, len(plan.members)):
        other = runtime.read_json(RunDir(member_root(root, k)).features, "features.json")
        if any(other.get(x) != features.get(x) for x in keys):
            raise ModelDirError(
                f"{member_root(root, k)}: features, scaler or data differ from member 0's"
            )
    for name in _COPIED:
        src = first.root / name
        if src.is_file():
            runtime.atomic_write_text(root / name, src.read_text())
    info = runtime.read_json(first.run_info, "run.json")
    keep = (
        "bars",
        "fingerprint",
        "symbols",
        "data_start",
        "data_end",
        "windows",
        "parameters",
        "precision",
    )
    keep += ("cpu_allocator", "bar_interval_s")
    _update(
        root,
        **{k: info[k] for k in keep if k in info},
        members=[asdict(m) for m in members],
        seconds=sum(m.seconds for m in members),
        peak_rss_bytes=max(m.peak_rss_bytes for m in members),
        memory="members trained one after another in one process: the peak is the largest member's",
        finished=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        stop_reason="finished",
    )


def _update(root: Path, **fields: Any) -> None:
    """Merge ``fields`` into the ensemble's ``run.json``."""
    path = RunDir(root).run_info
    info = runtime.read_json(path, "run.json") if path.is_file() else {}
    info.update(fields)
    runtime.atomic_write_json(path, info)
