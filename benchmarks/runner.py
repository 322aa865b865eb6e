"""Launch one benchmark worker in a fresh process and read back its one JSON line.

A :class:`Job` names the interpreter (``.venv`` for foxhunt, ``.venv-bench`` for
pytorch-forecasting), the worker script and its arguments. :func:`run_job` runs it with the
thread environment fixed, a wall-clock limit, and stderr kept in a log file; it never raises for
a failed worker: the returned record carries ``error`` instead, so one setting that runs out of
memory or time does not lose the rest of the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS = BENCH_DIR / "results"
MAIN_PYTHON = Path(sys.executable)
BENCH_PYTHON = REPO / ".venv-bench" / "bin" / "python"


@dataclass(frozen=True)
class Job:
    """One worker invocation.

    Attributes:
        name: Short unique label (used for the log file and progress output).
        python: Interpreter to run it with.
        script: Worker script path (``foxhunt_step.py``, ``pf_step.py``, ...).
        args: Command-line arguments for the script.
        tags: Labels copied into the result record (library, variant, section, ...).
        timeout_s: Wall-clock limit for the whole process.
    """

    name: str
    python: Path
    script: Path
    args: tuple[str, ...] = ()
    tags: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = 900.0


def worker_env(threads: int) -> dict[str, str]:
    """This process's environment with the thread pools pinned and plotting headless."""
    env = dict(os.environ)
    for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[key] = str(threads)
    env["MPLBACKEND"] = "Agg"
    env["PYTHONWARNINGS"] = "ignore"
    env.pop("PYTHONPATH", None)  # each venv sees only its own packages
    return env


def last_json_line(text: str) -> dict[str, Any] | None:
    """The last line of ``text`` that parses as a JSON object, or None."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                return obj
    return None


def run_job(job: Job, log_dir: Path, threads: int = 2) -> dict[str, Any]:
    """Run ``job`` in a fresh process and return its record (or an ``error`` record).

    Args:
        job: What to run.
        log_dir: Where ``<job.name>.log`` (the command, stderr and stdout) is written.
        threads: Thread pools size passed through the environment.

    Returns:
        The worker's JSON record plus ``job``, ``wall_s``, ``loadavg_before``/``after`` and the
        job's tags; on failure ``error`` (one line) and ``returncode`` instead of measurements.
    """
    cmd = [str(job.python), str(job.script), *job.args]
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"{job.name}.log"
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    base: dict[str, Any] = {"job": job.name, **job.tags, "command": " ".join(cmd)}
    if not job.python.exists():
        return {**base, "error": f"interpreter not found: {job.python}", "returncode": None}
    with log.open("w") as err:  # stderr streams into the log, so a long job can be watched
        err.write(f"$ {' '.join(cmd)}\n")
        err.flush()
        try:
            proc = subprocess.run(
                cmd,
                cwd=REPO,
                env=worker_env(threads),
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                timeout=job.timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            err.write(f"\n# timed out after {job.timeout_s:.0f} s\n")
            return {**base, "error": f"timed out after {job.timeout_s:.0f} s", "returncode": None}
        err.write(f"\n# rc={proc.returncode}\n--- stdout\n{proc.stdout}")
    wall = time.perf_counter() - t0
    stderr_text = log.read_text().rsplit("\n# rc=", 1)[0]
    stderr_lines = [ln for ln in stderr_text.splitlines()[1:] if ln.strip()]  # minus "$ cmd"
    record = last_json_line(proc.stdout)
    if proc.returncode != 0 or record is None:
        if proc.returncode in (-9, 137):
            why = "killed (SIGKILL: most likely out of memory)"
        else:
            why = stderr_lines[-1] if stderr_lines else "no JSON line on stdout"
        return {**base, "error": why[:300], "returncode": proc.returncode, "wall_s": wall}
    return {
        **record,
        **base,
        "wall_s": wall,
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg()[0],
    }


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON atomically (``<name>.tmp``, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)
