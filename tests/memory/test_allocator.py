from __future__ import annotations

import sys

import pytest

from foxhunt.memory.allocator import tune_cpu_allocator


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_tune_cpu_allocator_applies_on_glibc() -> None:
    assert tune_cpu_allocator() is True


def test_apply_cpu_allocator_tunes_only_a_lean_cpu_run(monkeypatch: pytest.MonkeyPatch) -> None:
    import foxhunt.memory.allocator as allocator
    from foxhunt.config import TrainConfig

    calls: list[int] = []
    monkeypatch.setattr(allocator, "tune_cpu_allocator", lambda: calls.append(1) or True)
    assert allocator.apply_cpu_allocator(TrainConfig()) is False  # default: glibc as it is
    assert allocator.apply_cpu_allocator(TrainConfig(cpu_allocator="lean", device="cuda")) is False
    assert calls == []
    assert allocator.apply_cpu_allocator(TrainConfig(cpu_allocator="lean")) is True
    assert calls == [1]


def test_the_training_library_leaves_the_allocator_alone() -> None:
    """Allocator tuning is a process-wide side effect: only entry points apply it (issue 15)."""
    import foxhunt.train.run as run

    assert not hasattr(run, "tune_cpu_allocator") and not hasattr(run, "apply_cpu_allocator")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_release_free_heap_returns_freed_small_blocks() -> None:
    """Blocks below glibc's mmap threshold stay resident after free; trimming returns them."""
    import ctypes

    from foxhunt.memory.allocator import release_free_heap
    from foxhunt.memory.counters import rss_bytes

    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = [libc.malloc(64 * 1024) for _ in range(1600)]  # 100 MiB of 64 KiB heap blocks
    for b in blocks:
        ctypes.memset(b, 1, 64 * 1024)
    for b in blocks[:-1]:  # the last one pins the top of the heap: only trimming inside helps
        libc.free(b)
    before = rss_bytes()
    assert release_free_heap() is True
    assert before - rss_bytes() > 50 * 2**20
    libc.free(blocks[-1])
