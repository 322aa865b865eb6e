"""The loop on CUDA: fp16 + GradScaler, bf16, and a real allocator out-of-memory error."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from foxhunt.memory.log import MemoryLog
from foxhunt.model.batch import TFTBatch, TFTOutput
from foxhunt.model.tft import TFT
from foxhunt.train.loop import fit

from .train_fakes import FakeWindows, tiny_config

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_mixed_precision_on_cuda(run_dir, precision: str) -> None:
    cfg = tiny_config(epochs=2, precision=precision, device="cuda")
    torch.manual_seed(0)
    model = TFT(cfg.model)
    mem = MemoryLog(run_dir.memory, torch.device("cuda"))
    result = fit(
        model,
        FakeWindows(64, cfg.model, 1),
        FakeWindows(24, cfg.model, 2),
        cfg,
        run_dir,
        sidecar={},
        memory=mem,
    )
    assert result.state.epoch == 2 and result.final_weights is not None
    assert all(p.grad is None for p in model.parameters())
    assert any("cuda_allocated_bytes" in r for r in mem.records())


class GreedyOnCuda(nn.Module):
    """Asks the CUDA allocator for a petabyte whenever a micro-batch has more than 8 samples."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, batch: TFTBatch) -> TFTOutput:
        if self.training and batch.size > 8:
            torch.empty(10**15, dtype=torch.uint8, device="cuda")
        return self.inner(batch)


def test_real_cuda_oom_backs_off(run_dir) -> None:
    cfg = tiny_config(epochs=1, batch_size=32, device="cuda")
    torch.manual_seed(0)
    model = GreedyOnCuda(TFT(cfg.model))
    mem = MemoryLog(run_dir.memory, torch.device("cuda"))
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
