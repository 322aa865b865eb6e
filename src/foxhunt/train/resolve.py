"""Which run directory a training run writes, in what state it may find it, and holding it.

:func:`hold_run` takes the directory's lock (:mod:`foxhunt.artifacts.lock`) before anything
looks at what the directory holds, so the check and the writes that follow cannot interleave
with another writer's: of two ``foxhunt train --out SAME`` one runs, the other stops at once
naming the first. :func:`resolve_run` then decides, under the lock, what this run may do there:

* a fresh run goes into an empty or new directory, or one whose earlier run died before its
  first epoch ended (nothing worth keeping);
* a directory with complete epochs but no final checkpoint is continued with ``--resume``;
* a finished run (a final checkpoint) is replaced only with ``--overwrite``, which deletes the
  old run's files once the new run's data is ready (:meth:`RunDir.clear`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from foxhunt import runtime
from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.lock import LOCK_NAME, run_lock
from foxhunt.artifacts.rundir import RunDir, read_config
from foxhunt.config import RunConfig
from foxhunt.errors import InputError, ModelDirError


def run_root(cfg: RunConfig, out: Path | None, resume: Path | None) -> Path:
    """The directory a run writes: ``--resume``, else ``--out``, else ``runs/<preset>``."""
    if resume is not None:
        return Path(resume)
    return Path(out) if out is not None else Path("runs") / cfg.preset


@contextlib.contextmanager
def hold_run(root: Path, *, resume: bool, overwrite: bool, is_main: bool) -> Iterator[None]:
    """Own ``root`` for the block: create it if needed and hold its lock (rank 0 only).

    Under torchrun the other ranks write nothing into the directory and take no lock; if rank 0
    cannot take it, it exits and torchrun stops the rest.

    Raises:
        ModelDirError: ``--resume`` names no directory, or another process holds the lock.
        InputError: ``--out`` is a file.
    """
    if not is_main:
        yield
        return
    if resume and not root.is_dir():
        raise ModelDirError(f"{root}: no such run directory to resume")
    if root.exists() and not root.is_dir():
        raise InputError(f"--out {root}: exists and is not a directory")
    made = not root.exists()
    root.mkdir(parents=True, exist_ok=True)
    command = f"foxhunt train --resume {root}" if resume else f"foxhunt train --out {root}"
    with run_lock(root, command + (" --overwrite" if overwrite else "")):
        try:
            yield
        except BaseException:
            # A run that failed before writing anything leaves no empty directory behind. Only
            # the holder of the lock may remove it: two processes started together can both
            # find no directory, and the one refused the lock must not delete the other's
            # directory (with its lock file) while that one's data is still being prepared.
            if made and [p.name for p in root.iterdir()] == [LOCK_NAME]:
                with contextlib.suppress(OSError):
                    (root / LOCK_NAME).unlink()
                    root.rmdir()
            raise


def resolve_run(
    cfg: RunConfig, bars: Path | None, root: Path, resume: bool, overwrite: bool
) -> tuple[RunDir, RunConfig, Path]:
    """Which config and bars this run uses, and whether it may write ``root`` (under the lock).

    Raises:
        InputError: Missing ``--bars``; ``--out`` holds a run and neither ``--resume`` nor
            ``--overwrite`` was given; ``--resume`` of a finished run.
        ModelDirError: A run directory without ``config.json`` or a bars path to resume.
    """
    run = RunDir(root)
    if resume:
        if overwrite:
            raise InputError("--overwrite starts a new run; it cannot be used with --resume")
        cfg = read_config(run)
        if ckpt.final_weights(run.checkpoints) is not None:
            raise InputError(
                f"{run.root}: this run already finished (a final checkpoint exists); nothing to resume"
            )
        if bars is None:
            info = runtime.read_json(run.run_info, "run.json")
            if not isinstance(info, dict) or not info.get("bars"):
                raise ModelDirError(f"{run.run_info}: no bars path recorded; pass --bars FILE")
            bars = Path(info["bars"])
            if not bars.exists() and not any(bars.parent.glob(bars.name)):
                raise ModelDirError(
                    f"{run.root}: the bars it was trained on, {bars}, are gone; pass them with "
                    "--bars FILE (the same bars: resume checks their fingerprint)"
                )
        return run, cfg, Path(bars)
    if bars is None:
        raise InputError("foxhunt train: --bars FILE is required (or --resume RUN_DIR)")
    if overwrite:
        return run, cfg, Path(bars)
    if ckpt.final_weights(run.checkpoints) is not None:
        raise InputError(
            f"{run.root} already holds a finished run; replace it with --overwrite or choose "
            "another --out"
        )
    if ckpt.complete_epochs(run.checkpoints):
        raise InputError(
            f"{run.root} already holds a trained run; continue it with --resume {run.root}, "
            "start over with --overwrite, or choose another --out"
        )
    return run, cfg, Path(bars)
