"""Arguments several commands share: the config source (preset and/or file) and its flags, the
help formatter that shows defaults, and the one check every command that writes ``--out``
makes (:func:`refuse_out_over_inputs`)."""

from __future__ import annotations

import argparse
import os
import re
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
    "max_minutes",
    "epoch_steps",
    "validation_windows",
    "lr",
    "weight_average",
    "precision",
    "seed",
    "device",
    "num_threads",
)
_MODEL_FLAGS = {
    "encoder_length": "encoder_length",
    "horizon": "horizon",
    "hidden": "hidden",
    "heads": "n_heads",
    "location": "location",
}
"""Shape flags (``--encoder-length`` ...) -> the :class:`~foxhunt.config.TFTConfig` field."""


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
        help="config file, TOML or JSON: a run's config.json (read as its run stored it, also "
        "when copied out of the run), or a partial file that overrides the preset it names "
        "field by field (docs/tuning.md)",
    )
    if with_batch:
        p.add_argument(
            "--batch-size",
            type=int,
            help="samples per optimizer step " + preset_default("train", "batch_size"),
        )
        p.add_argument(
            "--precision",
            choices=["auto", "fp32", "bf16", "fp16"],
            help="numeric precision; auto: bf16 where the hardware has it natively, else fp32 "
            + preset_default("train", "precision"),
        )
        p.add_argument(
            "--checkpointing", action="store_true", help="recompute activations in backward"
        )
    add_shape_args(p)


def add_shape_args(p: argparse.ArgumentParser) -> None:
    """``--encoder-length``, ``--horizon``, ``--hidden``, ``--heads``, ``--location``: the
    model's shape over the preset or config (the feature spec, windows, memory estimate and
    checkpoint follow)."""
    g = p.add_argument_group("model shape (over the preset or --config)")
    g.add_argument(
        "--encoder-length", type=int, metavar="N", help="past bars the model sees (T_enc)"
    )
    g.add_argument(
        "--horizon", type=int, metavar="N", help="future bars forecast (H): targets h = 1..H"
    )
    g.add_argument("--hidden", type=int, metavar="N", help="model width d (divisible by --heads)")
    g.add_argument("--heads", type=int, metavar="N", help="attention heads")
    g.add_argument(
        "--location",
        choices=["conditional", "fixed"],
        help="the forecast median: conditional on the inputs, or fixed at the start's pooled "
        "median with the network learning only the spread around it (docs/recipe.md; "
        "default: the preset's: fixed for fast, conditional for demo and tft-225)",
    )
    add_input_args(p)


def _columns(text: str) -> tuple[str, ...]:
    cols = tuple(c.strip() for c in text.split(",") if c.strip())
    if not cols:
        raise argparse.ArgumentTypeError("expected column names separated by commas")
    return cols


def add_input_args(p: argparse.ArgumentParser) -> None:
    """The user's inputs and target (docs/features.md, User inputs); stored in the run."""
    g = p.add_argument_group("inputs (stored in the run; evaluate and predict rebuild them)")
    g.add_argument(
        "--observed-cols",
        type=_columns,
        metavar="A,B",
        help="extra numeric columns of the bars as observed (past-only) inputs",
    )
    g.add_argument(
        "--known-cols",
        type=_columns,
        metavar="A,B",
        help="extra numeric columns known in advance (scheduled events); predict reads their "
        "values for the forecast bars from rows after the last bar with empty prices",
    )
    g.add_argument(
        "--static-cols",
        type=_columns,
        metavar="A,B",
        help="extra numeric columns constant per symbol, as static inputs",
    )
    g.add_argument(
        "--features",
        metavar="SET",
        help="observed feature set: default (210), minimal (16) or FILE listing feature names "
        "and 'name = SQL expression' lines (docs/features.md)",
    )
    g.add_argument(
        "--target",
        metavar="COLUMN",
        help="forecast target: a price column, its log return over h = 1..H bars (default "
        "close), or return:COLUMN, a column of one-bar returns summed over h bars",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from e
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


_NEGATIVE_OR_OFFSET = re.compile(r"^-\d+$|^-\d*\.\d+$|^-\d{1,2}:?\d{2}$")


def add_read_args(p: argparse.ArgumentParser, stored: bool = True, over_run: bool = False) -> None:
    """How to read the bar files when the guess is wrong (docs/data.md, "When the guess is
    wrong"): ``--symbol --columns --ts-format --tz --bar-minutes --allow-odd-times``.

    Args:
        p: the command's parser.
        stored: the command stores them in its run (train, tune, backtest).
        over_run: the command reads bars for a trained run (evaluate, predict): the run's
            stored choices are the default, and a flag given wins over the run's.
    """
    where = " (stored in the run; evaluate and predict read the same way)" if stored else ""
    if over_run:
        where = (
            " (default: as the run was trained, from its config.json; a flag given here wins "
            "over the run's value, for later files from another source)"
        )
    # argparse takes "-05:00" for an option unless it looks like a negative number to it: let
    # fixed offsets through as values (``--tz -05:00``), as argparse does for ``-5``.
    p._negative_number_matcher = _NEGATIVE_OR_OFFSET  # type: ignore[attr-defined]
    g = p.add_argument_group("reading the bar files" + where)
    g.add_argument(
        "--symbol", metavar="NAME", help="symbol of one-symbol files (default: from the file name)"
    )
    g.add_argument(
        "--columns",
        type=_columns,
        metavar="F=COL,...",
        help="the file's column for each bar field: ts=DATE,open=OPEN,high=HIGH,low=LOW,"
        "close=CLOSE,volume=VOL (or date=..,time=..; symbol=..); default: guessed from the names",
    )
    g.add_argument(
        "--ts-format",
        metavar="FMT",
        help="how timestamps are written: epoch-s, epoch-ms, epoch-us, epoch-ns, yyyymmdd or a "
        "strftime format such as '%%Y%%m%%d %%H%%M%%S' (default: guessed)",
    )
    g.add_argument(
        "--tz",
        metavar="ZONE",
        help="zone of naive timestamps: an IANA name (America/Chicago, Etc/GMT+5), a fixed "
        "offset (-05:00, UTC-5) or an IANA name moved by hours (America/New_York+07:00, FX "
        "brokers' server clock); default: the vendor's clock where the file name says it "
        "(histdata: America/New_York), else UTC",
    )
    g.add_argument(
        "--force-tz",
        action="store_true",
        help="read times marked UTC (Z, +00:00, epoch counts, a parquet column typed UTC) as "
        "wall-clock times in --tz's zone too: a file that marks its local clock as UTC, "
        "MetaTrader 5's epochs of its server's clock (times with another offset are refused)",
    )
    g.add_argument(
        "--stamps",
        choices=("start", "end"),
        help="what a bar's timestamp marks: its start (foxhunt's convention, the default) or its "
        "end (TradeStation, MultiCharts, NinjaTrader, IQFeed: a 09:31 bar covers 09:30-09:31); "
        "end moves every intraday bar one interval earlier when read",
    )
    g.add_argument(
        "--decimal",
        choices=("point", "comma"),
        help="the decimal separator of a CSV's numbers (default: guessed): comma reads "
        "'2.673,5' and '2.673' as 2673.5 and 2673 (points group thousands), point reads '4,234' "
        "as 4234 (commas group thousands); a file whose every dotted number has three digits "
        "after the point, or every comma number three after the comma, with nothing else to "
        "tell, is refused until this says which",
    )
    g.add_argument(
        "--bar-minutes",
        type=_positive_int,
        metavar="K",
        help="aggregate the bars to K-minute bars when read (open first, high max, low min, "
        "close last, volume sum; labelled by their open time, within one trading day); a file "
        "of trades, quotes (bid, ask) or closes without open/high/low is built into bars so",
    )
    g.add_argument(
        "--allow-odd-times",
        action="store_true",
        help="keep bars whose time axis looks wrong (before 1980, after tomorrow, another "
        "interval than the file name says, > 25%% in closed hours, another zone fitting "
        "clearly better), with a warning each, instead of exit 2",
    )


_READ_FIELDS = ("symbol", "columns", "ts_format", "tz", "stamps", "decimal", "bar_minutes")


def read_options_of(a: argparse.Namespace) -> Any:
    """The :class:`~foxhunt.data.read.options.ReadOptions` the flags give.

    Raises:
        InputError: a bad value (an unknown zone, a malformed ``--columns`` entry ...).
    """
    from foxhunt.data.read.options import ReadOptions
    from foxhunt.errors import DataError

    try:
        return ReadOptions(
            **{k: getattr(a, k, None) for k in _READ_FIELDS if getattr(a, k, None) is not None},
            allow_odd_times=bool(getattr(a, "allow_odd_times", False)),
            force_tz=bool(getattr(a, "force_tz", False)),
        )
    except DataError as e:
        raise InputError(str(e)) from e


def read_flags(a: argparse.Namespace) -> dict[str, Any]:
    """The read flags that were given (:func:`add_read_args`), as ``DataConfig`` fields
    (checked: :func:`read_options_of`); empty when none was."""
    read_options_of(a)  # checks the values
    data: dict[str, Any] = {
        k: getattr(a, k) for k in _READ_FIELDS if getattr(a, k, None) is not None
    }
    if getattr(a, "allow_odd_times", False):
        data["allow_odd_times"] = True
    if getattr(a, "force_tz", False):
        data["force_tz"] = True
    return data


def apply_read_args(cfg: RunConfig, a: argparse.Namespace) -> RunConfig:
    """``cfg`` with the read flags that were given (:func:`add_read_args`) in its data section."""
    data = read_flags(a)
    return cfg.replace(data=data) if data else cfg


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
    cfg = cfg.replace(train=train) if train else cfg
    return apply_read_args(apply_input_args(apply_shape_args(cfg, a), a), a)


def flags_a_resume_ignores(a: argparse.Namespace, stored: RunConfig) -> list[str]:
    """``--FLAG VALUE (the run's: STORED)`` for each training or shape flag given whose value
    differs from the resumed run's ``config.json``: a resume trains on that file alone."""
    out = []
    given = [(k, k, stored.train) for k in _TRAIN_FLAGS]
    given += [(k, f, stored.model) for k, f in _MODEL_FLAGS.items()]
    for flag, field, section in given:
        value = getattr(a, flag, None)
        if value is not None and value != getattr(section, field):
            name = "--" + flag.replace("_", "-")
            out.append(f"{name} {value} (the run's: {getattr(section, field)})")
    return out


def apply_shape_args(cfg: RunConfig, a: argparse.Namespace) -> RunConfig:
    """``cfg`` with the shape flags that were given (:func:`add_shape_args`) applied.

    Raises:
        ConfigError: a value out of range, e.g. ``--hidden`` not divisible by ``--heads``.
    """
    model = {f: getattr(a, k) for k, f in _MODEL_FLAGS.items() if getattr(a, k, None) is not None}
    return cfg.replace(model=model) if model else cfg


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
    from foxhunt.data.read.files import resolve_table_paths
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


def apply_input_args(cfg: RunConfig, a: argparse.Namespace) -> RunConfig:
    """``cfg`` with the input flags that were given (:func:`add_input_args`) applied, and the
    model's input counts set from the chosen features.

    Raises:
        InputError: an unreadable or bad ``--features`` file.
        ConfigError: a column given as two kinds of input.
    """
    from foxhunt.data.features.inputs import with_input_shape
    from foxhunt.data.features.sets import read_feature_file

    data: dict[str, Any] = {}
    for name in ("observed_cols", "known_cols", "static_cols", "target"):
        if getattr(a, name, None) is not None:
            data[name] = getattr(a, name)
    features = getattr(a, "features", None)
    if features in ("default", "minimal"):
        data.update(features=features, feature_lines=())
    elif features is not None:
        data.update(features="custom", feature_lines=read_feature_file(Path(features)))
    cfg = cfg.replace(data=data) if data else cfg
    return with_input_shape(cfg)


LIVE_ENGINES = ("auto", "torch", "onnx")
"""``--engine`` choices (:data:`foxhunt.infer.incremental.graphs.ENGINES`, kept here so the
argument parsers do not import torch)."""


def add_engine_arg(parser: argparse.ArgumentParser, when: str = "") -> None:
    """``--engine {auto,torch,onnx}``: how the live forecaster runs the model's forward."""
    parser.add_argument(
        "--engine",
        choices=LIVE_ENGINES,
        default="auto",
        help=when
        + "the live forward's engine: onnx runs it in onnxruntime graphs built once per model "
        "into MODEL/live/ (a few seconds the first time; faster per update at a few symbols), torch in "
        "eager PyTorch; auto (the default) onnx where it can run (a float model on the CPU, "
        "onnxruntime installed), else torch",
    )
