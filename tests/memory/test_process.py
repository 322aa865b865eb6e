"""The process estimate against a fresh process: the import baseline and one measured step."""

from __future__ import annotations

import subprocess
import sys

import pytest

from foxhunt.config import demo
from foxhunt.memory.process import IMPORT_BASELINE_BYTES, process_training_peak
from foxhunt.train.measure import measure_in_subprocess

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc RSS")


@linux_only
def test_import_baseline_constant_matches_a_fresh_process() -> None:
    code = (
        "import foxhunt.train.run, polars\n"
        "from foxhunt.memory.counters import rss_bytes\n"
        "print(rss_bytes())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    measured = int(out.stdout.strip().splitlines()[-1])
    assert abs(measured / IMPORT_BASELINE_BYTES - 1) < 0.2, measured


@linux_only
@pytest.mark.parametrize("allocator", ["glibc", "lean"])
def test_estimate_within_15_percent_of_peak_process_rss(allocator: str) -> None:
    """Demo preset, batch 8, both allocators, in a fresh process; the whole matrix (both
    presets x batch 8/32/128 x allocator) is ``benchmarks/process_rss.py`` (docs/memory.md)."""
    cfg = demo().replace(train={"batch_size": 8, "cpu_allocator": allocator, "num_threads": 2})
    m = measure_in_subprocess(cfg, "train")
    est = process_training_peak(cfg.replace(train={"precision": m["precision"]}))
    assert abs(est.total / m["peak_rss_bytes"] - 1) < 0.15, (est.parts(), m["peak_rss_bytes"])
