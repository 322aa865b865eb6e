"""The data-preparation peak estimate (memory/preparation.py) against the measurements it was
fitted on (demo preset; the demo bars, the 2018 1-minute bars and the daily futures; numbers in
its docstring). The demo, GBPUSD and futures points are session 57's, after the fixed
cost grew by about 150 MB; the others are session 27's, not measured again."""

from __future__ import annotations

import pytest

from foxhunt.memory.preparation import (
    BYTES_PER_BAR,
    PREPARATION_BASE_BYTES,
    SYMBOL_TABLES,
    WORKING_BYTES,
    WORKING_BYTES_PER_BAR,
    preparation_peak,
    table_bytes,
)


@pytest.mark.parametrize(
    ("bars", "largest", "measured"),
    [
        (4_000, 4_000, 0.717e9),  # demo bars (session 57; 0.566e9 in session 27)
        (30_117, 30_117, 0.818e9),  # GBPUSD's 2012 1-minute bars (session 57)
        (279_013, 279_013, 1.278e9),  # 1 symbol of 1-minute bars, January-September 2018
        (544_224, 279_013, 1.294e9),  # 2 symbols, January-September 2018 (after the fit)
        (323_557, 6_865, 0.879e9),  # 88 daily futures, 1990-2009 (session 57; 0.773e9 before)
        (434_944, 8_127, 0.901e9),  # 88 daily futures, 1990-2014 (session 57; 0.787e9 before)
        (2_645_200, 279_013, 1.527e9),  # 10 symbols, January-September 2018
        (3_544_194, 372_607, 1.871e9),  # 10 symbols, 2018
    ],
)
def test_estimate_is_within_15_percent_of_the_measured_peaks(
    bars: int, largest: int, measured: float
) -> None:
    assert preparation_peak(bars, 225, 10, largest) == pytest.approx(measured, rel=0.15)


def test_estimate_is_the_bars_the_working_memory_and_the_largest_symbols_table() -> None:
    row = 4 * 225 + 8 * 10
    assert table_bytes(1_000, 225, 10) == 1_000 * row
    assert preparation_peak(0, 225, 10) == PREPARATION_BASE_BYTES
    n, one = 3_000_000, 300_000
    want = PREPARATION_BASE_BYTES + BYTES_PER_BAR * n + WORKING_BYTES
    want += int(SYMBOL_TABLES * one * row)
    assert preparation_peak(n, 225, 10, one) == want
    # the arrays held in memory (no folder): one table more
    assert preparation_peak(n, 225, 10, one, held=True) == want + n * row
    # unknown symbols: as if one symbol held every bar (the bound), and never more than that
    assert preparation_peak(n, 225, 10) == preparation_peak(n, 225, 10, n) > want
    assert preparation_peak(n, 225, 10, 10 * n) == preparation_peak(n, 225, 10)
    # more bars of the same symbols: only the bars themselves, not their features
    step = preparation_peak(2 * n, 225, 10, one) - preparation_peak(n, 225, 10, one)
    assert step == BYTES_PER_BAR * n < n * row // 7
    assert preparation_peak(n, 450, 10, one) > preparation_peak(n, 225, 10, one)


@pytest.mark.parametrize(("inputs", "horizon"), [(225, 10), (225, 1), (12, 30)])
def test_the_table_counts_float32_inputs_and_float64_targets(inputs: int, horizon: int) -> None:
    bars = 1_000  # few bars: the working memory is per bar
    table = bars * (4 * inputs + 8 * horizon)
    assert WORKING_BYTES_PER_BAR * bars < WORKING_BYTES
    want = PREPARATION_BASE_BYTES + (BYTES_PER_BAR + WORKING_BYTES_PER_BAR) * bars
    assert preparation_peak(bars, inputs, horizon) == want + int(SYMBOL_TABLES * table)
