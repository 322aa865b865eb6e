"""``foxhunt train``: bars in, a self-describing run directory out."""

from __future__ import annotations

import argparse
import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from foxhunt.commands.options import (
    DefaultsFormatter,
    add_config_args,
    add_read_args,
    flags_a_resume_ignores,
    preset_default,
    run_config,
)
from foxhunt.config import RunConfig
from foxhunt.errors import InputError

if TYPE_CHECKING:  # torch: only when training
    from foxhunt.train.observer import Listener

log = logging.getLogger(__name__)

_RUN_TENSORBOARD = "RUN/tensorboard"
"""``--tensorboard`` without a directory: ``tensorboard/`` inside the run directory."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    t = sub.add_parser(
        "train",
        help="train a TFT on bars; writes a self-describing run directory",
        description="Train a TFT on bars; writes a self-describing run directory. Options left "
        "unset take the value of the config (--config) or preset (--preset).",
        formatter_class=DefaultsFormatter,
    )
    t.add_argument(
        "--bars",
        type=Path,
        help="bars file, directory or glob, or a `foxhunt features --shards` folder "
        "(not needed with --resume)",
    )
    add_config_args(t)
    t.add_argument(
        "--micro-batch-size",
        type=int,
        help="samples per forward/backward, accumulated to --batch-size (default: the batch size)",
    )
    t.add_argument(
        "--validation-batch-size",
        type=int,
        help="samples per validation pass " + preset_default("train", "validation_batch_size"),
    )
    t.add_argument(
        "--epochs",
        type=int,
        help="passes over the training windows " + preset_default("train", "epochs"),
    )
    t.add_argument(
        "--max-steps", type=int, help="stop after this many optimizer steps (default: no limit)"
    )
    t.add_argument(
        "--max-minutes",
        type=float,
        metavar="N",
        help="stop training at the first step boundary after N minutes of wall clock (the "
        "training loop's: validations included, data preparation not), validate that epoch "
        "and keep the best weights (default: no limit)",
    )
    t.add_argument(
        "--epoch-steps",
        type=int,
        metavar="N",
        help="optimizer steps per epoch at most; with more windows each epoch draws that many "
        "batches from a seeded permutation of all of them "
        + preset_default("train", "epoch_steps"),
    )
    t.add_argument(
        "--validation-windows",
        type=int,
        metavar="N",
        help="validate every epoch on a fixed seeded subsample of N validation windows "
        "(default: 0.3 x an epoch's training samples, at least 4096: about a tenth of the "
        "epoch's training time; all when there are fewer)",
    )
    t.add_argument("--lr", type=float, help="peak learning rate " + preset_default("train", "lr"))
    t.add_argument(
        "--weight-average",
        type=float,
        metavar="A",
        help="validate, checkpoint and serve an exponential moving average of the weights, "
        "decay A per step (about the last 1/(1-A) steps); 0 serves each epoch's last step "
        + preset_default("train", "weight_average"),
    )
    t.add_argument("--seed", type=int, help="random seed " + preset_default("train", "seed"))
    t.add_argument("--device", help="cpu, cuda, cuda:N " + preset_default("train", "device"))
    t.add_argument("--num-threads", type=int, help="torch CPU threads (default: torch's own)")
    t.add_argument(
        "--cpu-allocator",
        choices=["balanced", "lean", "glibc"],
        help="balanced (default): blocks as large as the VSN's per-variable activations go "
        "back to the OS when freed, smaller ones reuse glibc's heap: glibc's speed at close to "
        "lean's RSS; glibc: glibc's malloc as it is (freed memory stays resident); lean: every "
        "block >= 1 MiB goes back, the least RSS, about 15 %% slower steps at TFT-225 batch 32 "
        "(--memory-budget picks it when it has to)",
    )
    t.add_argument(
        "--recompute",
        action="store_true",
        help="stream the VSNs over variable chunks and recompute the LSTMs in backward: the "
        "least activation memory, slower steps (--memory-budget turns it on when needed)",
    )
    t.add_argument(
        "--memory-budget",
        help="fit the run in this much memory, e.g. 1GB, 512MiB; on CPU the whole process's "
        "peak RSS (import baseline, data, tensors, allocator) and the data preparation's "
        "(its child process beside this one, or this process), on CUDA device memory",
    )
    t.add_argument(
        "--allow-precision-change",
        action="store_true",
        help="let the budget planner switch to bf16 if fp32 does not fit",
    )
    add_read_args(t)
    t.add_argument(
        "--instruments",
        type=Path,
        help="instrument table, TOML or CSV (root, tick_size, point_value, currency, "
        "asset_class, calendar; docs/data.md); the table resolved for the run's symbols is "
        "stored in the run (instruments.json) and used by evaluate and predict",
    )
    t.add_argument(
        "--allow-outliers",
        action="store_true",
        help="keep bars that fail the plausibility checks (interleaved price levels, prices off "
        "by orders of magnitude, implausible one-bar moves; docs/data.md), counted in one warning; stored in the run, so evaluate and predict keep them too",
    )
    t.add_argument("--out", type=Path, help="run directory (default: runs/<preset>)")
    t.add_argument(
        "--print-config",
        nargs="?",
        const="toml",
        choices=["toml", "json"],
        help="print the resolved config (preset or --config, then the flags; with --resume, the "
        "run's own) as TOML (default) or JSON, a file --config accepts, and exit without "
        "training",
    )
    t.add_argument(
        "--tensorboard",
        nargs="?",
        const=_RUN_TENSORBOARD,
        metavar="DIR",
        help="also log the run's metrics (loss, validation loss, lr, memory) as TensorBoard "
        "events, in DIR or, without DIR, in RUN/tensorboard (docs/tuning.md; needs the "
        "tensorboard package: pip install 'foxhunt[tune]')",
    )
    t.add_argument(
        "--ensemble",
        type=int,
        metavar="N",
        help="train N members with seeds seed, seed+1, ... (each a run directory in "
        "OUT/members/K, one after another) and write OUT as one model: evaluate and predict "
        "average the members' calibrated quantiles (docs/training.md; default 1: one run)",
    )
    t.add_argument("--resume", type=Path, help="continue the run (or ensemble) in this directory")
    t.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a run already in --out (its files are deleted once the new run's data "
        "is ready); without it a trained --out is refused",
    )
    t.set_defaults(func=run)


def run(a: argparse.Namespace) -> None:
    from foxhunt.commands.progress import TrainProgress
    from foxhunt.memory.allocator import apply_cpu_allocator
    from foxhunt.train.run import run_training

    cfg = run_config(a)
    _warn_emulated_precision(cfg.train.precision, cfg.train.device)
    if a.recompute:
        cfg = cfg.replace(train={"recompute": True})
    if a.instruments:
        cfg = cfg.replace(data={"instruments": str(a.instruments.resolve())})
    if a.allow_outliers:
        cfg = cfg.replace(data={"allow_outliers": True})
    if a.print_config:
        from foxhunt.config_files import config_text, read_config_file

        if a.resume:  # a resumed run trains on its own config.json, whatever the flags say
            cfg = read_config_file(Path(a.resume) / "config.json")
        print(config_text(cfg, a.print_config), end="")
        return
    if a.resume is not None:
        _warn_ignored_on_resume(a)
    if _is_ensemble(a):
        _train_ensemble(a, cfg)
        return
    with _tensorboard(a, cfg) as listeners:
        done = run_training(
            cfg,
            bars=a.bars,
            out=a.out,
            resume=a.resume,
            memory_budget=a.memory_budget,
            allow_precision_change=a.allow_precision_change,
            progress=lambda epochs, first: TrainProgress(epochs, first_epoch=first),
            overwrite=a.overwrite,
            listeners=listeners,
            process_setup=apply_cpu_allocator,
            isolate=True,  # data preparation's imports and arenas stay out of this process
        )
    if not done.is_main:
        return
    console = Console(stderr=True)
    root = done.root
    console.print(f"[bold green]done[/]: {root}")
    if done.final is not None:
        console.print(
            f"  model   {done.final} (best epoch {done.best_epoch}, "
            f"validation loss {done.best_val_loss:.4f})"
        )
    console.print(f"  report  {root / 'report.md'}")
    if a.tensorboard:
        where = root / "tensorboard" if a.tensorboard == _RUN_TENSORBOARD else a.tensorboard
        console.print(f"  events  tensorboard --logdir {where}")
    console.print(
        f"  next    foxhunt evaluate --model {root} --bars BARS · "
        f"foxhunt predict --model {root} --bars BARS --out forecast.parquet"
    )


def _warn_ignored_on_resume(a: argparse.Namespace) -> None:
    """One warning naming the flags a resume ignores (it trains on the run's own config.json):
    ``--resume RUN --epochs 2`` trained to the stored epochs without a word."""
    from foxhunt.config_files import read_config_file

    stored = Path(a.resume) / "config.json"
    if not stored.is_file():
        return  # the resume itself says what is wrong with the directory
    ignored = flags_a_resume_ignores(a, read_config_file(stored))
    if ignored:
        log.warning(
            "--resume %s continues the run on its own config.json: %s ignored; train a new run "
            "(--out) to change them",
            a.resume,
            ", ".join(ignored),
        )


def _is_ensemble(a: argparse.Namespace) -> bool:
    """Whether this run trains a seed ensemble: ``--ensemble N`` with N >= 2, or ``--resume``
    of an ensemble's directory."""
    from foxhunt.artifacts.ensemble import is_ensemble_dir

    if a.ensemble is not None and a.ensemble < 1:
        raise InputError(f"--ensemble must be >= 1, got {a.ensemble}")
    if a.resume is not None and is_ensemble_dir(a.resume):
        return True
    if a.ensemble is not None and a.ensemble > 1 and a.resume is not None:
        raise InputError(f"--ensemble {a.ensemble}: {a.resume} is a single run, not an ensemble")
    return a.ensemble is not None and a.ensemble > 1


def _train_ensemble(a: argparse.Namespace, cfg: RunConfig) -> None:
    """``--ensemble N``: the members one after another, a line per member, then the totals."""
    from foxhunt.commands.progress import TrainProgress
    from foxhunt.memory.allocator import apply_cpu_allocator
    from foxhunt.memory.units import format_bytes
    from foxhunt.train.ensemble import MemberDone, train_ensemble

    if a.tensorboard:
        raise InputError("--tensorboard cannot be used with --ensemble (open a member's run)")
    console = Console(stderr=True)

    def started(k: int, n: int, seed: int) -> None:
        console.print(f"[bold]member {k + 1}/{n}[/] (seed {seed})")

    def finished(m: MemberDone, n: int) -> None:
        console.print(
            f"member {m.index + 1}/{n} done: {m.seconds:.1f} s, peak RSS "
            f"{format_bytes(m.peak_rss_bytes)}, best epoch {m.best_epoch} "
            f"(validation loss {m.best_val_loss:.4f})"
        )

    done = train_ensemble(
        cfg,
        a.ensemble,  # None on a resume without --ensemble: the run's own member count
        bars=a.bars,
        out=a.out,
        resume=a.resume,
        memory_budget=a.memory_budget,
        allow_precision_change=a.allow_precision_change,
        progress=lambda epochs, first: TrainProgress(epochs, first_epoch=first),
        overwrite=a.overwrite,
        process_setup=apply_cpu_allocator,
        isolate=True,  # each member's data preparation in its own child, as for one run
        on_member=started,
        on_member_done=finished,
    )
    root = done.root
    console.print(
        f"[bold green]done[/]: {root} (ensemble of {len(done.members)}: "
        f"{done.seconds:.1f} s in all, one member at a time, peak RSS "
        f"{format_bytes(done.peak_rss_bytes)} (the largest member's))"
    )
    console.print(f"  members {', '.join(str(root / m.dir) for m in done.members)}")
    console.print(
        f"  next    foxhunt evaluate --model {root} --bars BARS · "
        f"foxhunt predict --model {root} --bars BARS --out forecast.parquet"
    )


@contextlib.contextmanager
def _tensorboard(a: argparse.Namespace, cfg: RunConfig) -> Iterator[list[Listener]]:
    """The TensorBoard listener ``--tensorboard`` asks for (none without it), closed after."""
    if not a.tensorboard:
        yield []
        return
    try:
        from foxhunt.train.tensorboard import TensorBoardLog
    except ImportError:
        raise InputError(
            "--tensorboard needs the tensorboard package: pip install 'foxhunt[tune]'"
        ) from None
    from foxhunt.train.resolve import run_root

    in_run = a.tensorboard == _RUN_TENSORBOARD
    logdir = run_root(cfg, a.out, a.resume) / "tensorboard" if in_run else Path(a.tensorboard)
    with TensorBoardLog(logdir, fresh_start_clears=in_run) as tb:
        yield [tb]


def _warn_emulated_precision(precision: str, device: str) -> None:
    """One warning when ``--precision bf16`` would run emulated on this CPU (issue 27)."""
    import logging

    from foxhunt.errors import InputError
    from foxhunt.runtime import emulated_precision_warning, parse_device

    try:
        slow = emulated_precision_warning(precision, parse_device(device))
    except (InputError, ValueError, RuntimeError):  # a bad --device: training reports it
        return
    if slow is not None:
        logging.getLogger(__name__).warning("%s", slow)
