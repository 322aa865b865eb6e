from __future__ import annotations

import json
import threading

import pytest
import torch
from torch import nn

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.memory.log import MemoryLog
from foxhunt.model.batch import TFTBatch, TFTOutput
from foxhunt.model.quantile import quantile_loss
from foxhunt.model.tft import TFT
from foxhunt.train.loop import epoch_order, fit
from foxhunt.train.optimizer.optim import build_optimizer
from foxhunt.train.resources.oom import MicroBatching
from foxhunt.train.step import train_step, validate

from .train_fakes import FakeWindows, tiny_config

torch.set_num_threads(1)


class Recorder(nn.Module):
    """Wraps a TFT; records every call and can inject CUDA out-of-memory errors."""

    def __init__(
        self, inner: nn.Module, *, oom_above: int | None = None, oom_on_call: int | None = None
    ) -> None:
        super().__init__()
        self.inner = inner
        self.oom_above = oom_above
        self.oom_on_call = oom_on_call
        self.calls: list[dict[str, object]] = []
        self.n_calls = 0

    def forward(self, batch: TFTBatch) -> TFTOutput:
        self.n_calls += 1
        if self.training and (
            (self.oom_above is not None and batch.size > self.oom_above)
            or self.n_calls == self.oom_on_call
        ):
            raise torch.OutOfMemoryError(
                "CUDA out of memory. Tried to allocate 1.00 GiB (injected)"
            )
        self.calls.append(
            {
                "n": self.n_calls,
                "training": self.training,
                "inference": torch.is_inference_mode_enabled(),
                "size": batch.size,
                "ids": batch.static[:, 0].long().tolist(),
                "grads_live": any(p.grad is not None for p in self.inner.parameters()),
            }
        )
        return self.inner(batch)


def _fit(run, cfg, train, val, model=None, **kw):
    torch.manual_seed(cfg.train.seed)
    model = model or TFT(cfg.model)
    result = fit(
        model,
        train,
        val,
        cfg,
        run,
        sidecar={"config": cfg.to_dict()},
        memory=MemoryLog(run.memory, torch.device("cpu")),
        **kw,
    )
    return model, result


@pytest.mark.slow
def test_overfits_a_fixed_batch() -> None:
    cfg = tiny_config()
    torch.manual_seed(0)
    model = TFT(cfg.model.__class__(**{**cfg.model.__dict__, "dropout": 0.0}))
    batch = FakeWindows(16, cfg.model).batch(range(16))
    opt = build_optimizer(model, lr=1e-2, weight_decay=0.0)
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    q = torch.tensor(cfg.model.quantiles)
    micro = MicroBatching(16, 16)
    losses = [
        train_step(
            model, batch, opt, scaler, micro, quantiles=q, precision="fp32", grad_clip=1.0, step=i
        )[0]
        for i in range(150)
    ]
    assert losses[-1] < losses[0] / 10, (losses[0], losses[-1])
    assert all(p.grad is None for p in model.parameters())  # zero_grad(set_to_none=True)


def test_fit_writes_checkpoints_and_validates_in_eval_inference_mode(run_dir) -> None:
    cfg = tiny_config(epochs=2, log_every=2)
    train, val = FakeWindows(64, cfg.model, seed=1), FakeWindows(50, cfg.model, seed=2)
    torch.manual_seed(0)
    model = Recorder(TFT(cfg.model))
    _, result = _fit(run_dir, cfg, train, val, model=model)
    assert result.stop_reason == "epochs" and result.state.epoch == 2 and result.state.step == 8
    assert result.state.samples_seen == 128
    d = run_dir.checkpoints
    for name in ["tft_epoch_1", "tft_epoch_2"]:
        assert (d / f"{name}.safetensors").is_file() and (d / f"{name}.json").is_file()
    assert result.final_weights == d / "tft_final_epoch2.safetensors"
    assert (d / "optimizer_epoch_2.pt").is_file() and not list(d.glob("*.tmp"))
    train_calls = [c for c in model.calls if c["training"]]
    val_calls = [c for c in model.calls if not c["training"]]
    assert all(not c["inference"] for c in train_calls)
    assert all(c["inference"] and not c["grads_live"] for c in val_calls)  # no residue
    assert [c["size"] for c in val_calls] == [24, 24, 2] * 3  # the start, then each epoch
    assert sorted(i for c in train_calls[:4] for i in c["ids"]) == list(range(64))
    sidecar = json.loads((d / "tft_epoch_2.json").read_text())
    assert sidecar["epoch"] == 2 and sidecar["step"] == 8 and "val_loss" in sidecar["metrics"]
    assert sidecar["config"]["preset"] == "tiny"
    lines = [json.loads(x) for x in run_dir.metrics.read_text().splitlines()]
    assert [r["epoch"] for r in lines if r["kind"] == "epoch"] == [1, 2]
    assert [r["step"] for r in lines if r["kind"] == "step"] == [2, 4, 6, 8]
    points = [json.loads(x)["point"] for x in run_dir.memory.read_text().splitlines()]
    for p in (
        "run_start",
        "epoch_start",
        "train_step",
        "after_training",
        "before_validation",
        "validation_start",
        "validation_end",
        "after_checkpoint",
        "epoch_end",
        "run_end",
    ):
        assert p in points


@pytest.mark.slow
def test_same_seed_same_losses(tmp_path) -> None:
    from foxhunt.artifacts.rundir import RunDir

    cfg = tiny_config(epochs=2)
    runs = []
    for name in ("a", "b"):
        run = RunDir(tmp_path / name)
        run.create()
        _fit(run, cfg, FakeWindows(48, cfg.model, 1), FakeWindows(24, cfg.model, 2))
        runs.append([json.loads(x) for x in run.metrics.read_text().splitlines()])
    key = [(r["train_loss"], r["val_loss"]) for r in runs[0] if r["kind"] == "epoch"]
    assert key == [(r["train_loss"], r["val_loss"]) for r in runs[1] if r["kind"] == "epoch"]


class _Crash(FakeWindows):
    """Dies (like a kill) on its ``crash_at``-th batch request."""

    crash_at: int | None = None

    def batch(self, indices):  # type: ignore[override]
        if self.crash_at is not None and self.calls + 1 >= self.crash_at:
            raise KeyboardInterrupt("killed")
        return super().batch(indices)


@pytest.mark.slow
@pytest.mark.parametrize("weight_average", [0.0, 0.8])
def test_resume_after_crash_gives_the_same_final_weights(tmp_path, weight_average) -> None:
    from foxhunt.artifacts.rundir import RunDir

    # dropout 0.1: the RNG state must be restored too; averaged: the optimizer's weights too
    cfg = tiny_config(epochs=3, weight_average=weight_average)
    val = FakeWindows(24, cfg.model, 2)
    straight = RunDir(tmp_path / "straight")
    straight.create()
    model_a, res_a = _fit(straight, cfg, FakeWindows(48, cfg.model, 1), val)

    crashed = RunDir(tmp_path / "crashed")
    crashed.create()
    train = _Crash(48, cfg.model, 1)
    train.crash_at = 3 + 2  # epoch 1 has 3 steps; die in the middle of epoch 2
    with pytest.raises(KeyboardInterrupt):
        _fit(crashed, cfg, train, val)
    assert ckpt.complete_epochs(crashed.checkpoints) == [1]
    assert not list(crashed.checkpoints.glob("*.tmp"))

    torch.manual_seed(123)  # a different process would have a different RNG state
    model_b = TFT(cfg.model)
    weights, _ = ckpt.load_weights(ckpt.epoch_weights_path(crashed.checkpoints, 1))
    model_b.load_state_dict(weights)
    state = ckpt.load_resume_state(ckpt.optimizer_path(crashed.checkpoints, 1))
    _, res_b = _fit(crashed, cfg, FakeWindows(48, cfg.model, 1), val, model=model_b, resume=state)
    assert res_b.state.step == res_a.state.step == 9
    final_a, _ = ckpt.load_weights(res_a.final_weights)
    final_b, _ = ckpt.load_weights(res_b.final_weights)
    for k in final_a:
        assert torch.equal(final_a[k], final_b[k]), k
    e3a, _ = ckpt.load_weights(ckpt.epoch_weights_path(straight.checkpoints, 3))
    e3b, _ = ckpt.load_weights(ckpt.epoch_weights_path(crashed.checkpoints, 3))
    assert all(torch.equal(e3a[k], e3b[k]) for k in e3a)


@pytest.mark.slow
def test_injected_oom_backs_off_without_skipping_samples(tmp_path) -> None:
    from foxhunt.artifacts.rundir import RunDir

    # fp32: micro-batched and whole-batch steps agree to summation order (bf16 would round).
    cfg = tiny_config(epochs=2, batch_size=16, precision="fp32").replace(model={"dropout": 0.0})
    val = FakeWindows(24, cfg.model, 2)
    plain_run, oom_run = RunDir(tmp_path / "plain"), RunDir(tmp_path / "oom")
    plain_run.create()
    oom_run.create()
    torch.manual_seed(0)
    plain = Recorder(TFT(cfg.model))
    _, res_plain = _fit(plain_run, cfg, FakeWindows(40, cfg.model, 1), val, model=plain)
    torch.manual_seed(0)
    # The "device" fits 8 samples; then an OOM strikes in the middle of step 1 (6th forward:
    # the start's validation; step 0 = OOM at 16, then 8 + 8; step 1 = 8 ok, then OOM) as if
    # memory fragmented.
    oomy = Recorder(TFT(cfg.model), oom_above=8, oom_on_call=6)
    _, res_oom = _fit(oom_run, cfg, FakeWindows(40, cfg.model, 1), val, model=oomy)

    assert res_oom.state.micro_batch == 4  # 16 -> 8 -> 4
    assert len(res_oom.backoffs) == 2
    assert "effective batch 16 unchanged" in res_oom.backoffs[0]
    assert res_oom.state.samples_seen == res_plain.state.samples_seen == 80
    assert res_oom.state.step == res_plain.state.step == 6
    # Every training sample reached a completed optimizer step exactly once per epoch: the
    # step that failed mid-way was redone from its first sample, never skipped or truncated.
    seen = [i for c in oomy.calls if c["training"] for i in c["ids"]]
    retried = [i for c in oomy.calls if c["n"] == 5 for i in c["ids"]]  # redone after the OOM
    assert sorted(seen) == sorted(retried + list(range(40)) * 2)
    # Same samples per step, same effective batch: the same weights up to summation order.
    wa, _ = ckpt.load_weights(res_plain.final_weights)
    wb, _ = ckpt.load_weights(res_oom.final_weights)
    for k in wa:
        torch.testing.assert_close(wa[k], wb[k], rtol=1e-4, atol=1e-5)
    oom_lines = [json.loads(x) for x in oom_run.metrics.read_text().splitlines() if '"oom"' in x]
    assert len(oom_lines) == 2 and oom_lines[1]["step"] == 1


@pytest.mark.slow
def test_resume_keeps_the_oom_reduced_micro_batch(tmp_path) -> None:
    """docs/training.md: the micro-batch an OOM back-off settled on is kept across --resume
    (the device did not grow meanwhile)."""
    from foxhunt.artifacts.rundir import RunDir

    cfg = tiny_config(epochs=2, batch_size=16).replace(model={"dropout": 0.0})
    val = FakeWindows(24, cfg.model, 2)
    run = RunDir(tmp_path / "oom")
    run.create()
    torch.manual_seed(0)
    oomy = Recorder(TFT(cfg.model), oom_above=8, oom_on_call=6)  # 16 -> 8 -> 4 in epoch 1
    _fit(run, cfg, FakeWindows(40, cfg.model, 1), val, model=oomy, resume=None)
    state = ckpt.load_resume_state(ckpt.optimizer_path(run.checkpoints, 1))
    assert state["loop"]["micro_batch"] == 4

    resumed = Recorder(TFT(cfg.model))  # no OOM any more: it must not start again from 16
    weights, _ = ckpt.load_weights(ckpt.epoch_weights_path(run.checkpoints, 1))
    resumed.load_state_dict(weights)  # saved from the Recorder: keys start with inner.
    _, res = _fit(run, cfg, FakeWindows(40, cfg.model, 1), val, model=resumed, resume=state)
    sizes = {c["size"] for c in resumed.calls if c["training"]}
    assert sizes == {4} and res.state.micro_batch == 4


@pytest.mark.slow
def test_early_stopping_restores_best_weights(run_dir) -> None:
    class Drifting(FakeWindows):
        """Validation targets move away every pass, so the loss never improves after epoch 1
        (the first pass, the start's, is farther off than all)."""

        def batch(self, indices):  # type: ignore[override]
            b = super().batch(indices)
            b.target = b.target + (1000.0 if self.calls == 1 else 10.0 * self.calls)
            return b

    cfg = tiny_config(epochs=5, patience=2, validation_batch_size=100)
    _, result = _fit(run_dir, cfg, FakeWindows(32, cfg.model, 1), Drifting(20, cfg.model, 2))
    assert result.stop_reason == "early_stop" and result.state.epoch == 3
    assert result.state.best_epoch == 1
    assert result.final_weights == run_dir.checkpoints / "tft_final_epoch3.safetensors"
    final, meta = ckpt.load_weights(result.final_weights)
    best, _ = ckpt.load_weights(run_dir.checkpoints / "tft_epoch_1.safetensors")
    assert all(torch.equal(final[k], best[k]) for k in final)
    assert meta["best_epoch"] == 1 and meta["stop_reason"] == "early_stop"
    assert ckpt.read_best(run_dir.checkpoints)["epoch"] == 1


def test_stop_event_discards_the_epoch_in_progress(run_dir) -> None:
    cfg = tiny_config(epochs=3)
    stop = threading.Event()

    class StopAfter(FakeWindows):
        def batch(self, indices):  # type: ignore[override]
            if self.calls == 4:  # SIGINT arrives during epoch 2
                stop.set()
            return super().batch(indices)

    _, result = _fit(
        run_dir, cfg, StopAfter(48, cfg.model, 1), FakeWindows(24, cfg.model, 2), stop=stop
    )
    assert result.stop_reason == "interrupted" and result.final_weights is None
    assert result.state.epoch == 1
    assert ckpt.complete_epochs(run_dir.checkpoints) == [1]


def test_max_steps_ends_the_run_with_a_final_checkpoint(run_dir) -> None:
    cfg = tiny_config(epochs=5, max_steps=4)
    _, result = _fit(run_dir, cfg, FakeWindows(48, cfg.model, 1), FakeWindows(24, cfg.model, 2))
    assert result.state.step == 4 and result.state.epoch == 2 and result.stop_reason == "max_steps"
    assert result.final_weights is not None


def test_validate_uses_batch_size_and_restores_train_mode() -> None:
    cfg = tiny_config()
    model = Recorder(TFT(cfg.model))
    loss = validate(
        model,
        FakeWindows(10, cfg.model),
        batch_size=4,
        quantiles=torch.tensor(cfg.model.quantiles),
        precision="bf16",
    )
    assert loss > 0 and model.training
    assert [c["size"] for c in model.calls] == [4, 4, 2]


def test_validation_of_a_constant_network_runs_one_batch_and_gives_the_full_loss() -> None:
    """A zero output layer (a fresh run's start) forecasts the same quantiles everywhere: the
    first batch runs, the rest are scored against its forecast, and the loss is what running
    every batch gives."""
    from foxhunt.train.step import output_is_constant

    cfg = tiny_config()
    torch.manual_seed(0)
    model = TFT(cfg.model)
    val = FakeWindows(10, cfg.model)
    q = torch.tensor(cfg.model.quantiles)
    calls: list[int] = []
    model.register_forward_hook(lambda m, args, out: calls.append(args[0].size))

    def run() -> float:
        calls.clear()
        return validate(model, val, batch_size=4, quantiles=q, precision="fp32")

    assert not output_is_constant(model)
    full = run()
    assert calls == [4, 4, 2]
    with torch.no_grad():
        model.output.weight.zero_()
        model.output.bias.copy_(torch.linspace(-1, 1, cfg.model.n_quantiles))
    assert output_is_constant(model)
    shortcut = run()
    assert calls == [4]
    model.eval()
    with torch.no_grad():
        ref = (
            sum(
                float(quantile_loss(model(b).quantiles, b.target, q)) * b.size
                for b in (val.batch(list(range(a, min(a + 4, 10)))) for a in range(0, 10, 4))
            )
            / 10
        )
    assert shortcut == pytest.approx(ref, rel=1e-6) and shortcut != pytest.approx(full)


def test_epoch_order_is_a_pure_permutation() -> None:
    a = epoch_order(100, seed=3, epoch=2)
    assert a == epoch_order(100, seed=3, epoch=2) and sorted(a) == list(range(100))
    assert a != epoch_order(100, seed=3, epoch=3)


def test_bf16_autocast_and_activation_checkpointing_on_cpu(run_dir) -> None:
    from foxhunt.model.recompute import is_checkpointing

    cfg = tiny_config(epochs=1, precision="bf16", checkpointing=True)
    model, result = _fit(run_dir, cfg, FakeWindows(32, cfg.model, 1), FakeWindows(16, cfg.model, 2))
    assert is_checkpointing(model) and result.state.step == 2
    lines = [json.loads(x) for x in run_dir.metrics.read_text().splitlines()]
    epoch = next(r for r in lines if r["kind"] == "epoch")
    assert 0 < epoch["train_loss"] < 10 and 0 < epoch["val_loss"] < 10
    assert all(p.dtype == torch.float32 for p in model.parameters())  # master weights stay fp32
