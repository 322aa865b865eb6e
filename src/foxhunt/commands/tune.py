"""``foxhunt tune``: an Optuna search of short training runs; a results table and the best
config as a file ``foxhunt train --config`` accepts (:mod:`foxhunt.train.tune`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from foxhunt.commands.options import DefaultsFormatter, add_config_args, add_read_args, run_config
from foxhunt.errors import InputError

_COLUMNS = (
    ("train.lr", "lr", "{:.2e}"),
    ("train.weight_decay", "wd", "{:.1e}"),
    ("train.batch_size", "batch", "{}"),
    ("model.hidden", "hidden", "{}"),
    ("model.dropout", "dropout", "{:.3f}"),
    ("model.encoder_length", "enc", "{}"),
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tune",
        help="search hyper-parameters with Optuna; writes the best config as a file",
        description="Hyper-parameter search (docs/tuning.md): each trial is a short training run "
        "of the base config (--preset or --config) with sampled lr, weight decay, batch size, "
        "width, dropout and encoder length, scored on its best validation loss and pruned by "
        "Optuna's median pruner after each epoch. With --memory-budget, each trial is fitted "
        "into the budget by the planner, or skipped. Writes OUT/best.toml, OUT/trials.json (after "
        "every trial), the Optuna study OUT/study.log and one run directory per trial "
        "(checkpoints deleted). Ctrl-C or SIGTERM keeps the finished trials; the same command "
        "with --resume continues the search.",
        formatter_class=DefaultsFormatter,
    )
    p.add_argument("--bars", type=Path, required=True, help="bars to train and validate on")
    add_config_args(p)
    add_read_args(p)
    p.add_argument("--trials", type=int, default=20, help="trials to run")
    p.add_argument(
        "--epochs",
        dest="trial_epochs",
        type=int,
        metavar="N",
        help="epochs per trial (default: the config's); not written into the best config",
    )
    p.add_argument(
        "--max-steps",
        dest="trial_max_steps",
        type=int,
        metavar="N",
        help="optimizer steps per trial (default: no limit); not written into the best config",
    )
    p.add_argument(
        "--memory-budget",
        help="every trial must fit this much memory, e.g. 1GB (default: no budget)",
    )
    p.add_argument(
        "--seed",
        type=int,
        help="seed of the sampler and of every trial's training (default: the config's)",
    )
    p.add_argument("--device", help="cpu, cuda, cuda:N (default: the config's)")
    p.add_argument("--num-threads", type=int, help="torch CPU threads (default: torch's own)")
    p.add_argument("--out", type=Path, help="output directory (default: runs/tune-<preset>)")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a search already in --out (its best.toml, trials.json, study.log and "
        "trials/ are deleted before the first trial); without it such an --out is refused",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the search in --out (stopped by Ctrl-C, SIGTERM or a kill) up to --trials "
        "trials in all; give the same --preset/--config, --bars, --epochs, --max-steps and "
        "--memory-budget",
    )
    p.set_defaults(func=run)


def run(a: argparse.Namespace) -> int | None:
    try:
        import optuna
    except ImportError:
        raise InputError("foxhunt tune needs Optuna: pip install 'foxhunt[tune]'") from None

    from foxhunt.artifacts.outputs import refuse_held_outputs
    from foxhunt.commands.options import refuse_out_over_inputs
    from foxhunt.memory.units import parse_bytes
    from foxhunt.train.tune import OUTPUTS, TuneSettings, tune

    if a.memory_budget is not None:  # one parse error now, not "over budget" for every trial
        try:
            parse_bytes(a.memory_budget)
        except InputError as e:
            raise InputError(f"--memory-budget: {e}") from None
    cfg = run_config(a)
    out = a.out or Path("runs") / f"tune-{cfg.preset}"
    refuse_out_over_inputs(out, bars=a.bars, out_is_dir=True)
    if not a.resume:  # one line, before the progress bar
        refuse_held_outputs(out, OUTPUTS, "search", a.overwrite)
    settings = TuneSettings(
        trials=a.trials,
        seed=cfg.train.seed,
        memory_budget=a.memory_budget,
        epochs=a.trial_epochs,
        max_steps=a.trial_max_steps,
    )
    optuna.logging.set_verbosity(optuna.logging.ERROR)  # the table says what its log would
    logging.getLogger("foxhunt.memory.budget").setLevel(logging.WARNING)  # one plan per trial
    console = Console(stderr=True)
    try:
        earlier = _finished(out) if a.resume else 0
        with _TuneProgress(settings.trials, console, done=earlier) as bars:
            result = tune(
                cfg,
                a.bars,
                out,
                settings,
                progress=bars.trial_progress,
                on_trial=bars.trial_done,
                overwrite=a.overwrite,
                resume=a.resume,
            )
    except KeyboardInterrupt:
        console.print(
            f"foxhunt tune: interrupted after {_finished(out)} finished trials "
            f"({out / 'trials.json'}); continue the search "
            "with the same command and --resume",
            soft_wrap=True,
            highlight=False,
        )
        return 130
    table = Console()
    if not table.is_terminal:  # a pipe or a file: rich's 80 columns would squash the table
        table = Console(width=160)
    table.print(_table(result))
    best = result.best
    console.print(
        f"[bold green]best[/]: trial {best.number}, validation loss {best.val_loss:.4f} → "
        f"{result.best_path}\n  next    foxhunt train --config {result.best_path} --bars {a.bars}"
    )
    return None


def _finished(out: Path) -> int:
    """Trials in ``OUT/trials.json`` (0: none yet)."""
    done = out / "trials.json"
    return len(json.loads(done.read_text())) if done.is_file() else 0


def _table(result) -> Table:  # noqa: ANN001 (TuneResult: imported lazily)
    t = Table(title=f"foxhunt tune: {len(result.trials)} trials")
    for name in ("#", "state", "val loss", "epochs", *(c[1] for c in _COLUMNS), "est. peak", "s"):
        # no_wrap: a narrow terminal truncates columns instead of breaking numbers in two
        t.add_column(name, justify="left" if name == "state" else "right", no_wrap=True)
    from foxhunt.memory.units import format_bytes

    for r in sorted(result.trials, key=lambda r: (r.val_loss is None, r.val_loss or 0.0)):
        style = "bold green" if r.number == result.best.number else None
        loss = f"{r.val_loss:.4f}" if r.val_loss is not None else "-"
        values = [fmt.format(r.params[key]) for key, _, fmt in _COLUMNS]
        t.add_row(
            str(r.number),
            r.state,
            loss,
            str(r.epochs),
            *values,
            format_bytes(r.estimated_peak),
            f"{r.seconds:.0f}",
            style=style,
        )
    return t


class _TuneProgress:
    """A trials bar and, below it, the batches of the trial in flight (the loop's ``Progress``
    protocol, :class:`foxhunt.train.observer.Progress`)."""

    def __init__(self, trials: int, console: Console, done: int = 0) -> None:
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[status]}"),
            console=console,
        )
        self._trials = self._progress.add_task("trials", total=trials, completed=done, status="")
        self._batches = self._progress.add_task("", total=None, status="", visible=False)
        self._best: float | None = None

    def __enter__(self) -> _TuneProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    @contextlib.contextmanager
    def trial_progress(self, epochs: int, first_epoch: int) -> Iterator[_TuneProgress]:
        yield self

    def trial_done(self, r) -> None:  # noqa: ANN001 (TrialResult: imported lazily)
        if r.state == "complete" and r.val_loss is not None:
            self._best = r.val_loss if self._best is None else min(self._best, r.val_loss)
        best = f"best val {self._best:.4f}" if self._best is not None else ""
        self._progress.update(self._trials, advance=1, status=best)
        loss = f" {r.val_loss:.4f}" if r.val_loss is not None else ""
        self._progress.console.print(f"trial {r.number}: {r.state}{loss} {r.message}".rstrip())

    def start_epoch(self, epoch: int, n_batches: int) -> None:
        self._progress.reset(self._batches, total=n_batches, description=f"epoch {epoch}")
        self._progress.update(self._batches, visible=True, status="")

    def step(self, *, loss: float, samples_per_s: float, memory_bytes: int | None) -> None:
        self._progress.update(self._batches, advance=1, status=f"loss {loss:.4f}")

    def start_validation(self, n_batches: int) -> None:
        self._progress.reset(self._batches, total=n_batches, description="validation")

    def validation_step(self) -> None:
        self._progress.update(self._batches, advance=1)

    def end_epoch(self, line: str) -> None:
        self._progress.update(self._batches, visible=False)

    def note(self, line: str) -> None:
        self._progress.console.print(f"[yellow]{line}")
