"""tune_cpu_allocator: the settings take effect (memory goes back to the OS), not only "True".

glibc settings are process-wide, so each check runs in a fresh interpreter that drives
malloc/free through ctypes and reads the effect back: ``mallinfo2().hblkhd`` (bytes held in
individually mapped blocks) and the resident set from /proc/self/statm. Each scenario first
frees a 16 MiB mapped block, which with glibc's defaults raises the dynamic mmap threshold to
16 MiB: the situation the tuning exists for (tensors of a few MB then stay resident).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from foxhunt.memory.allocator import tune_cpu_allocator

SRC = Path(__file__).resolve().parents[2] / "src"
MIB = 1 << 20

LIBC = r"""
import ctypes, ctypes.util, sys
sys.path.insert(0, sys.argv[1])
libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
"""
"""glibc's malloc and free through ctypes, and the resident set: the probes' common start."""

PROBE = (
    LIBC
    + r"""
FIELDS = ("arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost").split()
class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in FIELDS]
libc.mallinfo2.restype = Info

def touched(size):
    block = libc.malloc(size)
    ctypes.memset(block, 1, size)
    return block

if sys.argv[2] == "tuned":
    from foxhunt.memory.allocator import tune_cpu_allocator
    assert tune_cpu_allocator() is True
libc.free(touched(16 << 20))
rss0, mapped0 = rss(), libc.mallinfo2().hblkhd
block = touched(8 << 20)
mapped = libc.mallinfo2().hblkhd - mapped0
libc.free(block)
print(mapped, rss() - rss0)
"""
)


def _probe(mode: str) -> tuple[int, int]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(SRC), mode],
        capture_output=True,
        text=True,
        check=True,
    )
    first, second = done.stdout.split()
    return int(first), int(second)


GLIBC = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="glibc mallopt/mallinfo2 only"
)


@GLIBC
def test_tune_cpu_allocator_applies_on_glibc() -> None:
    assert tune_cpu_allocator() is True


@GLIBC
def test_a_large_block_is_mapped_and_its_memory_returns_on_free() -> None:
    mapped, kept = _probe("tuned")
    assert mapped >= 8 * MIB  # served from its own mapping ...
    assert kept < MIB  # ... so freeing it gives the 8 MiB back
    # glibc's defaults (the bug being fixed): the raised threshold puts it in the heap, kept
    mapped, kept = _probe("default")
    assert mapped == 0 and kept >= 7 * MIB


def test_apply_cpu_allocator_tunes_lean_and_balanced_cpu_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import foxhunt.memory.allocator as allocator
    from foxhunt.config import preset

    calls: list[tuple[int, int | None]] = []

    def tune(mmap_threshold: int = 2**20, trim_threshold: int | None = 2**20) -> bool:
        calls.append((mmap_threshold, trim_threshold))
        return True

    monkeypatch.setattr(allocator, "tune_cpu_allocator", tune)
    cfg = preset("tft-225").replace(train={"batch_size": 32, "precision": "bf16"})
    assert allocator.apply_cpu_allocator(cfg.replace(train={"cpu_allocator": "glibc"})) is False
    lean_cuda = cfg.replace(train={"cpu_allocator": "lean", "device": "cuda"})
    assert allocator.apply_cpu_allocator(lean_cuda) is False
    assert calls == []
    assert allocator.apply_cpu_allocator(cfg.replace(train={"cpu_allocator": "lean"})) is True
    assert calls == [(2**20, 2**20)]
    calls.clear()
    assert cfg.train.cpu_allocator == "balanced"  # the default
    assert allocator.apply_cpu_allocator(cfg) is True
    # 210 variables x 32 x 50 rows x 16 wide x 2 bytes: the historical VSN's per-variable states
    assert calls == [(210 * 32 * 50 * 16 * 2, None)]


def test_balanced_threshold_follows_the_micro_batch_within_its_range(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from foxhunt.config import preset
    from foxhunt.memory.allocator import BALANCED_MMAP_RANGE, balanced_mmap_threshold

    cfg = preset("tft-225").replace(train={"precision": "fp32"})
    at = {b: balanced_mmap_threshold(cfg.replace(train={"batch_size": b})) for b in (1, 16, 512)}
    assert at[16] == 210 * 16 * 50 * 16 * 4
    assert at[1] is None  # 672 kB blocks: below 4 MiB glibc's own threshold is left alone
    assert at[512] == BALANCED_MMAP_RANGE[1]
    micro = cfg.replace(train={"batch_size": 64, "micro_batch_size": 16})
    assert balanced_mmap_threshold(micro) == at[16]
    # where the threshold is None, balanced applies nothing: glibc as it is
    import foxhunt.memory.allocator as allocator

    calls: list[int] = []
    monkeypatch.setattr(allocator, "tune_cpu_allocator", lambda *a, **k: calls.append(1) or True)
    assert allocator.apply_cpu_allocator(cfg.replace(train={"batch_size": 1})) is False
    assert calls == []


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


def test_enable_huge_pages_sets_the_variable_and_keeps_a_users_choice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from foxhunt.memory import allocator

    monkeypatch.setattr(allocator.sys, "platform", "linux")
    monkeypatch.delenv(allocator.THP_ENV, raising=False)
    assert allocator.enable_huge_pages() is True
    assert allocator.os.environ[allocator.THP_ENV] == "1"
    monkeypatch.setenv(allocator.THP_ENV, "0")
    assert allocator.enable_huge_pages() is False
    assert allocator.os.environ[allocator.THP_ENV] == "0"
    monkeypatch.setattr(allocator.sys, "platform", "darwin")
    monkeypatch.delenv(allocator.THP_ENV)
    assert allocator.enable_huge_pages() is False
    assert allocator.THP_ENV not in allocator.os.environ


def test_the_cli_enables_huge_pages_before_running_a_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import foxhunt.cli as cli

    calls: list[int] = []
    monkeypatch.setattr(cli, "enable_huge_pages", lambda: calls.append(1) or True)
    rc = cli.main(["features", "--bars", str(tmp_path / "none.csv"), "--out", str(tmp_path / "o")])
    assert rc == 2 and calls == [1]


def _thp_mode() -> str | None:
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return None
    return text.split("[", 1)[1].split("]", 1)[0] if "[" in text else None


HUGE_PROBE = r"""
import sys
sys.path.insert(0, sys.argv[1])
from foxhunt.memory.allocator import enable_huge_pages
enable_huge_pages()
import torch

def huge_kib():
    for line in open("/proc/self/smaps_rollup"):
        if line.startswith("AnonHugePages:"):
            return int(line.split()[1])
    return 0

before = huge_kib()
x = torch.ones(16 << 20, dtype=torch.uint8)  # 16 MiB, touched
print(huge_kib() - before)
"""


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.skipif(_thp_mode() not in ("madvise", "always"), reason="kernel THP off or absent")
def test_torch_tensors_get_huge_pages_once_enabled_and_not_when_turned_off() -> None:
    """Set before torch's first tensor (as the CLI does), a 16 MiB tensor is backed by 2 MiB
    pages; ``THP_MEM_ALLOC_ENABLE=0`` keeps 4 KiB pages (checked in madvise mode)."""
    import os

    def huge(value: str | None) -> int:
        env = {k: v for k, v in os.environ.items() if k != "THP_MEM_ALLOC_ENABLE"}
        if value is not None:
            env["THP_MEM_ALLOC_ENABLE"] = value
        done = subprocess.run(
            [sys.executable, "-c", HUGE_PROBE, str(SRC)], capture_output=True, text=True,
            check=True, env=env,
        )  # fmt: skip
        return int(done.stdout.split()[-1])

    assert huge(None) >= 8 * 1024  # at least half of the 16 MiB tensor in 2 MiB pages
    if _thp_mode() == "madvise":
        assert huge("0") == 0


HEAP_PROBE = (
    LIBC
    + r"""
from foxhunt.memory.allocator import inference_heap, tune_cpu_allocator

def cycle():
    block = libc.malloc(8 << 20)
    ctypes.memset(block, 1, 8 << 20)
    libc.free(block)

assert tune_cpu_allocator(64 << 20, trim_threshold=None)  # 8 MiB blocks come from the heap
rss0 = rss()
cycle()
trimmed = rss() - rss0
with inference_heap():
    cycle()
    kept = rss() - rss0
after = rss() - rss0
print(trimmed, kept, after)
"""
)


@GLIBC
def test_inference_heap_keeps_freed_heap_memory_inside_and_returns_it_after() -> None:
    done = subprocess.run(
        [sys.executable, "-c", HEAP_PROBE, str(SRC)], capture_output=True, text=True, check=True
    )
    trimmed, kept, after = (int(v) for v in done.stdout.split())
    assert trimmed < MIB  # tuned glibc trims a freed 8 MiB heap top at once (refaulted next time)
    assert kept >= 7 * MIB  # inside: kept for the next tensor
    assert after < MIB  # on exit: the trim threshold restored and the free heap returned


def test_inference_heap_is_a_no_op_on_an_untuned_allocator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import foxhunt.memory.allocator as allocator

    def no_libc() -> None:
        raise AssertionError("glibc touched")

    monkeypatch.setattr(allocator, "_tuned_trim", None)
    monkeypatch.setattr(allocator, "_libc", no_libc)
    with allocator.inference_heap():
        pass
