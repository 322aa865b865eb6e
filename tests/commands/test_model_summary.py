"""``foxhunt model summary``: the table and the JSON, in process, against committed copies
(``tests/commands/output/``; ``FOXHUNT_WRITE_HELP=1`` rewrites them, as the help copies)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from foxhunt.cli import main
from foxhunt.config import demo
from foxhunt.model.summary import parameter_table

COPIES = Path(__file__).with_name("output")


def _run(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> str:
    monkeypatch.setenv("COLUMNS", "100")
    assert main(argv) == 0
    return capsys.readouterr().out


def _against_copy(text: str, name: str) -> None:
    copy = COPIES / name
    if os.environ.get("FOXHUNT_WRITE_HELP"):
        copy.write_text(text)
    assert copy.is_file(), f"{copy} missing: FOXHUNT_WRITE_HELP=1 writes it"
    assert text == copy.read_text(), f"{name} changed: FOXHUNT_WRITE_HELP=1 rewrites {copy}"


def test_the_json_counts_every_parameter_of_the_preset(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _run(["model", "summary", "--preset", "demo", "--json"], capsys, monkeypatch)
    doc = json.loads(out)
    import torch

    from foxhunt.model.tft import TFT

    with torch.device("meta"):
        rows = parameter_table(TFT(demo().model))
    assert doc["config"] == json.loads(json.dumps(demo().model.__dict__))
    assert doc["dtype"] == "float32"
    assert doc["blocks"] == [{"name": n, "parameters": p, "bytes": b} for n, p, b in rows]
    assert doc["total_parameters"] == sum(r[1] for r in rows)
    assert doc["total_bytes"] == 4 * doc["total_parameters"]
    _against_copy(out, "model-summary-demo.json")


def test_the_table_as_a_user_reads_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _run(["model", "summary", "--preset", "demo", "--hidden", "16"], capsys, monkeypatch)
    assert "TFT parameters (vsn_mode=" in out and "total" in out
    _against_copy(out, "model-summary-demo-hidden16.txt")
