"""Fixtures for the training tests."""

from __future__ import annotations

import pytest

from foxhunt.artifacts.rundir import RunDir


@pytest.fixture
def run_dir(tmp_path) -> RunDir:
    """An empty run directory (with ``checkpoints/``)."""
    run = RunDir(tmp_path / "run")
    run.create()
    return run
