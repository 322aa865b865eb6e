"""Reliability, PIT and per-window losses of QuantileScores against loop references."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from foxhunt.infer.scores import QuantileScores

LEVELS = (0.1, 0.5, 0.9)


@settings(max_examples=20, deadline=None)
@given(b=st.integers(1, 10), h=st.integers(1, 3), seed=st.integers(0, 10_000))
def test_reliability_pit_and_window_losses_match_loops(b: int, h: int, seed: int) -> None:
    g = np.random.default_rng(seed)
    pred = np.sort(g.normal(0, 1, (b, h, 3)), axis=-1)
    y = g.normal(0, 1, (b, h))
    s = QuantileScores(LEVELS, h)
    s.update(torch.from_numpy(pred[: b // 2]), torch.from_numpy(y[: b // 2]))
    s.update(torch.from_numpy(pred[b // 2 :]), torch.from_numpy(y[b // 2 :]))
    r = s.result()
    below, pit, loss = np.zeros(3), np.zeros(4), np.zeros((b, h))
    for i in range(b):
        for j in range(h):
            k = 0
            for q, tau in enumerate(LEVELS):
                below[q] += y[i, j] <= pred[i, j, q]
                k += y[i, j] > pred[i, j, q]
                e = y[i, j] - pred[i, j, q]
                loss[i, j] += max(tau * e, (tau - 1) * e) / 3
            pit[k] += 1
    np.testing.assert_allclose(list(r["observed_levels"].values()), below / (b * h))
    np.testing.assert_allclose(r["pit"], pit / (b * h))
    np.testing.assert_allclose(s.window_losses().numpy(), loss, rtol=1e-12)
    assert abs(sum(r["pit"]) - 1) < 1e-12


def test_calibrated_forecasts_are_reliable() -> None:
    """Quantiles of the true distribution: observed levels near nominal, PIT near widths."""
    g = torch.Generator().manual_seed(0)
    y = torch.randn(20_000, 1, generator=g, dtype=torch.float64)
    z = torch.tensor([-1.2815515655, 0.0, 1.2815515655], dtype=torch.float64)
    s = QuantileScores(LEVELS, 1)
    s.update(z.expand(20_000, 1, 3), y)
    r = s.result()
    np.testing.assert_allclose(list(r["observed_levels"].values()), LEVELS, atol=0.01)
    np.testing.assert_allclose(r["pit"], [0.1, 0.4, 0.4, 0.1], atol=0.01)
