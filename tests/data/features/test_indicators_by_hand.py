"""foxhunt's RSI and NATR features against values computed by hand on a few bars.

Wilder's smoothing as TA-Lib seeds it: the simple mean of the first n values, then
``s_t = (s_{t-1} (n - 1) + x_t) / n``. The first values are worked out in the comments; the
rest follow from the same recursion, written out below (no indicator library involved).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from foxhunt.data.features.observed import observed_features

CLOSE = np.array([10.0, 11.0, 10.5, 11.5, 12.0, 11.0, 11.5, 12.5, 12.0, 13.0, 12.5, 12.0])
BARS = pl.DataFrame({"close": CLOSE, "high": CLOSE + 0.5, "low": CLOSE - 0.5})


def _feature(name: str) -> np.ndarray:
    expr = dict(observed_features())[name]
    return BARS.select(expr.alias(name)).to_series().to_numpy()


def _wilder(values: list[float], n: int) -> list[float]:
    smoothed = [sum(values[:n]) / n]
    for x in values[n:]:
        smoothed.append((smoothed[-1] * (n - 1) + x) / n)
    return smoothed


def test_rsi_3_by_hand() -> None:
    n = 3
    moves = [b - a for a, b in zip(CLOSE[:-1], CLOSE[1:], strict=True)]
    gains = _wilder([max(m, 0.0) for m in moves], n)
    losses = _wilder([max(-m, 0.0) for m in moves], n)
    rsi = [100.0 * g / (g + lo) for g, lo in zip(gains, losses, strict=True)]
    got = _feature("obs__rsi_3")  # (RSI - 50) / 50
    # moves +1, -0.5, +1: mean gain 2/3, mean loss 1/6 -> RSI 80 -> 0.6
    assert got[3] == pytest.approx(0.6, abs=1e-12)
    # then +0.5: gain (2/3 * 2 + 0.5) / 3 = 11/18, loss (1/6 * 2) / 3 = 2/18 -> RSI 1100/13
    assert got[4] == pytest.approx(9 / 13, abs=1e-12)
    np.testing.assert_allclose(got[n:], (np.array(rsi) - 50.0) / 50.0, rtol=0, atol=1e-12)
    assert (got[:n] == 0.0).all()  # warm-up: no value yet, cleaned to 0


def test_natr_7_by_hand() -> None:
    n = 7
    # high/low are close +- 0.5, so the true range is |move| + 0.5, at least 1
    true_range = [
        max(h - lo, abs(h - c_prev), abs(lo - c_prev))
        for h, lo, c_prev in zip(CLOSE[1:] + 0.5, CLOSE[1:] - 0.5, CLOSE[:-1], strict=True)
    ]
    assert true_range[:7] == [1.5, 1.0, 1.5, 1.0, 1.5, 1.0, 1.5]
    atr = _wilder(true_range, n)
    got = _feature("obs__natr_7")  # ATR / close
    # the first ATR is the mean of seven true ranges: 9 / 7, over the close of bar 7 (12.5)
    assert got[7] == pytest.approx(9 / 7 / 12.5, abs=1e-12)
    np.testing.assert_allclose(got[n:], np.array(atr) / CLOSE[n:], rtol=0, atol=1e-12)
    assert (got[:n] == 0.0).all()
