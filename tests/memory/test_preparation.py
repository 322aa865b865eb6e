"""The data-preparation peak estimate (memory/preparation.py) against the measurements it was
fitted on (demo preset; the demo bars, the 2018 1-minute bars and the daily futures; numbers in
its docstring)."""

from __future__ import annotations

import pytest

from foxhunt.memory.preparation import (
    PREPARATION_BASE_BYTES,
    TABLE_COPIES,
    WORKING_BYTES,
    preparation_peak,
)


@pytest.mark.parametrize(
    ("bars", "measured"),
    [
        (4_000, 0.562e9),  # demo bars
        (323_829, 1.499e9),  # 88 daily futures, 1990-2009 (short symbols left out)
        (434_958, 1.808e9),  # 88 daily futures, 1990-2014
        (557_801, 1.979e9),  # 2 symbols of 1-minute bars, January-September 2018
        (2_645_200, 6.404e9),  # 10 symbols, January-September 2018
        (3_544_194, 7.965e9),  # 10 symbols, 2018
    ],
)
def test_estimate_is_within_15_percent_of_the_measured_peaks(bars: int, measured: float) -> None:
    assert preparation_peak(bars, 225, 10) == pytest.approx(measured, rel=0.15)


def test_estimate_grows_with_bars_and_columns() -> None:
    assert preparation_peak(0, 225, 10) == PREPARATION_BASE_BYTES
    step = preparation_peak(2_000_000, 225, 10) - preparation_peak(1_000_000, 225, 10)
    assert preparation_peak(3_000_000, 225, 10) - preparation_peak(2_000_000, 225, 10) == step
    assert preparation_peak(1_000_000, 450, 10) > preparation_peak(1_000_000, 225, 10)
    # the working memory stops growing once the table passes it
    row = 4 * 225 + 8 * 10
    small = preparation_peak(1_000, 225, 10) - PREPARATION_BASE_BYTES
    assert small > int(2 * 1_000 * row)  # the table's own bytes count for the working part too
    big = WORKING_BYTES // row * 4
    assert preparation_peak(2 * big, 225, 10) - preparation_peak(big, 225, 10) < 2.1 * big * row


@pytest.mark.parametrize(("inputs", "horizon"), [(225, 10), (225, 1), (12, 30)])
def test_the_table_counts_float32_inputs_and_float64_targets(inputs: int, horizon: int) -> None:
    bars = 1_000  # a table below WORKING_BYTES: the working part is the table's own size
    table = bars * (4 * inputs + 8 * horizon)
    assert table < WORKING_BYTES
    want = PREPARATION_BASE_BYTES + int(TABLE_COPIES * table) + table
    assert preparation_peak(bars, inputs, horizon) == want
