"""The data-preparation peak estimate (memory/preparation.py) against the measurements it was
fitted on (demo preset; the demo bars, the 2018 1-minute bars and the daily futures; numbers in
its docstring)."""

from __future__ import annotations

import pytest

from foxhunt.memory.preparation import (
    PREPARATION_BASE_BYTES,
    WORKING_BYTES,
    preparation_peak,
    table_bytes,
)


@pytest.mark.parametrize(
    ("bars", "largest", "measured"),
    [
        (4_000, 4_000, 0.561e9),  # demo bars
        (279_013, 279_013, 1.333e9),  # 1 symbol of 1-minute bars, January-September 2018
        (544_224, 279_013, 1.563e9),  # 2 symbols, January-September 2018
        (323_829, 6_865, 1.117e9),  # 88 daily futures, 1990-2009 (short symbols left out)
        (434_958, 8_127, 1.307e9),  # 88 daily futures, 1990-2014
        (2_645_200, 279_013, 3.776e9),  # 10 symbols, January-September 2018
        (3_544_194, 372_607, 4.765e9),  # 10 symbols, 2018
    ],
)
def test_estimate_is_within_15_percent_of_the_measured_peaks(
    bars: int, largest: int, measured: float
) -> None:
    assert preparation_peak(bars, 225, 10, largest) == pytest.approx(measured, rel=0.15)


def test_estimate_is_the_arrays_once_and_the_largest_symbols_table() -> None:
    row = 4 * 225 + 8 * 10
    assert table_bytes(1_000, 225, 10) == 1_000 * row
    assert preparation_peak(0, 225, 10) == PREPARATION_BASE_BYTES
    n, one = 3_000_000, 300_000
    want = PREPARATION_BASE_BYTES + n * row + one * row + WORKING_BYTES
    assert preparation_peak(n, 225, 10, one) == want
    # unknown symbols: as if one symbol held every bar (the bound), and never more than that
    assert preparation_peak(n, 225, 10) == preparation_peak(n, 225, 10, n) > want
    assert preparation_peak(n, 225, 10, 10 * n) == preparation_peak(n, 225, 10)
    # linear in the bars at one table's slope once the working memory stops growing
    step = preparation_peak(2 * n, 225, 10, one) - preparation_peak(n, 225, 10, one)
    assert step == n * row
    assert preparation_peak(n, 450, 10, one) > preparation_peak(n, 225, 10, one)


@pytest.mark.parametrize(("inputs", "horizon"), [(225, 10), (225, 1), (12, 30)])
def test_the_table_counts_float32_inputs_and_float64_targets(inputs: int, horizon: int) -> None:
    bars = 1_000  # a table below WORKING_BYTES: the working part is the table's own size
    table = bars * (4 * inputs + 8 * horizon)
    assert table < WORKING_BYTES
    assert preparation_peak(bars, inputs, horizon) == PREPARATION_BASE_BYTES + 3 * table
