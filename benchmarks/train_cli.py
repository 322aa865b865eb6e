"""``foxhunt train`` timed from outside vs pytorch-forecasting's network-only step (issue 14's bar).

Alternates, ``--rounds`` times, in fresh processes on the same machine:

- ``foxhunt train --preset tft-225 --batch-size 32`` with every other setting at its default
  (allocator, precision ``auto``, recompute off) on demo bars, stopped by ``--max-steps 12``; a
  config file sets only ``log_every = 1`` so that each optimizer step appends a line to
  ``metrics.jsonl``. This script polls that file and timestamps each step's line as it appears:
  steps 3-12 are the 10 steps between the lines of step 2 and step 12 (data loading, the
  first steps' warm-up and the end-of-run work are outside the window). Peak RSS is the
  process's VmRSS sampled (5 ms) while steps 3-12 run, and its VmHWM over the whole run (data
  preparation and the end-of-run calibration pass included); both over an import baseline, the
  RSS of a fresh process that imported ``foxhunt.train.run``.
- pytorch-forecasting's TFT (``hidden_continuous_size`` 16), TFT-225 sizes, batch 32, through
  ``pf_step.py`` (network, loss, backward and Adam only: no dataloader, no Lightning): steps
  2-11 after one warm-up; peak RSS over its own post-import baseline.

Both use 2 threads. foxhunt's number includes everything its loop does (batch assembly from the
window arrays, the LR schedule, gradient clipping, logging); pytorch-forecasting's does not.

    .venv/bin/python benchmarks/train_cli.py --rounds 2
    .venv/bin/python benchmarks/train_cli.py --rounds 2 --foxhunt-args="--cpu-allocator lean"

(``--foxhunt-args``: extra ``foxhunt train`` flags, to measure a non-default setting; the
results file then gets a suffix, ``train_cli-cpu-allocator-lean.json``.)

Results: ``benchmarks/results/train_cli.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness import cpu_isa
from runner import BENCH_DIR, BENCH_PYTHON, MAIN_PYTHON, RESULTS, last_json_line, worker_env

FIRST, LAST = 2, 12  # the window covers steps 3..12


def _vm_kib(pid: int, field: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def import_baseline(threads: int) -> int:
    """RSS (bytes) of a fresh process after importing what ``foxhunt train`` imports."""
    code = (
        "import foxhunt.cli, foxhunt.commands.train, foxhunt.train.run\n"
        "from foxhunt.memory.counters import rss_bytes; print(rss_bytes())"
    )
    out = subprocess.run(
        [str(MAIN_PYTHON), "-c", code], capture_output=True, text=True, check=True,
        env=worker_env(threads),
    )  # fmt: skip
    return int(out.stdout.strip().splitlines()[-1])


def foxhunt_train(
    bars: Path, work: Path, batch: int, threads: int, extra: Sequence[str] = ()
) -> dict[str, Any]:
    """One ``foxhunt train`` process, steps 3-12 timed from its metrics.jsonl."""
    cfg = work / "log_every.toml"
    cfg.write_text(f'preset = "tft-225"\n[train]\nbatch_size = {batch}\nlog_every = 1\n')
    out = work / "run"
    shutil.rmtree(out, ignore_errors=True)  # a fresh run: no metrics.jsonl from the last round
    argv = [str(MAIN_PYTHON), "-m", "foxhunt", "train", "--config", str(cfg), "--bars", str(bars),
            "--out", str(out), "--max-steps", str(LAST), *extra]  # fmt: skip
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=worker_env(threads)
    )
    seen: dict[int, float] = {}
    hwm = steps_rss = 0
    metrics = out / "metrics.jsonl"
    while proc.poll() is None:
        hwm = max(hwm, _vm_kib(proc.pid, "VmHWM") or 0)
        if FIRST in seen and LAST not in seen:  # RSS sampled while steps 3-12 run
            steps_rss = max(steps_rss, _vm_kib(proc.pid, "VmRSS") or 0)
        if metrics.exists():
            now = time.perf_counter()
            for line in metrics.read_text().splitlines():
                rec = json.loads(line) if line.strip().endswith("}") else {}
                if rec.get("kind") == "step" and rec["step"] not in seen:
                    seen[rec["step"]] = now
        time.sleep(0.005)
    err = proc.stderr.read() if proc.stderr else ""
    if proc.returncode != 0 or FIRST not in seen or LAST not in seen:
        raise RuntimeError(f"foxhunt train failed (rc {proc.returncode}): {err[-2000:]}")
    seconds = seen[LAST] - seen[FIRST]
    cfg_used = json.loads((out / "config.json").read_text())["train"]
    return {
        "samples_per_s": (LAST - FIRST) * batch / seconds,
        "step_s": seconds / (LAST - FIRST),
        "peak_rss_bytes": hwm * 1024,
        "steps_peak_rss_bytes": steps_rss * 1024,
        "precision": cfg_used["precision"],
        "cpu_allocator": cfg_used["cpu_allocator"],
        "recompute": cfg_used["recompute"],
    }


def pf_train(batch: int, threads: int) -> dict[str, Any]:
    argv = [str(BENCH_PYTHON), str(BENCH_DIR / "pf_step.py"), "--mode", "train", "--batch-size",
            str(batch), "--hidden-continuous-size", "16", "--threads", str(threads),
            "--warmup", "1", "--steps", str(LAST - FIRST)]  # fmt: skip
    out = subprocess.run(argv, capture_output=True, text=True, env=worker_env(threads), check=False)
    rec = last_json_line(out.stdout)
    if out.returncode != 0 or rec is None:
        raise RuntimeError(f"pf_step failed: {out.stderr[-2000:]}")
    return rec


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--bars", type=int, default=4000, help="demo bars to train on")
    p.add_argument("--foxhunt-args", default="", help="extra foxhunt train flags (one string)")
    a = p.parse_args()
    extra = shlex.split(a.foxhunt_args)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bars = work / "ES_FUT_demo.parquet"
        subprocess.run([str(MAIN_PYTHON), "-m", "foxhunt", "data", "demo", "--bars", str(a.bars),
                        "--seed", "0", "--out", str(bars)], check=True, capture_output=True)  # fmt: skip
        base = import_baseline(a.threads)
        for r in range(a.rounds):
            fx = foxhunt_train(bars, work, a.batch_size, a.threads, extra)
            pf = pf_train(a.batch_size, a.threads)
            pf_sps = a.batch_size * len(pf["times_s"]) / sum(pf["times_s"])  # mean, as foxhunt's
            fx_mem = fx["steps_peak_rss_bytes"] - base  # over steps 3-12, as pf's is over its steps
            pf_mem = pf["peak_rss_over_baseline_bytes"]
            row = {
                "round": r,
                "foxhunt": {
                    **fx,
                    "peak_over_baseline_bytes": fx_mem,
                    "process_peak_over_baseline_bytes": fx["peak_rss_bytes"] - base,
                },
                "pf_hcs16": {"samples_per_s": pf_sps, "peak_over_baseline_bytes": pf_mem},
                "speedup": fx["samples_per_s"] / pf_sps,
                "memory_ratio": fx_mem / pf_mem,
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary = {
        "command": "benchmarks/train_cli.py " + " ".join(sys.argv[1:]),
        "import_baseline_bytes": base,
        "load_average": os.getloadavg(),
        **cpu_isa(),
        "rounds": rows,
        "median_speedup": statistics.median(r["speedup"] for r in rows),
        "median_memory_ratio": statistics.median(r["memory_ratio"] for r in rows),
    }
    RESULTS.mkdir(exist_ok=True)
    suffix = "".join("-" + x.lstrip("-").replace("=", "-") for x in extra)
    if "ATEN_CPU_CAPABILITY" in os.environ:  # under make test-avx2's caps: a file of its own
        suffix += "-aten-" + os.environ["ATEN_CPU_CAPABILITY"]
    (RESULTS / f"train_cli{suffix}.json").write_text(json.dumps(summary, indent=2) + "\n")
    keys = ("median_speedup", "median_memory_ratio", "import_baseline_bytes")
    print(json.dumps({k: summary[k] for k in keys}))


if __name__ == "__main__":
    main()
