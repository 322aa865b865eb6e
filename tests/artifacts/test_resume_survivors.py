"""artifacts/resume.py: the pieces `make mutate` left unpinned: the CUDA RNG state (saved only
once CUDA is initialized, restored only on a CUDA device, checked with monkeypatched
``torch.cuda`` functions), the averaged run's ``train_weights``, the pruning of old resume
states, and a final checkpoint taken from the starting weights (best epoch 0).
"""

from __future__ import annotations

from types import MappingProxyType

import pytest
import torch
from torch import nn

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.resume import restore, resume_state, save_epoch, save_final
from foxhunt.artifacts.rundir import RunDir

CUDA_RNG = [torch.arange(16, dtype=torch.uint8), torch.arange(16, 32, dtype=torch.uint8)]


def _kit() -> tuple[nn.Linear, torch.optim.Optimizer, torch.amp.GradScaler]:
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return model, opt, torch.amp.GradScaler("cpu", enabled=False)


def _loop(epoch: int, **more: object) -> dict[str, object]:
    return {"epoch": epoch, "step": 10 * epoch, **more}


def _run(tmp_path) -> RunDir:
    run = RunDir(tmp_path / "run")
    run.create()
    return run


def _cuda(monkeypatch: pytest.MonkeyPatch, available: bool, initialized: bool) -> None:
    """``torch.cuda`` as a machine with (``available``) a GPU that is (``initialized``) in use;
    its RNG state is ``CUDA_RNG``."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: available)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: initialized)
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", lambda: CUDA_RNG)


def _recorded_cuda_rng(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Record what ``torch.cuda.set_rng_state_all`` is called with."""
    calls: list[object] = []
    monkeypatch.setattr(torch.cuda, "set_rng_state_all", calls.append)
    return calls


# --- resume_state -------------------------------------------------------------------------------


def test_resume_state_saves_the_cuda_rng_once_cuda_is_in_use(monkeypatch) -> None:
    _cuda(monkeypatch, available=True, initialized=True)
    _, opt, scaler = _kit()
    rng = resume_state(opt, scaler, _loop(1), total_steps=5)["rng"]
    assert sorted(rng) == ["cuda", "torch"]
    assert rng["cuda"] is CUDA_RNG


def test_resume_state_has_no_cuda_rng_while_cuda_is_not_initialized(monkeypatch) -> None:
    _cuda(monkeypatch, available=True, initialized=False)  # a CPU run on a GPU machine
    _, opt, scaler = _kit()
    assert list(resume_state(opt, scaler, _loop(1), total_steps=5)["rng"]) == ["torch"]


def test_resume_state_keeps_train_weights_as_a_plain_dict() -> None:
    model, opt, scaler = _kit()
    weights = {k: v.detach().clone() for k, v in model.state_dict().items()}
    state = resume_state(opt, scaler, _loop(1), 5, train_weights=MappingProxyType(weights))
    assert type(state["train_weights"]) is dict  # torch.load(weights_only=True) reads it back
    assert list(state["train_weights"]) == ["weight", "bias"]
    torch.testing.assert_close(state["train_weights"], weights, rtol=0, atol=0)


def test_resume_state_without_train_weights_has_no_such_key() -> None:
    _, opt, scaler = _kit()
    assert "train_weights" not in resume_state(opt, scaler, _loop(1), total_steps=5)


# --- restore ------------------------------------------------------------------------------------


def test_restore_on_cuda_sets_the_saved_cuda_rng(monkeypatch) -> None:
    calls = _recorded_cuda_rng(monkeypatch)
    _, opt, scaler = _kit()
    state = resume_state(opt, scaler, _loop(3), total_steps=5)
    state["rng"] = {**state["rng"], "cuda": CUDA_RNG}
    assert restore(state, opt, scaler, torch.device("cuda")) == _loop(3)
    assert calls == [CUDA_RNG] and calls[0] is CUDA_RNG


def test_restore_on_cuda_of_a_cpu_state_leaves_the_cuda_rng_alone(monkeypatch) -> None:
    calls = _recorded_cuda_rng(monkeypatch)
    _, opt, scaler = _kit()
    state = resume_state(opt, scaler, _loop(3), total_steps=5)
    assert "cuda" not in state["rng"]  # written by a CPU run (no GPU here)
    assert restore(state, opt, scaler, torch.device("cuda")) == _loop(3)
    assert calls == []


# --- save_epoch ---------------------------------------------------------------------------------


def test_save_epoch_puts_train_weights_into_the_resume_state(tmp_path) -> None:
    run = _run(tmp_path)
    model, opt, scaler = _kit()
    train = {k: v.detach() + 1.0 for k, v in model.state_dict().items()}
    save_epoch(run, model, opt, scaler, _loop(1), {}, {"val_loss": 0.5}, False, 5, train)
    state = ckpt.load_resume_state(ckpt.optimizer_path(run.checkpoints, 1))
    assert list(state["train_weights"]) == ["weight", "bias"]
    torch.testing.assert_close(state["train_weights"], train, rtol=0, atol=0)


def test_save_epoch_prunes_only_resume_states_of_epochs_from_1(tmp_path) -> None:
    run = _run(tmp_path)
    model, opt, scaler = _kit()
    d = run.checkpoints
    stray = ckpt.optimizer_path(d, 0)  # no epoch 0 state is ever written: not save_epoch's
    stray.write_bytes(b"not ours")
    for epoch in (1, 2, 3):
        save_epoch(run, model, opt, scaler, _loop(epoch), {}, {"val_loss": 0.5}, False, 5)
    assert [e for e in range(4) if ckpt.optimizer_path(d, e).exists()] == [0, 2, 3]
    assert stray.read_bytes() == b"not ours"


# --- save_final ---------------------------------------------------------------------------------


def test_save_final_with_best_epoch_0_takes_the_starting_weights(tmp_path) -> None:
    run = _run(tmp_path)
    model, opt, scaler = _kit()
    d = run.checkpoints
    start = {k: v.detach().clone() for k, v in model.state_dict().items()}
    ckpt.save_weights(d / ckpt.START_WEIGHTS, start, {"epoch": 0, "step": 0})  # no metrics
    with torch.no_grad():
        model.weight.add_(1.0)
    save_epoch(run, model, opt, scaler, _loop(1), {}, {"val_loss": 0.9}, False, 5)
    loop = _loop(1, best_epoch=0, best_val_loss=0.75)
    path = save_final(run, model, loop, {"bars": "b.parquet"}, "epochs")
    assert path == ckpt.final_weights_path(d, 1)
    torch.testing.assert_close(model.state_dict(), start, rtol=0, atol=0)
    weights, meta = ckpt.load_weights(path)
    torch.testing.assert_close(weights, start, rtol=0, atol=0)
    expected = {
        "bars": "b.parquet",
        "epoch": 1,
        "step": 10,
        "best_epoch": 0,
        "stop_reason": "epochs",
        "metrics": {},
    }
    assert {key: meta[key] for key in expected} == expected
    assert ckpt.read_best(d) == {"epoch": 0, "val_loss": 0.75, "file": "tft_start.safetensors"}
