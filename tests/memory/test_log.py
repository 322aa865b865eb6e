"""The run's memory log: one JSON line per snapshot, failing sources surfaced."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import torch

from foxhunt.memory.log import MemoryLog


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
    with caplog.at_level(logging.ERROR, logger="foxhunt.memory.log"):
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


def test_warmup_epochs_below_one_is_refused() -> None:
    # The leak check's baseline must come after warm-up.
    with pytest.raises(ValueError, match="warmup_epochs"):
        MemoryLog(None, torch.device("cpu"), warmup_epochs=0)


def test_each_record_holds_the_wall_time_and_the_seconds_since_the_log_began(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = iter([1000.0, 1002.12345678])
    monkeypatch.setattr("foxhunt.memory.log.time.time", lambda: next(clock))
    log = MemoryLog(None, torch.device("cpu"), sources={})
    r = log.snapshot("run_start")
    assert r["time"] == 1002.12345678
    assert r["elapsed_s"] == 2.123457  # rounded to the microsecond


def _growth(log: MemoryLog, mib: list[int]) -> list[str]:
    for epoch, size in enumerate(mib, start=1):
        log.snapshot("epoch_end", epoch=epoch, rss_bytes=size * 2**20)
    return log.check_leaks()


def test_the_leak_check_uses_the_logs_own_threshold_and_peak_fraction() -> None:
    """4 MiB of growth after warm-up, once: below the default 32 MiB floor, found with a
    1 MiB floor only when the growth is also above the peak fraction asked for."""
    cpu = torch.device("cpu")
    assert _growth(MemoryLog(None, cpu, sources={}), [100, 104]) == []
    low = MemoryLog(None, cpu, sources={}, leak_threshold_bytes=2**20, leak_peak_fraction=0.01)
    assert len(_growth(low, [100, 104])) == 1
    loose = MemoryLog(None, cpu, sources={}, leak_threshold_bytes=2**20, leak_peak_fraction=0.5)
    assert _growth(loose, [100, 104]) == []
