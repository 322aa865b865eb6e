"""The Diebold–Mariano test: HAC variance against a hand-written Newey–West, the verdict rule,
and that overlapping windows are not mistaken for independent evidence."""

from __future__ import annotations

import math

import numpy as np
import pytest

from foxhunt.infer.significance import (
    NO_DIFFERENCE,
    bartlett_long_run_variance,
    compare,
    compare_per_group,
    diebold_mariano,
    hac_lag,
    verdict,
)


def _newey_west(d: np.ndarray, lag: int) -> float:
    x = d - d.mean()
    n = len(x)
    gam = [x[k:] @ x[: n - k] / n for k in range(lag + 1)]
    return gam[0] + 2 * sum((1 - k / (lag + 1)) * gam[k] for k in range(1, lag + 1))


def test_statistic_matches_a_hand_written_newey_west() -> None:
    d = np.random.default_rng(0).normal(0.1, 1.0, 500)
    stat, p = diebold_mariano(d, 4)
    want = d.mean() / math.sqrt(_newey_west(d, 4) / len(d))
    assert stat == pytest.approx(want, rel=1e-10)
    assert p == pytest.approx(math.erfc(abs(want) / math.sqrt(2)), rel=1e-10)


_SIZES = [(500, 4), (37, 9), (2000, 0), (12, 11)]


@pytest.mark.parametrize(("n", "lag"), _SIZES)
def test_long_run_variance_equals_a_hand_written_bartlett_kernel(n: int, lag: int) -> None:
    d = np.random.default_rng(n).standard_t(3, n) + 0.2
    assert bartlett_long_run_variance(d, lag) == pytest.approx(_newey_west(d, lag), rel=1e-12)


@pytest.mark.slow  # arch's first kernel estimate costs 1.5 s (2 s more to import it)
@pytest.mark.parametrize(("n", "lag"), _SIZES)
def test_long_run_variance_equals_archs_bartlett_kernel(n: int, lag: int) -> None:
    from arch.covariance.kernel import Bartlett

    d = np.random.default_rng(n).standard_t(3, n) + 0.2
    want = float(Bartlett(d, bandwidth=lag, force_int=True).cov.long_run[0, 0])
    assert bartlett_long_run_variance(d, lag) == pytest.approx(want, rel=1e-12)


def test_lag_covers_the_overlap_of_the_windows() -> None:
    assert hac_lag(50, 10) == 9 and hac_lag(100_000, 2) == math.floor(4 * 1000 ** (2 / 9))


def test_overlapping_windows_are_not_independent_evidence() -> None:
    """A difference made of H-bar sums of noise (as overlapping windows give) with a small
    mean: a naive iid test calls it significant, the HAC test with lag H-1 does not."""
    h = 10
    e = np.random.default_rng(3).normal(size=4000 + h)
    d = np.convolve(e, np.ones(h), mode="valid")[:4000]
    d = d - d.mean() + 3.0 * d.std() / math.sqrt(len(d))  # naive t = 3
    naive = diebold_mariano(d, 0)
    hac = diebold_mariano(d, hac_lag(len(d), h))
    assert naive[1] < 0.01 and hac[1] > 0.05
    assert verdict(d.mean(), naive[1]) == "lose" and verdict(d.mean(), hac[1]) == NO_DIFFERENCE


def test_verdict_needs_significance_and_takes_the_sign() -> None:
    assert verdict(-1e-6, 0.01) == "win" and verdict(1e-6, 0.01) == "lose"
    assert verdict(-1e-6, 0.05) == NO_DIFFERENCE
    assert (
        verdict(-1e-6, math.nan) == "too few windows for a test"
    )  # no p-value: not "no difference"


def test_degenerate_differences() -> None:
    assert diebold_mariano(np.zeros(10), 2) == (0.0, 1.0)
    assert diebold_mariano(np.full(10, -1.0), 2) == (-math.inf, 0.0)
    assert all(math.isnan(x) for x in diebold_mariano(np.ones(1), 2))


def test_compare_pools_horizons_and_reports_each() -> None:
    g = np.random.default_rng(5)
    base = g.gamma(2.0, 1.0, (800, 3))
    tft = base * np.array([0.7, 1.0, 1.3])  # better at h1, equal at h2, worse at h3
    c = compare(tft, base)
    assert c["lag"] >= 2
    assert [x["verdict"] for x in c["per_horizon"]] == ["win", NO_DIFFERENCE, "lose"]
    assert c["per_horizon"][0]["relative"] == pytest.approx(-0.3)
    assert c["pooled"]["tft"] == pytest.approx(tft.mean())
    assert c["pooled"]["baseline"] == pytest.approx(base.mean())


def test_rounding_level_differences_get_no_verdict() -> None:
    # An ensemble of identical members differs from member 0 by float32 rounding only: the test
    # must not turn that noise into a win or a loss (it did, per horizon, before the tolerance).
    g = np.random.default_rng(7)
    base = g.gamma(2.0, 1.0, (600, 4))
    noise = 1 + g.choice([-1, 0, 1], size=base.shape) * np.float64(np.finfo(np.float32).eps)
    tft = base * noise - 1e-9 * base  # all noise, with a consistent sign shift of 1e-9
    assert np.any(tft != base)
    c = compare(tft, base)
    assert c["pooled"]["verdict"] == NO_DIFFERENCE
    assert c["pooled"]["difference"] == 0.0
    assert all(x["verdict"] == NO_DIFFERENCE for x in c["per_horizon"])
    # A real edge of 1e-4 relative is still seen.
    c = compare(base * (1 - 1e-4), base)
    assert c["pooled"]["verdict"] == "win"


def test_per_group_comparison_tests_each_group_on_its_own_windows() -> None:
    """Symbol A: the TFT clearly better; symbol B: clearly worse. Pooled they cancel; per group
    each keeps its verdict, equal to ``compare`` on that group's windows alone."""
    rng = np.random.default_rng(5)
    n, h = 600, 4
    base = rng.uniform(1.0, 2.0, (2 * n, h))
    tft = base.copy()
    tft[:n] -= 0.2
    tft[n:] += 0.2
    groups = np.array(["A"] * n + ["B"] * n)
    by = compare_per_group(tft, base, groups)
    assert list(by) == ["A", "B"]
    assert by["A"]["verdict"] == "win" and by["B"]["verdict"] == "lose"
    assert by["A"]["n_windows"] == by["B"]["n_windows"] == n
    alone = compare(tft[n:], base[n:])["pooled"]
    assert {k: by["B"][k] for k in alone} == alone
    assert compare(tft, base)["pooled"]["verdict"] == NO_DIFFERENCE
