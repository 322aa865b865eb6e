"""Owning a run directory (train/resolve.py: hold_run): the cleanup of a failed fresh run is
the lock holder's alone."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from foxhunt.artifacts.lock import LOCK_NAME, check_unlocked, run_lock
from foxhunt.errors import ModelDirError
from foxhunt.train import resolve


def test_the_process_refused_the_lock_leaves_the_winners_new_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two trainings started together on a new --out can both find no directory. The one
    refused the lock must not remove the directory and its lock file: the winner is still
    preparing its data there (seen once as a flaky test_two_trainings_on_one_out, whose winner
    then crashed writing into a deleted directory)."""
    root = tmp_path / "run"
    stack = contextlib.ExitStack()

    @contextlib.contextmanager
    def winner_first(where: Path, command: str) -> Iterator[None]:
        # the other process takes the lock just after this one created the directory
        stack.enter_context(run_lock(where, "foxhunt train --out other"))
        with run_lock(where, command):
            yield

    monkeypatch.setattr(resolve, "run_lock", winner_first)
    with stack:
        with (
            pytest.raises(ModelDirError, match="in use by"),
            resolve.hold_run(root, resume=False, overwrite=False, is_main=True),
        ):
            pass
        assert (root / LOCK_NAME).is_file()  # the winner's directory and lock stay
        with pytest.raises(ModelDirError, match="foxhunt train --out other"):
            check_unlocked(root, "still held")


def test_a_fresh_run_that_fails_under_its_lock_leaves_no_directory(tmp_path: Path) -> None:
    root = tmp_path / "run"
    with (
        pytest.raises(RuntimeError, match="bad bars"),
        resolve.hold_run(root, resume=False, overwrite=False, is_main=True),
    ):
        raise RuntimeError("bad bars")
    assert not root.exists()


def test_a_failed_run_in_a_directory_it_did_not_make_keeps_it(tmp_path: Path) -> None:
    root = tmp_path / "run"
    root.mkdir()
    with (
        pytest.raises(RuntimeError),
        resolve.hold_run(root, resume=False, overwrite=False, is_main=True),
    ):
        raise RuntimeError("bad bars")
    assert root.is_dir()
