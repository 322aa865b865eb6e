"""CPU threads for a training run, and a warning when other work will contend with them.

torch's intra-op pool spins its threads at every parallel region; when other processes already
keep the cores busy, those threads wait on each other and a step slows far more than the share
of CPU it lost: a 2-thread fp32 run on 2 cores at a load of about 6 went at about 13 s per step
against about 1 s with ``--num-threads 1`` (docs/benchmarks.md, session 7). The load average
lags and a quiet machine often shows 0.5-1, so nothing is changed automatically: the run says
what it sees and what to do.
"""

from __future__ import annotations

import logging
import os

import torch

logger = logging.getLogger(__name__)


def usable_cores() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def busy_cpu_warning(threads: int, load: float, cores: int) -> str | None:
    """The warning for ``threads`` torch threads at 1-minute ``load`` on ``cores`` CPUs, or None.

    Warns when more than one thread is asked for and the load already on the machine takes
    more than one core from the threads' share (``load > cores - threads + 1``): a quiet
    machine's background load (0.5-1) does not warn.
    """
    if threads <= 1 or load <= cores - threads + 1:
        return None
    return (
        f"the CPU is busy (1-minute load {load:.1f} on {cores} cores): torch's {threads} "
        f"threads will contend with other processes, which can slow each step several times; "
        f"--num-threads 1 is often faster on a busy machine"
    )


def set_cpu_threads(num_threads: int | None, device: torch.device) -> None:
    """Apply ``--num-threads`` and, on CPU, warn when the machine is already busy."""
    if num_threads:
        torch.set_num_threads(num_threads)
    if device.type != "cpu":
        return
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this platform
        return
    message = busy_cpu_warning(torch.get_num_threads(), load, usable_cores())
    if message:
        logger.warning(message)
