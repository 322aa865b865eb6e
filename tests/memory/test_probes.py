from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from foxhunt.memory.probes import (
    OTHER,
    MemoryLog,
    live_tensor_stats,
    peak_rss_bytes,
    rss_bytes,
    saved_activation_bytes,
    saved_activations_by_block,
    state_bytes,
)

F32 = 4


class TwoLayer(nn.Module):
    """a: Linear(4, 8), then tanh outside any block, b: Linear(8, 1), loss outside."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 8)
        self.b = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.tanh(self.a(x))).pow(2).mean()


def test_saved_activation_bytes_counts_each_storage_once() -> None:
    torch.manual_seed(0)
    x = torch.randn(5, 4)

    def fn() -> torch.Tensor:
        y = x * torch.ones(4, requires_grad=True)  # mul saves x (grad of ones) -> 5*4 floats
        z = y.sin() + y.cos()  # sin and cos both save y: one storage, counted once
        return z.sum()

    assert saved_activation_bytes(fn) == (5 * 4 + 5 * 4) * F32
    assert saved_activation_bytes(fn, exclude=[x]) == 5 * 4 * F32


def test_saved_activations_by_block_attributes_to_first_saver() -> None:
    torch.manual_seed(0)
    model, x = TwoLayer(), torch.randn(5, 4)
    got = saved_activations_by_block(model, lambda: model(x))
    # a: addmm saves x (for a.weight's grad); x needs no grad so a.weight is not saved.
    # tanh (outside blocks) saves its output h (5, 8), which b's addmm saves again (same storage);
    # pow saves b's output (5, 1). Parameters (b.weight, saved for h's grad) are never counted.
    assert got == {"a": 5 * 4 * F32, "b": 0, OTHER: (5 * 8 + 5 * 1) * F32}
    assert saved_activations_by_block(model, lambda: model(x), exclude=[x])["a"] == 0
    # the hooks are removed afterwards
    assert not model.a._forward_pre_hooks and not model.a._forward_hooks


def test_saved_activations_under_checkpoint_count_only_region_inputs() -> None:
    torch.manual_seed(0)
    lin = nn.Linear(16, 16)
    x = torch.randn(8, 16, requires_grad=True)

    def plain() -> torch.Tensor:
        h = x + 1.0  # saves nothing
        return torch.tanh(lin(torch.relu(lin(h)))).sum()

    def ckpt() -> torch.Tensor:
        h = x + 1.0
        return checkpoint(
            lambda t: torch.tanh(lin(torch.relu(lin(t)))), h, use_reentrant=False
        ).sum()

    # plain: h, relu out, (lin out for relu's grad is relu's result) ... several (8, 16) tensors
    assert saved_activation_bytes(plain, exclude=[*lin.parameters()]) > 8 * 16 * F32
    # checkpoint keeps only its input h
    assert saved_activation_bytes(ckpt, exclude=[*lin.parameters()]) == 8 * 16 * F32


def test_state_bytes_adamw() -> None:
    model = TwoLayer()
    n_params = 4 * 8 + 8 + 8 * 1 + 1
    opt = torch.optim.AdamW(model.parameters())
    before = state_bytes(model, opt)
    assert before == {
        "parameter_bytes": n_params * F32,
        "buffer_bytes": 0,
        "gradient_bytes": 0,
        "optimizer_bytes": 0,
    }
    model(torch.randn(3, 4)).backward()
    opt.step()
    after = state_bytes(model, opt)
    assert after["gradient_bytes"] == n_params * F32
    # exp_avg + exp_avg_sq per parameter, plus one fp32 step scalar per parameter tensor (4)
    assert after["optimizer_bytes"] == 2 * n_params * F32 + 4 * F32
    opt.zero_grad(set_to_none=True)
    assert state_bytes(model, opt)["gradient_bytes"] == 0


def test_process_counters_are_plausible() -> None:
    rss, peak = rss_bytes(), peak_rss_bytes()
    assert 10 * 2**20 < rss <= peak < 2**40
    keep = torch.ones(64 * 2**20 // F32)  # touch 64 MiB
    keep.add_(1)
    assert rss_bytes() >= rss + 60 * 2**20
    assert peak_rss_bytes() >= rss + 60 * 2**20
    del keep


def test_live_tensor_stats_sees_new_tensors() -> None:
    before = live_tensor_stats()
    keep = [torch.zeros(1000) for _ in range(3)]
    after = live_tensor_stats()
    assert after["live_tensor_count"] >= before["live_tensor_count"] + 3
    assert after["live_tensor_bytes"] >= before["live_tensor_bytes"] + 3 * 1000 * F32
    del keep


def test_snapshot_writes_jsonl_line_per_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    log = MemoryLog(path, torch.device("cpu"))
    r = log.snapshot("run_start")
    log.snapshot("epoch_start", epoch=0, step=0, parameter_bytes=123)
    lines = [json.loads(s) for s in path.read_text().splitlines()]
    assert [x["point"] for x in lines] == ["run_start", "epoch_start"]
    assert lines[1]["epoch"] == 0 and lines[1]["step"] == 0 and lines[1]["parameter_bytes"] == 123
    assert r["rss_bytes"] > 0 and r["peak_rss_bytes"] >= r["rss_bytes"]
    assert r["errors"] == {} and r["device"] == "cpu"
    assert log.records() == lines
    with pytest.raises(ValueError, match="unknown snapshot point"):
        log.snapshot("somewhere")


def test_in_memory_log_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    log = MemoryLog(None, torch.device("cpu"))
    log.snapshot("run_start")
    assert len(log.records()) == 1 and list(tmp_path.iterdir()) == []


def _broken() -> dict[str, int]:
    raise RuntimeError("counter unavailable")


def test_failing_source_is_logged_and_recorded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "memory.jsonl"
    log = MemoryLog(
        path, torch.device("cpu"), sources={"cpu": lambda: {"rss_bytes": 1}, "cuda": _broken}
    )
    with caplog.at_level(logging.ERROR, logger="foxhunt.memory.probes"):
        r = log.snapshot("validation_start", epoch=1)
    assert r["rss_bytes"] == 1  # the other source still answered
    assert r["errors"] == {"cuda": "RuntimeError: counter unavailable"}
    assert json.loads(path.read_text())["errors"] == r["errors"]
    [rec] = [x for x in caplog.records if x.levelno == logging.ERROR]
    assert "validation_start" in rec.getMessage() and "cuda" in rec.getMessage()
    assert "counter unavailable" in rec.getMessage()


def test_failing_source_raises_when_strict() -> None:
    log = MemoryLog(None, torch.device("cpu"), sources={"cuda": _broken}, strict=True)
    with pytest.raises(
        RuntimeError, match="source 'cuda' failed: RuntimeError: counter unavailable"
    ):
        log.snapshot("epoch_end", epoch=0)


def test_cuda_device_adds_cuda_source_even_without_cuda(caplog: pytest.LogCaptureFixture) -> None:
    # Asking for CUDA counters on a machine without CUDA must fail loudly, not vanish.
    log = MemoryLog(None, torch.device("cuda", 0))
    with caplog.at_level(logging.ERROR):
        r = log.snapshot("run_start")
    if torch.cuda.is_available():
        assert r["errors"] == {} and r["cuda_total_bytes"] > 0
    else:
        assert "cuda" in r["errors"] and "rss_bytes" in r
        assert any("cuda" in x.getMessage() for x in caplog.records)


def _fake_log(
    values: list[tuple[str, int | None, int]], threshold: int = 100, warmup: int = 0
) -> MemoryLog:
    it = iter(values)
    current: dict[str, int] = {}

    def source() -> dict[str, int]:
        return {"rss_bytes": current["rss"], "peak_rss_bytes": 10**9}

    log = MemoryLog(
        None,
        torch.device("cpu"),
        leak_threshold_bytes=threshold,
        sources={"cpu": source},
        warmup_epochs=warmup,
    )
    for point, epoch, rss in it:
        current["rss"] = rss
        log.snapshot(point, epoch=epoch)
    return log


def test_check_leaks_flat_run_reports_nothing() -> None:
    steps = [
        (p, e, 1000 + (e or 0) * 10)  # 10 bytes/epoch growth, under the threshold of 100
        for e in (0, 1)
        for p in ("epoch_start", "train_step", "train_step", "epoch_end")
    ]
    assert _fake_log([("run_start", None, 0), *steps]).check_leaks() == []


def test_check_leaks_reports_growth_with_numbers(caplog: pytest.LogCaptureFixture) -> None:
    values = [
        ("epoch_start", 0, 1000),
        ("train_step", 0, 1000),
        ("train_step", 0, 5000),  # 2nd train_step of epoch 0
        ("epoch_start", 1, 1000),
        ("train_step", 1, 1000),
        ("train_step", 1, 5500),  # +500 vs the 2nd train_step of epoch 0
    ]
    with caplog.at_level(logging.WARNING):
        found = _fake_log(values).check_leaks()
    assert found == [
        "possible leak: rss_bytes at train_step#1 grew by 500 bytes from epoch 0 (5,000) "
        "to epoch 1 (5,500); threshold 100"
    ]
    assert any(
        "grew by 500" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING
    )


def test_check_leaks_catches_slow_leak_first_to_last() -> None:
    values = [("epoch_end", e, 1000 + 60 * e) for e in range(4)]  # 60/epoch < 100, 180 total
    found = _fake_log(values).check_leaks()
    assert len(found) == 1 and "from epoch 0 (1,000) to epoch 3 (1,180)" in found[0]


def test_check_leaks_leaves_out_warmup_epochs() -> None:
    values = [("epoch_end", 0, 1000), ("epoch_end", 1, 5000), ("epoch_end", 2, 5010)]
    assert len(_fake_log(values).check_leaks()) == 2  # 0 -> 1 and first-to-last
    assert _fake_log(values, warmup=1).check_leaks() == []
