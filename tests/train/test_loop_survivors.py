"""What ``make mutate`` found unchecked in the training loop (train/loop.py), pinned.

Each test calls one of the loop's functions (``_save_final``, ``_start_is_best``,
``_stop_after``, ``_setup``, ``_validate``, ``_train_epoch``, ``fit``) with tiny hand-made
inputs and checks what it returns, writes or passes on: the run's reasons to stop, the final and
starting checkpoints, the scaler, device and optimizer ``_setup`` builds, the numbers an epoch
averages and reports, and the epochs and steps every snapshot and record carries. Where the
behaviour is what the loop hands a collaborator (a data-parallel world's collectives, the
validation pass, the optimizer step), a recording stand-in checks what it was given.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
from dataclasses import asdict, dataclass, field
from typing import Any

import pytest
import torch
from torch import nn

import foxhunt.train.loop as loop
from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.resume import resume_state
from foxhunt.artifacts.rundir import RunDir
from foxhunt.config import RunConfig
from foxhunt.errors import ModelDirError
from foxhunt.memory.log import MemoryLog
from foxhunt.model.lstm import LSTMBlock
from foxhunt.model.tft import TFT
from foxhunt.model.vsn import VariableSelectionNetwork
from foxhunt.train.deadline import Deadline
from foxhunt.train.distributed import FAIL_ENV, ShardedWindows, World
from foxhunt.train.loop import (
    START_WEIGHTS,
    LoopState,
    _save_final,
    _setup,
    _start_is_best,
    _StepKit,
    _stop_after,
    _train_epoch,
    _validate,
)
from foxhunt.train.observer import LoopObserver
from foxhunt.train.optimizer.optim import build_optimizer
from foxhunt.train.optimizer.schedule import lr_at
from foxhunt.train.resources.oom import MicroBatching

from .test_loop import _fit
from .train_fakes import FakeWindows, tiny_config

torch.set_num_threads(1)

CPU = torch.device("cpu")


@dataclass(frozen=True)
class _SpyWorld(World):
    """A :class:`World` whose collectives record what the loop passed them; without a process
    group they answer as if every rank had this rank's value (``shard`` and ``grad_weight``
    are the real ones)."""

    calls: list[tuple[Any, ...]] = field(default_factory=list, compare=False)

    def mean(self, value: float, weight: float, device: torch.device) -> float:
        self.calls.append(("mean", value, weight, device))
        return value

    def any(self, flag: bool, device: torch.device) -> bool:
        self.calls.append(("any", flag, device))
        return flag

    def wrap(self, model: nn.Module, device: torch.device) -> nn.Module:
        self.calls.append(("wrap", model, device))
        return model


class _Progress:
    """A progress display that records what it is told (``step`` and ``validation_step``
    calls are left out: their numbers are timings)."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def start_epoch(self, epoch: int, n_batches: int) -> None:
        self.calls.append(("start_epoch", epoch, n_batches))

    def step(self, *, loss: float, samples_per_s: float, memory_bytes: int | None) -> None:
        pass

    def start_validation(self, n_batches: int) -> None:
        self.calls.append(("start_validation", n_batches))

    def validation_step(self) -> None:
        pass

    def end_epoch(self, line: str) -> None:
        self.calls.append(("end_epoch",))

    def note(self, line: str) -> None:
        self.calls.append(("note", line))


def _passed_deadline() -> Deadline:
    """A one-minute budget already spent."""
    return Deadline(1.0, spent=60.0, clock=lambda: 0.0)


# --- _save_final -----------------------------------------------------------------------------


def _linear(value: float) -> nn.Linear:
    """A 2 -> 1 linear layer whose every weight and bias is ``value``."""
    net = nn.Linear(2, 1)
    with torch.no_grad():
        net.weight.fill_(value)
        net.bias.fill_(value)
    return net


@pytest.fixture
def start_and_epoch_1(run_dir: RunDir) -> RunDir:
    """A run whose start (weights 0, loss 1.0) and epoch 1 (weights 1, loss 0.5) are saved."""
    ckpt.save_weights(
        run_dir.checkpoints / START_WEIGHTS,
        _linear(0.0).state_dict(),
        {"epoch": 0, "step": 0, "metrics": {"val_loss": 1.0}},
    )
    ckpt.save_weights(
        ckpt.epoch_weights_path(run_dir.checkpoints, 1),
        _linear(1.0).state_dict(),
        {"epoch": 1, "step": 4, "metrics": {"val_loss": 0.5}},
    )
    return run_dir


def test_save_final_serves_epoch_1_when_it_beat_the_start(start_and_epoch_1: RunDir) -> None:
    """Best epoch 1 (below the start's loss): its weights, the state and the stop reason as
    they are."""
    run, model = start_and_epoch_1, _linear(9.0)
    state = LoopState(epoch=2, step=8, best_epoch=1, best_val_loss=0.5, start_val_loss=1.0)
    path = _save_final(run, model, state, {"config": "c"}, "early_stop")
    assert path == ckpt.final_weights_path(run.checkpoints, 2)
    assert torch.equal(model.weight, torch.ones(1, 2))
    meta = ckpt.load_sidecar(path)
    assert (meta["best_epoch"], meta["stop_reason"], meta["config"]) == (1, "early_stop", "c")
    assert (state.best_epoch, state.best_val_loss) == (1, 0.5)
    assert ckpt.read_best(run.checkpoints) == {
        "epoch": 1,
        "val_loss": 0.5,
        "file": "tft_epoch_1.safetensors",
    }


def test_save_final_keeps_the_start_when_no_epoch_beat_it(
    start_and_epoch_1: RunDir, caplog: pytest.LogCaptureFixture
) -> None:
    """Best epoch 0 with a finite start: the start is written as the final checkpoint, with
    the stop reason, and the log says so."""
    run, model = start_and_epoch_1, _linear(9.0)
    state = LoopState(epoch=2, step=8, best_epoch=0, best_val_loss=1.0, start_val_loss=1.0)
    with caplog.at_level(logging.INFO, logger="foxhunt.train.loop"):
        path = _save_final(run, model, state, {}, "epochs")
    assert path == ckpt.final_weights_path(run.checkpoints, 2) and path.is_file()
    assert torch.equal(model.weight, torch.zeros(1, 2))
    meta = ckpt.load_sidecar(path)
    assert (meta["best_epoch"], meta["stop_reason"]) == (0, "epochs")
    assert meta["metrics"] == {"val_loss": 1.0}
    assert [r.getMessage() for r in caplog.records] == [
        "no epoch beat the starting weights (validation loss 1): kept them"
    ]


@pytest.mark.parametrize("start", [math.inf, math.nan])
def test_save_final_writes_nothing_when_no_loss_was_finite(
    start_and_epoch_1: RunDir, start: float
) -> None:
    """No finite loss at all (best epoch 0, start not finite): no final checkpoint."""
    run, model = start_and_epoch_1, _linear(9.0)
    state = LoopState(epoch=2, step=8, best_epoch=0, best_val_loss=math.inf, start_val_loss=start)
    assert _save_final(run, model, state, {}, "epochs") is None
    assert not list(run.checkpoints.glob("tft_final*"))
    assert torch.equal(model.weight, torch.full((1, 2), 9.0))  # nothing was loaded


# --- _start_is_best --------------------------------------------------------------------------


def test_the_start_is_saved_as_epoch_0_step_0_and_marked_best(run_dir: RunDir) -> None:
    """The start's sidecar says epoch 0, step 0 and its loss; best.json names it as epoch 0."""
    model, state = _linear(3.0), LoopState()
    _start_is_best(run_dir, model, state, 0.75, {"config": "c"}, True)
    assert (state.start_val_loss, state.best_val_loss, state.best_epoch) == (0.75, 0.75, 0)
    weights, meta = ckpt.load_weights(run_dir.checkpoints / START_WEIGHTS)
    assert torch.equal(weights["weight"], torch.full((1, 2), 3.0))
    assert (meta["epoch"], meta["step"], meta["metrics"], meta["config"]) == (
        0,
        0,
        {"val_loss": 0.75},
        "c",
    )
    assert ckpt.read_best(run_dir.checkpoints) == {
        "epoch": 0,
        "val_loss": 0.75,
        "file": START_WEIGHTS,
    }


# --- _stop_after -----------------------------------------------------------------------------


def test_the_last_epoch_ends_with_epochs_even_past_the_deadline() -> None:
    """After the last epoch the reason is ``epochs``, whatever the clock says."""
    tc = tiny_config(epochs=3).train
    assert _stop_after(LoopState(step=5), 3, tc, 9, _passed_deadline()) == "epochs"
    assert _stop_after(LoopState(step=5), 2, tc, 9, _passed_deadline()) == "max_minutes"


def test_a_run_at_its_step_limit_stops_for_max_steps_not_the_clock() -> None:
    """All steps taken before the last epoch: ``max_steps``, even with the budget spent."""
    tc = tiny_config(epochs=3).train
    assert _stop_after(LoopState(step=9), 2, tc, 9, _passed_deadline()) == "max_steps"


def test_patience_stops_once_the_time_budget_is_half_spent() -> None:
    """Under --max-minutes the decay counts the budget spent: 60 % of it lets patience stop a
    run whose steps are barely past warm-up; without a budget it waits."""
    tc = tiny_config(epochs=5, patience=2, warmup_steps=2).train
    state = LoopState(step=3, epochs_without_improvement=2)
    sixty_percent = Deadline(1.0, spent=36.0, clock=lambda: 0.0)
    assert not sixty_percent.passed()
    assert _stop_after(state, 2, tc, 100, sixty_percent) == "early_stop"
    assert _stop_after(state, 2, tc, 100, Deadline(None)) == "epochs"


def test_early_stopping_says_it_waits_only_while_the_run_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The "early stopping waits" line is logged when patience is spent before the decay is
    half-way and the run continues; not after the last epoch, nor at the step limit."""
    tc = tiny_config(epochs=3, patience=2, warmup_steps=2).train
    waits = LoopState(step=5, epochs_without_improvement=2)
    caplog.set_level(logging.INFO, logger="foxhunt.train.loop")

    assert _stop_after(waits, 2, tc, 100, Deadline(None)) == "epochs"
    assert [r.getMessage() for r in caplog.records] == [
        "no improvement for 2 epochs; early stopping waits until the learning rate is 50 % of "
        "its way down (3 % now)"
    ]
    caplog.clear()
    assert _stop_after(waits, 3, tc, 100, Deadline(None)) == "epochs"  # the last epoch
    assert caplog.records == []
    long_warmup = tiny_config(epochs=3, patience=2, warmup_steps=10).train  # decay not begun
    at_limit = LoopState(step=4, epochs_without_improvement=2)
    assert _stop_after(at_limit, 2, long_warmup, 4, Deadline(None)) == "max_steps"
    assert caplog.records == []


# --- _setup ----------------------------------------------------------------------------------


def _model(cfg: RunConfig) -> TFT:
    """The tiny TFT, seeded."""
    torch.manual_seed(0)
    return TFT(cfg.model)


@pytest.mark.parametrize("precision", ["fp16", "bf16", "fp32"])
def test_setup_scales_gradients_for_fp16_only(precision: str) -> None:
    """The grad scaler is on (on the run's device type) for fp16 and off otherwise."""
    cfg = tiny_config(precision=precision)
    kit, _ = _setup(_model(cfg), 40, cfg, World(), CPU, None)
    assert kit.grad_scaler.is_enabled() is (precision == "fp16")


def test_setup_puts_the_model_and_quantiles_on_the_run_device() -> None:
    """``_setup`` moves the model to the device, builds the quantiles there (float32) and
    wraps the model for that device (``meta``: a device that is not the CPU, on any host)."""
    cfg = tiny_config()
    model, world, meta = _model(cfg), _SpyWorld(), torch.device("meta")
    kit, _ = _setup(model, 40, cfg, world, meta, None)
    assert {p.device for p in model.parameters()} == {meta}
    assert kit.quantiles.device == meta and kit.quantiles.dtype == torch.float32
    assert world.calls == [("wrap", model, meta)] and kit.net is model


def test_setup_quantiles_are_float32_whatever_the_default_dtype() -> None:
    """The quantile levels are float32 even in a process whose default dtype is float64."""
    cfg = tiny_config()
    model = _model(cfg)
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        kit, _ = _setup(model, 40, cfg, World(), CPU, None)
    finally:
        torch.set_default_dtype(before)
    assert kit.quantiles.dtype == torch.float32
    assert kit.quantiles.tolist() == pytest.approx([0.1, 0.5, 0.9])


def test_setup_turns_recomputation_on_when_the_config_asks() -> None:
    """``recompute``: every LSTM recomputes and every time-varying VSN streams."""
    cfg = tiny_config(recompute=True)
    model = _model(cfg)
    _setup(model, 40, cfg, World(), CPU, None)
    lstms = [m.recompute for m in model.modules() if isinstance(m, LSTMBlock)]
    vsns = [
        m.streaming
        for m in model.modules()
        if isinstance(m, VariableSelectionNetwork) and m is not model.static_vsn
    ]
    assert lstms and vsns and all(x is True for x in lstms + vsns)


def test_setup_builds_the_optimizer_at_the_peak_rate() -> None:
    """Every parameter group starts at ``lr`` (the schedule overwrites it at each step; torch's
    AdamW, the CUDA optimizer, refuses a missing rate)."""
    cfg = tiny_config(lr=0.0123)
    kit, _ = _setup(_model(cfg), 40, cfg, World(), CPU, None)
    assert [g["lr"] for g in kit.optimizer.param_groups] == [0.0123] * len(
        kit.optimizer.param_groups
    )


def test_setup_without_epoch_steps_takes_every_window_each_epoch() -> None:
    """``epoch_steps`` None: an epoch is a full pass (40 windows of 16: 3 steps)."""
    cfg = tiny_config(epoch_steps=None, epochs=2)
    kit, _ = _setup(_model(cfg), 40, cfg, World(), CPU, None)
    assert (kit.steps_per_epoch, kit.total_steps) == (3, 6)


def test_setup_resumes_the_scaler_and_ignores_a_cuda_rng_state_on_the_cpu() -> None:
    """A resume state written by an fp16 run on a CUDA machine resumes on the CPU: the loop
    counters and the grad scaler's scale come back, its CUDA RNG state is not used."""
    cfg = tiny_config(precision="fp16")
    saved = _model(cfg)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    loop_state = LoopState(epoch=1, step=3, samples_seen=48, micro_batch=8, start_val_loss=0.7)
    resume = resume_state(
        build_optimizer(saved, lr=cfg.train.lr, weight_decay=cfg.train.weight_decay),
        scaler,
        asdict(loop_state),
        9,
    )
    resume["rng"]["cuda"] = [torch.zeros(16, dtype=torch.uint8)]
    kit, state = _setup(_model(cfg), 40, cfg, World(), CPU, resume)
    assert state == loop_state
    assert kit.grad_scaler.get_scale() == 1024.0
    assert kit.micro.micro == 8


def test_resuming_an_averaged_run_needs_its_training_weights() -> None:
    """With ``weight_average`` a resume state without the training weights is refused."""
    cfg = tiny_config(weight_average=0.5)
    saved = _model(cfg)
    resume = resume_state(
        build_optimizer(saved, lr=cfg.train.lr, weight_decay=cfg.train.weight_decay),
        torch.amp.GradScaler("cpu", enabled=False),
        asdict(LoopState(epoch=1, step=3)),
        9,
    )
    with pytest.raises(ModelDirError, match="no training weights"):
        _setup(_model(cfg), 40, cfg, World(), CPU, resume)


# --- _validate -------------------------------------------------------------------------------


class _FakeValidate:
    """Stands in for ``step.validate``: records what it was given, asks its source for
    ``rows`` of it, and returns ``loss``."""

    def __init__(self, loss: float, rows: list[int]) -> None:
        self.loss, self.rows = loss, rows
        self.calls: list[tuple[Any, ...]] = []
        self.asked: list[list[int]] = []

    def __call__(self, model: nn.Module, val: Any, **kw: Any) -> float:
        self.calls.append((model, val, kw))
        self.asked.append(val.batch(self.rows).static[:, 0].long().tolist())
        return self.loss


def test_validate_passes_the_run_settings_and_weights_the_mean_by_windows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One process: the validation pass gets the whole source and the run's batch size,
    quantiles, precision, memory log, epoch, step and progress; the loss is reduced with the
    number of windows as its weight, on the quantiles' device."""
    cfg = tiny_config(precision="bf16", validation_batch_size=5)
    model, world = _model(cfg), _SpyWorld()
    kit, _ = _setup(model, 40, cfg, World(), CPU, None)
    fake = _FakeValidate(0.25, [0])
    monkeypatch.setattr(loop, "validate", fake)
    val, memory, progress = FakeWindows(7, cfg.model), MemoryLog(None, CPU, sources={}), _Progress()
    assert _validate(model, val, kit, cfg.train, world, memory, 4, 9, progress) == 0.25
    [(got_model, got_val, kw)] = fake.calls
    assert got_model is model and got_val is val
    assert kw.pop("quantiles") is kit.quantiles
    assert kw == {
        "batch_size": 5,
        "precision": "bf16",
        "memory": memory,
        "epoch": 4,
        "step": 9,
        "progress": progress,
    }
    assert world.calls == [("mean", 0.25, 7, CPU)]


def test_validate_under_ddp_takes_this_ranks_shard(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rank 1 of 2 validates windows 1, 3, 5 of 7 and weighs its loss by those 3."""
    cfg = tiny_config()
    model, world = _model(cfg), _SpyWorld(rank=1, size=2)
    kit, _ = _setup(model, 40, cfg, World(), CPU, None)
    fake = _FakeValidate(0.5, [0, 2])
    monkeypatch.setattr(loop, "validate", fake)
    memory = MemoryLog(None, CPU, sources={})
    val = FakeWindows(7, cfg.model)
    assert _validate(model, val, kit, cfg.train, world, memory, 1, 2, None) == 0.5
    [(_, shard, _)] = fake.calls
    assert isinstance(shard, ShardedWindows) and len(shard) == 3
    assert fake.asked == [[1, 5]]
    assert world.calls == [("mean", 0.5, 3, CPU)]


# --- _train_epoch ----------------------------------------------------------------------------


class _ScriptedSteps:
    """Stands in for ``step.train_step``: returns the scripted ``(loss, grad norm, messages)``
    of each step and records what the loop passed (and the rate set in the optimizer)."""

    def __init__(self, *results: tuple[float, float, list[str]]) -> None:
        self.results = list(results)
        self.calls: list[dict[str, Any]] = []

    def __call__(
        self,
        net: nn.Module,
        batch: Any,
        optimizer: Any,
        scaler: Any,
        micro: Any,
        *,
        grad_weight: float = 1.0,  # train_step's default
        **kw: Any,
    ) -> tuple[float, float, list[str]]:
        self.calls.append(
            {
                "net": net,
                "ids": batch.static[:, 0].long().tolist(),
                "lr": [g["lr"] for g in optimizer.param_groups],
                "grad_weight": grad_weight,
                **kw,
            }
        )
        return self.results[len(self.calls) - 1]


def _epoch_kit(cfg: RunConfig, total_steps: int) -> _StepKit:
    """A step kit around a linear layer (the scripted steps never run it): micro-batch 4 of 8."""
    net = nn.Linear(2, 1)
    return _StepKit(
        net=net,
        optimizer=build_optimizer(net, lr=cfg.train.lr, weight_decay=0.0),
        grad_scaler=torch.amp.GradScaler("cpu", enabled=False),
        micro=MicroBatching(8, 4),
        quantiles=torch.tensor(cfg.model.quantiles),
        total_steps=total_steps,
        steps_per_epoch=2,
    )


def _observer(records: list[dict[str, Any]], progress: _Progress | None = None) -> LoopObserver:
    """An observer that hands every record and snapshot to ``records`` and writes no file."""
    memory = MemoryLog(None, CPU, sources={})
    return LoopObserver(None, memory, progress, log_every=1, epochs=3, listeners=[records.append])


def _run_epoch(
    cfg: RunConfig,
    steps: _ScriptedSteps,
    monkeypatch: pytest.MonkeyPatch,
    *,
    n_train: int,
    n_steps: int,
    world: World | None = None,
    deadline: Deadline | None = None,
    records: list[dict[str, Any]] | None = None,
    progress: _Progress | None = None,
    backoffs: list[str] | None = None,
) -> tuple[float | None, LoopState, _StepKit]:
    """Epoch 1 of ``n_steps`` scripted steps over ``n_train`` windows from a fresh state."""
    monkeypatch.setattr(loop, "train_step", steps)
    kit, state = _epoch_kit(cfg, total_steps=10), LoopState()
    obs = _observer([] if records is None else records, progress)
    loss = _train_epoch(
        kit, FakeWindows(n_train, cfg.model, seed=1), cfg.train, world or World(), state, 1,
        n_steps, threading.Event(), obs, [] if backoffs is None else backoffs,
        deadline or Deadline(None),
    )  # fmt: skip
    return loss, state, kit


def test_an_epoch_sets_the_rate_and_reports_each_steps_numbers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rank 0 of 2, 21 windows in batches of 16: the steps get this rank's 8 and 3 windows,
    the scheduled rate, their step number and the DDP gradient weight; the collectives get the
    local sample counts and the run's device; the epoch's loss is the mean weighted by global
    batch; records and progress carry the epoch, step and step numbers."""
    cfg = tiny_config(batch_size=16, warmup_steps=4, lr=0.01)
    steps = _ScriptedSteps((1.0, 0.5, []), (4.0, 0.25, ["halved"]))
    world, records, progress, backoffs = _SpyWorld(rank=0, size=2), [], _Progress(), []
    loss, state, kit = _run_epoch(
        cfg, steps, monkeypatch, n_train=21, n_steps=2, world=world, records=records,
        progress=progress, backoffs=backoffs,
    )  # fmt: skip
    assert loss == pytest.approx((1.0 * 16 + 4.0 * 5) / 21)
    assert (state.step, state.samples_seen) == (2, 21)
    assert backoffs == ["halved"]

    assert [len(c["ids"]) for c in steps.calls] == [8, 3]
    assert [c["step"] for c in steps.calls] == [0, 1]
    assert [c["grad_weight"] for c in steps.calls] == [1.0, pytest.approx(1.2)]  # 3 x 2 / 5
    rates = [lr_at(k, peak_lr=0.01, warmup_steps=4, total_steps=10) for k in (0, 1)]
    assert [c["lr"] for c in steps.calls] == [
        [r] * len(c["lr"]) for r, c in zip(rates, steps.calls, strict=True)
    ]
    assert all(c["net"] is kit.net and c["quantiles"] is kit.quantiles for c in steps.calls)

    assert world.calls == [
        ("any", False, CPU),  # stop?
        ("mean", 1.0, 8, CPU),
        ("any", False, CPU),  # stop?
        ("any", False, CPU),  # deadline?
        ("mean", 4.0, 3, CPU),
    ]
    snaps = [(r["point"], r["epoch"], r["step"]) for r in records if r["kind"] == "memory"]
    assert snaps[0] == ("epoch_start", 1, 0)
    step_records = [r for r in records if r["kind"] == "step"]
    assert [(r["epoch"], r["step"], r["loss"], r["lr"], r["grad_norm"]) for r in step_records] == [
        (1, 1, 1.0, rates[0], 0.5),
        (1, 2, 4.0, rates[1], 0.25),
    ]
    assert [(r["micro_batch"], r["accumulation"]) for r in step_records] == [(4, 2), (4, 2)]
    oom = [r for r in records if r["kind"] == "oom"]
    assert oom == [{"kind": "oom", "epoch": 1, "step": 1, "message": "halved"}]
    assert progress.calls == [("start_epoch", 1, 2), ("note", "halved")]


def test_an_epoch_of_one_window_returns_that_windows_loss(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One window, one step: the epoch's loss is that step's loss."""
    steps = _ScriptedSteps((0.75, 1.0, []))
    loss, state, _ = _run_epoch(tiny_config(), steps, monkeypatch, n_train=1, n_steps=1)
    assert loss == 0.75 and state.samples_seen == 1


def test_a_spent_budget_still_gets_one_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """The deadline is checked only after an epoch's first step: at least one step is taken."""
    steps = _ScriptedSteps((2.0, 1.0, []), (3.0, 1.0, []), (4.0, 1.0, []))
    loss, state, _ = _run_epoch(
        tiny_config(), steps, monkeypatch, n_train=48, n_steps=3, deadline=_passed_deadline()
    )
    assert (loss, state.step, state.samples_seen, len(steps.calls)) == (2.0, 1, 16, 1)


def test_a_non_finite_training_loss_stops_with_advice(monkeypatch: pytest.MonkeyPatch) -> None:
    """A NaN loss raises FloatingPointError naming the step, the epoch and the rate."""
    steps = _ScriptedSteps((math.nan, 1.0, []))
    expected = (
        "training loss is nan at step 0 (epoch 1); lower --lr (now 0.003) or use --precision fp32"
    )
    with pytest.raises(FloatingPointError, match=f"^{re.escape(expected)}$"):
        _run_epoch(tiny_config(), steps, monkeypatch, n_train=32, n_steps=2)


def test_the_ddp_failure_hook_sees_each_step_number(monkeypatch: pytest.MonkeyPatch) -> None:
    """``FOXHUNT_DDP_FAIL=0:2`` makes rank 0 fail right after its second optimizer step."""
    monkeypatch.setenv(FAIL_ENV, "0:2")
    steps = _ScriptedSteps((1.0, 1.0, []), (1.0, 1.0, []), (1.0, 1.0, []))
    with pytest.raises(RuntimeError, match="rank 0: injected failure after step 2"):
        _run_epoch(tiny_config(), steps, monkeypatch, n_train=48, n_steps=3)
    assert len(steps.calls) == 2


# --- fit -------------------------------------------------------------------------------------


def _points(run: RunDir) -> list[tuple[str, Any, Any]]:
    """``(point, epoch, step)`` of every snapshot in the run's memory log."""
    records = [json.loads(line) for line in run.memory.read_text().splitlines()]
    return [(r["point"], r["epoch"], r["step"]) for r in records]


def test_fit_numbers_every_snapshot_record_and_checkpoint_of_a_run(
    run_dir: RunDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One epoch of 2 steps: the start is validated as epoch 0 step 0, every snapshot and the
    epoch record carry the epoch and step, the progress display is told of both validations
    and the epoch, the resume state holds the run's total steps, the final sidecar its stop
    reason, and the validation subsample is sized from an epoch's training samples."""
    sized: list[tuple[Any, ...]] = []
    real = loop.validation_windows

    def spy(val: Any, epoch_samples: int, requested: int | None, seed: int) -> Any:
        sized.append((epoch_samples, requested, seed))
        return real(val, epoch_samples, requested, seed)

    monkeypatch.setattr(loop, "validation_windows", spy)
    cfg = tiny_config(epochs=1, log_every=2)
    progress = _Progress()
    _, result = _fit(
        run_dir, cfg, FakeWindows(32, cfg.model, 1), FakeWindows(8, cfg.model, 2),
        progress=progress,
    )  # fmt: skip
    assert (result.stop_reason, result.state.epoch, result.state.step) == ("epochs", 1, 2)
    assert sized == [(32, None, 0)]
    assert _points(run_dir) == [
        ("run_start", 0, 0),
        ("validation_start", 0, 0),
        ("validation_end", 0, 0),
        ("epoch_start", 1, 0),
        ("train_step", 1, 2),
        ("after_training", 1, 2),
        ("before_validation", 1, 2),
        ("validation_start", 1, 2),
        ("validation_end", 1, 2),
        ("after_checkpoint", 1, 2),
        ("epoch_end", 1, 2),
        ("run_end", 1, 2),
    ]
    assert progress.calls == [
        ("start_validation", 1),
        ("start_epoch", 1, 2),
        ("start_validation", 1),
        ("end_epoch",),
    ]
    records = [json.loads(line) for line in run_dir.metrics.read_text().splitlines()]
    [epoch] = [r for r in records if r["kind"] == "epoch"]
    assert (epoch["epoch"], epoch["step"], epoch["samples_seen"]) == (1, 2, 32)
    saved = ckpt.load_resume_state(ckpt.optimizer_path(run_dir.checkpoints, 1))
    assert saved["total_steps"] == 2
    assert result.final_weights is not None
    assert ckpt.load_sidecar(result.final_weights)["stop_reason"] == "epochs"


def test_an_interrupted_resumed_run_names_the_epoch_it_keeps(
    run_dir: RunDir, caplog: pytest.LogCaptureFixture
) -> None:
    """Resumed after epoch 1 (step 2) and stopped at once: epoch 2 is discarded, the warning
    names epoch 1 as kept and the run's folder to resume from, nothing is validated."""
    cfg = tiny_config(epochs=3)
    torch.manual_seed(0)
    model = TFT(cfg.model)
    counters = LoopState(epoch=1, step=2, samples_seen=32, micro_batch=16, start_val_loss=0.7)
    resume = resume_state(
        build_optimizer(model, lr=cfg.train.lr, weight_decay=cfg.train.weight_decay),
        torch.amp.GradScaler("cpu", enabled=False),
        asdict(counters),
        6,
    )
    stop = threading.Event()
    stop.set()
    with caplog.at_level(logging.WARNING, logger="foxhunt.train.observer"):
        _, result = _fit(
            run_dir, cfg, FakeWindows(32, cfg.model, 1), FakeWindows(8, cfg.model, 2),
            model=model, resume=resume, stop=stop,
        )  # fmt: skip
    assert (result.stop_reason, result.final_weights) == ("interrupted", None)
    assert result.state == counters
    assert [r.getMessage() for r in caplog.records] == [
        "interrupted at step 2: epoch 2 discarded, epoch 1 kept; continue with: "
        f"foxhunt train --resume {run_dir.root}"
    ]
    assert _points(run_dir) == [("run_start", 1, 2), ("epoch_start", 2, 2), ("run_end", 1, 2)]


def test_a_run_without_training_steps_stops_for_max_steps_with_no_final(
    run_dir: RunDir,
) -> None:
    """No training windows: no step to take, so the run stops at once for ``max_steps``,
    completes no epoch and writes no final checkpoint (only the validated start)."""
    cfg = tiny_config(epochs=2)
    _, result = _fit(run_dir, cfg, FakeWindows(0, cfg.model, 1), FakeWindows(8, cfg.model, 2))
    assert result.stop_reason == "max_steps"
    assert (result.state.epoch, result.state.step, result.final_weights) == (0, 0, None)
    assert (run_dir.checkpoints / START_WEIGHTS).is_file()
    assert not list(run_dir.checkpoints.glob("tft_final*"))
    assert ckpt.complete_epochs(run_dir.checkpoints) == []
