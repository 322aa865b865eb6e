"""memory/counters.py against fake sources: ``/proc/self/status`` parsing, the peak-RSS reset
through ``/proc/self/clear_refs``, the ``getrusage`` fallback, and the CUDA allocator source.

Every number comes from a fake (a status file under ``tmp_path``, a fake ``resource`` /
``sys`` module, monkeypatched ``torch.cuda`` functions), so nothing depends on this machine's
memory or on a GPU (`make mutate` found these paths reached only through real counters).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from foxhunt.memory import counters

STATUS = "/proc/self/status"
CLEAR_REFS = "/proc/self/clear_refs"

# a /proc/self/status excerpt: VmHWM is neither the first line nor the only Vm field
STATUS_TEXT = (
    "Name:\tpython\n"
    "State:\tR (running)\n"
    "VmPeak:\t  900000 kB\n"
    "VmHWM:\t   123456 kB\n"
    "VmRSS:\t    65432 kB\n"
)


def _fake_proc(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    status: str | None = STATUS_TEXT,
    clear_refs: bool = True,
) -> Path:
    """Point the module's ``Path`` at files under ``tmp_path``: ``/proc/self/status`` holds
    ``status`` (missing if None), ``/proc/self/clear_refs`` is writable if ``clear_refs``.
    Any other path (or a missing file) lies in a folder that does not exist: reading or writing
    it raises ``FileNotFoundError``. Returns the fake ``clear_refs`` file."""
    absent = tmp_path / "absent" / "file"
    files: dict[object, Path] = {}
    if status is not None:
        files[STATUS] = tmp_path / "status"
        files[STATUS].write_text(status)
    refs = tmp_path / "clear_refs"
    if clear_refs:
        files[CLEAR_REFS] = refs
    monkeypatch.setattr(counters, "Path", lambda p: files.get(p, absent))
    return refs


def _fake_rusage(monkeypatch: pytest.MonkeyPatch, maxrss: int, platform: str) -> None:
    """``getrusage(RUSAGE_SELF).ru_maxrss`` is ``maxrss``; ``sys.platform`` is ``platform``."""
    rusage_self = object()

    def getrusage(who: object) -> SimpleNamespace:
        if who is not rusage_self:
            raise ValueError(f"getrusage({who!r}): only RUSAGE_SELF is faked")
        return SimpleNamespace(ru_maxrss=maxrss)

    monkeypatch.setattr(
        counters, "resource", SimpleNamespace(RUSAGE_SELF=rusage_self, getrusage=getrusage)
    )
    monkeypatch.setattr(counters, "sys", SimpleNamespace(platform=platform))


# --- _proc_status_kib ---------------------------------------------------------------------------


def test_proc_status_field_is_read_from_any_line(monkeypatch, tmp_path) -> None:
    _fake_proc(monkeypatch, tmp_path)
    assert counters._proc_status_kib("VmHWM") == 123456
    assert counters._proc_status_kib("VmRSS") == 65432
    assert counters._proc_status_kib("Name") is None  # no "<digits> kB" value


def test_proc_status_field_on_the_first_line_is_read(monkeypatch, tmp_path) -> None:
    _fake_proc(monkeypatch, tmp_path, status="VmHWM:\t7 kB\n")
    assert counters._proc_status_kib("VmHWM") == 7


def test_a_missing_proc_status_field_is_none(monkeypatch, tmp_path) -> None:
    _fake_proc(monkeypatch, tmp_path, status="Name:\tpython\nVmRSS:\t 10 kB\n")
    assert counters._proc_status_kib("VmHWM") is None


def test_an_unreadable_proc_status_is_none(monkeypatch, tmp_path) -> None:
    _fake_proc(monkeypatch, tmp_path, status=None)
    assert counters._proc_status_kib("VmHWM") is None


# --- reset_peak_rss -----------------------------------------------------------------------------


def test_reset_peak_rss_writes_5_to_clear_refs_and_reports_success(monkeypatch, tmp_path) -> None:
    refs = _fake_proc(monkeypatch, tmp_path)
    assert counters.reset_peak_rss() is True
    assert refs.read_text() == "5"


def test_reset_peak_rss_is_false_when_clear_refs_cannot_be_written(monkeypatch, tmp_path) -> None:
    _fake_proc(monkeypatch, tmp_path, clear_refs=False)
    assert counters.reset_peak_rss() is False


def test_reset_peak_rss_is_false_when_the_kernel_has_no_vmhwm(monkeypatch, tmp_path) -> None:
    refs = _fake_proc(monkeypatch, tmp_path, status="Name:\tpython\nVmRSS:\t 10 kB\n")
    assert counters.reset_peak_rss() is False
    assert refs.read_text() == "5"


# --- peak_rss_bytes -----------------------------------------------------------------------------


def test_peak_rss_is_vmhwm_in_bytes_where_the_kernel_has_it(monkeypatch, tmp_path) -> None:
    _fake_proc(monkeypatch, tmp_path)
    _fake_rusage(monkeypatch, maxrss=999, platform="linux")  # must not be used
    monkeypatch.setattr(counters, "rss_bytes", lambda: 1)
    assert counters.peak_rss_bytes() == 123456 * 1024


def test_peak_rss_falls_back_to_maxrss_in_kib_on_linux(monkeypatch, tmp_path) -> None:
    _fake_proc(monkeypatch, tmp_path, status=None)
    _fake_rusage(monkeypatch, maxrss=5000, platform="linux")
    monkeypatch.setattr(counters, "rss_bytes", lambda: 1)
    assert counters.peak_rss_bytes() == 5000 * 1024


def test_peak_rss_falls_back_to_maxrss_in_bytes_on_macos(monkeypatch, tmp_path) -> None:
    _fake_proc(monkeypatch, tmp_path, status=None)
    _fake_rusage(monkeypatch, maxrss=5000, platform="darwin")
    monkeypatch.setattr(counters, "rss_bytes", lambda: 1)
    assert counters.peak_rss_bytes() == 5000


def test_peak_rss_is_never_below_the_current_rss(monkeypatch, tmp_path) -> None:
    _fake_proc(monkeypatch, tmp_path)
    monkeypatch.setattr(counters, "rss_bytes", lambda: 200_000_000)  # VmHWM trails it
    assert counters.peak_rss_bytes() == 200_000_000


# --- cuda_source / default_sources --------------------------------------------------------------

GPU = torch.device("cuda", 1)

CUDA_NUMBERS = {
    "cuda_allocated_bytes": 1_000,
    "cuda_max_allocated_bytes": 3_000,
    "cuda_reserved_bytes": 4_000,
    "cuda_free_bytes": 70_000,
    "cuda_total_bytes": 80_000,
}


@pytest.fixture
def fake_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """``torch.cuda``'s counters for ``GPU`` only (any other device argument: ``KeyError``),
    returned as floats so that the source's ``int`` conversion shows."""
    n = CUDA_NUMBERS
    per_device = {
        "memory_allocated": float(n["cuda_allocated_bytes"]),
        "max_memory_allocated": float(n["cuda_max_allocated_bytes"]),
        "memory_reserved": float(n["cuda_reserved_bytes"]),
        "mem_get_info": (float(n["cuda_free_bytes"]), float(n["cuda_total_bytes"])),
    }
    for name, value in per_device.items():
        monkeypatch.setattr(torch.cuda, name, lambda device, value=value: {GPU: value}[device])


@pytest.mark.usefixtures("fake_cuda")
def test_cuda_source_reads_every_counter_of_its_device_as_int() -> None:
    snapshot = counters.cuda_source(GPU)()
    assert snapshot == CUDA_NUMBERS
    assert {type(v) for v in snapshot.values()} == {int}


def test_default_sources_on_cpu_are_the_process_counters_only() -> None:
    assert counters.default_sources(torch.device("cpu")) == {"cpu": counters.cpu_source}


@pytest.mark.usefixtures("fake_cuda")
def test_default_sources_on_cuda_add_that_devices_allocator_source() -> None:
    sources = counters.default_sources(GPU)
    assert list(sources) == ["cpu", "cuda"]
    assert sources["cpu"] is counters.cpu_source
    assert sources["cuda"]() == CUDA_NUMBERS
