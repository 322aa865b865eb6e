"""The allocator settings' contracts that ``make mutate`` (memory.allocator) found unguarded: the
exact ``mallopt`` calls (option, value) and what ``tune_cpu_allocator`` reports and records,
``malloc_trim(0)`` and the no-op paths of ``release_free_heap``, and the ``balanced`` threshold
(the run's device, precision and recompute setting, and its 4 MiB lower edge).

glibc is never called here: ``_libc`` is replaced by a recorder, so the test process's allocator
settings stay as they are (the subprocess checks in test_allocator.py cover the real effect).
"""

from __future__ import annotations

import logging

import pytest
import torch

import foxhunt.memory.activation_formulas as formulas
import foxhunt.memory.allocator as allocator
import foxhunt.runtime as runtime
from foxhunt.config import RunConfig, preset
from foxhunt.memory.allocator import (
    BALANCED_MMAP_RANGE,
    GLIBC_TRIM_DEFAULT,
    apply_cpu_allocator,
    balanced_mmap_threshold,
    release_free_heap,
    tune_cpu_allocator,
)

MIB = 2**20
LOGGER = "foxhunt.memory.allocator"


class FakeLibc:
    """Records every ``mallopt``/``malloc_trim`` call's arguments; answers with set values."""

    def __init__(self, mallopt_answers: dict[int, int] | None = None, trimmed: int = 1) -> None:
        self.answers = mallopt_answers or {}
        self.trimmed = trimmed
        self.mallopt_calls: list[tuple[object, ...]] = []
        self.trim_calls: list[tuple[object, ...]] = []

    def mallopt(self, *args: object) -> int:
        self.mallopt_calls.append(args)
        return self.answers.get(args[0], 1)  # type: ignore[call-overload]

    def malloc_trim(self, *args: object) -> int:
        self.trim_calls.append(args)
        return self.trimmed


@pytest.fixture
def libc(monkeypatch: pytest.MonkeyPatch) -> FakeLibc:
    """A recording libc on Linux, with the module's tuned-trim state restored afterwards."""
    fake = FakeLibc()
    monkeypatch.setattr(allocator.sys, "platform", "linux")
    monkeypatch.setattr(allocator, "_libc", lambda: fake)
    monkeypatch.setattr(allocator, "_tuned_trim", None)
    return fake


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


# --- tune_cpu_allocator -------------------------------------------------------------------


def test_tune_sets_the_mmap_then_the_trim_threshold_exactly(
    libc: FakeLibc, caplog: pytest.LogCaptureFixture
) -> None:
    """Defaults: M_MMAP_THRESHOLD (-3) then M_TRIM_THRESHOLD (-1), both 1 MiB, as ints; True,
    no warning, and the trim threshold now in force is recorded."""
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert tune_cpu_allocator() is True
    assert libc.mallopt_calls == [(-3, MIB), (-1, MIB)]
    assert all(type(v) is int for call in libc.mallopt_calls for v in call)
    assert _warnings(caplog) == []
    assert allocator._tuned_trim == MIB


def test_tune_passes_the_given_thresholds_as_ints(libc: FakeLibc) -> None:
    """Explicit values reach mallopt converted to int, each with its own option."""
    assert tune_cpu_allocator(float(5 * MIB), trim_threshold=float(3 * MIB)) is True  # type: ignore[arg-type]
    assert libc.mallopt_calls == [(-3, 5 * MIB), (-1, 3 * MIB)]
    assert all(type(v) is int for call in libc.mallopt_calls for v in call)
    assert allocator._tuned_trim == 3 * MIB


def test_tune_without_a_trim_threshold_sets_only_the_mmap_threshold(libc: FakeLibc) -> None:
    """``trim_threshold=None`` (``balanced``): one mallopt call, and glibc's static default
    (128 KiB) is recorded as the trim threshold in force."""
    assert tune_cpu_allocator(7 * MIB, trim_threshold=None) is True
    assert libc.mallopt_calls == [(-3, 7 * MIB)]
    assert allocator._tuned_trim == GLIBC_TRIM_DEFAULT == 128 * 1024


@pytest.mark.parametrize("refused", [-3, -1])
def test_tune_fails_if_either_setting_is_refused(
    libc: FakeLibc, caplog: pytest.LogCaptureFixture, refused: int
) -> None:
    """mallopt answering 0 for either option makes the result False with a warning, and no
    trim threshold is recorded as tuned."""
    libc.answers = {refused: 0}
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert tune_cpu_allocator() is False
    assert libc.mallopt_calls == [(-3, MIB), (-1, MIB)]
    assert _warnings(caplog) == [
        "tune_cpu_allocator: mallopt refused the settings; allocator left as is"
    ]
    assert allocator._tuned_trim is None


def test_tune_off_linux_is_a_logged_no_op(
    libc: FakeLibc, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Not Linux: False, a warning, and libc is not looked up."""
    monkeypatch.setattr(allocator.sys, "platform", "darwin")

    def no_libc() -> None:
        raise AssertionError("libc looked up off Linux")

    monkeypatch.setattr(allocator, "_libc", no_libc)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert tune_cpu_allocator() is False
    assert _warnings(caplog) == ["tune_cpu_allocator: not on Linux/glibc; allocator left as is"]
    assert allocator._tuned_trim is None


@pytest.mark.parametrize("error", [OSError("no libc"), AttributeError("no mallopt")])
def test_tune_without_mallopt_is_a_logged_no_op(
    libc: FakeLibc,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    error: Exception,
) -> None:
    """A libc that cannot be loaded or has no mallopt (musl): False, the reason in a warning."""

    def broken() -> None:
        raise error

    monkeypatch.setattr(allocator, "_libc", broken)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert tune_cpu_allocator() is False
    assert _warnings(caplog) == [
        f"tune_cpu_allocator: glibc mallopt unavailable ({error}); allocator left as is"
    ]
    assert allocator._tuned_trim is None


def test_inference_heap_restores_the_trim_threshold_tune_recorded(libc: FakeLibc) -> None:
    """What tune records is what inference_heap sets back on exit (then trims the heap)."""
    assert tune_cpu_allocator(2 * MIB, trim_threshold=3 * MIB) is True
    libc.mallopt_calls.clear()
    with allocator.inference_heap():
        assert libc.mallopt_calls == [(-1, allocator.INFERENCE_TRIM_THRESHOLD)]
    assert libc.mallopt_calls == [(-1, allocator.INFERENCE_TRIM_THRESHOLD), (-1, 3 * MIB)]
    assert libc.trim_calls == [(0,)]


# --- release_free_heap --------------------------------------------------------------------


@pytest.mark.parametrize("trimmed", [1, 0])
def test_release_free_heap_calls_malloc_trim_with_zero(libc: FakeLibc, trimmed: int) -> None:
    """``malloc_trim(0)`` (no padding kept at the heap top); its answer as a bool."""
    libc.trimmed = trimmed
    assert release_free_heap() is bool(trimmed)
    assert libc.trim_calls == [(0,)]
    assert all(type(v) is int for call in libc.trim_calls for v in call)


def test_release_free_heap_off_linux_is_false_without_libc(
    libc: FakeLibc, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(allocator.sys, "platform", "darwin")
    assert release_free_heap() is False
    assert libc.trim_calls == []


@pytest.mark.parametrize("error", [OSError("no libc"), AttributeError("no malloc_trim")])
def test_release_free_heap_without_malloc_trim_is_false(
    libc: FakeLibc, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    def broken() -> None:
        raise error

    monkeypatch.setattr(allocator, "_libc", broken)
    assert release_free_heap() is False


# --- balanced_mmap_threshold --------------------------------------------------------------


def _cfg(**train: object) -> RunConfig:
    return preset("tft-225").replace(train={"batch_size": 128, **train})


def test_balanced_threshold_counts_the_vsn_chunk_under_recompute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With recompute the widest per-variable block is one chunk of 32 variables, not all 210:
    32 x 128 x 50 rows x 16 wide x 4 bytes (below the 32 MiB cap, which all 210 would hit)."""
    assert balanced_mmap_threshold(_cfg(precision="fp32", recompute=True)) == 32 * 128 * 50 * 16 * 4
    assert balanced_mmap_threshold(_cfg(precision="fp32")) == BALANCED_MMAP_RANGE[1] == 32 * MIB
    calls: list[tuple[int, int | None]] = []
    monkeypatch.setattr(
        allocator, "tune_cpu_allocator", lambda m, trim_threshold: calls.append((m, trim_threshold))
        or True,
    )  # fmt: skip
    assert apply_cpu_allocator(_cfg(precision="fp32", recompute=True)) is True
    assert calls == [(32 * 128 * 50 * 16 * 4, None)]


def test_balanced_threshold_resolves_auto_precision_on_the_runs_device(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``auto`` is resolved for the run's own device (a torch.device, here the CPU): native bf16
    there gives 2-byte blocks, none gives 4-byte ones."""
    monkeypatch.delenv(runtime.FORCE_FP32_ENV, raising=False)
    asked: list[object] = []
    native = {"value": True}

    def native_bf16(device: object) -> bool:
        asked.append(device)
        return native["value"]

    monkeypatch.setattr(runtime, "native_bf16", native_bf16)
    cfg = _cfg(precision="auto", batch_size=32)
    assert balanced_mmap_threshold(cfg) == 210 * 32 * 50 * 16 * 2
    assert asked == [torch.device("cpu")]
    native["value"] = False
    assert balanced_mmap_threshold(cfg) == 210 * 32 * 50 * 16 * 4


def test_balanced_threshold_passes_the_runs_settings_to_the_block_formula(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The formula gets the config, the micro-batch, the resolved precision and recompute."""
    seen: list[tuple[object, ...]] = []

    def widest(cfg: RunConfig, micro: int, precision: str, recompute: bool) -> int:
        seen.append((cfg, micro, precision, recompute))
        return 10 * MIB

    monkeypatch.setattr(formulas, "largest_variable_tensor", widest)
    cfg = _cfg(precision="bf16", batch_size=64, micro_batch_size=16, recompute=True)
    assert balanced_mmap_threshold(cfg) == 10 * MIB
    assert seen == [(cfg, 16, "bf16", True)]
    assert type(seen[0][3]) is bool


@pytest.mark.parametrize(
    ("widest", "threshold"),
    [
        (4 * MIB - 1, None),
        (4 * MIB, 4 * MIB),
        (4 * MIB + 1, 4 * MIB + 1),
        (32 * MIB, 32 * MIB),
        (32 * MIB + 1, 32 * MIB),
    ],
)
def test_balanced_threshold_range_edges(
    monkeypatch: pytest.MonkeyPatch, widest: int, threshold: int | None
) -> None:
    """Blocks of exactly 4 MiB are mapped (the range includes its lower end); below that glibc
    is left alone; above 32 MiB the threshold stays at 32 MiB."""
    monkeypatch.setattr(formulas, "largest_variable_tensor", lambda *a: widest)
    assert BALANCED_MMAP_RANGE == (4 * MIB, 32 * MIB)
    assert balanced_mmap_threshold(_cfg(precision="fp32")) == threshold
