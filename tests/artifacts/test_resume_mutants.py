"""artifacts/resume.py directly: what an epoch writes, what restore brings back, the final file.

The training-loop tests resume whole runs; these pin each piece of the resume contract on its
own (`make mutate` found them reachable only through minutes-long runs).
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.resume import RESUME_FORMAT, restore, resume_state, save_epoch, save_final
from foxhunt.artifacts.rundir import RunDir
from foxhunt.errors import ModelDirError


def _trained() -> tuple[nn.Linear, torch.optim.Optimizer, torch.amp.GradScaler]:
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", enabled=True, init_scale=1024.0)
    for _ in range(3):
        scaler.scale(model(torch.randn(4, 3)).pow(2).mean()).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
    return model, opt, scaler


def _loop(epoch: int, **more: object) -> dict[str, object]:
    return {"epoch": epoch, "step": 10 * epoch, "micro_batch": 8, **more}


@pytest.mark.slow
def test_restore_brings_back_optimizer_scaler_rng_and_counters() -> None:
    model, opt, scaler = _trained()
    state = resume_state(opt, scaler, _loop(2), total_steps=40)
    assert state["format"] == RESUME_FORMAT and state["total_steps"] == 40
    after_save = torch.rand(3)
    fresh_opt = torch.optim.AdamW(model.parameters(), lr=0.5)
    fresh_scaler = torch.amp.GradScaler("cpu", enabled=True)
    loop = restore(state, fresh_opt, fresh_scaler, torch.device("cpu"))
    assert loop == _loop(2)
    torch.testing.assert_close(torch.rand(3), after_save)  # the RNG is where it was saved
    assert fresh_scaler.get_scale() == scaler.get_scale() == 1024.0
    assert fresh_opt.param_groups[0]["lr"] == 0.01
    for p in model.parameters():
        assert fresh_opt.state[p]["step"] == opt.state[p]["step"] == 3
        torch.testing.assert_close(fresh_opt.state[p]["exp_avg"], opt.state[p]["exp_avg"])


def test_a_disabled_scaler_restores_nothing_and_another_format_is_refused() -> None:
    _, opt, _ = _trained()
    off = torch.amp.GradScaler("cpu", enabled=False)
    state = resume_state(opt, off, _loop(1), total_steps=5)
    assert state["grad_scaler"] == {}
    target = torch.amp.GradScaler("cpu", enabled=True, init_scale=8.0)
    restore(state, opt, target, torch.device("cpu"))
    assert target.get_scale() == 8.0
    with pytest.raises(ModelDirError, match=r"^resume state format 0 is not 1$"):
        restore({**state, "format": 0}, opt, target, torch.device("cpu"))


def test_a_cuda_rng_state_is_left_alone_on_a_cpu_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_cuda(states: object) -> None:
        raise AssertionError("restore touched the CUDA RNG on a CPU run")

    # without a GPU torch.cuda queues the call silently: make touching it fail instead
    monkeypatch.setattr(torch.cuda, "set_rng_state_all", no_cuda)
    _, opt, scaler = _trained()
    state = resume_state(opt, scaler, _loop(1), total_steps=5)
    # as written by a CUDA run: restoring it on the CPU must not touch torch.cuda
    state["rng"] = {**state["rng"], "cuda": [torch.zeros(16, dtype=torch.uint8)]}
    assert restore(state, opt, scaler, torch.device("cpu")) == _loop(1)


def test_save_epoch_writes_state_weights_sidecar_best_and_keeps_two_resume_states(
    tmp_path,
) -> None:
    run = RunDir(tmp_path / "run")
    run.create()
    model, opt, scaler = _trained()
    d = run.checkpoints
    for epoch, improved in ((1, True), (2, False), (3, True), (4, False)):
        save_epoch(
            run,
            model,
            opt,
            scaler,
            _loop(epoch),
            {"bars": "b.parquet"},
            {"val_loss": 1.0 / epoch, "train_loss": 2.0},
            improved,
            total_steps=40,
        )
        weights, meta = ckpt.load_weights(ckpt.epoch_weights_path(d, epoch))
        assert meta["epoch"] == epoch and meta["step"] == 10 * epoch
        assert meta["bars"] == "b.parquet" and meta["best"] is improved
        assert meta["metrics"] == {"val_loss": 1.0 / epoch, "train_loss": 2.0}
        torch.testing.assert_close(weights["weight"], model.weight.detach())
        state = ckpt.load_resume_state(ckpt.optimizer_path(d, epoch))
        assert state["loop"] == _loop(epoch) and state["total_steps"] == 40
    assert ckpt.read_best(d) == {
        "epoch": 3,
        "val_loss": 1.0 / 3,
        "file": "tft_epoch_3.safetensors",
    }
    assert [e for e in range(1, 5) if ckpt.optimizer_path(d, e).exists()] == [3, 4]
    assert ckpt.complete_epochs(d) == [1, 2, 3, 4]


def test_save_final_loads_the_best_epoch_and_records_why_it_stopped(tmp_path) -> None:
    run = RunDir(tmp_path / "run")
    run.create()
    model, opt, scaler = _trained()
    best = {k: v.clone() for k, v in model.state_dict().items()}
    d = run.checkpoints
    save_epoch(run, model, opt, scaler, _loop(1), {}, {"val_loss": 0.25}, True, 20)
    with torch.no_grad():
        model.weight.add_(1.0)  # epoch 2 is worse: the final weights must be epoch 1's
    save_epoch(run, model, opt, scaler, _loop(2), {}, {"val_loss": 0.5}, False, 20)
    loop = _loop(2, best_epoch=1, best_val_loss=0.25)
    path = save_final(run, model, loop, {"bars": "b.parquet"}, "early_stopping")
    assert path == ckpt.final_weights_path(d, 2) and ckpt.final_weights(d) == path
    torch.testing.assert_close(model.weight.detach(), best["weight"])
    weights, meta = ckpt.load_weights(path)
    torch.testing.assert_close(weights["weight"], best["weight"])
    expected = {
        "bars": "b.parquet",
        "epoch": 2,
        "step": 20,
        "best_epoch": 1,
        "stop_reason": "early_stopping",
        "metrics": {"val_loss": 0.25},
    }
    assert {key: meta[key] for key in expected} == expected
    assert ckpt.read_best(d) == {
        "epoch": 1,
        "val_loss": 0.25,
        "file": "tft_epoch_1.safetensors",
    }
