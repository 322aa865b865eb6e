"""Variance paths of the classical baselines: parity with arch, square-root of time, causality."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from foxhunt.baselines.vol_paths import (
    ewma_path,
    fit_profile,
    forward_returns,
    garch_path,
    seasonal_path,
    standardised_quantiles,
    time_of_week_slots,
)
from foxhunt.data.scale.volatility import ewma_variance

H = 5


def _returns(n: int = 400, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_t(5, n) * 1e-3


def test_forward_returns_are_the_cumulative_log_returns() -> None:
    close = np.array([100.0, 101.0, 99.0, 102.0])
    y = forward_returns(close, 2)
    assert y[0, 0] == pytest.approx(np.log(101 / 100)) and y[0, 1] == pytest.approx(np.log(0.99))
    assert y[2, 0] == pytest.approx(np.log(102 / 99)) and np.isnan(y[2, 1]) and np.isnan(y[3]).all()


def test_ewma_scales_with_the_square_root_of_time() -> None:
    r = _returns()
    v = ewma_path(r, 0.94, 1e-6, H)
    s = ewma_variance(r, 0.94, 1e-6)
    np.testing.assert_allclose(v, s[:, None] * np.arange(1, H + 1))


def test_garch_filter_matches_arch_with_fixed_parameters() -> None:
    """Our recursion is arch's conditional variance one bar ahead, and its h-step cumulative
    variance is the sum of arch's analytic forecasts."""
    from arch import arch_model

    r = _returns(300)
    params = np.array([2e-8, 0.08, 0.9, 6.0])  # omega, alpha, beta, nu
    res = arch_model(r, mean="Zero", vol="GARCH", p=1, q=1, dist="t", rescale=False).fix(params)
    cond = np.asarray(res.conditional_volatility) ** 2
    v = garch_path(r, 2e-8, 0.08, 0.9, float(cond[0]), H)
    np.testing.assert_allclose(v[:-1, 0], cond[1:], rtol=1e-10)  # f[t] = sigma^2[t+1]
    fc = res.forecast(horizon=H, start=100, reindex=False).variance.to_numpy()  # (n-100, H)
    np.testing.assert_allclose(v[100:], np.cumsum(fc, axis=1), rtol=1e-8)


def test_time_of_week_slots_start_on_monday_utc() -> None:
    def us(t: dt.datetime) -> int:
        return int(t.replace(tzinfo=dt.UTC).timestamp() * 1e6)

    monday = dt.datetime(2024, 1, 1)  # a Monday
    times = [monday, monday + dt.timedelta(minutes=29), monday + dt.timedelta(minutes=30)]
    times += [monday + dt.timedelta(days=6, hours=23, minutes=59)]
    np.testing.assert_array_equal(
        time_of_week_slots(np.array([us(t) for t in times]), 30), [0, 0, 1, 335]
    )


def test_profile_is_each_slots_mean_square_over_the_overall_one() -> None:
    r = np.array([1.0, 2.0, 1.0, 2.0, 3.0])
    slots = np.array([0, 1, 0, 1, 2])
    p = fit_profile(r, slots, 4, min_count=2)
    total = np.mean(r**2)
    np.testing.assert_allclose(p, [1.0 / total, 4.0 / total, 1.0, 1.0])  # 2 and 3: too few


def test_every_path_is_causal() -> None:
    """Truncating the future never changes a path's earlier rows."""
    r = _returns(300)
    slot_now = np.arange(300) % 7
    slot_ahead = (slot_now[:, None] + np.arange(1, H + 1)) % 7
    profile = np.linspace(0.5, 2.0, 7)
    paths = {
        "ewma": lambda x, n: ewma_path(x, 0.97, 1e-6, H),
        "garch": lambda x, n: garch_path(x, 1e-8, 0.05, 0.93, 1e-6, H),
        "seasonal": lambda x, n: seasonal_path(
            x, slot_now[:n], slot_ahead[:n], profile, 0.97, 1e-6
        ),
    }
    for name, path in paths.items():
        full = path(r, 300)
        np.testing.assert_allclose(path(r[:200], 200), full[:200], err_msg=name)


def test_standardised_quantiles_skip_unknown_outcomes() -> None:
    g = np.random.default_rng(1)
    y = g.normal(size=(500, 2))
    y[-10:, 1] = np.nan
    var = np.full((500, 2), 4.0)
    levels = np.array([0.1, 0.5, 0.9])
    z = standardised_quantiles(y, var, levels)
    np.testing.assert_allclose(z[0], np.quantile(y[:, 0] / 2, levels))
    np.testing.assert_allclose(z[1], np.quantile(y[:-10, 1] / 2, levels))


def test_a_horizon_without_outcomes_gets_the_standard_normals_quantiles() -> None:
    y = np.random.default_rng(2).normal(size=(50, 2))
    y[:, 1] = np.nan
    z = standardised_quantiles(y, np.ones((50, 2)), np.array([0.1, 0.5, 0.975]))
    np.testing.assert_allclose(z[1], [-1.2815515655446004, 0.0, 1.959963984540054], atol=1e-12)


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0])
def test_garch_recursion_at_the_edges_of_beta(beta: float) -> None:
    r = _returns(40)
    f, want = 3e-6, []
    for x in 1e-8 + 0.05 * r**2:
        f = x + beta * f
        want.append(f)
    np.testing.assert_allclose(garch_path(r, 1e-8, 0.05, beta, 3e-6, 1)[:, 0], want, rtol=1e-12)
