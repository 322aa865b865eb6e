"""Tests written against the surviving mutants of data/scale/volatility.py (``make mutate
MUTATE_MODULES=volatility``; docs/testing.md, "Mutation testing"): the bounds of ``decay``, the
edges of ``log_returns`` and an empty series."""

from __future__ import annotations

import numpy as np
import pytest

from foxhunt.data.scale.volatility import (
    VARIANCE_FLOOR,
    ewma_variance,
    exponential_smooth,
    log_returns,
)


@pytest.mark.parametrize("decay", [0.0, 1.0, 1.5, -0.1])
def test_ewma_variance_needs_a_decay_strictly_between_0_and_1(decay: float) -> None:
    with pytest.raises(ValueError, match=r"decay must be in \(0, 1\)"):
        ewma_variance(np.ones(3), decay)


@pytest.mark.parametrize("decay", [1.0, 1.5, -0.1])
def test_exponential_smooth_refuses_a_decay_outside_0_1(decay: float) -> None:
    with pytest.raises(ValueError, match=r"decay must be in \[0, 1\), got"):
        exponential_smooth(np.ones(3), decay)


def test_a_zero_decay_smooths_nothing() -> None:
    x = np.array([1.0, 4.0, 2.0])
    assert np.array_equal(exponential_smooth(x, 0.0), x)
    assert np.array_equal(exponential_smooth(x, 0.0, initial=9.0), x)


def test_an_empty_series_stays_empty() -> None:
    out = exponential_smooth(np.array([]), 0.5)
    assert out.shape == (0,) and out.dtype == np.float64
    assert ewma_variance(np.array([]), 0.9).shape == (0,)


def test_without_initial_the_weights_are_normalised() -> None:
    x = np.array([1.0, 3.0])
    # (0.5 * 1 + 1 * 3) / 1.5, not the unadjusted 0.5 * 1 + 0.5 * 3
    assert exponential_smooth(x, 0.5)[1] == pytest.approx(3.5 / 1.5)


def test_log_returns_edges() -> None:
    assert np.array_equal(log_returns(np.array([5.0])), [0.0])  # one bar: no return
    assert np.array_equal(log_returns(np.array([])), np.array([]))
    two = log_returns(np.array([100.0, 110.0]))
    assert two[0] == 0.0 and two[1] == pytest.approx(np.log(1.1))
    bad = log_returns(np.array([1.0, 0.0, 2.0, np.nan, 3.0]))  # log 0, log inf, nan -> 0
    assert np.array_equal(bad, [0.0, 0.0, 0.0, 0.0, 0.0])
    ints = log_returns(np.array([2, 4]))  # integer prices: float returns
    assert ints.dtype == np.float64 and ints[1] == pytest.approx(np.log(2.0))


def test_the_variance_is_floored() -> None:
    assert np.all(ewma_variance(np.zeros(4), 0.9) == VARIANCE_FLOOR)
