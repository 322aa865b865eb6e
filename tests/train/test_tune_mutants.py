"""``foxhunt tune``'s search (:mod:`foxhunt.train.tune`) with each trial's training replaced by
a recorder (and, where the budget is tested, the planner and the estimate too): the search
space (the exact ranges and choices asked of Optuna), the config each trial trains with and
everything passed on, each trial's record (state, loss, epochs, peak, time on a clock set by
hand), the pruner's settings, the best config written, ``trials.json`` and the study, resume
and its refusals, and every message whole.

The real search runs in ``tests/commands/test_tune.py`` (slow)."""

from __future__ import annotations

import dataclasses
import json
import signal
import threading
import types
from pathlib import Path
from typing import Any

import optuna
import pytest

from foxhunt.config import RunConfig, demo
from foxhunt.config_files import read_config_file
from foxhunt.errors import InputError, ModelDirError
from foxhunt.train import tune as tune_module
from foxhunt.train.tune import (
    STUDY,
    TrialResult,
    TuneResult,
    TuneSettings,
    apply_params,
    pruning_listener,
    suggest,
    tune,
)

optuna.logging.set_verbosity(optuna.logging.WARNING)

# --- the search space --------------------------------------------------------------------------


class RecordingTrial:
    """An Optuna trial that records what it is asked and answers with the name's own value."""

    def __init__(self, pick: int = -1) -> None:
        self.asked: list[tuple[Any, ...]] = []
        self.pick = pick

    def suggest_float(self, name: str, low: float, high: float, *, log: bool = False) -> str:
        self.asked.append(("float", name, low, high, log))
        return f"{name} sampled"

    def suggest_categorical(self, name: str, choices: list[Any]) -> Any:
        self.asked.append(("categorical", name, list(choices)))
        return choices[self.pick]


def test_suggest_asks_for_the_search_space_around_the_base() -> None:
    base = demo()  # lr 0.003, batch 64, hidden 32 (4 heads), encoder 32
    trial = RecordingTrial()
    params = suggest(trial, base)  # type: ignore[arg-type]
    assert trial.asked == [
        ("float", "train.lr", 0.003 / 10, 0.003 * 10, True),
        ("float", "train.weight_decay", 1e-4, 1e-1, True),
        ("categorical", "train.batch_size", [32, 64, 128]),
        ("categorical", "model.hidden", [16, 32, 64]),
        ("float", "model.dropout", 0.0, 0.3, False),
        ("categorical", "model.encoder_length", [16, 32]),
    ]
    assert params == {
        "train.lr": "train.lr sampled",
        "train.weight_decay": "train.weight_decay sampled",
        "train.batch_size": 128,
        "model.hidden": 64,
        "model.dropout": "model.dropout sampled",
        "model.encoder_length": 32,
    }


@pytest.mark.parametrize(
    ("model", "batch", "want"),
    [
        # hidden 6 / 2 heads: half is 3, rounded to the heads' multiple 4 (1.5 heads rounds to 2)
        ({"hidden": 6, "n_heads": 2, "encoder_length": 3}, 3, ([1, 3, 6], [4, 6, 12], [1, 3])),
        # half of hidden 4 (4 heads) rounds to 0 heads: at least one head's width
        ({"hidden": 4, "n_heads": 4, "encoder_length": 1}, 1, ([1, 2], [4, 8], [1])),
        ({"hidden": 12, "n_heads": 3, "encoder_length": 2}, 2, ([1, 2, 4], [6, 12, 24], [1, 2])),
    ],
)
def test_suggest_choices_of_small_bases(
    model: dict[str, int], batch: int, want: tuple[list[int], ...]
) -> None:
    base = demo().replace(model=model, train={"batch_size": batch})
    trial = RecordingTrial(pick=0)
    params = suggest(trial, base)  # type: ignore[arg-type]
    choices = {a[1]: a[2] for a in trial.asked if a[0] == "categorical"}
    assert choices == {
        "train.batch_size": want[0],
        "model.hidden": want[1],
        "model.encoder_length": want[2],
    }
    assert params["train.batch_size"] == want[0][0]
    assert params["model.hidden"] == want[1][0]
    assert params["model.encoder_length"] == want[2][0]


def test_round_to_the_nearest_multiple() -> None:
    assert tune_module._round_to(7.0, 4) == 8 and tune_module._round_to(5.9, 4) == 4
    assert tune_module._round_to(10.0, 4) == 8  # 2.5 rounds to even
    assert isinstance(tune_module._round_to(9.0, 3), int)


def test_apply_params_replaces_dotted_keys() -> None:
    base = demo().replace(train={"micro_batch_size": 16})
    got = apply_params(base, {"model.hidden": 64, "model.dropout": 0.2})
    assert got == base.replace(model={"hidden": 64, "dropout": 0.2})
    got = apply_params(base, {"train.batch_size": 32, "train.lr": 0.01, "model.hidden": 8})
    want = base.replace(
        train={"batch_size": 32, "lr": 0.01, "micro_batch_size": None}, model={"hidden": 8}
    )
    assert got == want
    assert apply_params(base, {}) == base


def test_apply_params_splits_at_the_first_dot_only() -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'lr\.x'"):
        apply_params(demo(), {"train.lr.x": 1})


def test_the_pruning_message_names_the_epoch() -> None:
    class Trial:
        def __init__(self) -> None:
            self.reported: list[tuple[float, int]] = []

        def report(self, value: float, step: int) -> None:
            self.reported.append((value, step))

        def should_prune(self) -> bool:
            return True

    trial, losses = Trial(), []
    listen = pruning_listener(trial, losses)  # type: ignore[arg-type]
    listen({"val_loss": 9.0, "epoch": 1})  # no kind: not an epoch
    with pytest.raises(optuna.TrialPruned) as e:
        listen({"kind": "epoch", "epoch": 3, "val_loss": "0.25"})
    assert str(e.value) == "pruned after epoch 3"
    assert trial.reported == [(0.25, 3)] and losses == [0.25]


def test_settings_defaults_and_the_trial_count() -> None:
    assert dataclasses.astuple(TuneSettings(trials=1)) == (1, 0, None, None, None)
    with pytest.raises(InputError) as e:
        TuneSettings(trials=0)
    assert str(e.value) == "--trials must be >= 1, got 0"
    trial = TrialResult(0, {}, "complete", 0.1, 1, 100, 1.0)
    assert trial.message == ""


# --- tune() with the training replaced ------------------------------------------------------


class Clock:
    """``time.perf_counter``: 100, 101.5, 103, ... (1.5 s a call)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        self.now += 1.5
        return self.now - 1.5


class Trainer:
    """``run_training`` replaced. Call k follows ``script[k]`` (default ``{}``):

    ``losses``: validation losses it reports to the listeners, one epoch each (from epoch
    ``first``, default 1); ``kept``: the best_val_loss it returns (default 0.5 + k / 10);
    ``raise``: an exception raised after the epochs; ``run_json``: write a run.json (default
    True). Every call writes a checkpoint and records the config, keywords and whether the old
    search's files were there."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.script: dict[int, dict[str, Any]] = {}
        self.calls: list[tuple[RunConfig, dict[str, Any]]] = []
        self.saw_old: list[bool] = []

    def __call__(self, cfg: RunConfig, **kw: Any) -> Any:
        k = len(self.calls)
        self.calls.append((cfg, kw))
        self.saw_old.append((self.out / "best.toml").exists() or (self.out / "old").exists())
        spec = self.script.get(k, {})
        root = kw["out"]
        (root / "checkpoints").mkdir(parents=True)
        (root / "checkpoints" / "w.safetensors").write_bytes(b"w")
        if spec.get("run_json", True):
            (root / "run.json").write_text(json.dumps({"stop_reason": "running", "x": k}))
        for i, loss in enumerate(spec.get("losses", []), start=spec.get("first", 1)):
            for listen in kw["listeners"]:
                listen({"kind": "epoch", "epoch": i, "val_loss": loss})
        if "raise" in spec:
            raise spec["raise"]
        return types.SimpleNamespace(best_val_loss=spec.get("kept", 0.5 + k / 10))


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    out = tmp_path / "searches" / "tune"  # its parent made too
    trainer = Trainer(out)
    monkeypatch.setattr(tune_module, "run_training", trainer)
    monkeypatch.setattr(tune_module, "time", types.SimpleNamespace(perf_counter=Clock()))
    bars = tmp_path / "ES.parquet"
    return types.SimpleNamespace(out=out, trainer=trainer, bars=bars, tmp=tmp_path)


def _search(base: RunConfig, bars: Path, budget: str | None) -> dict[str, Any]:
    return json.loads(json.dumps({"base": base.to_dict(), "bars": str(bars), "budget": budget}))


def _peak(cfg: RunConfig) -> int:
    from foxhunt.memory.budget import training_peak

    return training_peak(cfg, cfg.train.micro_batch, cfg.train.checkpointing, cfg.train.precision)


def test_a_search_runs_records_prunes_and_writes_the_best(fake: types.SimpleNamespace) -> None:
    base = demo().replace(train={"lr": 0.002})
    # epoch-0 losses: trials 0 and 1 are the pruner's two startup trials; trial 2's 5.0 is above
    # their median at step 0 (no warm-up steps): pruned there
    fake.trainer.script = {
        0: {"losses": [1.0], "first": 0, "kept": 0.9},
        1: {"losses": [2.0], "first": 0, "kept": 1.8},
        2: {"losses": [5.0, 4.0], "first": 0},
    }
    progress = object()
    seen: list[TrialResult] = []
    settings = TuneSettings(trials=3, seed=5, epochs=3, max_steps=2)
    result = tune(base, fake.bars, fake.out, settings, progress=progress, on_trial=seen.append)

    trials = result.trials
    assert [(t.number, t.state, t.val_loss, t.epochs) for t in trials] == [
        (0, "complete", 0.9, 1),
        (1, "complete", 1.8, 1),
        (2, "pruned", 5.0, 1),
    ]
    assert all(t.seconds == 1.5 and t.message == "" for t in trials)
    trial_base = base.replace(train={"epochs": 3, "max_steps": 2})
    for t, (cfg, kw) in zip(trials, fake.trainer.calls, strict=True):
        assert cfg == apply_params(trial_base, t.params)
        assert t.estimated_peak == _peak(cfg)
        listeners = kw.pop("listeners")
        assert len(listeners) == 1 and callable(listeners[0])
        assert kw == {
            "bars": fake.bars,
            "out": fake.out / "trials" / f"{t.number:03d}",
            "resume": None,
            "memory_budget": None,
            "allow_precision_change": False,
            "progress": progress,
            "overwrite": True,
            "isolate": True,  # each trial's data preparation in a child (since session 54)
        }
        assert not (fake.out / "trials" / f"{t.number:03d}" / "checkpoints").exists()
    assert seen == trials
    stored = json.loads((fake.out / "trials.json").read_text())
    assert stored == json.loads(json.dumps([dataclasses.asdict(t) for t in trials]))
    infos = [json.loads((fake.out / f"trials/00{i}/run.json").read_text()) for i in range(3)]
    assert infos == [
        {"stop_reason": "running", "x": 0},
        {"stop_reason": "running", "x": 1},
        {"stop_reason": "pruned", "x": 2},
    ]

    # the best: trial 0, over the base config (the per-trial epochs and max_steps not kept)
    best_config = apply_params(base, trials[0].params)
    assert result == TuneResult(trials, trials[0], best_config, fake.out / "best.toml")
    assert read_config_file(fake.out / "best.toml") == best_config

    assert STUDY == "foxhunt-tune"  # the name earlier searches' study.log holds
    study = optuna.load_study(study_name="foxhunt-tune", storage=tune_module._storage(fake.out))
    assert study.user_attrs["search"] == _search(trial_base, fake.bars, None)
    assert study.direction == optuna.study.StudyDirection.MINIMIZE
    assert [t.state.name for t in study.trials] == ["COMPLETE", "COMPLETE", "PRUNED"]
    assert [t.value for t in study.trials[:2]] == [0.9, 1.8]


def test_the_search_is_seeded(fake: types.SimpleNamespace) -> None:
    def params(seed: int, name: str) -> list[dict[str, Any]]:
        out = fake.tmp / name
        result = tune(demo(), fake.bars, out, TuneSettings(trials=2, seed=seed))
        return [dict(t.params) for t in result.trials]

    assert params(3, "a") == params(3, "b")
    assert params(3, "c") != params(4, "d")


@pytest.mark.parametrize(("epochs", "max_steps"), [(2, None), (None, 5), (None, None)])
def test_each_trial_trains_the_settings_length(
    fake: types.SimpleNamespace, epochs: int | None, max_steps: int | None
) -> None:
    base = demo().replace(train={"epochs": 4, "max_steps": 9})
    settings = TuneSettings(trials=1, epochs=epochs, max_steps=max_steps)
    result = tune(base, fake.bars, fake.out, settings)
    ((cfg, _),) = fake.trainer.calls
    assert cfg.train.epochs == (epochs or 4) and cfg.train.max_steps == (max_steps or 9)
    assert (result.best_config.train.epochs, result.best_config.train.max_steps) == (4, 9)


def test_the_best_trial_is_the_lowest_loss_then_the_first(fake: types.SimpleNamespace) -> None:
    fake.trainer.script = {0: {"kept": 0.7}, 1: {"kept": 0.3}, 2: {"kept": 0.3}, 3: {"kept": 0.4}}
    result = tune(demo(), fake.bars, fake.out, TuneSettings(trials=4))
    assert result.best.number == 1 and result.best == result.trials[1]


def test_a_trial_without_a_kept_loss_scores_its_best_epoch(fake: types.SimpleNamespace) -> None:
    fake.trainer.script = {
        0: {"losses": [0.4, 0.2, 0.3], "kept": None},
        1: {"losses": [0.6, 0.1, 0.5], "raise": optuna.TrialPruned("stop")},
    }
    result = tune(demo(), fake.bars, fake.out, TuneSettings(trials=2))
    assert [(t.state, t.val_loss, t.epochs) for t in result.trials] == [
        ("complete", 0.2, 3),
        ("pruned", 0.1, 3),
    ]
    assert result.best.number == 0


@pytest.mark.parametrize("order", [(float("nan"), 0.2), (0.2, float("nan"))])
def test_a_trial_scores_its_best_finite_epoch_whatever_the_order(
    fake: types.SimpleNamespace, order: tuple[float, float]
) -> None:
    """A diverged epoch (NaN) does not hide a finite one: ``min`` over a list with a NaN first
    gave NaN and failed the trial, with the NaN second 0.2."""
    fake.trainer.script = {0: {"losses": list(order), "kept": None}}
    result = tune(demo(), fake.bars, fake.out, TuneSettings(trials=1))
    assert [(t.state, t.val_loss) for t in result.trials] == [("complete", 0.2)]


def test_a_trial_with_only_diverged_epochs_fails_with_the_last_loss(
    fake: types.SimpleNamespace,
) -> None:
    fake.trainer.script = {
        0: {"losses": [float("inf"), float("nan")], "kept": None},
        1: {"kept": 0.3},
    }
    seen: list[TrialResult] = []
    tune(demo(), fake.bars, fake.out, TuneSettings(trials=2), on_trial=seen.append)
    assert (seen[0].state, seen[0].message) == ("failed", "trial 0: validation loss is nan")


# --- trials that do not complete ---------------------------------------------------------------


def test_failed_trials_end_the_search_with_the_first_message(fake: types.SimpleNamespace) -> None:
    fake.trainer.script = {0: {"raise": InputError("bad 0")}, 1: {"raise": InputError("bad 1")}}
    seen: list[TrialResult] = []
    with pytest.raises(InputError) as e:
        tune(demo(), fake.bars, fake.out, TuneSettings(trials=2), on_trial=seen.append)
    assert str(e.value) == "bad 0"
    assert [(t.state, t.message, t.val_loss, t.epochs) for t in seen] == [
        ("failed", "bad 0", None, 0),
        ("failed", "bad 1", None, 0),
    ]
    assert all(t.seconds == 1.5 for t in seen)
    assert not (fake.out / "trials/000/checkpoints").exists()
    assert json.loads((fake.out / "trials/000/run.json").read_text())["stop_reason"] == "running"
    assert not (fake.out / "best.toml").exists()
    assert len(json.loads((fake.out / "trials.json").read_text())) == 2


@pytest.mark.parametrize("loss", [float("nan"), float("inf")])
def test_a_non_finite_loss_fails_the_trial(fake: types.SimpleNamespace, loss: float) -> None:
    fake.trainer.script = {0: {"kept": loss}, 1: {"kept": 0.25}}
    seen: list[TrialResult] = []
    result = tune(demo(), fake.bars, fake.out, TuneSettings(trials=2), on_trial=seen.append)
    assert seen[0].state == "failed" and seen[0].val_loss is None
    assert seen[0].message == f"trial 0: validation loss is {loss}"
    assert result.best.number == 1 and result.best.val_loss == 0.25


def test_only_non_finite_losses_end_the_search_with_the_message(
    fake: types.SimpleNamespace,
) -> None:
    fake.trainer.script = {0: {"kept": float("nan")}}
    with pytest.raises(InputError) as e:
        tune(demo(), fake.bars, fake.out, TuneSettings(trials=1))
    assert str(e.value) == "trial 0: validation loss is nan"


def _first_trial_over_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planner refuses the first trial ("too big") and fits every later one as it is."""
    calls: list[int] = []

    def plan_budget(cfg: RunConfig, budget: int, **kw: Any) -> Any:
        calls.append(budget)
        if len(calls) == 1:
            raise InputError("too big")
        return types.SimpleNamespace(apply=lambda c: c)

    monkeypatch.setattr(tune_module, "plan_budget", plan_budget)


def test_without_a_completed_or_failed_trial_the_states_are_named(
    fake: types.SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    _first_trial_over_budget(monkeypatch)
    fake.trainer.script = {0: {"raise": optuna.TrialPruned("x"), "run_json": False}}
    seen: list[TrialResult] = []
    settings = TuneSettings(trials=2, memory_budget="5GB")
    with pytest.raises(InputError) as e:
        tune(demo(), fake.bars, fake.out, settings, on_trial=seen.append)
    assert str(e.value) == "no trial completed (over budget, pruned)"
    assert [(t.state, t.message, t.val_loss, t.epochs) for t in seen] == [
        ("over budget", "too big", None, 0),
        ("pruned", "", None, 0),
    ]
    assert len(fake.trainer.calls) == 1  # the trial over budget did not train
    assert fake.trainer.calls[0][1]["out"] == fake.out / "trials" / "001"
    assert not (fake.out / "trials/001/run.json").exists()  # none to mark
    assert not (fake.out / "trials/000").exists()


def test_a_pruned_trials_corrupt_run_json_is_named(
    fake: types.SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Corrupting(Trainer):
        def __call__(self, cfg: RunConfig, **kw: Any) -> Any:
            kw["out"].mkdir(parents=True)
            (kw["out"] / "run.json").write_text("{")
            raise optuna.TrialPruned("x")

    monkeypatch.setattr(tune_module, "run_training", Corrupting(fake.out))

    with pytest.raises(ModelDirError) as e:
        tune(demo(), fake.bars, fake.out, TuneSettings(trials=1))
    run_json = fake.out / "trials" / "000" / "run.json"
    assert str(e.value) == f"{run_json}: run.json is corrupt (not valid JSON)"


def test_a_failure_is_named_before_trials_over_budget(
    fake: types.SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    _first_trial_over_budget(monkeypatch)
    fake.trainer.script = {0: {"raise": InputError("unreadable bars")}}
    with pytest.raises(InputError) as e:
        tune(demo(), fake.bars, fake.out, TuneSettings(trials=2, memory_budget="5GB"))
    assert str(e.value) == "unreadable bars"


def test_a_budget_plans_each_trial_and_the_best_config(
    fake: types.SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from foxhunt.train.resources.plan import CPU_PLAN_MARGIN

    planned: list[tuple[RunConfig, int, dict[str, Any]]] = []
    peaks: list[tuple[Any, ...]] = []

    def plan_budget(cfg: RunConfig, budget: int, **kw: Any) -> Any:
        planned.append((cfg, budget, kw))
        return types.SimpleNamespace(apply=lambda c: c.replace(train={"checkpointing": True}))

    def training_peak(cfg: RunConfig, micro: int, checkpointing: bool, precision: str) -> int:
        peaks.append((cfg, micro, checkpointing, precision))
        return 2000 if checkpointing else 1000

    monkeypatch.setattr(tune_module, "plan_budget", plan_budget)
    monkeypatch.setattr(tune_module, "training_peak", training_peak)
    base = demo().replace(train={"micro_batch_size": 16, "batch_size": 64})
    settings = TuneSettings(trials=1, memory_budget="2GB", epochs=2)
    result = tune(base, fake.bars, fake.out, settings)

    (trial,) = result.trials
    unplanned = apply_params(base.replace(train={"epochs": 2}), trial.params)
    fitted = unplanned.replace(train={"checkpointing": True})
    assert peaks == [
        (unplanned, unplanned.train.micro_batch, False, unplanned.train.precision),
        (fitted, fitted.train.micro_batch, True, fitted.train.precision),
    ]
    assert trial.estimated_peak == 2000 and trial.state == "complete"
    assert fake.trainer.calls[0][0] == fitted
    margin = {"allow_precision_change": False, "margin": CPU_PLAN_MARGIN}
    best = apply_params(base, trial.params)
    assert planned == [(unplanned, 2_000_000_000, margin), (best, 2_000_000_000, margin)]
    assert result.best_config == best.replace(train={"checkpointing": True})
    assert read_config_file(fake.out / "best.toml") == result.best_config
    study = optuna.load_study(study_name=STUDY, storage=tune_module._storage(fake.out))
    assert study.user_attrs["search"]["budget"] == "2GB"


def test_without_a_budget_the_estimate_is_taken_once(
    fake: types.SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    peaks: list[bool] = []

    def training_peak(cfg: RunConfig, micro: int, checkpointing: bool, precision: str) -> int:
        peaks.append(checkpointing)
        return 1234

    monkeypatch.setattr(tune_module, "training_peak", training_peak)
    result = tune(demo(), fake.bars, fake.out, TuneSettings(trials=1))
    assert peaks == [False] and result.trials[0].estimated_peak == 1234


# --- the output folder and resume --------------------------------------------------------------


def test_a_held_folder_is_refused_and_overwrite_clears_it(fake: types.SimpleNamespace) -> None:
    fake.out.mkdir(parents=True)
    (fake.out / "best.toml").write_text("")
    (fake.out / "notes.txt").write_text("mine")
    with pytest.raises(InputError) as e:
        tune(demo(), fake.bars, fake.out, TuneSettings(trials=1))
    assert str(e.value) == (
        f"{fake.out} already holds a search (best.toml); replace it with --overwrite or choose "
        "another --out"
    )
    assert fake.trainer.calls == []
    tune(demo(), fake.bars, fake.out, TuneSettings(trials=1), overwrite=True)
    assert fake.trainer.saw_old == [False]
    assert sorted(p.name for p in fake.out.iterdir()) == [
        "best.toml",
        "notes.txt",
        "study.log",
        "trials",
        "trials.json",
    ]


@pytest.mark.parametrize(
    "name", ["best.toml", "trials.json", "trials", "study.log", "study.log.lock"]
)
def test_each_output_of_a_search_is_held(fake: types.SimpleNamespace, name: str) -> None:
    fake.out.mkdir(parents=True)
    (fake.out / name).write_text("")
    with pytest.raises(InputError) as e:
        tune(demo(), fake.bars, fake.out, TuneSettings(trials=1))
    assert str(e.value) == (
        f"{fake.out} already holds a search ({name}); replace it with --overwrite or choose "
        "another --out"
    )


def test_resume_with_overwrite_is_refused(fake: types.SimpleNamespace) -> None:
    with pytest.raises(InputError) as e:
        tune(demo(), fake.bars, fake.out, TuneSettings(trials=1), resume=True, overwrite=True)
    assert str(e.value) == "--overwrite starts a new search; it cannot be used with --resume"
    assert fake.trainer.calls == []


def test_resume_of_no_search_is_refused(fake: types.SimpleNamespace) -> None:
    fake.out.mkdir(parents=True)
    with pytest.raises(InputError) as e:
        tune(demo(), fake.bars, fake.out, TuneSettings(trials=1), resume=True)
    assert str(e.value) == (
        f"{fake.out}: no search to resume (no study.log); start one without --resume"
    )


def test_resume_continues_up_to_the_trials_in_all(fake: types.SimpleNamespace) -> None:
    settings = TuneSettings(trials=2, epochs=1)
    first = tune(demo(), fake.bars, fake.out, settings)
    seen: list[TrialResult] = []
    again = dataclasses.replace(settings, trials=3)
    result = tune(demo(), fake.bars, fake.out, again, resume=True, on_trial=seen.append)
    assert result.trials[:2] == first.trials
    assert [t.number for t in result.trials] == [0, 1, 2] and seen == result.trials[2:]
    assert len(fake.trainer.calls) == 3
    assert len(json.loads((fake.out / "trials.json").read_text())) == 3
    # all done: resume trains nothing and gives the search's result
    done = tune(demo(), fake.bars, fake.out, again, resume=True)
    assert len(fake.trainer.calls) == 3 and done.trials == result.trials
    assert done.best == first.best


def test_resume_of_a_search_stopped_before_its_first_trial_ended(
    fake: types.SimpleNamespace,
) -> None:
    tune(demo(), fake.bars, fake.out, TuneSettings(trials=1))
    (fake.out / "trials.json").unlink()
    result = tune(demo(), fake.bars, fake.out, TuneSettings(trials=1), resume=True)
    assert [t.number for t in result.trials] == [1]


def _resume_refused(fake: types.SimpleNamespace, base: RunConfig, bars: Path, budget: Any) -> str:
    settings = TuneSettings(trials=2, memory_budget=budget)
    with pytest.raises(InputError) as e:
        tune(base, bars, fake.out, settings, resume=True)
    return str(e.value)


def test_resume_of_a_search_started_otherwise_names_what_differs(
    fake: types.SimpleNamespace,
) -> None:
    tune(demo(), fake.bars, fake.out, TuneSettings(trials=1))
    tail = (
        "; resume it with the same --preset/--config, --bars, --epochs, --max-steps and "
        "--memory-budget"
    )
    start = f"{fake.out}: the search was started with another "
    other = fake.tmp / "other.parquet"
    lr = demo().replace(train={"lr": 0.01})
    assert _resume_refused(fake, lr, fake.bars, None) == start + "config" + tail
    assert _resume_refused(fake, demo(), other, None) == start + "bars" + tail
    assert _resume_refused(fake, demo(), fake.bars, "9GB") == start + "--memory-budget" + tail
    assert _resume_refused(fake, lr, other, "9GB") == (
        start + "config, bars, --memory-budget" + tail
    )
    with pytest.raises(InputError) as e:
        settings = TuneSettings(trials=2, epochs=7)  # the per-trial length is the base's
        tune(demo(), fake.bars, fake.out, settings, resume=True)
    assert str(e.value) == start + "config" + tail
    assert len(fake.trainer.calls) == 1


@pytest.mark.parametrize("stored", ["none", "extra"])
def test_resume_of_a_study_recorded_otherwise(fake: types.SimpleNamespace, stored: str) -> None:
    fake.out.mkdir(parents=True)
    study = optuna.create_study(study_name=STUDY, storage=tune_module._storage(fake.out))
    search = _search(demo(), fake.bars, None)
    if stored == "extra":  # none of base, bars and budget differs
        study.set_user_attr("search", {**search, "extra": 1})
    with pytest.raises(InputError) as e:
        tune(demo(), fake.bars, fake.out, TuneSettings(trials=1), resume=True)
    what = "setting" if stored == "extra" else "config, bars"
    assert str(e.value) == (
        f"{fake.out}: the search was started with another {what}; resume it with the same "
        "--preset/--config, --bars, --epochs, --max-steps and --memory-budget"
    )


def test_resume_finds_the_search_by_its_name(fake: types.SimpleNamespace) -> None:
    tune(demo(), fake.bars, fake.out, TuneSettings(trials=1))
    optuna.create_study(study_name="someone else's", storage=tune_module._storage(fake.out))
    result = tune(demo(), fake.bars, fake.out, TuneSettings(trials=2), resume=True)
    assert [t.number for t in result.trials] == [0, 1]


def test_the_study_file_is_locked_by_opening_a_lock_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The open-file lock (``O_EXCL``), not Optuna's default symlink lock, which some file
    systems do not support."""
    import optuna.storages.journal as journal

    locks: list[tuple[str, Any]] = []
    backend = journal.JournalFileBackend

    def recording(path: str, lock_obj: Any = None) -> Any:
        locks.append((path, lock_obj))
        return backend(path, lock_obj=lock_obj)

    monkeypatch.setattr(journal, "JournalFileBackend", recording)
    tune_module._storage(tmp_path)
    ((path, lock),) = locks
    assert path == str(tmp_path / "study.log")
    assert isinstance(lock, journal.JournalFileOpenLock)
    assert lock._lock_file == str(tmp_path / "study.log.lock")


# --- SIGTERM ----------------------------------------------------------------------------------


def test_sigterm_handling_is_restored_to_the_previous_handler() -> None:
    def mine(signum: int, frame: Any) -> None:
        raise AssertionError("not while inside")

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        with tune_module._sigterm_interrupts():
            inside = signal.getsignal(signal.SIGTERM)
        assert callable(inside) and inside is not mine
        with pytest.raises(KeyboardInterrupt):
            inside(signal.SIGTERM, None)  # type: ignore[operator]
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_sigterm_is_left_alone_outside_the_main_thread() -> None:
    seen: list[Any] = []

    def body() -> None:
        try:
            with tune_module._sigterm_interrupts():
                seen.append(signal.getsignal(signal.SIGTERM))
        except BaseException as e:  # noqa: BLE001
            seen.append(e)

    before = signal.getsignal(signal.SIGTERM)
    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert seen == [before]
