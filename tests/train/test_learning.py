"""A network that learns (issue 26, docs/recipe.md *A network that learns*): started at the
scale-only forecast (zero output weight), the TFT gets gradient where it should and, on windows
whose spread depends on the observed inputs, trains below its start and is served."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.rundir import RunDir
from foxhunt.config import RunConfig
from foxhunt.memory.log import MemoryLog
from foxhunt.model.batch import TFTBatch
from foxhunt.model.quantile import quantile_loss
from foxhunt.model.tft import BLOCK_NAMES, TFT
from foxhunt.train.head_init import init_monotone_head, standardised_target_quantiles
from foxhunt.train.loop import START_WEIGHTS, fit

from .train_fakes import FakeWindows, tiny_config


class SpreadWindows(FakeWindows):
    """Standardised targets whose spread is set by the last observed bar: ``exp(x_0) x noise``.

    The start (one set of quantiles for every window) cannot know the spread; a network that
    reads the observed inputs can.
    """

    def __init__(self, n: int, cfg, seed: int = 0) -> None:  # type: ignore[no-untyped-def]
        super().__init__(n, cfg, seed)
        g = torch.Generator().manual_seed(seed + 1000)
        noise = torch.randn(n, cfg.horizon, generator=g)
        self.target = torch.exp(0.8 * self.historical[:, -1, :1]) * noise


def _config(**model: object) -> RunConfig:
    # fp32 pinned: the losses measured below are fp32 ones, and `auto` picks bf16 on some CPUs
    cfg = tiny_config(
        epochs=4, patience=4, batch_size=32, lr=3e-3, warmup_steps=5, precision="fp32"
    )
    fields = {"monotone_quantiles": True, "decoder_origin_inputs": True, "dropout": 0.0}
    m = dataclasses.replace(cfg.model, **{**fields, **model})
    return dataclasses.replace(cfg, model=m)


def _fresh(cfg: RunConfig, train: SpreadWindows) -> TFT:
    torch.manual_seed(0)
    model = TFT(cfg.model)
    init_monotone_head(model.output, standardised_target_quantiles(train, cfg.model.quantiles))
    return model


def _loss(model: TFT, windows: SpreadWindows, cfg: RunConfig) -> float:
    model.eval()
    with torch.no_grad():
        b = windows.batch(range(len(windows)))
        out = model(b).quantiles
    model.train()
    return float(quantile_loss(out, b.target, torch.tensor(cfg.model.quantiles)))


def test_at_step_0_only_the_zeroed_head_gets_gradient() -> None:
    """The head's weight gets ``g psi^T`` (non-zero); every block below it gets ``W^T g`` = 0,
    exactly: the body learns only once the head has moved (docs/recipe.md, row 1)."""
    cfg = _config()
    windows = SpreadWindows(64, cfg.model)
    model = _fresh(cfg, windows)
    b: TFTBatch = windows.batch(range(64))
    quantile_loss(model(b).quantiles, b.target, torch.tensor(cfg.model.quantiles)).backward()
    assert model.output.weight.grad is not None
    assert float(model.output.weight.grad.abs().sum()) > 1e-3
    for name in BLOCK_NAMES[:-1]:
        grads = [p.grad for p in getattr(model, name).parameters() if p.grad is not None]
        assert all(float(g.abs().max()) == 0.0 for g in grads), name


def _train(tmp_path, cfg: RunConfig):  # type: ignore[no-untyped-def]
    train = SpreadWindows(512, cfg.model, seed=0)
    val = SpreadWindows(256, cfg.model, seed=1)
    model = _fresh(cfg, train)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    start_train = _loss(model, train, cfg)
    run = RunDir(tmp_path / "run")
    run.create()
    result = fit(
        model, train, val, cfg, run,
        sidecar={"config": cfg.to_dict()}, memory=MemoryLog(run.memory, torch.device("cpu")),
    )  # fmt: skip
    start_val = ckpt.load_sidecar(run.checkpoints / START_WEIGHTS)["metrics"]["val_loss"]
    served, _ = ckpt.load_weights(result.final_weights)
    return result, start, served, start_val, _loss(model, train, cfg) / start_train


def test_a_tiny_network_trains_below_its_start_and_is_served(tmp_path) -> None:
    """128 steps; measured on this seed: training windows -7.8 %, validation -7.5 %."""
    result, start, served, start_val, train_ratio = _train(tmp_path, _config())
    assert result.state.best_epoch >= 1
    assert result.state.best_val_loss < 0.95 * start_val  # 5 % below the start on validation
    assert train_ratio < 0.95  # and on the training windows
    assert not torch.equal(served["output.weight"], start["output.weight"])
    assert float(served["output.weight"].abs().max()) > 0.0  # the output depends on the inputs


@pytest.mark.slow
def test_without_the_origin_inputs_the_same_network_keeps_its_start(tmp_path) -> None:
    """The failure issue 26 reported, on the same windows and budget: with the observed inputs
    reaching the decoder only through the LSTM state and attention, no epoch beats the start
    and the served weights are the start's."""
    cfg = _config(decoder_origin_inputs=False)
    result, start, served, _, train_ratio = _train(tmp_path, cfg)
    assert result.state.best_epoch == 0
    assert all(torch.equal(served[k], start[k]) for k in start)
    assert train_ratio == 1.0
