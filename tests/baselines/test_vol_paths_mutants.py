"""Edges of the classical baselines' variance paths that tests/baselines/test_vol_paths.py leaves
open: inputs in other dtypes are read as float64 (int64 for times), empty and one-bar series,
a time-of-week path recomputed from its formula, and a loss that skips only the rows with an
unknown outcome. Expected values are recomputed here in float64 from the documented formulas."""

from __future__ import annotations

import datetime as dt
import warnings

import numpy as np
import pytest

from foxhunt.baselines.vol_paths import (
    fit_profile,
    forward_returns,
    garch_path,
    mean_quantile_loss,
    seasonal_path,
    time_of_week_slots,
)

H = 4


def _returns32(n: int, seed: int = 0) -> np.ndarray:
    """Bar returns of a realistic size (~1e-3) stored as float32."""
    return (np.random.default_rng(seed).standard_t(5, n) * 1e-3).astype(np.float32)


def _garch_by_hand(
    r: np.ndarray, omega: float, alpha: float, beta: float, initial: float, horizon: int
) -> np.ndarray:
    """f[t] = omega + alpha r[t]^2 + beta f[t-1]; V[t, h-1] = sum over k = 1..h of the k-th bar's
    expected variance E_k, with E_1 = f[t] and E_k = omega + (alpha + beta) E_{k-1}."""
    out = np.empty((len(r), horizon))
    f = initial
    for t, x in enumerate(np.asarray(r, dtype=np.float64)):
        f = omega + alpha * x * x + beta * f
        e, total = f, 0.0
        for h in range(horizon):
            total += e
            out[t, h] = total
            e = omega + (alpha + beta) * e
    return out


def test_forward_returns_of_float32_closes_are_computed_in_float64() -> None:
    """float32 closes give the float64 log returns of those same values (not float32 logs)."""
    g = np.random.default_rng(3)
    close = (100.0 * np.exp(np.cumsum(g.normal(0.0, 1e-3, 30)))).astype(np.float32)
    y = forward_returns(close, H)
    c = close.astype(np.float64)
    assert y.shape == (30, H) and y.dtype == np.float64
    for h in range(1, H + 1):
        np.testing.assert_allclose(y[: 30 - h, h - 1], np.log(c[h:] / c[:-h]), rtol=1e-9, atol=0)
        assert np.isnan(y[30 - h :, h - 1]).all()


def test_garch_path_of_no_returns_is_an_empty_n_by_h_array() -> None:
    """No bars: zero rows and still H columns, float64."""
    v = garch_path(np.array([]), 1e-8, 0.05, 0.9, 1e-6, H)
    assert v.shape == (0, H) and v.dtype == np.float64


def test_garch_path_of_one_return_is_its_one_row_forecast() -> None:
    """A single bar gives one row: the cumulative variance after that bar."""
    r = np.array([2e-3])
    v = garch_path(r, 1e-8, 0.05, 0.9, 1e-6, H)
    assert v.shape == (1, H)
    np.testing.assert_allclose(v, _garch_by_hand(r, 1e-8, 0.05, 0.9, 1e-6, H), rtol=1e-12)


@pytest.mark.parametrize("beta", [0.9, 1.0])
def test_garch_path_of_float32_returns_is_computed_in_float64(beta: float) -> None:
    """float32 returns give the float64 recursion on those values (both the smoothing and the
    beta = 1 running-sum branches), not a float32 one."""
    r = _returns32(60)
    v = garch_path(r, 1e-8, 0.05, beta, 1e-6, H)
    assert v.dtype == np.float64
    np.testing.assert_allclose(v, _garch_by_hand(r, 1e-8, 0.05, beta, 1e-6, H), rtol=1e-11)


def _us(t: dt.datetime) -> int:
    return int(t.replace(tzinfo=dt.UTC).timestamp()) * 1_000_000


def test_time_of_week_slots_accept_datetime64_us_times() -> None:
    """A datetime64[us] array (a polars Datetime("us") column's to_numpy) is read as its epoch
    microseconds: the same integer slots as the int64 epoch values."""
    monday = dt.datetime(2024, 1, 1)  # a Monday
    times = [monday + dt.timedelta(minutes=m) for m in (0, 59, 60, 3 * 24 * 60 + 61)]
    times.append(monday + dt.timedelta(days=6, hours=23, minutes=59))
    as_dt64 = np.array([np.datetime64(t, "us") for t in times])
    assert as_dt64.dtype == np.dtype("datetime64[us]")
    slots = time_of_week_slots(as_dt64, 60)
    assert slots.dtype == np.int64
    np.testing.assert_array_equal(slots, [0, 0, 1, 73, 167])
    np.testing.assert_array_equal(slots, time_of_week_slots(np.array([_us(t) for t in times]), 60))


def test_time_of_week_slots_of_float_times_are_integer_indices() -> None:
    """Float epoch µs (e.g. ``timestamp() * 1e6``) still give int64 slots, usable as indices."""
    monday = dt.datetime(2024, 1, 1)
    times = [monday + dt.timedelta(minutes=m) for m in (0, 29, 30, 24 * 60 + 31)]
    us = np.array([t.replace(tzinfo=dt.UTC).timestamp() * 1e6 for t in times])
    assert us.dtype == np.float64
    slots = time_of_week_slots(us, 30)
    assert slots.dtype == np.int64
    np.testing.assert_array_equal(slots, [0, 0, 1, 49])


def test_fit_profile_of_float32_returns_is_computed_in_float64() -> None:
    """Each slot's mean square over the overall mean square, both in float64 from the float32
    values (slot 3 has too few returns and gets 1)."""
    r = _returns32(40, seed=5)
    slots = np.array([0, 1, 2] * 13 + [3])
    p = fit_profile(r, slots, 4, min_count=5)
    r2 = r.astype(np.float64) ** 2
    total = r2.mean()
    want = [r2[slots == k].mean() / total for k in range(3)] + [1.0]
    assert p.dtype == np.float64
    np.testing.assert_allclose(p, want, rtol=1e-12)


def test_fit_profile_of_no_returns_is_flat_without_warnings() -> None:
    """No training returns (a symbol with one bar): every slot gets 1, and no RuntimeWarning
    (no mean of an empty array is taken)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = fit_profile(np.array([]), np.array([], dtype=np.int64), 4, min_count=5)
    np.testing.assert_array_equal(p, np.ones(4))


def test_seasonal_path_is_the_ewma_of_deseasonalised_returns_times_the_profile_sum() -> None:
    """s[t] = decay s[t-1] + (1 - decay) r[t]^2 / p[slot_now[t]] from s[-1] = initial, and
    V[t, h-1] = s[t] * sum_{k<=h} p[slot_ahead[t, k-1]] (initial far from the returns' level,
    so the first rows depend on it)."""
    n, n_slots, decay, initial = 30, 5, 0.9, 5e-6
    g = np.random.default_rng(7)
    r = g.standard_t(5, n) * 1e-3
    slot_now = np.arange(n) % n_slots
    slot_ahead = (slot_now[:, None] + np.arange(1, H + 1)) % n_slots
    profile = np.array([0.3, 0.8, 1.0, 1.7, 2.5])
    v = seasonal_path(r, slot_now, slot_ahead, profile, decay, initial)
    want = np.empty((n, H))
    s = initial
    for t in range(n):
        s = decay * s + (1 - decay) * r[t] ** 2 / profile[slot_now[t]]
        want[t] = max(s, 1e-12) * np.cumsum(profile[slot_ahead[t]])
    assert v.shape == (n, H) and v.dtype == np.float64
    np.testing.assert_allclose(v, want, rtol=1e-10)


def test_seasonal_path_depends_on_the_returns_values_not_their_dtype() -> None:
    """float32 returns give exactly the path of their float64 copies, even with a float32
    profile (the returns are not deseasonalised in float32)."""
    r = _returns32(30, seed=9)
    slot_now = np.arange(30) % 3
    slot_ahead = (slot_now[:, None] + np.arange(1, H + 1)) % 3
    profile = np.array([0.3, 1.1, 2.9], dtype=np.float32)
    v32 = seasonal_path(r, slot_now, slot_ahead, profile, 0.94, 1e-6)
    v64 = seasonal_path(r.astype(np.float64), slot_now, slot_ahead, profile, 0.94, 1e-6)
    assert v32.dtype == np.float64
    np.testing.assert_array_equal(v32, v64)


def test_mean_quantile_loss_skips_only_rows_with_an_unknown_outcome() -> None:
    """A row with one NaN horizon (an origin near the end) is dropped; the others still score:
    the mean of max(q e, (q - 1) e), e = y - pred, over the remaining rows, horizons, levels."""
    g = np.random.default_rng(11)
    levels = np.array([0.1, 0.5, 0.9])
    y = g.normal(size=(6, H))
    y[4, H - 1] = np.nan
    pred = g.normal(size=(6, H, 3))
    keep = [0, 1, 2, 3, 5]
    e = y[keep][..., None] - pred[keep]
    want = np.maximum(levels * e, (levels - 1) * e).mean()
    loss = mean_quantile_loss(y, pred, levels)
    assert np.isfinite(loss)
    assert loss == pytest.approx(want, rel=1e-12)
