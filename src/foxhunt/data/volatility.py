"""Causal volatility estimates of one symbol's bar returns.

One home for the RiskMetrics-style exponentially weighted variance that the classical baselines
(EWMA, time-of-week x EWMA) and the per-window target scale both need. Every function here is
causal: the value at row ``t`` uses returns at rows ``<= t`` only, so truncating the future never
changes the past (tests/data/test_volatility.py checks it).
"""

from __future__ import annotations

import numpy as np

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
    out = np.empty(len(r2))
    a = 1.0 - decay
    if initial is not None:
        s = float(initial)
        for t, x in enumerate(r2):
            s = decay * s + a * x
            out[t] = s
    else:
        num = den = 0.0
        for t, x in enumerate(r2):
            num = decay * num + x
            den = decay * den + 1.0
            out[t] = num / den
    return np.maximum(out, VARIANCE_FLOOR)
