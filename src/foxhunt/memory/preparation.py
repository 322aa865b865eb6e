"""The peak RSS of a run's data preparation (reading bars, features, splits, window arrays,
target-scale choice, baselines), as a function of the bars and the feature count.

Preparation holds the whole feature table (float32 inputs, float64 targets) about three times
over at its peak: the table, its train/validation/test splits, and the window arrays filled
from one split while the next is still a table. Fitted on two measurements of
``foxhunt.train.prepare.prepare`` in one process (demo preset: 225 inputs, H = 10; polars 1.x,
glibc): the 2018 1-minute bars of 2 symbols (726 k bars, peak 2.58 GB) and of 10 symbols
(3.54 M bars, 10.69 GB); ``python /work/scratch/scale/prof_prepare.py BARS`` and
``/usr/bin/time -v``. It grows linearly with the bars; a feature store (``foxhunt features
--shards``) prepares one symbol at a time instead (docs/memory.md, "The feature store").
The intercept is raised from the fit's 490 MB to 560 MB by a third point: 4,000 demo bars peaked at 562 MB in one process (``foxhunt.train.prepare.prepare``,
``/usr/bin/time -v``: 549,280 kB); the fit gave 502 MB (-11 %), and the budget counts this peak
(:func:`foxhunt.train.plan.child_fits_budget`). The two large points move by +2.8 % and +0.7 %.
"""

from __future__ import annotations

PREPARATION_BASE_BYTES = 560 * 10**6
"""Imports (torch, polars, pandas, scipy, arch) and fixed-size work: measured at 4,000 bars
(the two-point fit's intercept was 490 MB)."""

TABLE_COPIES = 2.94
"""Feature tables resident at the peak, the fit's slope over one table's bytes."""


def preparation_peak(n_bars: int, n_inputs: int, horizon: int) -> int:
    """Estimated peak RSS in bytes of preparing ``n_bars`` bars with ``n_inputs`` float32
    input columns and ``horizon`` float64 targets."""
    row = 4 * n_inputs + 8 * horizon
    return PREPARATION_BASE_BYTES + int(TABLE_COPIES * n_bars * row)
