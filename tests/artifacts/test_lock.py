from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from foxhunt.artifacts.lock import LOCK_NAME, check_unlocked, holder, run_lock
from foxhunt.errors import ModelDirError

# Holds the lock of argv[1] until killed; prints "held" once it has it.
HOLD = """
import sys, time
from pathlib import Path
from foxhunt.artifacts.lock import run_lock
with run_lock(Path(sys.argv[1]), "foxhunt train --out " + sys.argv[1]):
    print("held", flush=True)
    time.sleep(600)
"""


def test_second_writer_is_refused_naming_the_holder(tmp_path, monkeypatch) -> None:
    with run_lock(tmp_path, "foxhunt train --out runs/x"):
        rec = json.loads((tmp_path / LOCK_NAME).read_text())
        assert rec["pid"] == os.getpid() and rec["command"] == "foxhunt train --out runs/x"
        # flock is per open file: a second open in this very process is a second writer too
        with pytest.raises(ModelDirError) as e, run_lock(tmp_path, "foxhunt evaluate"):
            pass
        msg = str(e.value)
        assert f"pid {os.getpid()}" in msg and "foxhunt train --out runs/x" in msg
        assert "\n" not in msg
        with pytest.raises(ModelDirError, match=f"pid {os.getpid()}"):
            check_unlocked(tmp_path, "use --out")
    check_unlocked(tmp_path, "use --out")  # released at the end of the block
    waits: list[float] = []  # an empty record is waited for 20 x 0.05 s: counted, not slept
    monkeypatch.setattr("foxhunt.artifacts.lock.time", SimpleNamespace(sleep=waits.append))
    assert (tmp_path / LOCK_NAME).read_text() == "" and holder(tmp_path) == "another process"
    assert waits == [0.05] * 20
    with run_lock(tmp_path, "again"):  # and can be taken again
        pass


def test_released_on_exception(tmp_path) -> None:
    with pytest.raises(RuntimeError), run_lock(tmp_path, "x"):
        raise RuntimeError("boom")
    check_unlocked(tmp_path, "-")


def test_check_unlocked_without_a_lock_file(tmp_path) -> None:
    check_unlocked(tmp_path / "never-locked", "-")  # nothing to check, nothing created
    assert not (tmp_path / "never-locked").exists()


@pytest.mark.subprocess
def test_kill_9_leaves_no_stale_lock(tmp_path) -> None:
    """The OS drops a flock with its process: the lock file stays, the lock does not."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(ModelDirError, match=f"pid {proc.pid} "):
            check_unlocked(tmp_path, "-")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == proc.pid  # stale record
    deadline = time.monotonic() + 10
    while True:
        try:
            with run_lock(tmp_path, "after kill -9"):
                break
        except ModelDirError:
            assert time.monotonic() < deadline
            time.sleep(0.05)
