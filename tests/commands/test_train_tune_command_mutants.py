"""``foxhunt train`` and ``foxhunt tune``, in process with their heavy work replaced by
recorders: what each passes on, prints, returns and refuses. Their real runs are tested as
``slow`` subprocess or end-to-end tests, which ``make mutate`` leaves out; the training, the
ensemble and the search themselves are tested where they live (tests/train)."""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from foxhunt.cli import build_parser, main
from foxhunt.commands import train as train_cmd
from foxhunt.commands import tune as tune_cmd
from foxhunt.commands.options import run_config
from foxhunt.errors import InputError


def _args(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich's consoles as wide as any line the tests print (one line each)."""
    monkeypatch.setenv("COLUMNS", "400")


def _next_line(root: Path) -> str:
    return (
        f"  next    foxhunt evaluate --model {root} --bars BARS · "
        f"foxhunt predict --model {root} --bars BARS --out forecast.parquet"
    )


# --- foxhunt train: one run -------------------------------------------------------------------


@pytest.fixture
def trained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    """run_training, train_ensemble and the progress display replaced by recorders.

    ``seen.single``/``seen.ensemble``: (cfg, n?, keyword arguments) of each call;
    ``seen.result``: what the fake run_training returns (a finished run in tmp_path/run);
    ``seen.during``: called with its keyword arguments while it "trains";
    ``seen.members``: the fake ensemble training (:func:`_members`)."""
    from foxhunt.train.run import TrainedRun

    root = tmp_path / "run"
    seen = types.SimpleNamespace(
        single=[],
        ensemble=[],
        result=TrainedRun(root, root / "checkpoints" / "final.pt", 3, 0.123456),
        members=None,
        during=lambda kw: None,
    )

    def run_training(cfg: Any, **kw: Any) -> Any:
        seen.single.append((cfg, kw))
        seen.during(kw)
        return seen.result

    def train_ensemble(cfg: Any, n: int | None, **kw: Any) -> Any:
        seen.ensemble.append((cfg, n, kw))
        return seen.members(cfg, kw)

    def progress(epochs: int, *, first_epoch: int) -> tuple[str, int, int]:
        return ("TrainProgress", epochs, first_epoch)

    monkeypatch.setattr("foxhunt.train.run.run_training", run_training)
    monkeypatch.setattr("foxhunt.train.ensemble.train_ensemble", train_ensemble)
    monkeypatch.setattr("foxhunt.commands.progress.TrainProgress", progress)
    return seen


def _check_hooks(kw: dict[str, Any]) -> None:
    """The progress factory draws TrainProgress(epochs, first_epoch=first); the process setup is
    the CPU allocator's (both taken out of ``kw``)."""
    from foxhunt.memory.allocator import apply_cpu_allocator

    assert kw.pop("progress")(12, 4) == ("TrainProgress", 12, 4)
    assert kw.pop("process_setup") is apply_cpu_allocator


def test_train_passes_every_flag_on_and_prints_where_the_run_is(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    trained: types.SimpleNamespace,
    wide: None,
) -> None:
    monkeypatch.chdir(tmp_path)
    bars, out, old = tmp_path / "ES.parquet", tmp_path / "out", tmp_path / "old"
    old.mkdir()  # a single run: --ensemble 1 may resume it
    a = _args(
        ["train", "--preset", "demo", "--bars", str(bars), "--out", str(out)]
        + ["--resume", str(old), "--memory-budget", "2GB", "--allow-precision-change"]
        + ["--overwrite", "--recompute", "--instruments", "inst.toml", "--allow-outliers"]
        + ["--ensemble", "1", "--lr", "0.002"]
    )
    assert a.func is train_cmd.run
    assert a.func(a) is None
    ((cfg, kw),) = trained.single
    assert trained.ensemble == []
    assert cfg == run_config(a).replace(
        train={"recompute": True},
        data={"instruments": str(tmp_path / "inst.toml"), "allow_outliers": True},  # resolved
    )
    assert cfg.train.lr == 0.002 and cfg.preset == "demo"
    _check_hooks(kw)
    assert kw == {
        "bars": bars,
        "out": out,
        "resume": old,
        "memory_budget": "2GB",
        "allow_precision_change": True,
        "overwrite": True,
        "listeners": [],
        "isolate": True,
    }
    root = tmp_path / "run"  # where run_training says the run is
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"done: {root}",
        f"  model   {root / 'checkpoints' / 'final.pt'} (best epoch 3, validation loss 0.1235)",
        f"  report  {root / 'report.md'}",
        _next_line(root),
    ]


def test_train_defaults_and_exit_code(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    trained: types.SimpleNamespace,
    wide: None,
) -> None:
    bars = tmp_path / "ES.parquet"
    assert main(["train", "--bars", str(bars)]) == 0
    ((cfg, kw),) = trained.single
    assert cfg == run_config(_args(["train", "--bars", str(bars)]))
    assert cfg.preset == "tft-225"
    assert (cfg.train.recompute, cfg.data.instruments, cfg.data.allow_outliers) == (
        False,
        None,
        False,
    )
    _check_hooks(kw)
    assert kw == {
        "bars": bars,
        "out": None,
        "resume": None,
        "memory_budget": None,
        "allow_precision_change": False,
        "overwrite": False,
        "listeners": [],
        "isolate": True,
    }
    assert "done: " in capsys.readouterr().err


def test_train_on_another_rank_prints_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    trained: types.SimpleNamespace,
) -> None:
    from foxhunt.train.run import TrainedRun

    trained.result = TrainedRun(tmp_path / "run", None, 3, 0.5, is_main=False)
    monkeypatch.setitem(sys.modules, "foxhunt.train.tensorboard", _fake_tb_module([]))
    a = _args(["train", "--bars", str(tmp_path / "b.csv"), "--tensorboard", str(tmp_path / "tb")])
    a.func(a)
    assert len(trained.single) == 1
    assert capsys.readouterr() == ("", "")


def test_train_without_final_weights_prints_no_model_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    trained: types.SimpleNamespace,
    wide: None,
) -> None:
    from foxhunt.train.run import TrainedRun

    root = tmp_path / "run"
    trained.result = TrainedRun(root, None, 0, float("nan"))
    a = _args(["train", "--bars", str(tmp_path / "b.csv")])
    a.func(a)
    assert capsys.readouterr().err.splitlines() == [
        f"done: {root}",
        f"  report  {root / 'report.md'}",
        _next_line(root),
    ]


# --- foxhunt train --tensorboard --------------------------------------------------------------


def _fake_tb_module(events: list[tuple[Any, ...]]) -> types.SimpleNamespace:
    """A ``foxhunt.train.tensorboard`` whose TensorBoardLog records being opened and closed."""

    class TensorBoardLog:
        def __init__(self, logdir: Path, *, fresh_start_clears: bool = False) -> None:
            events.append(("log", logdir, fresh_start_clears))

        def __enter__(self) -> TensorBoardLog:
            events.append(("enter",))
            return self

        def __exit__(self, *exc: object) -> None:
            events.append(("exit",))

    return types.SimpleNamespace(TensorBoardLog=TensorBoardLog)


@pytest.fixture
def tb_events(monkeypatch: pytest.MonkeyPatch, trained: types.SimpleNamespace) -> list[Any]:
    """The TensorBoard log replaced by a recorder; training records the listeners it got."""
    events: list[tuple[Any, ...]] = []
    module = _fake_tb_module(events)
    monkeypatch.setitem(sys.modules, "foxhunt.train.tensorboard", module)
    tb = module.TensorBoardLog
    trained.during = lambda kw: events.append(("train", [type(x) is tb for x in kw["listeners"]]))
    return events


@pytest.mark.parametrize(
    ("given", "logdir"),
    [
        ({"--out": "out"}, "out"),
        ({"--resume": "old"}, "old"),  # the resumed run's directory
        ({"--out": "out", "--resume": "old"}, "old"),
        ({}, None),  # the preset's default run directory
    ],
)
def test_tensorboard_without_a_directory_logs_inside_the_run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    trained: types.SimpleNamespace,
    tb_events: list[Any],
    wide: None,
    given: dict[str, str],
    logdir: str | None,
) -> None:
    argv = ["train", "--preset", "demo", "--bars", str(tmp_path / "b.csv")]
    for flag, name in given.items():
        argv += [flag, str(tmp_path / name)]
    a = _args([*argv, "--tensorboard"])
    a.func(a)
    want = tmp_path / logdir if logdir else Path("runs") / "demo"
    # the run's own directory: a fresh start there clears an earlier run's events
    assert tb_events == [
        ("log", want / "tensorboard", True),
        ("enter",),
        ("train", [True]),
        ("exit",),
    ]
    root = tmp_path / "run"
    assert capsys.readouterr().err.splitlines() == [
        f"done: {root}",
        f"  model   {root / 'checkpoints' / 'final.pt'} (best epoch 3, validation loss 0.1235)",
        f"  report  {root / 'report.md'}",
        f"  events  tensorboard --logdir {root / 'tensorboard'}",
        _next_line(root),
    ]


def test_tensorboard_in_a_directory_of_ones_own(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    trained: types.SimpleNamespace,
    tb_events: list[Any],
    wide: None,
) -> None:
    tb = tmp_path / "tb"
    argv = ["train", "--bars", str(tmp_path / "b.csv"), "--out", str(tmp_path / "out")]
    a = _args([*argv, "--tensorboard", str(tb)])
    a.func(a)
    # a directory of the user's own: an earlier run's events there are kept
    assert tb_events == [("log", tb, False), ("enter",), ("train", [True]), ("exit",)]
    assert f"  events  tensorboard --logdir {tb}" in capsys.readouterr().err.splitlines()


def test_tensorboard_without_the_package_is_refused_before_training(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    trained: types.SimpleNamespace,
) -> None:
    monkeypatch.setitem(sys.modules, "foxhunt.train.tensorboard", None)  # import fails
    argv = ["train", "--bars", str(tmp_path / "b.csv")]
    assert main([*argv, "--tensorboard"]) == 2
    assert capsys.readouterr().err == (
        "foxhunt: error: --tensorboard needs the tensorboard package: pip install 'foxhunt[tune]'\n"
    )
    assert trained.single == []
    assert main(argv) == 0  # without --tensorboard the package is not needed
    assert trained.single[0][1]["listeners"] == []


# --- foxhunt train --print-config -------------------------------------------------------------


def test_print_config_prints_the_resolved_config_and_trains_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    trained: types.SimpleNamespace,
) -> None:
    from foxhunt.config_files import config_text

    monkeypatch.chdir(tmp_path)
    argv = ["train", "--preset", "demo", "--recompute", "--instruments", "i.csv"]
    argv += ["--allow-outliers", "--ensemble", "3", "--print-config"]
    a = _args(argv)
    want = run_config(a).replace(
        train={"recompute": True},
        data={"instruments": str(tmp_path / "i.csv"), "allow_outliers": True},
    )
    assert a.func(a) is None
    assert capsys.readouterr() == (config_text(want, "toml"), "")
    a = _args([*argv, "json"])
    a.func(a)
    printed = capsys.readouterr().out
    assert printed == config_text(want, "json") and printed.endswith("}\n")
    data = json.loads(printed)["data"]
    assert (data["instruments"], data["allow_outliers"]) == (str(tmp_path / "i.csv"), True)
    assert trained.single == [] and trained.ensemble == []


def test_print_config_with_resume_prints_the_runs_own_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], trained: types.SimpleNamespace
) -> None:
    from foxhunt.config import preset
    from foxhunt.config_files import config_text, read_config_file

    old = tmp_path / "old"
    old.mkdir()
    preset("fast").replace(train={"lr": 0.5}).save(old / "config.json")
    argv = ["train", "--preset", "demo", "--lr", "0.001", "--resume", str(old)]
    a = _args([*argv, "--print-config"])
    a.func(a)
    stored = read_config_file(old / "config.json")
    assert stored.preset == "fast" and stored.train.lr == 0.5
    assert capsys.readouterr().out == config_text(stored, "toml")
    assert trained.single == []


# --- foxhunt train: the bf16 warning ----------------------------------------------------------


@pytest.fixture
def precision_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    calls: list[tuple[str, Any]] = []

    def warning(precision: str, device: Any) -> str | None:
        calls.append((precision, device))
        return "bf16 is slow here" if precision == "bf16" else None

    monkeypatch.setattr("foxhunt.runtime.emulated_precision_warning", warning)
    return calls


def _train_warnings(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [
        (r.levelno, r.getMessage()) for r in caplog.records if r.name == "foxhunt.commands.train"
    ]


def test_emulated_bf16_is_one_warning_before_training(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    trained: types.SimpleNamespace,
    precision_calls: list[tuple[str, Any]],
) -> None:
    import torch

    argv = ["train", "--bars", str(tmp_path / "b.csv"), "--device", "cpu"]
    a = _args([*argv, "--precision", "bf16"])
    with caplog.at_level(logging.INFO, logger="foxhunt.commands.train"):
        a.func(a)
    assert precision_calls == [("bf16", torch.device("cpu"))]
    assert _train_warnings(caplog) == [(logging.WARNING, "bf16 is slow here")]
    assert len(trained.single) == 1
    caplog.clear()
    a = _args([*argv, "--precision", "fp32"])
    with caplog.at_level(logging.INFO, logger="foxhunt.commands.train"):
        a.func(a)
    assert precision_calls[-1] == ("fp32", torch.device("cpu"))
    assert _train_warnings(caplog) == []  # native: nothing to say


def test_the_precision_check_reads_the_configs_defaults(
    tmp_path: Path, trained: types.SimpleNamespace, precision_calls: list[tuple[str, Any]]
) -> None:
    import torch

    a = _args(["train", "--preset", "demo", "--bars", str(tmp_path / "b.csv")])
    a.func(a)
    assert precision_calls == [("auto", torch.device("cpu"))]


def test_a_bad_device_is_left_for_training_to_report(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    trained: types.SimpleNamespace,
    precision_calls: list[tuple[str, Any]],
) -> None:
    a = _args(["train", "--bars", str(tmp_path / "b.csv"), "--device", "nope"])
    with caplog.at_level(logging.INFO, logger="foxhunt.commands.train"):
        a.func(a)
    assert precision_calls == [] and _train_warnings(caplog) == []
    ((cfg, _),) = trained.single
    assert cfg.train.device == "nope"


@pytest.mark.parametrize("error", [ValueError, RuntimeError])
def test_a_failing_precision_check_is_no_warning(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    trained: types.SimpleNamespace,
    error: type[Exception],
) -> None:
    def fails(precision: str, device: Any) -> str:
        raise error("cannot tell")

    monkeypatch.setattr("foxhunt.runtime.emulated_precision_warning", fails)
    a = _args(["train", "--bars", str(tmp_path / "b.csv"), "--precision", "bf16"])
    with caplog.at_level(logging.INFO, logger="foxhunt.commands.train"):
        a.func(a)
    assert _train_warnings(caplog) == [] and len(trained.single) == 1


# --- foxhunt train --ensemble -----------------------------------------------------------------


def _ensemble_dir(path: Path) -> Path:
    from foxhunt.artifacts.ensemble import ENSEMBLE_FILE

    path.mkdir(parents=True)
    (path / ENSEMBLE_FILE).write_text("{}")
    return path


def _members(root: Path) -> Any:
    """A fake ensemble training: two members, each announced and reported, then the totals."""
    from foxhunt.train.ensemble import EnsembleRun, MemberDone

    def train(cfg: Any, kw: dict[str, Any]) -> Any:
        seed = cfg.train.seed
        members = (
            MemberDone(0, seed, "members/0", 12.34, 1_234_567_890, 3, 0.123456),
            MemberDone(1, seed + 1, "members/1", 9.0, 987_654_321, 5, 0.25),
        )
        for m in members:
            kw["on_member"](m.index, 2, m.seed)
            kw["on_member_done"](m, 2)
        return EnsembleRun(root, members, 21.34, 1_234_567_890)

    return train


def test_ensemble_trains_the_members_and_prints_each_and_the_totals(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    trained: types.SimpleNamespace,
    wide: None,
) -> None:
    root = tmp_path / "ens"
    trained.members = _members(root)
    bars = tmp_path / "ES.parquet"
    argv = ["train", "--preset", "demo", "--bars", str(bars), "--out", str(root), "--seed", "7"]
    argv += ["--ensemble", "2", "--memory-budget", "1GB", "--allow-precision-change"]
    assert main([*argv, "--overwrite", "--recompute"]) == 0
    assert trained.single == []
    ((cfg, n, kw),) = trained.ensemble
    assert n == 2 and cfg.train.seed == 7 and cfg.train.recompute is True
    _check_hooks(kw)
    assert set(kw) == {"on_member", "on_member_done"} | {
        "bars",
        "out",
        "resume",
        "memory_budget",
        "allow_precision_change",
        "overwrite",
        "isolate",
    }
    del kw["on_member"], kw["on_member_done"]  # exercised by the fake: the lines below
    assert kw == {
        "bars": bars,
        "out": root,
        "resume": None,
        "memory_budget": "1GB",
        "allow_precision_change": True,
        "overwrite": True,
        "isolate": True,
    }
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "member 1/2 (seed 7)",
        "member 1/2 done: 12.3 s, peak RSS 1.23 GB, best epoch 3 (validation loss 0.1235)",
        "member 2/2 (seed 8)",
        "member 2/2 done: 9.0 s, peak RSS 988 MB, best epoch 5 (validation loss 0.2500)",
        f"done: {root} (ensemble of 2: 21.3 s in all, one member at a time, peak RSS 1.23 GB "
        "(the largest member's))",
        f"  members {root / 'members' / '0'}, {root / 'members' / '1'}",
        _next_line(root),
    ]


def test_ensemble_defaults(tmp_path: Path, trained: types.SimpleNamespace, wide: None) -> None:
    trained.members = _members(tmp_path / "ens")
    bars = tmp_path / "ES.parquet"
    a = _args(["train", "--bars", str(bars), "--ensemble", "2"])
    a.func(a)
    ((cfg, n, kw),) = trained.ensemble
    assert cfg == run_config(a) and n == 2
    _check_hooks(kw)
    assert {k: v for k, v in kw.items() if not k.startswith("on_")} == {
        "bars": bars,
        "out": None,
        "resume": None,
        "memory_budget": None,
        "allow_precision_change": False,
        "overwrite": False,
        "isolate": True,
    }


@pytest.mark.parametrize(("given", "n"), [([], None), (["--ensemble", "3"], 3)])
def test_resume_of_an_ensemble_continues_the_ensemble(
    tmp_path: Path, trained: types.SimpleNamespace, wide: None, given: list[str], n: int | None
) -> None:
    ens = _ensemble_dir(tmp_path / "ens")
    trained.members = _members(ens)
    a = _args(["train", "--resume", str(ens), *given])
    a.func(a)
    assert trained.single == []
    ((_, got, kw),) = trained.ensemble
    assert got == n  # None: the ensemble's own count
    assert (kw["resume"], kw["bars"], kw["out"]) == (ens, None, None)


@pytest.mark.parametrize("given", [[], ["--ensemble", "1"]])
def test_resume_of_a_single_run_trains_one_run(
    tmp_path: Path, trained: types.SimpleNamespace, wide: None, given: list[str]
) -> None:
    old = tmp_path / "old"
    old.mkdir()
    a = _args(["train", "--resume", str(old), *given])
    a.func(a)
    assert trained.ensemble == [] and trained.single[0][1]["resume"] == old


def test_a_resume_names_the_flags_it_ignores(
    tmp_path: Path,
    trained: types.SimpleNamespace,
    wide: None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``--resume RUN --epochs 2`` trained to the stored epochs without a word; a flag equal to
    the stored value (the original command repeated) is not named."""
    from foxhunt.config import preset

    old = tmp_path / "old"
    old.mkdir()
    preset("demo").replace(train={"epochs": 4, "lr": 0.5}).save(old / "config.json")
    argv = ["train", "--resume", str(old), "--epochs", "2", "--lr", "0.5", "--hidden", "64"]
    with caplog.at_level(logging.WARNING, logger="foxhunt.commands.train"):
        _args(argv).func(_args(argv))
    hidden = preset("demo").model.hidden
    assert caplog.messages == [
        f"--resume {old} continues the run on its own config.json: --epochs 2 (the run's: 4), "
        f"--hidden 64 (the run's: {hidden}) ignored; train a new run (--out) to change them"
    ]
    assert trained.single[0][1]["resume"] == old
    caplog.clear()
    same = ["train", "--resume", str(old), "--epochs", "4"]
    with caplog.at_level(logging.WARNING, logger="foxhunt.commands.train"):
        _args(same).func(_args(same))
    assert caplog.messages == []


def test_ensemble_of_one_is_one_run(
    tmp_path: Path, trained: types.SimpleNamespace, wide: None
) -> None:
    a = _args(["train", "--bars", str(tmp_path / "b.csv"), "--ensemble", "1"])
    a.func(a)
    assert trained.ensemble == [] and len(trained.single) == 1


@pytest.mark.parametrize("n", ["0", "-2"])
def test_ensemble_below_one_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    trained: types.SimpleNamespace,
    n: str,
) -> None:
    assert main(["train", "--bars", str(tmp_path / "b.csv"), "--ensemble", n]) == 2
    assert capsys.readouterr().err == f"foxhunt: error: --ensemble must be >= 1, got {n}\n"
    assert trained.single == [] and trained.ensemble == []


def test_ensemble_over_a_single_run_is_refused(
    tmp_path: Path, trained: types.SimpleNamespace
) -> None:
    old = tmp_path / "old"
    old.mkdir()
    a = _args(["train", "--resume", str(old), "--ensemble", "2"])
    with pytest.raises(InputError) as e:
        a.func(a)
    assert str(e.value) == f"--ensemble 2: {old} is a single run, not an ensemble"
    assert trained.single == [] and trained.ensemble == []


@pytest.mark.parametrize("resume", [False, True])
def test_ensemble_with_tensorboard_is_refused(
    tmp_path: Path, trained: types.SimpleNamespace, resume: bool
) -> None:
    argv = ["train", "--tensorboard"]
    if resume:
        argv += ["--resume", str(_ensemble_dir(tmp_path / "ens"))]
    else:
        argv += ["--bars", str(tmp_path / "b.csv"), "--ensemble", "2"]
    a = _args(argv)
    with pytest.raises(InputError) as e:
        a.func(a)
    assert str(e.value) == "--tensorboard cannot be used with --ensemble (open a member's run)"
    assert trained.single == [] and trained.ensemble == []


# --- foxhunt tune -----------------------------------------------------------------------------


def _trial(number: int, state: str, loss: float | None, **kw: Any) -> Any:
    from foxhunt.train.tune import TrialResult

    params = {
        "train.lr": 0.00123,
        "train.weight_decay": 0.0456,
        "train.batch_size": 32,
        "model.hidden": 64,
        "model.dropout": 0.12345,
        "model.encoder_length": 48,
    }
    values = {"epochs": 3, "estimated_peak": 1_500_000_000, "seconds": 12.6} | kw
    return TrialResult(number, params, state, loss, **values)  # type: ignore[arg-type]


def _trials() -> list[Any]:
    return [
        _trial(0, "complete", 0.25),
        _trial(1, "pruned", 0.5, epochs=1, seconds=3.2),
        _trial(2, "complete", 0.123456, estimated_peak=640_000_000, seconds=99.5),
        _trial(3, "over budget", None, epochs=0, message="over budget"),
    ]


@pytest.fixture
def searched(monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    """foxhunt.train.tune.tune replaced by a recorder that reports ``seen.report`` to on_trial
    (and raises KeyboardInterrupt when ``seen.interrupt``), then returns the trials of
    :func:`_trials` with trial 2 the best; optuna's verbosity and the budget logger's level
    recorded."""
    import optuna

    from foxhunt.train.tune import TuneResult

    seen = types.SimpleNamespace(calls=[], verbosity=[], report=[], interrupt=False)

    def tune(cfg: Any, bars: Path, out: Path, settings: Any, **kw: Any) -> Any:
        seen.calls.append((cfg, bars, out, settings, kw))
        with kw["progress"](2, 1) as p:  # the loop's progress protocol, drawn below the trials
            p.start_epoch(1, 4)
            p.step(loss=0.5, samples_per_s=10.0, memory_bytes=None)
            p.start_validation(2)
            p.validation_step()
            p.end_epoch("epoch 1")
        for r in seen.report:
            kw["on_trial"](r)
        if seen.interrupt:
            raise KeyboardInterrupt
        trials = _trials()
        return TuneResult(trials, trials[2], cfg, out / "best.toml")

    monkeypatch.setattr("foxhunt.train.tune.tune", tune)
    monkeypatch.setattr(optuna.logging, "set_verbosity", seen.verbosity.append)
    budget = logging.getLogger("foxhunt.memory.budget")
    monkeypatch.setattr(budget, "level", logging.NOTSET)  # restored after the test
    return seen


def test_tune_passes_every_flag_on_and_prints_the_best(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    searched: types.SimpleNamespace,
    wide: None,
) -> None:
    import optuna

    from foxhunt.train.tune import TuneSettings

    bars, out = tmp_path / "ES.parquet", tmp_path / "tune"
    out.mkdir()
    (out / "trials.json").write_text("[]")  # an earlier search: --overwrite replaces it
    argv = ["tune", "--bars", str(bars), "--preset", "demo", "--trials", "3", "--epochs", "2"]
    argv += ["--max-steps", "5", "--memory-budget", "1GB", "--seed", "11", "--out", str(out)]
    a = _args([*argv, "--overwrite"])
    assert a.func is tune_cmd.run
    assert main([*argv, "--overwrite"]) == 0
    ((cfg, got_bars, got_out, settings, kw),) = searched.calls
    assert cfg == run_config(a) and cfg.train.seed == 11
    assert (got_bars, got_out) == (bars, out)
    assert settings == TuneSettings(trials=3, seed=11, memory_budget="1GB", epochs=2, max_steps=5)
    assert set(kw) == {"progress", "on_trial", "overwrite", "resume"}
    assert (kw["overwrite"], kw["resume"]) == (True, False)
    assert searched.verbosity == [optuna.logging.ERROR]
    assert logging.getLogger("foxhunt.memory.budget").level == logging.WARNING
    captured = capsys.readouterr()
    best = out / "best.toml"
    assert captured.err.splitlines()[-2:] == [
        f"best: trial 2, validation loss 0.1235 → {best}",
        f"  next    foxhunt train --config {best} --bars {bars}",
    ]
    assert "foxhunt tune: 4 trials" in captured.out


def test_tune_defaults(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    searched: types.SimpleNamespace,
) -> None:
    from foxhunt.train.tune import TuneSettings

    monkeypatch.chdir(tmp_path)
    bars = tmp_path / "ES.parquet"
    a = _args(["tune", "--bars", str(bars)])
    assert a.func(a) is None
    ((cfg, _, out, settings, kw),) = searched.calls
    assert cfg == run_config(a) and cfg.preset == "tft-225"
    assert out == Path("runs") / "tune-tft-225"
    assert settings == TuneSettings(trials=20, seed=0, memory_budget=None)
    assert (settings.epochs, settings.max_steps) == (None, None)
    assert (kw["overwrite"], kw["resume"]) == (False, False)


def test_tune_out_holding_the_bars_is_refused(
    tmp_path: Path, searched: types.SimpleNamespace
) -> None:
    bars = tmp_path / "ES.parquet"
    a = _args(["tune", "--bars", str(bars), "--out", str(tmp_path)])
    with pytest.raises(InputError) as e:
        a.func(a)
    assert str(e.value) == (
        f"--out {tmp_path} holds the input --bars {bars}; write the output somewhere else"
    )
    assert searched.calls == []


def test_tune_without_optuna_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, searched: types.SimpleNamespace
) -> None:
    monkeypatch.setitem(sys.modules, "optuna", None)  # import fails
    a = _args(["tune", "--bars", str(tmp_path / "b.csv"), "--out", str(tmp_path / "t")])
    with pytest.raises(InputError) as e:
        a.func(a)
    assert str(e.value) == "foxhunt tune needs Optuna: pip install 'foxhunt[tune]'"
    assert searched.calls == []


def _bar_line(err: str) -> list[str]:
    """The trials bar's last rendering: its label and ``done/total``."""
    (line,) = [x for x in err.splitlines() if x.startswith("trials ")]
    return [w for w in line.split() if w == "trials" or "/" in w]


@pytest.mark.parametrize(
    ("resume", "earlier", "shown"),
    [
        (False, None, "1/5"),
        (True, None, "1/5"),  # nothing finished yet
        (True, 3, "4/5"),  # the bar goes on from the finished trials
        (False, 3, "1/5"),  # a new search over them (--overwrite) starts from none
    ],
)
def test_tune_progress_counts_the_trials_and_resume_goes_on(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    searched: types.SimpleNamespace,
    wide: None,
    resume: bool,
    earlier: int | None,
    shown: str,
) -> None:
    out = tmp_path / "tune"
    if earlier is not None:
        out.mkdir()
        (out / "trials.json").write_text(json.dumps([{"number": i} for i in range(earlier)]))
    searched.report = [_trial(earlier or 0, "complete", 0.123456)]
    argv = ["tune", "--bars", str(tmp_path / "b.csv"), "--out", str(out), "--trials", "5"]
    a = _args([*argv, "--resume"] if resume else [*argv, "--overwrite"])
    a.func(a)
    assert searched.calls[0][4]["resume"] is resume
    err = capsys.readouterr().err
    assert f"trial {earlier or 0}: complete 0.1235" in err.splitlines()
    assert _bar_line(err) == ["trials", shown]


def test_tune_reports_each_trial_as_it_ends(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    searched: types.SimpleNamespace,
    wide: None,
) -> None:
    searched.report = [
        _trial(0, "complete", 0.5),
        _trial(1, "over budget", None, message="needs 3.1 GB"),
        _trial(2, "pruned", 0.2),  # stopped early: not a result to beat
        _trial(3, "complete", 0.25),
    ]
    a = _args(["tune", "--bars", str(tmp_path / "b.csv"), "--out", str(tmp_path / "t")])
    a.func(a)
    lines = capsys.readouterr().err.splitlines()
    assert [x for x in lines if x.startswith("trial ")] == [
        "trial 0: complete 0.5000",
        "trial 1: over budget needs 3.1 GB",
        "trial 2: pruned 0.2000",
        "trial 3: complete 0.2500",
    ]
    bar = next(x for x in lines if x.startswith("trials "))
    assert bar.endswith(" best val 0.2500")  # of the complete trials only


@pytest.mark.parametrize("earlier", [None, 2])
def test_an_interrupted_tune_says_how_to_go_on_and_exits_130(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    searched: types.SimpleNamespace,
    earlier: int | None,
) -> None:
    monkeypatch.setenv("COLUMNS", "40")  # the message stays one line (soft wrap)
    out = tmp_path / "tune"
    if earlier is not None:
        out.mkdir()
        (out / "trials.json").write_text(json.dumps([{"number": i} for i in range(earlier)]))
    searched.interrupt = True
    argv = ["tune", "--bars", str(tmp_path / "b.csv"), "--out", str(out)]
    assert main([*argv, "--resume"] if earlier else argv) == 130
    captured = capsys.readouterr()
    assert captured.out == ""  # no table
    assert [x for x in captured.err.splitlines() if "interrupted" in x] == [
        f"foxhunt tune: interrupted after {earlier or 0} finished trials "
        f"({out / 'trials.json'}); continue the search with the same command and --resume"
    ]


def test_an_interrupted_tune_on_a_terminal_prints_the_path_as_plain_text(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    searched: types.SimpleNamespace,
    wide: None,
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich draws as on a terminal
    searched.interrupt = True
    out = tmp_path / "tune"
    assert main(["tune", "--bars", str(tmp_path / "b.csv"), "--out", str(out)]) == 130
    assert capsys.readouterr().err.endswith(
        f"foxhunt tune: interrupted after 0 finished trials ({out / 'trials.json'}); continue "
        "the search with the same command and --resume\n"
    )


def test_tune_table_reads_whole_in_a_pipe(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    searched: types.SimpleNamespace,
) -> None:
    """A pipe or file gets the table 160 columns wide, not squashed into 80 (here 60)."""
    monkeypatch.setenv("COLUMNS", "60")
    a = _args(["tune", "--bars", str(tmp_path / "b.csv"), "--out", str(tmp_path / "t")])
    a.func(a)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].strip() == "foxhunt tune: 4 trials"

    def cells(sep: str) -> list[list[str]]:
        return [[c.strip() for c in x.split(sep)[1:-1]] for x in lines if x.startswith(sep)]

    assert cells("┃") == [["#", "state", "val loss", "epochs", "lr", "wd", "batch", "hidden"]
                          + ["dropout", "enc", "est. peak", "s"]]  # fmt: skip
    common = ["1.23e-03", "4.6e-02", "32", "64", "0.123", "48"]
    assert cells("│") == [
        ["2", "complete", "0.1235", "3", *common, "640 MB", "100"],
        ["0", "complete", "0.2500", "3", *common, "1.50 GB", "13"],
        ["1", "pruned", "0.5000", "1", *common, "1.50 GB", "3"],
        ["3", "over budget", "-", "0", *common, "1.50 GB", "13"],
    ]
    assert max(map(len, lines)) > 60


def test_tune_table_columns_and_the_best_row() -> None:
    from foxhunt.train.tune import TuneResult

    trials = _trials()
    t = tune_cmd._table(TuneResult(trials, trials[2], None, Path("best.toml")))  # type: ignore[arg-type]
    assert t.title == "foxhunt tune: 4 trials"
    assert [c.header for c in t.columns] == [
        "#",
        "state",
        "val loss",
        "epochs",
        "lr",
        "wd",
        "batch",
        "hidden",
        "dropout",
        "enc",
        "est. peak",
        "s",
    ]
    assert [c.justify for c in t.columns] == ["right", "left"] + ["right"] * 10
    assert all(c.no_wrap for c in t.columns)
    assert list(t.columns[0].cells) == ["2", "0", "1", "3"]
    assert [r.style for r in t.rows] == ["bold green", None, None, None]  # the best trial


def test_tune_table_sorts_by_loss_with_unscored_trials_last() -> None:
    from foxhunt.train.tune import TuneResult

    trials = [
        _trial(0, "failed", None, epochs=0),
        _trial(1, "complete", 0.5),
        _trial(2, "complete", 0.0),
        _trial(3, "pruned", 0.75),
    ]
    t = tune_cmd._table(TuneResult(trials, trials[2], None, Path("b.toml")))  # type: ignore[arg-type]
    assert list(t.columns[0].cells) == ["2", "1", "3", "0"]
    assert list(t.columns[2].cells) == ["0.0000", "0.5000", "0.7500", "-"]
    assert [r.style for r in t.rows] == ["bold green", None, None, None]


def _drawn(progress: Any, console: Any) -> list[str]:
    """The bars ``progress`` would draw now, one line each, as text."""
    console.print(progress._progress.get_renderable())
    return [line.rstrip() for line in console.export_text().splitlines() if line.strip()]


def test_tune_progress_draws_the_trials_and_the_trial_in_flight() -> None:
    import io

    from rich.console import Console

    console = Console(file=io.StringIO(), width=120, record=True)
    p = tune_cmd._TuneProgress(5, console, done=2)
    [trials] = _drawn(p, console)  # the batch bar is hidden until a trial trains
    assert trials.startswith("trials") and "2/5" in trials
    p.start_epoch(3, 10)
    p.step(loss=0.123456, samples_per_s=50.0, memory_bytes=None)
    lines = _drawn(p, console)
    assert lines[1].startswith("epoch 3") and lines[1].endswith("1/10 0:00:00 loss 0.1235")
    p.start_validation(4)
    p.validation_step()
    lines = _drawn(p, console)
    assert lines[1].startswith("validation") and "1/4" in lines[1]
    assert "loss" not in lines[1].split("1/4")[0]
    p.end_epoch("epoch 3: val 0.5")
    assert len(_drawn(p, console)) == 1
    r = types.SimpleNamespace(number=7, state="complete", val_loss=0.5, message="")
    p.trial_done(r)
    p.trial_done(types.SimpleNamespace(number=8, state="pruned", val_loss=0.25, message="x"))
    p.trial_done(types.SimpleNamespace(number=9, state="failed", val_loss=None, message="boom"))
    p.note("a note")
    text = console.export_text()
    for line in ("trial 7: complete 0.5000", "trial 8: pruned 0.2500 x", "trial 9: failed boom"):
        assert line in text.splitlines()
    assert "a note" in text.splitlines()
    [trials] = _drawn(p, console)
    assert "5/5" in trials and trials.endswith("best val 0.5000")  # pruned trials do not count
    with p.trial_progress(3, 1) as inner:
        assert inner is p


def test_tune_progress_shows_no_status_before_there_is_one_and_none_left_over() -> None:
    """The trials bar has no status until a trial completes, then the lowest validation loss
    of the completed trials; a new epoch's batch bar starts without the last epoch's loss."""
    import io

    from rich.console import Console

    console = Console(file=io.StringIO(), width=120, record=True)
    p = tune_cmd._TuneProgress(5, console)
    elapsed = r"\d+:\d\d:\d\d"
    [trials] = _drawn(p, console)
    assert re.fullmatch(rf"trials .* 0/5 {elapsed}", trials), trials
    p.trial_done(types.SimpleNamespace(number=0, state="failed", val_loss=None, message="boom"))
    trials = _drawn(p, console)[-1]
    assert re.fullmatch(rf"trials .* 1/5 {elapsed}", trials), trials
    for number, loss in ((1, 0.5), (2, 0.75)):  # the second is worse: the best stays
        r = types.SimpleNamespace(number=number, state="complete", val_loss=loss, message="")
        p.trial_done(r)
    trials = _drawn(p, console)[-1]
    assert re.fullmatch(rf"trials .* 3/5 {elapsed} best val 0\.5000", trials), trials
    p.start_epoch(1, 10)
    p.step(loss=0.25, samples_per_s=50.0, memory_bytes=None)
    p.end_epoch("epoch 1: val 0.3")
    p.start_epoch(2, 10)
    batches = _drawn(p, console)[1]
    assert re.fullmatch(rf"epoch 2 .* 0/10 {elapsed}", batches), batches
