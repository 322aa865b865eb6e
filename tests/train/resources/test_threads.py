"""The busy-CPU warning: when it speaks, and that a run logs it."""

from __future__ import annotations

import logging

import pytest
import torch

from foxhunt.train.resources import threads
from foxhunt.train.resources.threads import busy_cpu_warning, set_cpu_threads


def test_warns_only_when_the_load_leaves_too_few_idle_cores() -> None:
    assert busy_cpu_warning(2, load=0.9, cores=2) is None  # a quiet machine's load
    assert busy_cpu_warning(2, load=0.4, cores=2) is None
    assert busy_cpu_warning(1, load=12.0, cores=2) is None  # one thread has nothing to contend
    assert busy_cpu_warning(8, load=4.0, cores=16) is None
    message = busy_cpu_warning(2, load=6.0, cores=2)
    assert message is not None
    assert "load 6.0 on 2 cores" in message and "--num-threads 1" in message
    assert busy_cpu_warning(16, load=1.0, cores=16) is None
    assert busy_cpu_warning(16, load=2.5, cores=16) is not None  # over a core already busy
    assert busy_cpu_warning(2, load=1.6, cores=2) is not None


def test_set_cpu_threads_applies_the_count_and_logs_the_warning(monkeypatch, caplog) -> None:  # noqa: ANN001
    before = torch.get_num_threads()
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (6.0, 6.0, 6.0))
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    try:
        with caplog.at_level(logging.WARNING, logger="foxhunt.train.resources.threads"):
            set_cpu_threads(2, torch.device("cpu"))
        assert torch.get_num_threads() == 2
        assert any("CPU is busy" in r.getMessage() for r in caplog.records)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="foxhunt.train.resources.threads"):
            set_cpu_threads(1, torch.device("cpu"))
        assert torch.get_num_threads() == 1
        assert not caplog.records
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("device", ["cuda", "meta"])
def test_no_cpu_warning_off_the_cpu(device: str, monkeypatch, caplog) -> None:  # noqa: ANN001
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (60.0, 60.0, 60.0))
    with caplog.at_level(logging.WARNING, logger="foxhunt.train.resources.threads"):
        set_cpu_threads(None, torch.device(device))
    assert not caplog.records


def test_the_warning_reads_the_one_minute_load(monkeypatch, caplog) -> None:  # noqa: ANN001
    """Busy a minute ago, quiet over 5 and 15 minutes: the warning is about now."""
    before = torch.get_num_threads()
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (6.0, 0.1, 0.1))
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    try:
        with caplog.at_level(logging.WARNING, logger="foxhunt.train.resources.threads"):
            set_cpu_threads(2, torch.device("cpu"))
        assert [r.getMessage() for r in caplog.records if "load 6.0" in r.getMessage()]
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize(("count", "want"), [(None, 1), (0, 1), (3, 3)])
def test_usable_cores_without_an_affinity_mask_is_the_cpu_count_or_one(
    monkeypatch: pytest.MonkeyPatch, count: int | None, want: int
) -> None:
    """macOS and Windows have no ``sched_getaffinity``; ``os.cpu_count()`` may say None."""
    monkeypatch.delattr(threads.os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(threads.os, "cpu_count", lambda: count)
    assert threads.usable_cores() == want
