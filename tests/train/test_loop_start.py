"""The starting weights compete for the final checkpoint (train/loop.py): a fresh run validates
them before epoch 1; when no epoch beats them, the final checkpoint holds them."""

from __future__ import annotations

import json

import pytest
import torch

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.rundir import RunDir
from foxhunt.memory.log import MemoryLog
from foxhunt.model.tft import TFT
from foxhunt.train.loop import START_WEIGHTS, fit

from .train_fakes import FakeWindows, tiny_config


class Drifting(FakeWindows):
    """Validation targets move away by ``step`` on every pass: each later model looks worse."""

    def __init__(self, *args: object, step: float) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.step = step

    def batch(self, indices):  # type: ignore[no-untyped-def, override]
        b = super().batch(indices)
        b.target = b.target + self.step * self.calls
        return b


def _fit(tmp_path, val: FakeWindows, epochs: int = 3):  # type: ignore[no-untyped-def]
    cfg = tiny_config(epochs=epochs, patience=2, validation_batch_size=100)
    run = RunDir(tmp_path / "run")
    run.create()
    torch.manual_seed(0)
    model = TFT(cfg.model)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    result = fit(
        model, FakeWindows(32, cfg.model, 1), val, cfg, run,
        sidecar={"config": cfg.to_dict()}, memory=MemoryLog(run.memory, torch.device("cpu")),
    )  # fmt: skip
    return run, model, start, result


@pytest.mark.slow
def test_the_start_is_kept_when_no_epoch_beats_it(tmp_path) -> None:
    cfg = tiny_config()
    run, model, start, result = _fit(tmp_path, Drifting(20, cfg.model, 2, step=10.0))
    assert result.state.best_epoch == 0 and result.stop_reason == "early_stop"
    assert result.state.epoch == 2  # patience 2 counts from the best, the start included
    final, meta = ckpt.load_weights(result.final_weights)
    assert all(torch.equal(final[k], start[k]) for k in start)  # served = the start
    assert all(torch.equal(model.state_dict()[k], start[k]) for k in start)
    assert meta["best_epoch"] == 0 and meta["stop_reason"] == "early_stop"
    start_file, start_meta = ckpt.load_weights(run.checkpoints / START_WEIGHTS)
    assert all(torch.equal(start_file[k], start[k]) for k in start)
    assert result.state.best_val_loss == start_meta["metrics"]["val_loss"]
    assert json.loads((run.checkpoints / "best.json").read_text())["epoch"] == 0
    assert ckpt.complete_epochs(run.checkpoints) == [1, 2]  # the start is no resumable epoch
    assert json.loads((run.checkpoints / "best.json").read_text())["file"] == START_WEIGHTS


def test_an_epoch_that_beats_the_start_is_served(tmp_path) -> None:
    cfg = tiny_config()
    run, _, start, result = _fit(tmp_path, Drifting(20, cfg.model, 2, step=0.0), epochs=2)
    start_loss = ckpt.load_sidecar(run.checkpoints / START_WEIGHTS)["metrics"]["val_loss"]
    assert result.state.best_epoch >= 1 and result.state.best_val_loss < start_loss
    final, _ = ckpt.load_weights(result.final_weights)
    best, _ = ckpt.load_weights(ckpt.epoch_weights_path(run.checkpoints, result.state.best_epoch))
    assert all(torch.equal(final[k], best[k]) for k in final)
    assert not all(torch.equal(final[k], start[k]) for k in start)


def test_an_epoch_worse_than_the_start_is_not_marked_best(tmp_path) -> None:
    cfg = tiny_config()
    run, _, _, result = _fit(tmp_path, Drifting(20, cfg.model, 2, step=10.0))
    epochs = [
        json.loads(line)
        for line in run.metrics.read_text().splitlines()
        if json.loads(line).get("kind") == "epoch"
    ]
    # each epoch's loss is above the start's: no line, record or sidecar calls it best
    assert [e["best"] for e in epochs] == [False, False]
    sidecars = [ckpt.load_sidecar(ckpt.epoch_weights_path(run.checkpoints, e)) for e in (1, 2)]
    assert [s["best"] for s in sidecars] == [False, False]
    best = ckpt.read_best(run.checkpoints)
    assert best is not None and best["epoch"] == result.state.best_epoch == 0
    assert (run.checkpoints / best["file"]).is_file()


def test_best_json_names_an_existing_file_when_an_epoch_wins(tmp_path) -> None:
    cfg = tiny_config()
    run, _, _, result = _fit(tmp_path, Drifting(20, cfg.model, 2, step=0.0), epochs=2)
    best = ckpt.read_best(run.checkpoints)
    assert best is not None and best["epoch"] == result.state.best_epoch >= 1
    assert (run.checkpoints / best["file"]).is_file()
    records = [json.loads(x) for x in run.metrics.read_text().splitlines()]
    marked = [r["epoch"] for r in records if r.get("kind") == "epoch" and r["best"]]
    assert marked[-1] == result.state.best_epoch  # the last "(best)" is the epoch kept


@pytest.mark.slow
def test_early_stopping_waits_until_the_learning_rate_is_half_way_down(tmp_path) -> None:
    # 2 steps per epoch, warm-up 2, 8 epochs: the cosine is 0.43 of the way down after epoch 4
    # and 0.57 after epoch 5; patience 2 is spent after epoch 2 but the run goes on to 5
    cfg = tiny_config()
    run, model, start, result = _fit(tmp_path, Drifting(20, cfg.model, 2, step=10.0), epochs=8)
    assert result.stop_reason == "early_stop" and result.state.epoch == 5
    assert result.state.best_epoch == 0  # still the start: every later epoch looked worse
    lines = [json.loads(x) for x in run.metrics.read_text().splitlines()]
    assert [x["epoch"] for x in lines if "val_loss" in x] == [1, 2, 3, 4, 5]
