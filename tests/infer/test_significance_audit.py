"""Significance, planted bug of issue 28: ``compare`` keeps the ``H - 1`` floor of the HAC lag.

With H = 10 and fewer than ~3,800 windows the Newey-West rule alone gives a lag under 9
(n = 1000: 6), too short for windows that share up to 9 outcomes: overlapping noise would
be called a win."""

from __future__ import annotations

import math

import numpy as np

from foxhunt.infer.significance import (
    NO_DIFFERENCE,
    bartlett_long_run_variance,
    compare,
    diebold_mariano,
)

H, N = 10, 1000


def _overlapping_noise(t_at_full_lag: float) -> np.ndarray:
    """Per-window loss differences of overlapping H-bar windows (sums of H shocks: correlated
    up to lag H - 1), shifted so their DM statistic at lag H - 1 is ``t_at_full_lag``."""
    e = np.random.default_rng(0).normal(0.0, 0.05, N + H - 1)
    d = np.convolve(e, np.ones(H), mode="valid")
    d = d - d.mean()
    lrv = bartlett_long_run_variance(d, H - 1)  # equal to arch's (test_significance.py)
    return d + t_at_full_lag * math.sqrt(lrv / N)


def test_compare_keeps_the_overlap_floor_of_the_lag_and_calls_noise_no_difference() -> None:
    d = _overlapping_noise(-1.9)  # TFT "better", p = 0.057 at lag 9
    short_lag = math.floor(4 * (N / 100) ** (2 / 9))  # the Newey-West rule alone: 6
    assert short_lag < H - 1
    # The lag matters here: without the floor the same differences are a "significant" win.
    assert diebold_mariano(d, short_lag)[1] < 0.05 < diebold_mariano(d, H - 1)[1]
    base = 1.0 + np.random.default_rng(1).gamma(2.0, 1.0, (N, H))
    tft = base + d[:, None]  # the same difference at every horizon, so pooled too
    c = compare(tft, base)
    assert c["pooled"]["difference"] < 0
    assert c["pooled"]["verdict"] == NO_DIFFERENCE
    assert [x["verdict"] for x in c["per_horizon"]] == [NO_DIFFERENCE] * H
    assert c["pooled"]["p_value"] > 0.05
    assert c["lag"] == H - 1
