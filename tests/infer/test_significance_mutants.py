"""Edges of the Diebold–Mariano test (infer/significance.py) that `make mutate` found untested:
input precision, short and two-valued series, the bandwidth cap, the rounding threshold, the
Newey–West rule's step, empty groups and the verdict at a zero difference."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from foxhunt.infer import significance as sig


def _explicit_lrv(d: np.ndarray, k: int) -> float:
    e = d - d.mean()
    n = len(e)
    total = sum(e[t] * e[t] for t in range(n))
    for lag in range(1, k + 1):
        w = 1.0 - lag / (k + 1)
        total += 2.0 * w * sum(e[t] * e[t - lag] for t in range(lag, n))
    return total / n


def test_float32_losses_are_computed_in_float64() -> None:
    rng = np.random.default_rng(3)
    tft = rng.gamma(2.0, 1e-3, size=(300, 4)).astype(np.float32)
    base = (tft * rng.uniform(0.9, 1.1, size=tft.shape)).astype(np.float32)
    wide = sig.compare(tft.astype(np.float64), base.astype(np.float64))
    assert sig.compare(tft, base) == wide
    groups = np.repeat(np.array(["A", "B"]), 150)
    assert sig.compare_per_group(tft, base, groups) == sig.compare_per_group(
        tft.astype(np.float64), base.astype(np.float64), groups
    )
    d = (tft - base).mean(axis=1)
    assert sig.diebold_mariano(d, 3) == sig.diebold_mariano(d.astype(np.float64), 3)
    assert sig.bartlett_long_run_variance(d, 3) == sig.bartlett_long_run_variance(
        d.astype(np.float64), 3
    )


def test_the_bandwidth_is_capped_below_the_series_length() -> None:
    d = np.array([0.3, -1.2, 2.0, 0.5])
    stat, _ = sig.diebold_mariano(d, 10)  # lag 10 on 4 values: bandwidth 3
    expected = d.mean() / math.sqrt(_explicit_lrv(d, 3) / 4)
    assert stat == pytest.approx(expected, rel=1e-12)
    assert sig.bartlett_long_run_variance(d, 1) == pytest.approx(_explicit_lrv(d, 1), rel=1e-12)


def test_two_values_are_enough_and_one_is_not() -> None:
    stat, p = sig.diebold_mariano(np.array([1.0, 3.0]), 1)
    assert stat == pytest.approx(4.0) and 0 < p < 1e-3
    assert all(math.isnan(x) for x in sig.diebold_mariano(np.array([1.0]), 1))


def test_a_series_with_a_range_of_one_is_not_constant() -> None:
    d = np.array([0.0, 1.0, 0.0, 1.0, 1.0, 0.0])
    stat, p = sig.diebold_mariano(d, 1)
    assert math.isfinite(stat) and stat == pytest.approx(
        d.mean() / math.sqrt(_explicit_lrv(d, 1) / len(d))
    )
    assert 0 < p < 1


def test_a_constant_difference_is_infinitely_significant_with_its_sign() -> None:
    assert sig.diebold_mariano(np.full(5, -0.5), 2) == (-math.inf, 0.0)
    assert sig.diebold_mariano(np.full(5, 0.5), 2) == (math.inf, 0.0)
    assert sig.diebold_mariano(np.zeros(5), 2) == (0.0, 1.0)


def test_the_newey_west_rule_steps_where_its_formula_does() -> None:
    # 4 (n / 100)^(2/9) crosses 5 between n = 272 and 273
    assert sig.hac_lag(272, 2) == 4
    assert sig.hac_lag(274, 2) == 5
    assert sig.hac_lag(0, 3) == 2 and sig.hac_lag(1, 1) == 1


def test_a_difference_exactly_at_the_rounding_threshold_counts_as_zero() -> None:
    tol = 2.0**-20
    tft, base = np.array([1.0, 1.0]), np.array([1.0 - tol, 1.0 - 2 * tol])
    out = sig.loss_difference(tft, base, rtol=tol)
    assert out[0] == 0.0 and out[1] == 2 * tol


def test_no_verdict_without_a_difference_whatever_the_p_value() -> None:
    assert sig.verdict(0.0, 1e-9) == sig.NO_DIFFERENCE
    assert sig.verdict(1.0, 1e-9) == "lose" and sig.verdict(-1.0, 1e-9) == "win"
    assert sig.verdict(-1.0, 0.05) == sig.NO_DIFFERENCE


def test_an_empty_group_reports_nan_without_averaging_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a mean of nothing would warn
        out = sig._one(np.array([]), np.array([]), 1)
    assert all(math.isnan(out[k]) for k in ("tft", "baseline", "difference", "relative"))


def test_a_zero_baseline_gives_no_relative_difference() -> None:
    out = sig._one(np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.0, 0.0]), 1)
    assert math.isnan(out["relative"]) and out["difference"] == 0.0


def test_every_entry_names_its_fields() -> None:
    rng = np.random.default_rng(0)
    tft = rng.gamma(2.0, 1.0, size=(50, 2))
    out = sig.compare(tft, tft * 1.1)
    fields = {"tft", "baseline", "difference", "relative", "dm_statistic", "p_value", "verdict"}
    assert set(out["pooled"]) == fields
    assert all(set(h) == fields for h in out["per_horizon"])
    per = sig.compare_per_group(tft, tft * 1.1, np.array(["X"] * 50))
    assert set(per["X"]) == fields | {"n_windows"}


def test_differences_too_small_to_square_fall_back_to_the_sign_of_their_mean() -> None:
    """Differences near 1e-200 are not constant, but their squares underflow to a long-run
    variance of exactly 0: the statistic is then ±inf (p 0) by the mean's sign, or (0, 1) for a
    zero mean, as for a constant difference, instead of a division by zero."""
    tiny = np.array([1e-200, 2e-200, 1e-200, 3e-200])
    assert sig.bartlett_long_run_variance(tiny, 2) == 0.0
    assert sig.diebold_mariano(tiny, 2) == (math.inf, 0.0)
    assert sig.diebold_mariano(-tiny, 2) == (-math.inf, 0.0)
    assert sig.diebold_mariano(np.array([1e-200, -1e-200]), 1) == (0.0, 1.0)
