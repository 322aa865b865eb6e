"""The peak RSS of a run's data preparation (reading bars, features, splits, window arrays,
target-scale choice, baselines), as a function of the bars and the feature count.

Preparation builds one symbol's feature table at a time and writes it to the run's window files
(:mod:`foxhunt.data.windows.split_arrays` with a folder, :mod:`foxhunt.data.windows.row_files`):
the arrays of every bar are in files, never in the process. At its peak it holds the bars
(about 125 bytes per bar with their closes, times and window index), the reader's and polars'
working memory (which grows with the first ~230,000 bars and then stops), and the largest
symbol's feature table while it is computed and laid out (1.85 tables). Measured with
``benchmarks/prepare_rss.py`` (``prepare`` in one process, the arrays in files as ``foxhunt
train`` writes them; demo preset: 225 inputs, H = 10; polars 1.x, glibc; 2026-12-03, AMD Zen 5,
a quiet 2-core machine), estimate in brackets:

- 4,000 demo bars: 566 MB (571 MB, +0.8 %);
- 1 symbol of the 2018 1-minute bars, January-September (EURUSD, 279,013 bars): 1.28 GB
  (1.26, -1.4 %); 2 symbols (EURUSD, XAUUSD; 544,224 bars): 1.29 GB (1.29, 0.0 %);
- 88 daily futures 1990-2009 (323,829 bars): 773 MB (773, 0.0 %); 1990-2014 (434,958 bars):
  787 MB (789, +0.3 %);
- the 10 symbols of the 2018 1-minute bars, January-September (2.65 M bars): 1.53 GB (1.56,
  +1.9 %); the whole year (3.54 M bars; EURUSD 372,607): 1.87 GB (1.84, -1.7 %).

(Fitted on six of these points: four numbers for six, so the fit itself says little; the
2-symbol point was measured after the fit, as a check.) Session 57 (2026-12-07, the same
benchmark, a busy machine: the peaks do not depend on the load) measured 717 MB for the 4,000
demo bars (estimate then 571), 818 MB for GBPUSD's 2012 1-minute bars (639; 665 in session 28)
874-879 MB for the 88 daily futures of 1990-2009 (773) and 901 MB for 1990-2014 (789): the fixed cost, not the per-bar
terms, had grown (by about 150 MB on the small files, 100 MB on the futures; the reading stage
alone went from the imports' 338 MB to 580-590 MB on files of 4,000 and 30,000 bars), so the
base went from 560 to 710 MB (estimates 721, 789, 923 and 939 MB: +0.6 %, -3.5 %, +5 %,
+4.2 %). What grew
was not traced.
Until 2026-12-03 (session 27) the arrays were held in memory, one table's worth: the
January-September bars peaked at 3.78 GB and the year at 4.77 GB; before that day the whole
table was held about twice (6.40 and 7.97 GB). The library's ``prepare_training_data`` without a
folder still holds them (``held=True``).
"""

from __future__ import annotations

PREPARATION_BASE_BYTES = 710 * 10**6
"""Imports (torch, polars, pandas, scipy, arch) and fixed-size work: measured at 4,000 bars
(560 MB until session 57, when the same bars peaked at 717 MB: the preparation's fixed cost
had grown by about 150 MB since session 28, docs/memory.md)."""

BYTES_PER_BAR = 125
"""The bars, their closes and times, and the window index, per bar (fitted)."""

WORKING_BYTES = 160 * 10**6
"""The reader's and polars' working memory once the bars pass :data:`WORKING_BARS` (fitted)."""

WORKING_BYTES_PER_BAR = 700
"""Working memory per bar below that (fitted)."""

SYMBOL_TABLES = 1.85
"""The largest symbol's feature table while it is computed and laid out as rows, in tables
(fitted)."""


def table_bytes(n_bars: int, n_inputs: int, horizon: int) -> int:
    """Bytes of the feature table (or the unscaled row arrays) of ``n_bars`` bars: float32
    inputs and float64 targets."""
    return n_bars * (4 * n_inputs + 8 * horizon)


def preparation_peak(
    n_bars: int,
    n_inputs: int,
    horizon: int,
    largest: int | None = None,
    *,
    held: bool = False,
) -> int:
    """Estimated peak RSS in bytes of preparing ``n_bars`` bars with ``n_inputs`` float32
    input columns and ``horizon`` float64 targets, the largest symbol holding ``largest`` bars
    (None: all of them, the bound for bars whose symbols are not known yet).

    ``held``: the window arrays are held in memory, not written to files (the library's
    ``prepare_training_data`` without a folder): one table more."""
    one = table_bytes(n_bars if largest is None else min(largest, n_bars), n_inputs, horizon)
    working = min(WORKING_BYTES, WORKING_BYTES_PER_BAR * n_bars)
    peak = PREPARATION_BASE_BYTES + BYTES_PER_BAR * n_bars + working + int(SYMBOL_TABLES * one)
    return peak + (table_bytes(n_bars, n_inputs, horizon) if held else 0)
