"""The peak RSS of a run's data preparation (reading bars, features, splits, window arrays,
target-scale choice, baselines), as a function of the bars and the feature count.

At its peak, preparation holds the feature table (float32 inputs, float64 targets) about twice
over, while ``compute_features`` builds it, plus working memory of the reader and polars' pools
that grows with the first few hundred MB of data and then stops growing. Measured with
``/usr/bin/time -v`` on ``foxhunt.train.prepare.prepare`` in one process (demo preset: 225
inputs, H = 10; polars 1.x, glibc; 2026-12-03, after the splits stopped copying the table),
estimate in brackets:

- 4,000 demo bars: 562 MB (572 MB, +1.8 %);
- 2 symbols of the 2018 1-minute bars, January-September (557,801 bars): 1.98 GB (1.98, +0.1 %);
- 88 daily futures 1990-2009 (323,829 bars): 1.50 GB (1.51, +0.8 %); 1990-2014 (434,958 bars):
  1.81 GB (1.73, -4.1 %);
- the 10 symbols of the 2018 1-minute bars, January-September (2.65 M bars): 6.40 GB (6.17,
  -3.6 %); the whole year (3.54 M bars): 7.97 GB (7.98, +0.2 %).

It grows linearly with the bars past the first ~300 MB of table; a feature store (``foxhunt
features --shards``) prepares one symbol at a time instead (docs/memory.md, "The feature
store").
"""

from __future__ import annotations

PREPARATION_BASE_BYTES = 560 * 10**6
"""Imports (torch, polars, pandas, scipy, arch) and fixed-size work: measured at 4,000 bars."""

TABLE_COPIES = 2.05
"""Feature tables resident at the peak: the slope between the 2-symbol and the 10-symbol year."""

WORKING_BYTES = 300 * 10**6
"""The reader's and polars' working memory once the table passes it (a table of this size or
more adds this much, a smaller one its own size): what lifts 0.3-0.6 GB tables above the line
through the large ones."""


def preparation_peak(n_bars: int, n_inputs: int, horizon: int) -> int:
    """Estimated peak RSS in bytes of preparing ``n_bars`` bars with ``n_inputs`` float32
    input columns and ``horizon`` float64 targets."""
    table = n_bars * (4 * n_inputs + 8 * horizon)
    return PREPARATION_BASE_BYTES + int(TABLE_COPIES * table) + min(WORKING_BYTES, table)
