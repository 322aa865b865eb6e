"""Fixtures shared across test folders."""

from __future__ import annotations

import pytest

from demo_run import DemoRun, make_demo_run


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """A tiny trained demo-style run directory (see demo_run.py), built once per session."""
    return make_demo_run(tmp_path_factory.mktemp("inference"))
