"""Is the TFT's edge over a baseline real? The Diebold–Mariano test on per-window losses.

For windows ``i = 1..N`` (in time order within each symbol, symbols one after another) let
``d_i = L_tft,i - L_base,i`` be the difference of their pinball losses (mean over quantiles, and
over horizons for the pooled test). Windows ``h`` bars apart share ``H - h`` outcomes, so ``d``
is autocorrelated up to lag ``H - 1``; its mean's variance is the Newey–West (Bartlett kernel)
long-run variance over ``N``:

    DM = mean(d) / sqrt(LRV / N),  LRV = g_0 + 2 Σ_{k=1..K} (1 - k / (K + 1)) g_k,

``g_k`` the lag-``k`` autocovariance of ``d``, ``K = max(H - 1, floor(4 (N / 100)^(2/9)))``.
Two-sided p-value from the standard normal. The verdict is ``win`` (TFT's loss lower) or
``lose`` only when ``p < 0.05``; otherwise ``no significant difference`` (``too few windows
for a test`` on fewer than two, where there is no p-value).

Per-window differences within ``ROUNDING_RTOL`` of the larger loss count as 0: two forecasts
equal up to float32 rounding (an ensemble of identical members, the same model run twice) must
not get a verdict from the rounding noise.

The long-run variance is computed here (:func:`bartlett_long_run_variance`, equal to
``arch.covariance.kernel.Bartlett``'s to float64 rounding, tests/infer/test_significance.py),
so a process that only evaluates imports neither arch nor scipy (~150 MiB and ~2.5 s).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

ALPHA = 0.05
"""Significance level of a win or a loss."""

NO_DIFFERENCE = "no significant difference"
TOO_FEW = "too few windows for a test"
"""The verdict on fewer than two windows (no p-value): not "no significant difference"."""

ROUNDING_RTOL = 1e-6
"""Relative per-window difference treated as rounding (float32's epsilon is 1.2e-7)."""


def loss_difference(tft: np.ndarray, base: np.ndarray, rtol: float = ROUNDING_RTOL) -> np.ndarray:
    """``tft - base`` per window, with differences within ``rtol`` of the larger loss set to 0."""
    d = tft - base
    scale = np.maximum(np.abs(tft), np.abs(base))
    return np.where(np.abs(d) <= rtol * scale, 0.0, d)


def hac_lag(n: int, horizon: int) -> int:
    """Bartlett bandwidth: at least ``H - 1`` (the windows' overlap), else the Newey–West rule."""
    return max(horizon - 1, math.floor(4 * (max(n, 1) / 100) ** (2 / 9)))


def bartlett_long_run_variance(d: np.ndarray, bandwidth: int) -> float:
    """Newey–West long-run variance of ``d``: ``g_0 + 2 Σ_{k=1..K} (1 - k / (K + 1)) g_k`` with
    ``g_k = Σ_t e_t e_{t-k} / N`` over the demeaned ``e`` and ``K = bandwidth`` (< N)."""
    e = np.asarray(d, dtype=np.float64)
    e = e - e.mean()
    n = len(e)
    lrv = float(e @ e)
    for k in range(1, int(bandwidth) + 1):
        lrv += 2.0 * (1.0 - k / (bandwidth + 1)) * float(e[k:] @ e[:-k])
    return lrv / n


def diebold_mariano(d: np.ndarray, lag: int) -> tuple[float, float]:
    """DM statistic and two-sided p-value of ``mean(d) = 0`` with a Bartlett HAC variance.

    Returns:
        ``(statistic, p_value)``; ``(nan, nan)`` for fewer than two values. A constant ``d``
        gives ``(0, 1)`` when it is 0 and ``(±inf, 0)`` otherwise.
    """
    d = np.asarray(d, dtype=np.float64)
    n = len(d)
    if n < 2:
        return math.nan, math.nan
    mean = float(d.mean())
    if np.ptp(d) == 0:
        return (0.0, 1.0) if mean == 0 else (math.copysign(math.inf, mean), 0.0)
    lrv = bartlett_long_run_variance(d, min(lag, n - 1))
    if lrv <= 0:
        return (0.0, 1.0) if mean == 0 else (math.copysign(math.inf, mean), 0.0)
    stat = mean / math.sqrt(lrv / n)
    return stat, math.erfc(abs(stat) / math.sqrt(2.0))  # 2 P(Z > |stat|)


def verdict(mean_difference: float, p_value: float, alpha: float = ALPHA) -> str:
    """``win`` / ``lose`` for the TFT when significant at ``alpha``, else no difference (too
    few windows where there is no p-value)."""
    if math.isnan(p_value):
        return TOO_FEW
    if p_value >= alpha or mean_difference == 0:
        return NO_DIFFERENCE
    return "win" if mean_difference < 0 else "lose"


def _one(tft: np.ndarray, base: np.ndarray, lag: int) -> dict[str, Any]:
    d = loss_difference(tft, base)
    stat, p = diebold_mariano(d, lag)
    mean_base = float(base.mean()) if len(base) else math.nan
    diff = float(d.mean()) if len(d) else math.nan
    return {
        "tft": float(tft.mean()) if len(tft) else math.nan,
        "baseline": mean_base,
        "difference": diff,
        "relative": diff / mean_base if mean_base else math.nan,
        "dm_statistic": stat,
        "p_value": p,
        "verdict": verdict(diff, p),
    }


def compare(tft: np.ndarray, base: np.ndarray) -> dict[str, Any]:
    """The TFT against one baseline, pooled over horizons and per horizon.

    Args:
        tft: (N, H) the TFT's per-window pinball losses per horizon.
        base: (N, H) the baseline's, on the same windows.

    Returns:
        ``{"lag", "pooled": {...}, "per_horizon": [{...} x H]}``, each entry with ``tft``,
        ``baseline`` (mean losses), ``difference`` (TFT - baseline), ``relative`` (difference /
        baseline; negative = TFT better), ``dm_statistic``, ``p_value`` and ``verdict``.
    """
    tft, base = np.asarray(tft, dtype=np.float64), np.asarray(base, dtype=np.float64)
    n, h = tft.shape
    lag = hac_lag(n, h)
    return {
        "lag": lag,
        "pooled": _one(tft.mean(axis=1), base.mean(axis=1), lag),
        "per_horizon": [_one(tft[:, j], base[:, j], lag) for j in range(h)],
    }


def compare_per_group(tft: np.ndarray, base: np.ndarray, groups: np.ndarray) -> dict[str, Any]:
    """The TFT against one baseline within each group of windows (e.g. each symbol), pooled
    over horizons, in the order the groups first appear.

    Args:
        tft: (N, H) the TFT's per-window pinball losses per horizon.
        base: (N, H) the baseline's, on the same windows.
        groups: (N,) each window's group label; windows of a group keep their order (time
            order within a symbol), so the HAC variance sees their overlap.

    Returns:
        ``{group: {...}}``, each entry as ``compare``'s ``pooled``, plus ``n_windows``.
    """
    tft, base = np.asarray(tft, dtype=np.float64), np.asarray(base, dtype=np.float64)
    groups = np.asarray(groups)
    _, first = np.unique(groups, return_index=True)
    out: dict[str, Any] = {}
    for g in groups[np.sort(first)]:
        m = groups == g
        n = int(m.sum())
        out[str(g)] = {"n_windows": n} | _one(
            tft[m].mean(axis=1), base[m].mean(axis=1), hac_lag(n, tft.shape[1])
        )
    return out
