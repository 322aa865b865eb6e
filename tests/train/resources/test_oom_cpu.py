"""A failed CPU allocation is an out-of-memory error too: torch's CPU allocator raises a plain
RuntimeError ("can't allocate memory"), and the training step backs off on it as on CUDA."""

from __future__ import annotations

import torch
from torch import nn

from foxhunt.model.batch import TFTBatch, TFTOutput
from foxhunt.model.tft import TFT
from foxhunt.train.optimizer.optim import build_optimizer
from foxhunt.train.resources.oom import MicroBatching, is_oom
from foxhunt.train.step import train_step

from ..train_fakes import FakeWindows, tiny_config

HUGE = 2**60  # bytes no machine can give: malloc fails, torch raises


def _cpu_alloc_error() -> RuntimeError:
    try:
        torch.empty(HUGE, dtype=torch.uint8)
    except RuntimeError as e:
        return e
    raise AssertionError("allocating 2**60 bytes succeeded")


def test_a_real_failed_cpu_allocation_is_oom() -> None:
    e = _cpu_alloc_error()
    assert type(e) is RuntimeError and not isinstance(e, torch.OutOfMemoryError)
    assert is_oom(e)
    assert is_oom(RuntimeError("not enough memory: you tried to allocate 8 GB."))  # Windows
    assert not is_oom(RuntimeError("mat1 and mat2 shapes cannot be multiplied"))


class _AllocatesTooMuchAbove(nn.Module):
    """A TFT whose forward asks the CPU allocator for 2**60 bytes above ``limit`` samples."""

    def __init__(self, inner: nn.Module, limit: int) -> None:
        super().__init__()
        self.inner, self.limit = inner, limit
        self.sizes: list[int] = []

    def forward(self, batch: TFTBatch) -> TFTOutput:
        if batch.size > self.limit:
            torch.empty(HUGE, dtype=torch.uint8)
        self.sizes.append(batch.size)
        return self.inner(batch)


def test_train_step_backs_off_on_a_failed_cpu_allocation() -> None:
    cfg = tiny_config(batch_size=8, precision="fp32")
    torch.manual_seed(0)
    model = _AllocatesTooMuchAbove(TFT(cfg.model), limit=2)
    opt = build_optimizer(model, lr=1e-3, weight_decay=0.0)
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    micro = MicroBatching(8, 8)
    batch = FakeWindows(8, cfg.model, 1).batch(list(range(8)))
    train_step(model, batch, opt, scaler, micro, quantiles=torch.tensor(cfg.model.quantiles),
               precision="fp32", grad_clip=1.0, step=0)  # fmt: skip
    assert micro.micro == 2 and micro.backoffs == 2  # 8 -> 4 -> 2
    assert model.sizes == [2, 2, 2, 2]  # the step was redone whole at the size that fits
