from __future__ import annotations

from pathlib import Path

import pytest
import torch

from foxhunt.config import demo
from foxhunt.errors import InputError
from foxhunt.memory.log import MemoryLog
from foxhunt.memory.report import breakdown_table_markdown, plot_memory_timeline
from foxhunt.runtime import read_jsonl


def test_plot_memory_timeline_writes_png(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    log = MemoryLog(path, torch.device("cpu"))
    log.snapshot("run_start")
    for epoch in range(3):
        log.snapshot("epoch_start", epoch=epoch)
        log.snapshot("train_step", epoch=epoch, step=epoch)
        log.snapshot("epoch_end", epoch=epoch)
    out = tmp_path / "memory.png"
    plot_memory_timeline(path, out)
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    assert not (tmp_path / "memory.png.tmp").exists()


def test_bad_memory_log_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text('{"point": "run_start"}\nnot json\n{"point": "run_end"}\n')
    with pytest.raises(InputError, match="line 2 is not JSON"):
        read_jsonl(path)
    with pytest.raises(InputError, match="cannot read"):
        read_jsonl(tmp_path / "missing.jsonl", missing_ok=False)
    path.write_text('{"point": "run_start"}\n{"point": "ep')  # torn by a kill: skipped
    assert read_jsonl(path) == [{"point": "run_start"}]
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(InputError, match="empty"):
        plot_memory_timeline(tmp_path / "empty.jsonl", tmp_path / "x.png")


def test_breakdown_table_markdown() -> None:
    md = breakdown_table_markdown(demo().replace(train={"precision": "fp32"}))
    assert md.startswith("Estimated memory per training step (micro-batch 64, fp32")
    assert "recompute off" in md.splitlines()[0]  # the default since issue 14
    assert "| parameters |" in md and "| saved.lstm_encoder |" in md and "| training_peak |" in md
    assert md.count("\n|") >= 20
