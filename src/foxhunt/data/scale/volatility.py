"""Causal volatility estimates of one symbol's bar returns.

One home for the RiskMetrics-style exponentially weighted variance that the classical baselines
(EWMA, time-of-week x EWMA) and the per-window target scale both need. Every function here is
causal: the value at row ``t`` uses returns at rows ``<= t`` only, so truncating the future never
changes the past (tests/data/scale/test_volatility.py checks it).
"""

from __future__ import annotations

import numpy as np
import polars as pl

VARIANCE_FLOOR = 1e-12
"""Smallest variance returned (flat markets would otherwise give a zero scale)."""


def log_returns(close: np.ndarray) -> np.ndarray:
    """One-bar log returns of a close series; the first is 0 (no earlier bar)."""
    c = np.asarray(close, dtype=np.float64)
    out = np.zeros_like(c)
    if len(c) > 1:
        out[1:] = np.log(c[1:] / c[:-1])
    out[~np.isfinite(out)] = 0.0
    return out


def ewma_variance(returns: np.ndarray, decay: float, initial: float | None = None) -> np.ndarray:
    """Exponentially weighted one-bar variance (RiskMetrics), causal.

    With ``initial``: ``s[t] = decay * s[t-1] + (1 - decay) * r[t]**2``, ``s[-1] = initial``
    (pass a variance fitted on the training split). Without it, the weights are normalised over
    the returns seen so far (``sum decay**i r[t-i]**2 / sum decay**i``), so the first rows need
    no starting value and use no later return.

    Args:
        returns: One-bar returns in time order (one symbol).
        decay: RiskMetrics lambda in (0, 1); 0.94 is the classic daily value.
        initial: Variance before the first return, or None (normalised weights).

    Returns:
        ``s`` of the same length; ``s[t]`` is the variance estimate after seeing ``r[t]``,
        i.e. the forecast for bar ``t + 1``. Floored at :data:`VARIANCE_FLOOR`.
    """
    if not 0.0 < decay < 1.0:
        raise ValueError(f"decay must be in (0, 1), got {decay}")
    r2 = np.square(np.asarray(returns, dtype=np.float64))
    return np.maximum(exponential_smooth(r2, decay, initial), VARIANCE_FLOOR)


def exponential_smooth(x: np.ndarray, decay: float, initial: float | None = None) -> np.ndarray:
    """``y[t] = decay * y[t-1] + (1 - decay) * x[t]`` with ``y[-1] = initial``; without
    ``initial``, the normalised weights ``sum decay**i x[t-i] / sum decay**i`` (i <= t).

    Runs in polars' compiled ``ewm_mean`` (``adjust=False`` on ``[initial, *x]``, or
    ``adjust=True``): a Python loop took 0.8 s per 370 k bars, and ``scipy.signal.lfilter``,
    which runs the same recursion, costs a process that imports it ~1.6 s and ~61 MiB RSS
    (``import scipy.signal`` after ``foxhunt.train.run``). Equal to the recursion to float64
    rounding (tests/data/scale/test_volatility.py).

    Args:
        x: values in time order, float64, finite.
        decay: in [0, 1).
        initial: ``y[-1]``, or None (normalised weights).

    Returns:
        (len(x),) float64.
    """
    if not 0.0 <= decay < 1.0:
        raise ValueError(f"decay must be in [0, 1), got {decay}")
    x = np.asarray(x, dtype=np.float64)
    if len(x) == 0:
        return np.empty(0)
    alpha = 1.0 - decay
    if initial is None:
        return pl.Series(x).ewm_mean(alpha=alpha, adjust=True).to_numpy()
    series = pl.Series(np.concatenate([[float(initial)], x]))
    return series.ewm_mean(alpha=alpha, adjust=False).to_numpy()[1:]
