"""Fixtures shared across test folders."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from demo_run import DemoRun, make_demo_run

DEMO_RUN_CACHE = "FOXHUNT_TEST_DEMO_RUN_CACHE"
"""Env var: a directory where the demo run is trained once and copied from by later sessions.

Only `make mutate` sets it (mutation/mutate.py): each mutant is a fresh pytest session, and
retraining the run per mutant would dominate the run time. Unset, every session trains its own.
"""


def _cached_demo_run(cache: Path, root: Path) -> DemoRun:
    built = cache / "demo"
    if not built.is_dir():
        staging = cache / f"demo.{os.getpid()}.tmp"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        make_demo_run(staging)
        try:
            staging.rename(built)
        except OSError:  # another session finished first
            shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(built, root, dirs_exist_ok=True)
    return DemoRun(root, root / "ES_train.parquet", root / "run")


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """A tiny trained demo-style run directory (see demo_run.py), built once per session."""
    root = tmp_path_factory.mktemp("inference")
    cache = os.environ.get(DEMO_RUN_CACHE)
    if cache:
        return _cached_demo_run(Path(cache), root)
    return make_demo_run(root)


@pytest.fixture(autouse=True)
def _cli_import_baseline(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process ``foxhunt train`` plans a budget with the process's own RSS (before the data,
    ``measured_baseline``, and once it is prepared, ``resident_before_training``); pytest's RSS,
    after many trained models, is not a CLI's. Pin it to
    the constant (a fresh CLI process's low end) so in-process runs plan as the CLI does.
    tests/memory/test_budget.py runs the real command in a fresh process to check the measured
    figure."""
    from foxhunt.memory.process import IMPORT_BASELINE_BYTES

    monkeypatch.setattr("foxhunt.train.run.measured_baseline", lambda: IMPORT_BASELINE_BYTES)
    monkeypatch.setattr(
        "foxhunt.train.resources.plan.resident_before_training",
        lambda data_bytes, *, prepared_here=True: IMPORT_BASELINE_BYTES,
    )
