"""Arguments several commands share: the config source (preset and/or file) and its flags, the
help formatter that shows defaults, and the one check every command that writes ``--out``
makes (:func:`refuse_out_over_inputs`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from foxhunt.config import PRESETS, RunConfig, preset
from foxhunt.config_files import DEFAULT_PRESET, read_config_file
from foxhunt.errors import InputError

_TRAIN_FLAGS = (
    "cpu_allocator",
    "batch_size",
    "micro_batch_size",
    "validation_batch_size",
    "epochs",
    "max_steps",
    "lr",
    "precision",
    "seed",
    "device",
    "num_threads",
)


class DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Help that shows each option's default, except where the default is None or False: those
    options say in their own words what unset means (usually "the preset's value")."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default in (None, False) or "default" in text:
            return text
        return super()._get_help_string(action)


def preset_default(section: str, name: str) -> str:
    """``(default: the preset's, demo 64 · tft-225 32)``: what an unset flag takes, per preset."""
    values = {key: getattr(getattr(make(), section), name) for key, make in PRESETS.items()}
    if len(set(map(repr, values.values()))) == 1:
        return f"(default: {next(iter(values.values()))})"
    return "(default: the preset's: " + " · ".join(f"{k} {v}" for k, v in values.items()) + ")"


def add_config_args(p: argparse.ArgumentParser, with_batch: bool = True) -> None:
    """``--preset`` and ``--config``, and (``with_batch``) batch size, precision, checkpointing."""
    p.add_argument(
        "--preset",
        help=f"named configuration: {' or '.join(PRESETS)} (default: {DEFAULT_PRESET}); with "
        "--config, the base the file overrides when the file names no preset",
    )
    p.add_argument(
        "--config",
        type=Path,
        help="config file, TOML or JSON: a run's config.json, or a partial file that overrides "
        "the preset it names field by field (docs/tuning.md)",
    )
    if with_batch:
        p.add_argument(
            "--batch-size",
            type=int,
            help="samples per optimizer step " + preset_default("train", "batch_size"),
        )
        p.add_argument(
            "--precision",
            choices=["fp32", "bf16", "fp16"],
            help="numeric precision " + preset_default("train", "precision"),
        )
        p.add_argument(
            "--checkpointing", action="store_true", help="recompute activations in backward"
        )


def run_config(a: argparse.Namespace) -> RunConfig:
    """Start from ``--config FILE`` (over its preset) or ``--preset``, then apply the flags."""
    name = getattr(a, "preset", None)
    if getattr(a, "config", None):
        cfg = read_config_file(a.config, name)
    else:
        cfg = preset(name or DEFAULT_PRESET)
    train: dict[str, Any] = {
        k: getattr(a, k) for k in _TRAIN_FLAGS if getattr(a, k, None) is not None
    }
    if getattr(a, "checkpointing", False):
        train["checkpointing"] = True
    return cfg.replace(train=train) if train else cfg


def refuse_out_over_inputs(
    out: Path,
    *,
    bars: Path | None = None,
    follow: Path | None = None,
    model: Path | None = None,
    out_is_dir: bool = False,
    bars_flag: str = "--bars",
) -> None:
    """Refuse an ``--out`` that would write over one of the command's inputs.

    The inputs are the bar files ``--bars`` names (a file, a directory's table files or a
    glob's matches, and the path itself), the ``--follow`` file, and the model directory with
    the files a model is loaded from. ``out`` clashes when it is the same path or the same file
    (a symlink or hard link to it) as one of them; an output directory (``out_is_dir``) also
    clashes when an input lies inside it. ``bars_flag`` names the bars option in the message.

    Raises:
        InputError: One line naming the clash (exit 2); nothing has been written.
    """
    from foxhunt.artifacts.rundir import RunDir
    from foxhunt.data.files import resolve_table_paths
    from foxhunt.errors import DataError

    inputs: list[tuple[str, Path]] = []
    if bars is not None:
        inputs.append((bars_flag, Path(bars)))
        try:
            inputs += [(bars_flag, p) for p in resolve_table_paths(bars)]
        except DataError:
            pass  # the command reports bad bars itself
    if follow is not None:
        inputs.append(("--follow", Path(follow)))
    if model is not None:
        inputs.append(("--model", Path(model)))
        inputs += [("--model", p) for p in RunDir(Path(model)).model_files()]
    target = Path(out).resolve()
    for flag, path in inputs:
        src = path.resolve()
        if _same_file(target, src) or (out_is_dir and target in src.parents):
            what = "holds" if target in src.parents else "is"
            raise InputError(
                f"--out {out} {what} the input {flag} {path}; write the output somewhere else"
            )


def _same_file(a: Path, b: Path) -> bool:
    if a == b:
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False
