"""The weight average (``TrainConfig.weight_average``): its arithmetic, the swap, the loop."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.errors import ModelDirError
from foxhunt.train.averaging import WARMUP, WeightAverage, averaged, start_average

from .test_loop import _fit
from .train_fakes import FakeWindows, tiny_config


def _net() -> nn.Module:
    net = nn.Linear(3, 2)
    net.register_buffer("pinned", torch.tensor([7.0]))
    with torch.no_grad():
        net.weight.fill_(1.0)
        net.bias.fill_(0.0)
    return net


def test_each_update_moves_the_average_by_the_warmed_up_share() -> None:
    net, decay = _net(), 0.9
    average = WeightAverage(net, decay)
    expected = torch.ones(2, 3, dtype=torch.float64)
    for t, value in enumerate([3.0, -1.0, 5.0, 2.0, 0.5, 4.0], start=1):
        with torch.no_grad():
            net.weight.fill_(value)
        average.update()
        d = min(decay, t / (t + WARMUP))
        expected = d * expected + (1 - d) * value
        with average.applied():
            torch.testing.assert_close(net.weight.double(), expected)
    assert average.steps == 6
    assert 1 / (1 + WARMUP) < 1 - decay  # the first step's weight is the warm-up's, not 1 - a


def test_applied_swaps_in_the_average_and_back() -> None:
    net = _net()
    average = WeightAverage(net, 0.5)
    with torch.no_grad():
        net.weight.fill_(3.0)
    average.update()  # d_1 = min(0.5, 1/11): the average is 1/11 * 1 + 10/11 * 3
    with averaged(average) as trained:
        assert torch.allclose(net.weight, torch.full((2, 3), 1 / 11 + 30 / 11))
        assert torch.equal(trained["weight"], torch.full((2, 3), 3.0))
        assert set(trained) == {"weight", "bias"}  # parameters only, not the pinned buffer
    assert torch.equal(net.weight, torch.full((2, 3), 3.0))
    assert torch.equal(net.pinned, torch.tensor([7.0]))


def test_without_an_average_nothing_changes() -> None:
    net = _net()
    assert start_average(net, 0.0, 0, None) is None
    with averaged(None) as trained:
        assert trained is None
    assert torch.equal(net.weight, torch.ones(2, 3))


def test_resuming_takes_the_checkpoint_as_the_average_and_the_saved_weights_to_train() -> None:
    net = _net()  # holds the epoch checkpoint: the average, all ones
    trained = {"weight": torch.full((2, 3), 2.0), "bias": torch.full((2,), -1.0)}
    average = start_average(net, 0.9, 40, {"train_weights": trained})
    assert average is not None and average.steps == 40
    assert torch.equal(net.weight, trained["weight"]) and torch.equal(net.bias, trained["bias"])
    with average.applied():
        assert torch.equal(net.weight, torch.ones(2, 3))
    with pytest.raises(ModelDirError) as refused:
        start_average(_net(), 0.9, 40, {"loop": {}})
    assert str(refused.value) == (
        "the run averages its weights (weight_average) but its last resume state has no "
        "training weights: it was written without averaging"
    )
    for decay in (0.0, 1.0):
        with pytest.raises(ValueError, match=r"in \(0, 1\)"):
            WeightAverage(net, decay)


def test_the_loop_validates_and_saves_the_average(run_dir) -> None:
    cfg = tiny_config(epochs=2, weight_average=0.8)
    train, val = FakeWindows(64, cfg.model, seed=1), FakeWindows(50, cfg.model, seed=2)
    model, result = _fit(run_dir, cfg, train, val)
    d = run_dir.checkpoints
    epoch2, meta = ckpt.load_weights(ckpt.epoch_weights_path(d, 2))
    resume = ckpt.load_resume_state(ckpt.optimizer_path(d, 2))
    trained = resume["train_weights"]
    moved = [k for k in trained if not torch.equal(trained[k], epoch2[k])]
    assert len(moved) > len(trained) // 2  # the checkpoint is not the optimizer's weights

    from foxhunt.train.step import validate

    fresh = model.__class__(cfg.model)
    fresh.load_state_dict(epoch2)
    q = torch.tensor(cfg.model.quantiles)
    loss = validate(fresh, val, batch_size=24, quantiles=q, precision="fp32")
    assert loss == pytest.approx(meta["metrics"]["val_loss"], rel=1e-6)  # what was validated


def test_the_train_flag_sets_it_and_a_bad_value_exits_2(capsys) -> None:
    import json

    from foxhunt.cli import main

    argv = ["train", "--preset", "fast", "--print-config", "json"]
    assert main([*argv, "--weight-average", "0.995"]) == 0
    assert json.loads(capsys.readouterr().out)["train"]["weight_average"] == 0.995
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["train"]["weight_average"] == 0.0  # off by default
    assert main([*argv, "--weight-average", "1"]) == 2
    err = capsys.readouterr().err
    assert "weight_average must be in [0, 1), got 1.0" in err and err.count("\n") == 1
