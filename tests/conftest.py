"""Fixtures shared across test folders, and what keeps ``pytest -n N`` (pytest-xdist, what
``make test`` runs) equal to a serial run: one torch thread per worker, module fixtures built
once, the demo run trained once per session."""

from __future__ import annotations

import atexit
import functools
import gc
import os
import re
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

# An xdist worker runs beside N-1 others on N cores: one thread each (inherited by the CLI
# processes it starts) instead of N threads per worker fighting for the cores. Set before the
# first import of torch and of polars, which read them once. A value the caller set is kept.
# polars' pool wakes its threads for every small frame and they spin between jobs (perf: 19 %
# of a data-reading test file's CPU samples went to its one worker thread's sched_yield);
# one thread per worker cut `make test-fast` from 69.9-71.4 s to 66.8-67.8 s (session 48).
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("POLARS_MAX_THREADS", "1")

import pytest
from filelock import FileLock

if TYPE_CHECKING:  # imported where used: the demo run needs torch, which pytest's controller
    # process (under xdist it runs no test) need not import (docs/testing.md, session 61)
    from demo_run import DemoRun

DEMO_RUN_CACHE = "FOXHUNT_TEST_DEMO_RUN_CACHE"
"""Env var: a directory where the demo run is trained once and copied from by later sessions.

Only `make mutate` sets it (mutation/mutate.py): each mutant is a fresh pytest session, and
retraining the run per mutant would dominate the run time. Unset, every session trains its own.
"""


def _cached_demo_run(cache: Path, root: Path) -> DemoRun:
    """Train into ``cache`` unless a session (or an xdist worker) did; copy it to ``root``.
    The lock makes a second worker wait for the first one's training instead of repeating it."""
    from demo_run import DemoRun, make_demo_run

    built, done = cache / "demo", cache / "demo.done"
    cache.mkdir(parents=True, exist_ok=True)
    with FileLock(cache / "demo.lock"):
        if not done.is_file():  # trained in place (its run.json names these paths, which stay)
            shutil.rmtree(built, ignore_errors=True)  # a session that died while training
            built.mkdir()
            make_demo_run(built)
            done.touch()
    shutil.copytree(built, root, dirs_exist_ok=True)
    return DemoRun(root, root / "ES_train.parquet", root / "run")


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """A tiny trained demo-style run directory (see demo_run.py), built once per session: under
    xdist, once for all workers (in the session's shared temporary directory)."""
    from demo_run import make_demo_run

    root = tmp_path_factory.mktemp("inference")
    cache = os.environ.get(DEMO_RUN_CACHE)
    if cache:
        return _cached_demo_run(Path(cache), root)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return _cached_demo_run(tmp_path_factory.getbasetemp().parent / "demo-run-cache", root)
    return make_demo_run(root)


@pytest.fixture(scope="session", autouse=True)
def _prepare_children_from_a_forkserver() -> None:
    """Runs trained in a test process prepare their data in children forked from one server
    that imported the preparation modules once (``foxhunt.train.prepare.START_METHOD``), not in
    a fresh interpreter each: about 5 s less per training after the first (docs/testing.md).
    CLI processes a test starts keep ``spawn``, what ``foxhunt train`` uses; both are tested
    (tests/train/test_prepare.py)."""
    import foxhunt.train.prepare

    foxhunt.train.prepare.START_METHOD = "forkserver"


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything alive once the tests are collected (torch, polars, every test module) is moved
    to the collector's permanent generation, so the full collections the tests trigger walk only
    what the tests made: 4-9 % less CPU over tests/data/read and tests/infer in four alternated
    pairs of serial runs (docs/testing.md, session 61). ``gc.get_objects`` no longer lists the
    frozen objects; tests that look for tensors look for their own."""
    gc.collect()
    gc.freeze()


def pytest_unconfigure(config: pytest.Config) -> None:
    """An xdist worker whose tests are done and reported ends at once when its interpreter
    exits, skipping the second or so torch's and the heap's teardown take while the controller
    waits for the worker to end (its atexit handlers run last-registered first, so this one runs
    before the rest). Serial runs and the controller end normally, and so does a pytest process
    a test starts, which inherits ``PYTEST_XDIST_WORKER`` but is no worker: its exit status
    counts."""
    if hasattr(config, "workerinput"):
        atexit.register(_end_worker_now)


def _end_worker_now() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@functools.cache
def _has_wide_fixture(test_file: Path) -> bool:
    """Whether a test file defines a module-, class- or package-scoped fixture (no conftest
    here defines one)."""
    return bool(_WIDE_SCOPE.search(test_file.read_text())) if test_file.is_file() else False


_WIDE_SCOPE = re.compile(r"""scope\s*=\s*["'](module|class|package)["']""")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Under xdist, a test file that defines a module-, class- or package-scoped fixture (a
    trained run, a CLI smoke run, an export) runs whole on one worker, so the fixture is built
    once as in a serial run; every other test is scheduled on its own, the whole files first
    (largest first). (xdist's own ``--dist loadgroup`` marks do not group under pytest 9.2,
    whose node ids no longer take xdist's rewrite.)"""
    from xdist.scheduler import LoadScopeScheduling

    root = config.rootpath

    class FileFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if _has_wide_fixture(root / path) else nodeid

    return FileFixtureScheduling(config, log)


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
