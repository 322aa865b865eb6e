"""``--max-minutes`` (train/deadline.py and the loop): stops at a step boundary on an injected
clock, validates that epoch, keeps the best weights, and a resume gets only the rest."""

from __future__ import annotations

import shutil

import pytest
import torch

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.rundir import RunDir
from foxhunt.model.tft import TFT
from foxhunt.train.deadline import Deadline

from .test_loop import Recorder, _fit
from .train_fakes import FakeWindows, tiny_config

torch.set_num_threads(1)


def test_deadline_counts_spent_seconds_on_its_clock() -> None:
    now = [100.0]
    d = Deadline(1.0, spent=20.0, clock=lambda: now[0])
    assert d.seconds == 20.0 and not d.passed()
    now[0] = 139.0
    assert not d.passed()
    now[0] = 140.0
    assert d.passed() and d.seconds == 60.0
    assert not Deadline(None, clock=lambda: 1e12).passed()
    now[0] = 110.0
    assert d.fraction() == pytest.approx(0.5)  # 20 s spent + 10 s of a 60 s budget
    now[0] = 1000.0
    assert d.fraction() == 1.0
    assert Deadline(None, clock=lambda: 1e12).fraction() == 0.0


def _step_clock(model: Recorder, seconds_per_step: float):
    """Wall clock that advances only with training forwards (one per step here)."""
    return lambda: seconds_per_step * sum(1 for c in model.calls if c["training"])


def test_max_minutes_stops_at_a_step_boundary_validates_and_keeps_the_best(run_dir) -> None:
    cfg = tiny_config(epochs=3, epoch_steps=10, max_minutes=2.0)
    model = Recorder(TFT(cfg.model))
    _, result = _fit(
        run_dir, cfg, FakeWindows(480, cfg.model, 1), FakeWindows(24, cfg.model, 2),
        model=model, clock=_step_clock(model, 30.0),
    )  # fmt: skip
    # 4 steps x 30 s = 2 minutes: epoch 1 ends there, is validated, the run stops
    assert result.stop_reason == "max_minutes"
    assert result.state.step == 4 and result.state.epoch == 1
    assert result.state.train_seconds == 120.0
    assert model.calls[-1]["training"] is False  # the shortened epoch was validated
    assert ckpt.complete_epochs(run_dir.checkpoints) == [1]
    assert result.final_weights is not None and result.final_weights.is_file()


def test_the_learning_rate_decays_with_the_time_budget(run_dir) -> None:
    """Under --max-minutes the cosine runs on the budget's clock: each step's rate is the
    schedule at that step with the share of the budget spent (30 s a step of 120 s here), far
    below the rate of the step-only schedule of a 30-step run."""
    import json

    from foxhunt.train.optimizer.schedule import lr_at

    cfg = tiny_config(epochs=3, epoch_steps=10, max_minutes=2.0, log_every=1)
    model = Recorder(TFT(cfg.model))
    _fit(
        run_dir, cfg, FakeWindows(480, cfg.model, 1), FakeWindows(24, cfg.model, 2),
        model=model, clock=_step_clock(model, 30.0),
    )  # fmt: skip
    steps = [r for r in map(json.loads, run_dir.metrics.read_text().splitlines())
             if r["kind"] == "step"]  # fmt: skip
    assert [r["step"] for r in steps] == [1, 2, 3, 4]
    tc = cfg.train
    for r in steps:
        k = r["step"] - 1  # the step the rate was set for; k steps of 30 s were spent before it
        kw = {"peak_lr": tc.lr, "warmup_steps": tc.warmup_steps, "total_steps": 30}
        assert r["lr"] == pytest.approx(lr_at(k, **kw, time_fraction=k * 30.0 / 120.0))
    assert steps[-1]["lr"] < 0.5 * lr_at(3, peak_lr=tc.lr, warmup_steps=2, total_steps=30)


def test_a_resumed_run_gets_only_the_rest_of_its_budget(tmp_path) -> None:
    torch.manual_seed(0)
    cfg = tiny_config(epochs=4, epoch_steps=3, max_minutes=2.0)
    train, val = FakeWindows(480, cfg.model, 1), FakeWindows(24, cfg.model, 2)
    whole = RunDir(tmp_path / "whole")
    whole.create()
    model = Recorder(TFT(cfg.model))
    _, result = _fit(whole, cfg, train, val, model=model, clock=_step_clock(model, 30.0))
    assert result.stop_reason == "max_minutes"
    assert (result.state.epoch, result.state.step) == (2, 4)  # 3 steps, then 1 of epoch 2

    # resume from epoch 1 (90 s spent) on a fresh clock: one more step, as above
    state = ckpt.load_resume_state(ckpt.optimizer_path(whole.checkpoints, 1))
    assert state["loop"]["train_seconds"] == pytest.approx(90.0)
    resumed = RunDir(tmp_path / "resumed")
    resumed.create()
    # as --resume finds it in its own run: the epoch's checkpoint beside its resume state (the
    # final checkpoint copies the best epoch's weights, which may be epoch 1's: which one is best
    # depended on the weights earlier tests in the worker left torch's generator to draw)
    for name in ("tft_epoch_1.safetensors", "tft_epoch_1.json"):
        shutil.copy2(whole.checkpoints / name, resumed.checkpoints / name)
    again = Recorder(TFT(cfg.model))
    again.load_state_dict(ckpt.load_weights(ckpt.epoch_weights_path(whole.checkpoints, 1))[0])
    _, second = _fit(
        resumed, cfg, train, val, model=again, resume=state, clock=_step_clock(again, 30.0)
    )
    assert second.stop_reason == "max_minutes"
    assert (second.state.epoch, second.state.step) == (2, 4)
    assert second.state.train_seconds == pytest.approx(120.0)


class _Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_fraction_and_seconds_of_small_and_empty_budgets() -> None:
    # ``make mutate`` (deadline): a budget under a second, a zero one, nothing spent before
    clock = _Clock()
    fresh = Deadline(1.0, clock=clock)
    assert fresh.seconds == 0.0 and fresh.fraction() == 0.0
    half_second = Deadline(0.5 / 60, clock=clock)
    clock.t += 0.25
    assert half_second.fraction() == pytest.approx(0.5) and not half_second.passed()
    clock.t += 10.0
    assert half_second.fraction() == 1.0 and half_second.passed()  # capped at 1
    empty = Deadline(0.0, clock=clock)
    assert empty.fraction() == 1.0 and empty.passed()
    assert Deadline(None, clock=clock).fraction() == 0.0
