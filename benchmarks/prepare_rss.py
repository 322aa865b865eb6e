"""The data preparation's peak RSS against its estimate (``memory/preparation.py``), stage by stage.

Runs ``foxhunt.train.prepare.prepare`` (features, splits, windows, target-scale choice,
baselines) on BARS in this process and prints each stage's RSS and high-water mark, then one
line with the bars, the peak and the estimate::

    .venv/bin/python benchmarks/prepare_rss.py BARS [--preset demo] [--in-memory]

As ``foxhunt train`` does, the window arrays go to files in a temporary folder (in the working
directory) and are mapped (``data/windows/row_files.py``); ``--in-memory`` holds them instead
(the library's ``prepare_training_data`` without a folder). A thread samples ``RssAnon`` and
``RssFile`` every 20 ms: their peaks say how much of the peak was the process's own memory and
how much mapped file pages (page cache the kernel can drop and read again).

Run one process per measurement (the peak is this process's ``VmHWM``); docs/memory.md's table
came from ``/usr/bin/time -v`` around it, on bars from ``../shared/data/real/`` (read as found,
or cut from it by date). Linux only (``/proc/self/status``).
"""

from __future__ import annotations

import argparse
import functools
import logging
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any


def _status_mb() -> dict[str, float]:
    """This process's memory counters in MB, from /proc/self/status."""
    with open("/proc/self/status") as f:
        return {
            ln.split(":")[0]: int(ln.split()[1]) / 1e3
            for ln in f
            if ln.startswith(("VmRSS", "VmHWM", "RssAnon", "RssFile"))
        }


def _memory_mb() -> tuple[float, float]:
    """This process's (RSS, peak RSS) in MB."""
    kib = _status_mb()
    return kib["VmRSS"], kib["VmHWM"]


class _Sampler(threading.Thread):
    """Peak RssAnon and RssFile (MB) of this process, sampled every 20 ms."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.anon = self.file = 0.0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.02):
            with open("/proc/self/status") as f:
                kib = {ln.split(":")[0]: int(ln.split()[1]) for ln in f if ln.startswith("Rss")}
            self.anon = max(self.anon, kib["RssAnon"] / 1e3)
            self.file = max(self.file, kib["RssFile"] / 1e3)


def _timed(module: ModuleType, name: str) -> None:
    """Wrap ``module.name`` so each call prints its time, RSS and high-water mark."""
    fn: Callable[..., Any] = getattr(module, name)

    @functools.wraps(fn)
    def stage(*args: Any, **kwargs: Any) -> Any:
        (rss0, hwm0), t0 = _memory_mb(), time.perf_counter()
        out = fn(*args, **kwargs)
        now = _status_mb()
        rss1, hwm1 = now["VmRSS"], now["VmHWM"]
        print(
            f"  {name:22s} {time.perf_counter() - t0:6.2f} s  RSS {rss0:6.0f} -> {rss1:6.0f} MB"
            f"  peak {hwm0:6.0f} -> {hwm1:6.0f} MB  (anonymous {now['RssAnon']:5.0f},"
            f" file-backed {now['RssFile']:5.0f})",
            flush=True,
        )
        return out

    setattr(module, name, stage)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("bars", type=Path, help="bars file, folder or glob")
    p.add_argument("--preset", default="demo")
    p.add_argument("--in-memory", action="store_true", help="hold the arrays, no files")
    a = p.parse_args()
    logging.basicConfig(level=logging.ERROR)
    import foxhunt.data.pipeline as pipeline
    import foxhunt.train.prepare as prepare
    from foxhunt.config import preset
    from foxhunt.memory.preparation import preparation_peak

    for name in ("read_run_bars", "compute_features", "split_windows_by_symbol"):
        _timed(pipeline, name)
    for name in ("resolve_target_scale", "fit_baselines"):
        _timed(prepare, name)
    cfg = preset(a.preset)
    start = _status_mb()
    print(
        f"  after imports: anonymous {start['RssAnon']:.0f} MB, file-backed {start['RssFile']:.0f} MB"
    )
    t0 = time.perf_counter()
    sampler = _Sampler()
    sampler.start()
    with tempfile.TemporaryDirectory(prefix=".rows.", dir=".") as folder:
        spill = None if a.in_memory else Path(folder)
        done = prepare.prepare(a.bars, cfg, choose_scale=True, baselines=True, spill=spill)
    sampler.stop.set()
    n = done.data.closes.height
    largest = int(done.data.closes.group_by("symbol").len()["len"].max())
    estimate = preparation_peak(n, len(done.data.spec.inputs), cfg.model.horizon, largest) / 1e6
    peak = _memory_mb()[1]
    print(
        f"{a.bars}: {n:,} bars, {done.data.closes['symbol'].n_unique()} symbols, peak {peak:,.0f} MB,"
        f" estimate {estimate:,.0f} MB ({100 * (estimate / peak - 1):+.1f} %), "
        f"{time.perf_counter() - t0:.1f} s; sampled peaks: anonymous {sampler.anon:,.0f} MB,"
        f" file-backed {sampler.file:,.0f} MB ({'in memory' if a.in_memory else 'files'})"
    )


if __name__ == "__main__":
    main()
