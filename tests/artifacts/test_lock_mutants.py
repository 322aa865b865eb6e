"""The lock's record and its reading, pinned where `make mutate lock` found them untested:
what a second writer is told (pid, command, since, host), how long it waits for a record, and
file systems without flock."""

from __future__ import annotations

import datetime as dt
import errno
import json
import logging
import socket
from pathlib import Path

import pytest

from foxhunt.artifacts import lock
from foxhunt.artifacts.lock import LOCK_NAME, holder, run_lock


def _write(root: Path, record: object) -> None:
    (root / LOCK_NAME).write_text(json.dumps(record) + "\n")


def test_the_record_names_pid_command_utc_start_and_host(tmp_path: Path) -> None:
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    with run_lock(tmp_path, "foxhunt train --out x"):
        rec = json.loads((tmp_path / LOCK_NAME).read_text())
        told = holder(tmp_path)
    since = dt.datetime.fromisoformat(rec["since"])
    assert since.utcoffset() == dt.timedelta(0) and before <= since  # aware, in UTC
    assert rec["host"] == socket.gethostname()
    # the same host is not named; the time is the record's
    assert told == f"pid {rec['pid']} (foxhunt train --out x, since {rec['since']})"


def test_a_holder_on_another_host_is_named(tmp_path: Path) -> None:
    _write(tmp_path, {"pid": 7, "command": "c", "since": "s", "host": "elsewhere.example"})
    assert holder(tmp_path) == "pid 7 on elsewhere.example (c, since s)"
    _write(tmp_path, {"pid": 7, "command": "c", "since": "s"})  # an older record: no host
    assert holder(tmp_path) == "pid 7 (c, since s)"


@pytest.mark.parametrize("record", [{"command": "c"}, {"pid": 0}, [1, 2], "text"])
def test_a_record_without_a_pid_is_no_holder_after_one_second_of_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record: object
) -> None:
    sleeps: list[float] = []
    monkeypatch.setattr(lock.time, "sleep", sleeps.append)
    _write(tmp_path, record)
    assert holder(tmp_path) == "another process"
    assert sleeps == [0.05] * 20  # waits up to 1 s for the holder to write its record


def test_a_file_system_without_flock_warns_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def no_flock(fd: int, op: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(lock.fcntl, "flock", no_flock)
    with caplog.at_level(logging.WARNING, logger=lock.__name__), run_lock(tmp_path, "c"):
        pass
    assert f"{tmp_path}: cannot lock" in caplog.text
    assert "concurrent writers will not be detected" in caplog.text


def test_another_flock_error_is_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(fd: int, op: int) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(lock.fcntl, "flock", broken)
    with pytest.raises(OSError, match="I/O error"), run_lock(tmp_path, "c"):
        pass


def test_a_probe_on_a_file_system_without_flock_names_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """check_unlocked goes on with a warning there, as run_lock does (it raised from its
    unlock call before session 19: that call fails where flock does)."""

    def no_flock(fd: int, op: int) -> None:
        raise OSError(errno.EOPNOTSUPP, "Operation not supported")

    _write(tmp_path, {"pid": 7, "command": "c"})
    monkeypatch.setattr(lock.fcntl, "flock", no_flock)
    with caplog.at_level(logging.WARNING, logger=lock.__name__):
        lock.check_unlocked(tmp_path, "use --out")
    assert f"{tmp_path}: cannot lock" in caplog.text
