"""The data-preparation peak estimate (memory/preparation.py) against the measurements it was
fitted on (demo preset, 2018 1-minute bars; numbers in its docstring)."""

from __future__ import annotations

import pytest

from foxhunt.memory.preparation import PREPARATION_BASE_BYTES, preparation_peak


@pytest.mark.parametrize(
    ("bars", "measured"), [(4_000, 0.562e9), (725_641, 2.578e9), (3_544_194, 10.685e9)]
)
def test_estimate_is_within_15_percent_of_the_measured_peaks(bars: int, measured: float) -> None:
    assert preparation_peak(bars, 225, 10) == pytest.approx(measured, rel=0.15)


def test_estimate_grows_with_bars_and_columns() -> None:
    assert preparation_peak(0, 225, 10) == PREPARATION_BASE_BYTES
    one = preparation_peak(1_000_000, 225, 10) - PREPARATION_BASE_BYTES
    assert preparation_peak(2_000_000, 225, 10) - PREPARATION_BASE_BYTES == 2 * one
    assert preparation_peak(1_000_000, 450, 10) > preparation_peak(1_000_000, 225, 10)
