"""The data commands (demo bars, inspect, features) never import torch: each is a separate
process in ``make demo``, and importing torch costs seconds and ~200 MB."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

RUN = (
    "import sys, runpy; sys.argv = ['foxhunt', *sys.argv[1:]]\n"
    "try:\n    runpy.run_module('foxhunt', run_name='__main__')\n"
    "except SystemExit as e:\n    assert not e.code, e.code\n"
    "assert 'torch' not in sys.modules, 'torch was imported'\n"
)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RUN, *args], capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("command", ["inspect", "features"])
def test_data_commands_do_not_import_torch(tmp_path: Path, command: str) -> None:
    bars = tmp_path / "ES_FUT_demo.parquet"
    made = _run("data", "demo", "--bars", "400", "--seed", "0", "--out", str(bars))
    assert made.returncode == 0, made.stderr
    if command == "inspect":
        r = _run("data", "inspect", str(bars))
    else:
        r = _run("features", "--bars", str(bars), "--out", str(tmp_path / "f.parquet"))
    assert r.returncode == 0, r.stderr
