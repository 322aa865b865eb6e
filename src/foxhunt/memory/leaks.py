"""The leak check: does memory keep growing at epoch ends once the run has warmed up?

The first epoch of a run is expected to grow the process: it creates the optimizer state and
fills the allocator's free lists, oneDNN's primitive cache and other kernel caches. After it,
a run that does not leak holds a flat level at every epoch end, give or take allocator noise of
a few MiB. So the rule, applied to every current-size number a snapshot holds (``*_bytes``
values that are not a peak, maximum, free or total, e.g. ``rss_bytes``,
``cuda_allocated_bytes``, ``live_tensor_bytes``):

* **series**: the value at the ``epoch_end`` snapshot of each epoch (the last one if an epoch
  has several), in epoch order; other points and snapshots without an epoch are left out.
* **baseline**: the end of warm-up, the ``warmup_epochs``-th epoch end of the series (default:
  the end of the run's first epoch), never a snapshot taken before or during warm-up.
* **growth**: the last epoch end minus the baseline. It is reported only if it exceeds the
  absolute floor ``min_growth_bytes`` (default 32 MiB, far above allocator noise) *and* either

  - it exceeds ``peak_fraction`` (default 10 %) of the run's peak of that number (for
    ``rss_bytes`` the largest ``peak_rss_bytes`` logged, for ``cuda_allocated_bytes`` the largest
    ``cuda_max_allocated_bytes``, otherwise the largest value logged), or
  - there are at least two epoch ends after the baseline and the value rose at every one of
    them (a steady upward trend: a leak smaller than the relative threshold, caught early).

Noise of ±2 MiB moves the last epoch end at most 4 MiB from the baseline, so it never reaches the
floor; a one-off step after warm-up that then stays flat is reported only when it is large
relative to the peak.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

logger = logging.getLogger(__name__)

MIN_GROWTH_BYTES = 32 * 2**20
"""Default absolute floor: growth below it is never reported."""

PEAK_FRACTION = 0.10
"""Default relative threshold: growth beyond this fraction of the run's peak is reported."""

_PEAK_OF = {"rss_bytes": "peak_rss_bytes", "cuda_allocated_bytes": "cuda_max_allocated_bytes"}
"""The counter holding the run's peak of a current-size number, where one is logged."""

_MIB = 2**20


def is_leak_metric(key: str) -> bool:
    """Numbers the check follows: current sizes, not peaks, maxima or free space."""
    return key.endswith("_bytes") and not any(
        word in key for word in ("peak", "max", "free", "total")
    )


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def epoch_end_series(records: Sequence[Mapping[str, Any]]) -> list[tuple[int, Mapping[str, Any]]]:
    """``(epoch, record)`` of each epoch's last ``epoch_end`` snapshot, in epoch order."""
    ends: dict[int, Mapping[str, Any]] = {}
    for r in records:
        if r.get("point") == "epoch_end" and r.get("epoch") is not None:
            ends[int(r["epoch"])] = r
    return sorted(ends.items())


def _run_peak(records: Sequence[Mapping[str, Any]], metric: str) -> float:
    keys = (metric, _PEAK_OF.get(metric, metric))
    values = [r[k] for r in records for k in keys if _number(r.get(k))]
    return max(values, default=0)


def find_leaks(
    records: Sequence[Mapping[str, Any]],
    *,
    warmup_epochs: int = 1,
    min_growth_bytes: int = MIN_GROWTH_BYTES,
    peak_fraction: float = PEAK_FRACTION,
) -> list[str]:
    """Report numbers that grow across the epoch ends after warm-up (the rule in the module doc).

    Args:
        records: snapshots as :class:`~foxhunt.memory.log.MemoryLog` writes them (``point``,
            ``epoch`` and the numbers), oldest first.
        warmup_epochs: the epoch ends up to and including this one (1-based) are warm-up; the
            last of them is the baseline.
        min_growth_bytes: absolute floor below which growth is never reported.
        peak_fraction: growth beyond this fraction of the run's peak is reported.

    Returns:
        One line of text per growing number, with the figures; empty when memory is flat or
        there is no epoch end after the baseline. Each line is also logged as a warning.

    Raises:
        ValueError: ``warmup_epochs`` < 1 (the baseline must come after warm-up).
    """
    if warmup_epochs < 1:
        raise ValueError(f"warmup_epochs must be >= 1, got {warmup_epochs}")
    series = epoch_end_series(records)
    if len(series) <= warmup_epochs:
        return []
    base_epoch, base = series[warmup_epochs - 1]
    later = series[warmup_epochs:]
    found: list[str] = []
    for metric, v0 in base.items():
        if not (is_leak_metric(metric) and _number(v0)):
            continue
        values = [r.get(metric) for _, r in later]
        if not all(_number(v) for v in values):
            continue
        growth = values[-1] - v0
        if growth <= min_growth_bytes:
            continue
        peak = _run_peak(records, metric)
        relative = growth > peak_fraction * peak
        steps = [b - a for a, b in zip([v0, *values], values, strict=False)]
        steady = len(values) >= 2 and all(s > 0 for s in steps)
        if not (relative or steady):
            continue
        why = (
            f"{growth / peak:.0%} of the run's peak {peak / _MIB:,.1f} MiB"
            if relative
            else f"rising at each of {len(values)} epoch ends"
        )
        trail = ", ".join(f"{v / _MIB:,.1f}" for v in [v0, *values])
        text = (
            f"possible leak: {metric} grew by {growth / _MIB:,.1f} MiB ({growth:,} bytes) "
            f"after warm-up, from the end of epoch {base_epoch} to the end of epoch "
            f"{later[-1][0]} ({why}); at epoch ends: {trail} MiB"
        )
        logger.warning(text)
        found.append(text)
    return found
