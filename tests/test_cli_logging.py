"""What the CLI shows: foxhunt's logs (DEBUG with ``-v``), not other libraries' chatter; each
summary once."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from foxhunt.cli import main
from foxhunt.data.sources.demo import write_demo_bars

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.mark.slow
@pytest.mark.subprocess
def test_verbose_shows_foxhunt_debug_but_not_third_party_debug() -> None:
    code = (
        "import logging; from foxhunt.cli import main; "
        "main(['-v', 'model', 'summary', '--preset', 'demo']); "
        "logging.getLogger('matplotlib.font_manager').debug('findfont: FLOOD'); "
        "logging.getLogger('matplotlib.font_manager').warning('a real WARNING'); "
        "logging.getLogger('foxhunt.anything').debug('OURS at debug')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    assert "OURS at debug" in done.stderr and "a real WARNING" in done.stderr
    assert "FLOOD" not in done.stderr


def test_features_says_its_summary_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    bars = tmp_path / "ES.parquet"
    write_demo_bars(bars, n_bars=260, seed=0)
    caplog.set_level(logging.INFO)
    assert main(["features", "--bars", str(bars), "--out", str(tmp_path / "f.parquet")]) == 0
    out = capsys.readouterr().out
    assert out.count("wrote ") == 1 and "rows x (210 observed" in out
    repeated = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert not [m for m in repeated if m.startswith(("features:", "computing"))], repeated
