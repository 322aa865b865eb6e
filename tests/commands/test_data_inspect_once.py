"""``data inspect`` says each guess once: in its report, not also as the file is read."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from foxhunt.cli import main


def test_each_guess_is_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "ES.csv"
    rows = "".join(f"2024-01-02 14:{m}:00,4700.25,4701,4699.5,4700,{m}\n" for m in range(30, 36))
    path.write_text("timestamp,open,high,low,close,volume\n" + rows)
    with caplog.at_level(logging.INFO):
        assert main(["data", "inspect", str(path)]) == 0
    said = capsys.readouterr()
    logged = [r.getMessage() for r in caplog.records]
    assert "guess: symbol ES from the file name; --symbol to change" in said.out.splitlines()
    assert not [m for m in logged if m.startswith("guess: ")]
    assert (said.out + said.err).count("symbol ES from the file name") == 1
    logging.getLogger("foxhunt.data.read.bars").info("guess: %s", "after the command")
    assert caplog.records[-1].getMessage() == "guess: after the command"  # the filter is gone
