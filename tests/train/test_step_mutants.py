"""One optimizer step in micro-batches is the whole batch's step: the mean loss and the
gradients of uneven micro-batches equal the full batch's; ``grad_weight`` scales only the
gradients; clipping only when asked, the norm reported before it; the hook sees the step
number and the complete gradients; none are left between steps."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from foxhunt.model import TFT, quantile_loss
from foxhunt.model.batch import random_batch
from foxhunt.train.resources.oom import MicroBatching
from foxhunt.train.step import train_step

from .train_fakes import tiny_config

CFG = dataclasses.replace(tiny_config().model, dropout=0.0)  # deterministic forwards


def _full(seed: int = 0) -> tuple[float, dict[str, torch.Tensor]]:
    """The whole batch's loss and gradients, by hand."""
    torch.manual_seed(seed)
    model = TFT(CFG)
    batch = random_batch(CFG, 5, seed=1)
    q = torch.tensor(CFG.quantiles)
    loss = quantile_loss(model(batch).quantiles.float(), batch.target, q)
    loss.backward()
    return float(loss.detach()), {n: p.grad.clone() for n, p in model.named_parameters()}


def _step(micro: int, *, grad_weight: float = 1.0, grad_clip: float = 0.0, seed: int = 0):
    torch.manual_seed(seed)
    model = TFT(CFG)
    batch = random_batch(CFG, 5, seed=1)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    seen: dict[str, object] = {}

    def before(step: int) -> None:
        seen["step"] = step
        seen["grads"] = {n: p.grad.clone() for n, p in model.named_parameters()}

    loss, norm, messages = train_step(
        model,
        batch,
        opt,
        torch.amp.GradScaler("cpu", enabled=False),
        MicroBatching(5, micro),
        quantiles=torch.tensor(CFG.quantiles),
        precision="fp32",
        grad_clip=grad_clip,
        step=7,
        before_optimizer_step=before,
        **({} if grad_weight == 1.0 else {"grad_weight": grad_weight}),  # 1: the default
    )
    assert messages == []
    assert all(p.grad is None for p in model.parameters())  # nothing held between steps
    return loss, norm, seen


def _close(got: torch.Tensor, want: torch.Tensor) -> bool:
    """Equal up to float32 summation order: within 1e-4 of the tensor's norm."""
    return float((got - want).norm()) <= 1e-4 * float(want.norm()) + 1e-8


def _norm(grads: dict[str, torch.Tensor]) -> float:
    return float(torch.linalg.vector_norm(torch.stack([g.norm() for g in grads.values()])))


@pytest.mark.parametrize("micro", [5, 2, 3])
def test_uneven_micro_batches_give_the_whole_batchs_loss_and_gradients(micro: int) -> None:
    want_loss, want = _full()
    loss, norm, seen = _step(micro)
    assert loss == pytest.approx(want_loss, rel=1e-5)
    assert seen["step"] == 7
    for name, g in seen["grads"].items():  # type: ignore[union-attr]
        assert _close(g, want[name]), name
    assert norm == pytest.approx(_norm(want), rel=1e-4)


def test_grad_weight_scales_the_gradients_not_the_loss() -> None:
    want_loss, want = _full()
    loss, norm, seen = _step(2, grad_weight=2.0)
    assert loss == pytest.approx(want_loss, rel=1e-5)
    for name, g in seen["grads"].items():  # type: ignore[union-attr]
        assert _close(g, 2.0 * want[name]), name
    assert norm == pytest.approx(2.0 * _norm(want), rel=1e-4)


def test_clipping_only_when_asked_and_the_norm_reported_before_it() -> None:
    _, want = _full()
    full = _norm(want)
    assert full / 10 < 1.0  # the clip below is under 1 (a clip, not only a large one)
    _, norm, seen = _step(2, grad_clip=full / 10)
    assert norm == pytest.approx(full, rel=1e-4)  # before clipping
    assert _norm(seen["grads"]) == pytest.approx(full / 10, rel=1e-3)  # type: ignore[arg-type]
    _, norm, seen = _step(2, grad_clip=0.0)  # 0: no clipping
    assert norm == pytest.approx(full, rel=1e-4)
    assert _norm(seen["grads"]) == pytest.approx(full, rel=1e-4)  # type: ignore[arg-type]
