"""Who may write a run directory: one process at a time, through an exclusive lock.

``foxhunt train`` (fresh or ``--resume``), ``--overwrite``, and the evaluation ``foxhunt
evaluate`` records in a run directory all write into it; two of them at once would mix two runs'
metrics, weights and reports. Each writer holds an exclusive ``fcntl.flock`` on ``RUN/.lock``
while it writes. The lock belongs to the open file, so the OS drops it when the process ends in
any way (``kill -9`` included): there is no stale lock to clean up. The file also records the
holder (pid, command, start time, host) so the second writer can say whom it is waiting for.

Readers (evaluate's scoring, predict, the streaming forecaster) take no lock: every file a
writer changes is replaced atomically (:mod:`foxhunt.runtime`), so a reader sees a whole old or
a whole new file.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import fcntl
import json
import logging
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from foxhunt.errors import ModelDirError

log = logging.getLogger(__name__)

LOCK_NAME = ".lock"
"""The lock file inside a run directory."""


def lock_path(root: Path) -> Path:
    """``RUN/.lock``."""
    return Path(root) / LOCK_NAME


@contextlib.contextmanager
def run_lock(root: Path, command: str) -> Iterator[None]:
    """Hold the run directory ``root`` exclusively for the block (``root`` must exist).

    Args:
        root: The run directory.
        command: What the holder is doing, shown to a second writer (e.g. ``foxhunt train
            --out runs/demo``).

    Raises:
        ModelDirError: Another process holds the lock; the message names its pid and command.
    """
    fd = os.open(lock_path(root), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not _try_lock(fd, root):
            raise ModelDirError(
                f"{root}: in use by {holder(root)}; wait for it to finish or choose another "
                "directory"
            )
        _write_holder(fd, command)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)  # free again: a later reader finds no holder named
    finally:
        os.close(fd)  # closing the file releases the lock (so does the process dying)


def check_unlocked(root: Path, what: str) -> None:
    """Raise if some process holds ``root``'s lock now (a probe: nothing is kept locked).

    Args:
        root: The run directory (nothing happens when it has no lock file).
        what: The command that wants to write, for the message.

    Raises:
        ModelDirError: The directory is being written; the message names the holder.
    """
    path = lock_path(root)
    if not path.is_file():
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        if not _try_lock(fd, root):
            raise ModelDirError(f"{root}: in use by {holder(root)}; {what}")
    finally:
        os.close(fd)  # releases the probe's lock (no unlock call: it fails where flock does)


def holder(root: Path) -> str:
    """Who holds ``root``'s lock, as recorded in the lock file: ``pid N (command)``."""
    for _ in range(20):  # the holder writes its record just after taking the lock
        rec = _read_holder(lock_path(root))
        if rec:
            host = rec.get("host")
            where = f" on {host}" if host and host != socket.gethostname() else ""
            return f"pid {rec.get('pid')}{where} ({rec.get('command')}, since {rec.get('since')})"
        time.sleep(0.05)
    return "another process"


def _try_lock(fd: int, root: Path) -> bool:
    """Take the exclusive lock without waiting; False if another process has it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as e:  # a file system without flock (some network mounts)
        if e.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
            raise
        log.warning("%s: cannot lock (%s); concurrent writers will not be detected", root, e)
    return True


def _write_holder(fd: int, command: str) -> None:
    record = {
        "pid": os.getpid(),
        "command": command,
        "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
    }
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)


def _read_holder(path: Path) -> dict[str, Any] | None:
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) and rec.get("pid") else None
