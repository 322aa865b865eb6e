"""Cumulative-return variance paths of the classical baselines, for one symbol's bars.

Every baseline forecasts the cumulative log return ``y[t, h] = log(close[t+h] / close[t])`` at an
origin ``t`` as ``sqrt(V[t, h]) * z[h, q]``: a variance ``V`` built from returns up to ``t`` only,
times a standardised quantile ``z`` fitted on the training split (filtered historical
simulation: the empirical quantiles of ``y / sqrt(V)`` over the training origins).

* **EWMA** (RiskMetrics): one-bar variance ``s[t]`` from
  :func:`foxhunt.data.scale.volatility.ewma_variance`; ``V[t, h] = h * s[t]`` (square-root of time).
* **GARCH(1,1)**: ``f[t] = omega + alpha * r[t]**2 + beta * f[t-1]`` is the variance of bar
  ``t + 1`` seen at ``t``; with ``phi = alpha + beta`` the expected variance ``k`` bars ahead is
  ``omega * (1 + phi + ... + phi**(k-2)) + phi**(k-1) * f[t]`` and ``V[t, h]`` sums it over
  ``k = 1..h``.
* **Time-of-week x EWMA**: returns are divided by ``sqrt(p[slot])``, a time-of-week profile of
  the mean squared return (training split), the EWMA runs on what is left, and
  ``V[t, h] = s~[t] * sum_k p[slot of the k-th scheduled bar after t]``.

All functions are causal in the origin: row ``t`` of every path reads returns at rows ``<= t``.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import torch

from foxhunt.data.scale.volatility import VARIANCE_FLOOR, ewma_variance, exponential_smooth
from foxhunt.model.quantile import pinball

WEEK_MINUTES = 7 * 24 * 60


def forward_returns(close: np.ndarray, horizon: int) -> np.ndarray:
    """``y[t, h-1] = log(close[t+h] / close[t])`` for h = 1..H; NaN where ``t + h`` is past the end.

    Returns:
        (n, H) float64.
    """
    c = np.log(np.asarray(close, dtype=np.float64))
    n = len(c)
    y = np.full((n, horizon), np.nan)
    for h in range(1, horizon + 1):
        if h < n:
            y[: n - h, h - 1] = c[h:] - c[: n - h]
    return y


def ewma_path(returns: np.ndarray, decay: float, initial: float, horizon: int) -> np.ndarray:
    """EWMA cumulative variance ``V[t, h-1] = h * s[t]``.

    Returns:
        (n, H) float64.
    """
    s = ewma_variance(returns, decay, initial)
    return s[:, None] * np.arange(1, horizon + 1, dtype=np.float64)[None, :]


def garch_path(
    returns: np.ndarray, omega: float, alpha: float, beta: float, initial: float, horizon: int
) -> np.ndarray:
    """GARCH(1,1) cumulative variance with fixed parameters (see the module docstring).

    Args:
        returns: one-bar returns in time order (one symbol).
        omega, alpha, beta: the GARCH(1,1) parameters, in the returns' units.
        initial: the variance of the first bar (``f[-1]``).
        horizon: H.

    Returns:
        (n, H) float64, floored at :data:`VARIANCE_FLOOR`.
    """
    r2 = np.square(np.asarray(returns, dtype=np.float64))
    if len(r2) == 0:
        return np.zeros((0, horizon))
    # f[t] = x[t] + beta f[t-1] with x = omega + alpha r^2 and f[-1] = initial; (1 - beta) f
    # is the exponential smooth of x with decay beta (beta = 1: a plain running sum).
    x = omega + alpha * r2
    if beta >= 1.0:
        f = initial + np.cumsum(x)
    else:
        f = exponential_smooth(x, beta, (1.0 - beta) * initial) / (1.0 - beta)
    phi = alpha + beta
    k = np.arange(1, horizon + 1)
    decay = phi ** (k - 1)  # weight of f[t] in the k-th bar's variance
    const = omega * np.concatenate([[0.0], np.cumsum(decay)[:-1]])  # omega * sum_{j<k-1} phi^j
    a, b = np.cumsum(decay), np.cumsum(const)  # summed over k = 1..h
    return np.maximum(b[None, :] + a[None, :] * f[:, None], VARIANCE_FLOOR)


def time_of_week_slots(ts_us: np.ndarray, slot_minutes: int) -> np.ndarray:
    """Time-of-week slot of each time (epoch µs, UTC): ``minute of week // slot_minutes``,
    Monday 00:00 UTC first."""
    minutes = np.asarray(ts_us, dtype=np.int64) // 60_000_000
    # 1970-01-01 was a Thursday: shift so that slot 0 starts on Monday.
    return ((minutes + 3 * 24 * 60) % WEEK_MINUTES) // slot_minutes


def fit_profile(returns: np.ndarray, slots: np.ndarray, n_slots: int, min_count: int) -> np.ndarray:
    """Mean squared return per slot over the overall mean (1 = an average slot); slots with
    fewer than ``min_count`` returns get 1. Floored at 0.05 so a quiet slot cannot blow up the
    deseasonalised return.

    Returns:
        (n_slots,) float64.
    """
    r2 = np.square(np.asarray(returns, dtype=np.float64))
    total = max(float(r2.mean()) if len(r2) else 0.0, VARIANCE_FLOOR)
    count = np.bincount(slots, minlength=n_slots)[:n_slots]
    sums = np.bincount(slots, weights=r2, minlength=n_slots)[:n_slots]
    profile = np.ones(n_slots)
    ok = count >= min_count
    profile[ok] = sums[ok] / count[ok] / total
    return np.maximum(profile, 0.05)


def seasonal_path(
    returns: np.ndarray,
    slot_now: np.ndarray,
    slot_ahead: np.ndarray,
    profile: np.ndarray,
    decay: float,
    initial: float,
) -> np.ndarray:
    """Time-of-week x EWMA cumulative variance.

    Args:
        returns: one-bar returns (one symbol).
        slot_now: (n,) slot of each bar.
        slot_ahead: (n, H) slot of the k-th scheduled bar after each bar.
        profile: (n_slots,) from :func:`fit_profile`.
        decay: EWMA decay on the deseasonalised returns.
        initial: their starting variance.

    Returns:
        (n, H) float64.
    """
    deseason = np.asarray(returns, dtype=np.float64) / np.sqrt(profile[slot_now])
    s = ewma_variance(deseason, decay, initial)
    return s[:, None] * np.cumsum(profile[slot_ahead], axis=1)


def standardised_quantiles(y: np.ndarray, var: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Empirical quantiles of ``y / sqrt(var)`` per horizon over the rows where ``y`` is known.

    Args:
        y: (n, H) realised cumulative returns (NaN where unknown).
        var: (n, H) their forecast variances.
        levels: (Q,) quantile levels.

    Returns:
        (H, Q); a horizon without any known ``y`` gets the standard normal's quantiles.
    """
    z = y / np.sqrt(var)
    out = np.empty((y.shape[1], len(levels)))
    for h in range(y.shape[1]):
        col = z[:, h][np.isfinite(z[:, h])]
        out[h] = (
            np.quantile(col, levels)
            if len(col)
            else [NormalDist().inv_cdf(float(p)) for p in levels]
        )
    return out


def mean_quantile_loss(y: np.ndarray, pred: np.ndarray, levels: np.ndarray) -> float:
    """Mean pinball loss of (n, H, Q) quantiles against (n, H) outcomes (NaN rows skipped)."""
    ok = np.isfinite(y).all(axis=1)
    if not ok.any():
        return np.inf
    loss = pinball(torch.from_numpy(pred[ok]), torch.from_numpy(y[ok]), torch.from_numpy(levels))
    return float(loss.numpy().mean())
