"""The loop with mixed precision and a real out-of-memory back-off, on CUDA and on the CPU.

The CUDA cases (``-m gpu``, skipped without a device) are the point; each also runs its
CPU-meaningful part on the CPU so that part never goes untested: fp16 autocast with an enabled
GradScaler (the loop builds ``GradScaler(device.type)``) trains to finite weights, and the OOM back-off halves the micro-batch on an out-of-memory error raised inside the forward.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from foxhunt.memory.log import MemoryLog
from foxhunt.model.batch import TFTBatch, TFTOutput
from foxhunt.model.tft import TFT
from foxhunt.train.loop import fit

from .train_fakes import FakeWindows, tiny_config

CUDA = pytest.param(
    "cuda",
    marks=[
        pytest.mark.gpu,
        pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
    ],
)


def _cuda(precision: str):
    return pytest.param(precision, "cuda", marks=CUDA.marks, id=f"{precision}-cuda")


# bf16 on the CPU: tests/train/test_loop.py::test_bf16_autocast_and_activation_checkpointing_on_cpu
@pytest.mark.parametrize(("precision", "device"), [("fp16", "cpu"), _cuda("fp16"), _cuda("bf16")])
def test_mixed_precision(run_dir, precision: str, device: str) -> None:
    epochs, samples = (2, 64) if device == "cuda" else (1, 16)  # fp16 on the CPU is slow
    cfg = tiny_config(epochs=epochs, precision=precision, device=device)
    torch.manual_seed(0)
    model = TFT(cfg.model)
    mem = MemoryLog(run_dir.memory, torch.device(device))
    result = fit(
        model,
        FakeWindows(samples, cfg.model, 1),
        FakeWindows(8, cfg.model, 2),
        cfg,
        run_dir,
        sidecar={},
        memory=mem,
    )
    assert result.state.epoch == epochs and result.final_weights is not None
    assert all(torch.isfinite(p).all() for p in model.parameters())
    assert all(p.grad is None for p in model.parameters())
    assert any("cuda_allocated_bytes" in r for r in mem.records()) == (device == "cuda")


class Greedy(nn.Module):
    """Runs out of memory whenever a training micro-batch has more than 8 samples: on CUDA by
    asking the allocator for a petabyte, on the CPU by raising torch's OutOfMemoryError (the
    CPU allocator's own failure is a plain RuntimeError that the loop does not back off on)."""

    def __init__(self, inner: nn.Module, device: str) -> None:
        super().__init__()
        self.inner = inner
        self.device = device

    def forward(self, batch: TFTBatch) -> TFTOutput:
        if self.training and batch.size > 8:
            if self.device == "cuda":
                torch.empty(10**15, dtype=torch.uint8, device="cuda")
            raise torch.OutOfMemoryError("out of memory (stand-in for an allocator failure)")
        return self.inner(batch)


@pytest.mark.parametrize("device", ["cpu", CUDA])
def test_out_of_memory_backs_off(run_dir, device: str) -> None:
    cfg = tiny_config(epochs=1, batch_size=32, device=device)
    torch.manual_seed(0)
    model = Greedy(TFT(cfg.model), device)
    mem = MemoryLog(run_dir.memory, torch.device(device))
    result = fit(
        model,
        FakeWindows(64, cfg.model, 1),
        FakeWindows(24, cfg.model, 2),
        cfg,
        run_dir,
        sidecar={},
        memory=mem,
    )
    assert result.state.micro_batch == 8 and len(result.backoffs) == 2
    assert result.state.samples_seen == 64 and result.state.step == 2
    assert any(r["point"] == "oom_retry" for r in mem.records())
