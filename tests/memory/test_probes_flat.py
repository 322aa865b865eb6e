"""Memory is flat over epochs: a real TFT trained for 5 epochs with AdamW, snapshots at every
named point, the deterministic numbers compared between epochs and no tensor surviving."""

from __future__ import annotations

import dataclasses
import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from foxhunt.config import demo
from foxhunt.memory.log import MemoryLog
from foxhunt.memory.saved_tensors import saved_activation_bytes
from foxhunt.memory.state import live_tensor_stats, state_bytes
from foxhunt.model import TFT, quantile_loss
from foxhunt.model.batch import random_batch

EPOCHS = 5
STEPS = 3


def _live_tensor_refs() -> dict[int, weakref.ref]:
    gc.collect()
    return {id(o): weakref.ref(o) for o in gc.get_objects() if issubclass(type(o), torch.Tensor)}


@pytest.fixture
def _older_objects_frozen() -> Iterator[None]:
    """Objects older than the test (modules, other tests' leftovers) moved to the collector's
    permanent generation for the test: ``gc.collect`` and ``gc.get_objects`` then walk only what
    the test created, which holds every tensor it compares (model, optimizer, batches, graphs).
    In a process that has run hundreds of tests those walks otherwise dominate its time."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.mark.slow
@pytest.mark.usefixtures("_older_objects_frozen")
def test_memory_is_flat_over_five_demo_epochs(tmp_path: Path) -> None:
    # The demo preset's network (210 observed inputs, streaming VSN, 1 LSTM layer), a small batch.
    config = dataclasses.replace(demo().model, encoder_length=16, horizon=4)
    torch.manual_seed(0)
    model = TFT(config)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batches = [random_batch(config, 8, seed=i) for i in range(STEPS)]
    val = random_batch(config, 16, seed=99)
    q = torch.tensor(config.quantiles)
    log = MemoryLog(tmp_path / "memory.jsonl", torch.device("cpu"), leak_threshold_bytes=8 * 2**20)

    def loss_of(batch):  # noqa: ANN001, ANN202
        return quantile_loss(model(batch).quantiles, batch.target, q)

    def probe() -> dict[str, int]:
        model.train()
        torch.manual_seed(1)  # same dropout masks: same graph every epoch
        saved = saved_activation_bytes(lambda: loss_of(batches[0]), exclude=[*model.parameters()])
        return {"saved_activation_bytes": saved, **state_bytes(model, opt), **live_tensor_stats()}

    log.snapshot("run_start")
    at_start: dict[int, dict[int, weakref.ref]] = {}
    step = 0
    for epoch in range(EPOCHS):
        at_start[epoch] = _live_tensor_refs()
        log.snapshot("epoch_start", epoch=epoch, step=step, **probe())
        model.train()
        for batch in batches:
            loss_of(batch).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            log.snapshot("train_step", epoch=epoch, step=step, **state_bytes(model, opt))
        log.snapshot("after_training", epoch=epoch, step=step, **probe())
        log.snapshot("before_validation", epoch=epoch, step=step)
        model.eval()
        with torch.inference_mode():
            log.snapshot("validation_start", epoch=epoch, step=step)
            val_loss = loss_of(val).item()
            log.snapshot("validation_end", epoch=epoch, step=step, val_loss=val_loss)
        log.snapshot("epoch_end", epoch=epoch, step=step, **probe())
    log.snapshot("run_end", step=step)

    records = log.records()
    assert [r["errors"] for r in records] == [{}] * len(records)  # every snapshot complete
    points = [r for r in records if r["epoch"] is not None]
    assert len(points) == EPOCHS * (6 + STEPS)

    # Deterministic numbers are identical at equivalent points of epochs 1..4 (epoch 0 creates
    # the optimizer state in its first step).
    for point in ("epoch_start", "after_training", "epoch_end"):
        rows = [r for r in records if r["point"] == point and r["epoch"] >= 1]
        for key in (
            "saved_activation_bytes",
            "parameter_bytes",
            "gradient_bytes",
            "optimizer_bytes",
        ):
            assert len({r[key] for r in rows}) == 1, (point, key, [r[key] for r in rows])
        assert len({r["live_tensor_count"] for r in rows}) == 1, (
            point,
            [r["live_tensor_count"] for r in rows],
        )
        assert len({r["live_tensor_bytes"] for r in rows}) == 1
    assert records[-2]["gradient_bytes"] == 0  # set_to_none: no gradient outlives its step
    assert log.check_leaks() == []

    # No tensor created during an epoch survives into the next one: every tensor alive at the
    # start of epochs 2..4 was already alive (the same object) at the start of epoch 1.
    base = at_start[1]
    for epoch in range(2, EPOCHS):
        new = [i for i, ref in at_start[epoch].items() if i not in base or base[i]() is not ref()]
        assert new == [], f"{len(new)} tensors created before epoch {epoch} are still alive"
