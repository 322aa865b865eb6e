"""The peak RSS of a run's data preparation (reading bars, features, splits, window arrays,
target-scale choice, baselines), as a function of the bars and the feature count.

Preparation builds one symbol's feature table at a time and lays it out as row arrays
(:mod:`foxhunt.data.windows.split_arrays`), so at its peak it holds the arrays of every bar once
(float32 inputs, float64 targets until they are scaled: one table's worth) and the largest
symbol's table beside them, plus working memory of the reader and polars' pools that grows
with the first few hundred MB of data and then stops growing. Measured with
``benchmarks/prepare_rss.py`` (``prepare`` in one process; demo preset: 225 inputs, H = 10;
polars 1.x, glibc; 2026-12-03, a loaded 2-core machine), estimate in brackets:

- 4,000 demo bars: 561 MB (572 MB, +2.0 %);
- 1 symbol of the 2018 1-minute bars, January-September (EURUSD, 279,013 bars): 1.33 GB
  (1.38, +3.5 %); 2 symbols (EURUSD, XAUUSD; 544,224 bars): 1.56 GB (1.67, +6.6 %);
- 88 daily futures 1990-2009 (323,829 bars): 1.12 GB (1.18, +5.9 %); 1990-2014 (434,958 bars):
  1.31 GB (1.29, -1.1 %);
- the 10 symbols of the 2018 1-minute bars, January-September (2.65 M bars): 3.78 GB (3.74,
  -0.9 %); the whole year (3.54 M bars; EURUSD 372,607): 4.77 GB (4.70, -1.4 %).

Before it built one symbol at a time (until 2026-12-03) the whole table was held about twice:
6.40 GB for January-September, 7.97 GB for the year. It grows linearly with the bars at one
table's slope; a feature store (``foxhunt features --shards``) memory-maps the arrays instead
(docs/memory.md, "The feature store").
"""

from __future__ import annotations

PREPARATION_BASE_BYTES = 560 * 10**6
"""Imports (torch, polars, pandas, scipy, arch) and fixed-size work: measured at 4,000 bars."""

WORKING_BYTES = 300 * 10**6
"""The reader's and polars' working memory once the table passes it (a table of this size or
more adds this much, a smaller one its own size)."""


def table_bytes(n_bars: int, n_inputs: int, horizon: int) -> int:
    """Bytes of the feature table (or the unscaled row arrays) of ``n_bars`` bars: float32
    inputs and float64 targets."""
    return n_bars * (4 * n_inputs + 8 * horizon)


def preparation_peak(n_bars: int, n_inputs: int, horizon: int, largest: int | None = None) -> int:
    """Estimated peak RSS in bytes of preparing ``n_bars`` bars with ``n_inputs`` float32
    input columns and ``horizon`` float64 targets, the largest symbol holding ``largest`` bars
    (None: all of them, the bound for bars whose symbols are not known yet)."""
    table = table_bytes(n_bars, n_inputs, horizon)
    one = table_bytes(n_bars if largest is None else min(largest, n_bars), n_inputs, horizon)
    return PREPARATION_BASE_BYTES + table + one + min(WORKING_BYTES, table)
