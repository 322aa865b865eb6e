"""``foxhunt tune --preset demo --trials 4`` end to end, on tiny bars and a tiny demo model."""

from __future__ import annotations

import json

import pytest
import torch

from foxhunt.cli import main
from foxhunt.config import RunConfig, demo
from foxhunt.config_files import read_config_file
from foxhunt.data.sources.demo import write_demo_bars
from foxhunt.runtime import resolve_precision

TINY = """\
[model]
hidden = 8
n_heads = 2
encoder_length = 8
horizon = 2
variable_width = 4
quantiles = [0.1, 0.5, 0.9]

[train]
batch_size = 16
validation_batch_size = 64
warmup_steps = 1
num_threads = 1
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_tune_demo_four_trials_writes_a_config_train_accepts(tmp_path, capsys) -> None:
    bars, out = tmp_path / "ES.parquet", tmp_path / "tune"
    write_demo_bars(bars, n_bars=800, seed=3)
    (tmp_path / "tiny.toml").write_text(TINY)
    args = ["tune", "--preset", "demo", "--config", str(tmp_path / "tiny.toml"), "--bars"]
    args += [str(bars), "--trials", "4", "--epochs", "2", "--max-steps", "3", "--out", str(out)]
    assert main(args) == 0
    table = capsys.readouterr().out
    assert "foxhunt tune: 4 trials" in table and "complete" in table

    trials = json.loads((out / "trials.json").read_text())
    assert [t["number"] for t in trials] == [0, 1, 2, 3]
    # on this seed the median pruner stops the two later trials after their first epoch: the
    # first two run whole (startup trials); a trial is pruned when its epoch-1 validation loss
    # is above the median of the completed trials' epoch-1 losses (MedianPruner's rule)
    assert [t["state"] for t in trials] == ["complete", "complete", "pruned", "pruned"]

    def first_epoch_loss(i: int) -> float:
        lines = (out / "trials" / f"{i:03d}" / "metrics.jsonl").read_text().splitlines()
        epochs = [r for r in map(json.loads, lines) if r.get("kind") == "epoch"]
        return float(epochs[0]["val_loss"])

    for i in (2, 3):
        info = json.loads((out / "trials" / f"{i:03d}" / "run.json").read_text())
        assert info["stop_reason"] == "pruned"
        median = (first_epoch_loss(0) + first_epoch_loss(1)) / 2
        assert trials[i]["epochs"] == 1 and first_epoch_loss(i) > median
    assert all(not (out / "trials" / f"{i:03d}" / "checkpoints").exists() for i in range(4))
    done = [t for t in trials if t["state"] == "complete"]
    best = min(done, key=lambda t: t["val_loss"])

    cfg = read_config_file(out / "best.toml")
    assert cfg.preset == "demo" and cfg.model.n_heads == 2 and cfg.model.horizon == 2
    assert cfg.train.lr == best["params"]["train.lr"]
    assert cfg.model.hidden == best["params"]["model.hidden"]
    # per-trial length not kept: the preset's epochs
    assert cfg.train.max_steps is None and cfg.train.epochs == demo().train.epochs

    run = tmp_path / "run"
    train = ["train", "--config", str(out / "best.toml"), "--bars", str(bars), "--out", str(run)]
    assert main([*train, "--epochs", "1", "--max-steps", "2"]) == 0
    stored = RunConfig.load(run / "config.json")
    used = resolve_precision(cfg.train.precision, torch.device("cpu"))  # a run stores auto's pick
    # a fresh run also stores the target scale (decay, reversion, season, anchor, estimator and
    # its ratio) chosen on its training split
    keys = (
        "target_scale_decay",
        "target_scale_reversion",
        "target_scale_season",
        "target_scale_anchor",
        "target_scale_estimator",
        "target_scale_range_ratio",
    )
    chosen = {k: getattr(stored.data, k) for k in keys}
    want = cfg.replace(train={"epochs": 1, "max_steps": 2, "precision": used}, data=chosen)
    assert stored == want


def test_an_unreadable_memory_budget_is_one_parse_error_before_any_trial(tmp_path, capsys) -> None:
    bars = tmp_path / "ES.parquet"
    write_demo_bars(bars, n_bars=300, seed=0)
    out = tmp_path / "tune"
    argv = ["tune", "--bars", str(bars), "--preset", "demo", "--trials", "2"]
    assert main([*argv, "--memory-budget", "abc", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        "--memory-budget: not a byte size: 'abc' (expected e.g. 1GB, 512MiB, 750MB, 4096)"
    )
    assert "\n" not in err and not out.exists()


def _tune_argv(tmp_path, *extra: str) -> list[str]:
    bars = tmp_path / "ES.parquet"
    if not bars.exists():
        write_demo_bars(bars, n_bars=300, seed=0)
    argv = ["tune", "--bars", str(bars), "--preset", "demo", "--trials", "2"]
    return [*argv, "--num-threads", "1", "--out", str(tmp_path / "tune"), *extra]


def _old_search(out) -> None:
    (out / "trials" / "000").mkdir(parents=True)
    (out / "trials.json").write_text("[]")
    (out / "best.toml").write_text("")
    (out / "notes.txt").write_text("mine")


def test_an_out_holding_a_search_is_refused_without_overwrite(tmp_path, capsys) -> None:
    out = tmp_path / "tune"
    _old_search(out)
    assert main(_tune_argv(tmp_path)) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert f"{out} already holds a search (best.toml, trials, trials.json)" in err
    assert "--overwrite" in err
    assert (out / "trials" / "000").is_dir() and (out / "trials.json").read_text() == "[]"


def test_overwrite_clears_the_old_search_before_the_first_trial(tmp_path, capsys) -> None:
    out = tmp_path / "tune"
    _old_search(out)
    # a 1-byte budget skips every trial before it trains: the search ends "no trial completed"
    assert main(_tune_argv(tmp_path, "--overwrite", "--memory-budget", "1")) == 2
    assert "no trial completed (over budget, over budget)" in capsys.readouterr().err
    # the old trials and best.toml are gone, the user's own file stays; trials.json holds the
    # two new (skipped) trials, study.log the new study; nothing trained
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "study.log", "trials.json"]
    trials = json.loads((out / "trials.json").read_text())
    assert [(t["number"], t["state"]) for t in trials] == [(0, "over budget"), (1, "over budget")]


class _Trained:
    def __init__(self, loss: float) -> None:
        self.best_val_loss = loss


def _fake_training(monkeypatch, interrupt_at: int | None) -> list[int]:
    """Trials "train" instantly (validation loss 1/(call+1)); call ``interrupt_at`` raises
    KeyboardInterrupt as training does after Ctrl-C or SIGTERM."""
    import foxhunt.train.tune as tune_module

    calls: list[int] = []

    def run_training(cfg, *, out, **kw):  # noqa: ANN001, ANN003, ANN202
        calls.append(len(calls))
        out.mkdir(parents=True, exist_ok=True)
        if len(calls) - 1 == interrupt_at:
            raise KeyboardInterrupt
        return _Trained(1.0 / len(calls))

    monkeypatch.setattr(tune_module, "run_training", run_training)
    return calls


def test_an_interrupted_search_keeps_its_trials_and_resumes(tmp_path, capsys, monkeypatch) -> None:
    out = tmp_path / "tune"
    argv = [*_tune_argv(tmp_path), "--trials", "4"]  # the last --trials wins
    _fake_training(monkeypatch, interrupt_at=2)
    assert main(argv) == 130
    err = capsys.readouterr().err
    line = [x for x in err.splitlines() if "interrupted" in x]
    assert line == [
        f"foxhunt tune: interrupted after 2 finished trials ({out / 'trials.json'}); continue "
        "the search with the same command and --resume"
    ]
    assert [t["number"] for t in json.loads((out / "trials.json").read_text())] == [0, 1]
    assert not (out / "best.toml").exists()

    # --resume with other bars is refused; without --resume the folder is refused
    other = tmp_path / "other.parquet"
    write_demo_bars(other, n_bars=300, seed=1)
    moved = [other if x == str(tmp_path / "ES.parquet") else x for x in argv]
    assert main([*map(str, moved), "--resume"]) == 2
    assert "the search was started with another bars" in capsys.readouterr().err
    assert main(argv) == 2
    assert "already holds a search" in capsys.readouterr().err

    calls = _fake_training(monkeypatch, interrupt_at=None)
    assert main([*argv, "--resume"]) == 0
    trials = json.loads((out / "trials.json").read_text())
    # trial 2 was interrupted (Optuna's journal keeps it as failed): the search goes on with 3, 4
    assert [t["number"] for t in trials] == [0, 1, 3, 4] and len(calls) == 2
    assert all(t["state"] == "complete" for t in trials)
    # the resumed trials sample values of their own: a sampler seeded as at the start replayed
    # trial 0's values in trial 3
    params = [tuple(sorted(t["params"].items())) for t in trials]
    assert len(set(params)) == 4, params
    assert read_config_file(out / "best.toml").train.lr == trials[1]["params"]["train.lr"]


def test_sigterm_between_trials_interrupts_the_search() -> None:
    import os
    import signal

    from foxhunt.train.tune import _sigterm_interrupts

    with pytest.raises(KeyboardInterrupt), _sigterm_interrupts():
        os.kill(os.getpid(), signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
