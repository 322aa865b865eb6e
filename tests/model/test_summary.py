from __future__ import annotations

import json

import pytest
import torch

from foxhunt.commands.model import summary as summary_command
from foxhunt.config import TFTConfig, demo
from foxhunt.model import BLOCK_NAMES, TFT, parameter_table


def test_parameter_table_covers_every_block(tiny_config: TFTConfig) -> None:
    model = TFT(tiny_config)
    rows = parameter_table(model)
    assert [r[0] for r in rows] == list(BLOCK_NAMES)
    assert sum(r[1] for r in rows) == sum(p.numel() for p in model.parameters())
    assert all(b == 4 * n for _, n, b in rows)  # fp32
    rows16 = parameter_table(model.to(torch.bfloat16))
    assert all(b == 2 * n for _, n, b in rows16)


def test_summary_json(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = demo().model
    summary_command(cfg, as_json=True)
    doc = json.loads(capsys.readouterr().out)
    expected = sum(p.numel() for p in TFT(cfg).parameters())
    assert doc["total_parameters"] == expected
    assert doc["total_bytes"] == 4 * expected
    assert [b["name"] for b in doc["blocks"]] == list(BLOCK_NAMES)
    assert doc["config"]["hidden"] == cfg.hidden


def test_summary_table(capsys: pytest.CaptureFixture[str]) -> None:
    summary_command(TFTConfig(), as_json=False)
    out = capsys.readouterr().out
    assert "historical_vsn" in out and "total" in out and "5,810,037" in out
