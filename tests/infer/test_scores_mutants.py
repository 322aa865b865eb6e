"""QuantileScores contracts that `make mutate` found unguarded (mutation/mutate.py, scores).

Every key of ``result()`` against a loop reference, on small integer-valued forecasts so that
outcomes land exactly on a quantile (the ``<=`` / ``>=`` boundaries), with asymmetric levels
(q and 1 - q are not interchangeable) and horizons that differ.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from foxhunt.infer.scores import QuantileScores

LEVELS = (0.02, 0.1, 0.3, 0.5, 0.9, 0.98)
LO_HI = {"10-90": (1, 4), "2-98": (0, 5)}


def _reference(pred: np.ndarray, y: np.ndarray) -> dict[str, object]:
    b, h, q = pred.shape
    pin = np.zeros((h, q))
    covered = {name: np.zeros(h) for name in LO_HI}
    below = np.zeros(q)
    pit = np.zeros(q + 1)
    for i in range(b):
        for j in range(h):
            for k, tau in enumerate(LEVELS):
                e = y[i, j] - pred[i, j, k]
                pin[j, k] += max(tau * e, (tau - 1) * e)
                below[k] += y[i, j] <= pred[i, j, k]
            for name, (lo, hi) in LO_HI.items():
                covered[name][j] += pred[i, j, lo] <= y[i, j] <= pred[i, j, hi]
            pit[sum(y[i, j] > pred[i, j, k] for k in range(q))] += 1
    abs_sum = np.abs(y).sum()
    return {
        "n_windows": b,
        "pinball": pin / b,
        "pinball_per_horizon": (pin / b).mean(axis=1),
        "pinball_per_quantile": (pin / b).mean(axis=0),
        "mean_pinball": (pin / b).mean(),
        "q_risk": {"P50": 2 * pin[:, 3].sum() / abs_sum, "P90": 2 * pin[:, 4].sum() / abs_sum},
        "coverage": {name: c.sum() / (b * h) for name, c in covered.items()},
        "coverage_per_horizon": {name: c / b for name, c in covered.items()},
        "observed_levels": below / (b * h),
        "pit": pit / (b * h),
    }


def _data(b: int, h: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(seed)
    pred = np.sort(g.integers(-3, 4, (b, h, len(LEVELS))).astype(np.float64), axis=-1)
    y = g.integers(-3, 4, (b, h)).astype(np.float64)
    y[0, 0] = 1.0  # never all zero
    return pred, y


@pytest.mark.parametrize(("b", "h", "seed"), [(9, 3, 0), (1, 1, 5), (17, 2, 11)])
def test_every_score_matches_a_loop_reference_with_ties(b: int, h: int, seed: int) -> None:
    pred, y = _data(b, h, seed)
    s = QuantileScores(LEVELS, h)
    half = b // 2
    s.update(torch.from_numpy(pred[:half]), torch.from_numpy(y[:half]))  # may be empty
    s.update(torch.from_numpy(pred[half:]), torch.from_numpy(y[half:]))
    r = s.result()
    ref = _reference(pred, y)
    assert r["n_windows"] == ref["n_windows"] == s.n
    np.testing.assert_allclose(r["pinball"], ref["pinball"], rtol=1e-6)
    np.testing.assert_allclose(r["pinball_per_horizon"], ref["pinball_per_horizon"], rtol=1e-6)
    assert list(r["pinball_per_quantile"]) == ["0.02", "0.1", "0.3", "0.5", "0.9", "0.98"]
    np.testing.assert_allclose(
        list(r["pinball_per_quantile"].values()), ref["pinball_per_quantile"], rtol=1e-6
    )
    assert r["mean_pinball"] == pytest.approx(ref["mean_pinball"], rel=1e-6)
    assert r["q_risk"] == pytest.approx(ref["q_risk"], rel=1e-6)
    assert r["coverage"] == pytest.approx(ref["coverage"], rel=1e-12)
    assert set(r["coverage_per_horizon"]) == set(LO_HI)
    for name in LO_HI:
        np.testing.assert_allclose(
            r["coverage_per_horizon"][name], ref["coverage_per_horizon"][name]
        )
    assert list(r["observed_levels"]) == list(r["pinball_per_quantile"])
    np.testing.assert_allclose(list(r["observed_levels"].values()), ref["observed_levels"])
    np.testing.assert_allclose(r["pit"], ref["pit"])
    assert len(r["pit"]) == len(LEVELS) + 1


def test_float32_inputs_on_a_boundary_count_as_covered_and_below() -> None:
    """An outcome equal to the lower or upper quantile is inside the interval and at/below it."""
    pred = torch.tensor([[[-2.0, -1.0, 0.0, 0.5, 1.0, 2.0]]] * 2)
    y = torch.tensor([[-1.0], [1.0]])  # the 0.1 and the 0.9 quantile exactly
    s = QuantileScores(LEVELS, 1)
    s.update(pred, y)
    r = s.result()
    assert r["coverage"] == {"10-90": 1.0, "2-98": 1.0}
    assert r["coverage_per_horizon"] == {"10-90": [1.0], "2-98": [1.0]}
    assert list(r["observed_levels"].values()) == [0.0, 0.5, 0.5, 0.5, 1.0, 1.0]
    assert r["pit"] == [0.0, 0.5, 0.0, 0.0, 0.5, 0.0, 0.0]


def test_window_losses_keep_update_order_and_shape() -> None:
    pred, y = _data(6, 2, 3)
    s = QuantileScores(LEVELS, 2)
    assert s.window_losses().shape == (0, 2) and s.window_losses().dtype == torch.float64
    s.update(torch.from_numpy(pred[:4]), torch.from_numpy(y[:4]))
    s.update(torch.from_numpy(pred[:0]), torch.from_numpy(y[:0]))  # empty: ignored
    s.update(torch.from_numpy(pred[4:]), torch.from_numpy(y[4:]))
    levels = np.array(LEVELS)
    e = y[..., None] - pred
    want = np.maximum(levels * e, (levels - 1) * e).mean(axis=-1)
    np.testing.assert_allclose(s.window_losses().numpy(), want, rtol=1e-12)
    assert s.n == 6 and s.result()["n_windows"] == 6


def test_empty_scores_and_all_zero_outcomes() -> None:
    """No windows: zeros, not a division by zero; outcomes all zero: q-risk is NaN."""
    empty = QuantileScores(LEVELS, 2).result()
    assert empty["n_windows"] == 0 and empty["mean_pinball"] == 0.0
    assert empty["coverage"] == {"10-90": 0.0, "2-98": 0.0} and empty["pit"] == [0.0] * 7
    s = QuantileScores(LEVELS, 1)
    s.update(torch.ones(3, 1, 6), torch.zeros(3, 1))
    r = s.result()
    assert math.isnan(r["q_risk"]["P50"]) and math.isnan(r["q_risk"]["P90"])


def test_levels_a_model_lacks_report_no_interval_and_no_risk() -> None:
    s = QuantileScores((0.1, 0.25, 0.9), 1)
    s.update(torch.tensor([[[-1.0, 0.0, 1.0]]]), torch.tensor([[0.5]]))
    r = s.result()
    assert r["coverage"] == {"10-90": 1.0} and r["coverage_per_horizon"] == {"10-90": [1.0]}
    assert set(r["q_risk"]) == {"P90"}
    s = QuantileScores((0.02, 0.5, 0.98), 1)
    s.update(torch.tensor([[[-1.0, 0.0, 1.0]]]), torch.tensor([[2.0]]))
    r = s.result()
    assert r["coverage"] == {"2-98": 0.0} and set(r["q_risk"]) == {"P50"}


def test_sums_are_kept_in_float64() -> None:
    """Outcomes of 1 + 2**-23 in batches of 4: each batch's pinball (computed in fp32, as the
    loss) is exact, but 3 batches' sums are not float32 numbers; the zero forecast's P50 q-risk
    is exactly 1 only if the pinball and |y| sums are accumulated in float64."""
    y = torch.full((4, 2), 1 + 2**-23, dtype=torch.float64)
    s = QuantileScores((0.1, 0.5, 0.9), 2)
    for _ in range(3):
        s.update(torch.zeros(4, 2, 3, dtype=torch.float64), y)
    r = s.result()
    assert r["q_risk"]["P50"] == 1.0
    assert s.abs_sum.tolist() == [12 * (1 + 2**-23)] * 2
    assert s.pinball_sum[:, 1].tolist() == [6 * (1 + 2**-23)] * 2


def test_coverage_and_levels_are_counted_in_float64() -> None:
    # one outcome of three inside the interval and under each quantile: float64 thirds, not
    # float32 ones converted
    pred = torch.tensor([[[-1.0, -0.5, 0.0, 0.5, 1.0, 2.0]]]).expand(3, 1, 6).double()
    y = torch.tensor([[0.75], [5.0], [6.0]], dtype=torch.float64)
    s = QuantileScores(LEVELS, 1)
    s.update(pred, y)
    r = s.result()
    assert r["coverage"]["10-90"] == 1 / 3
    assert r["coverage_per_horizon"]["10-90"] == [1 / 3]  # a tensor division: float64 counts
    assert r["observed_levels"]["0.9"] == 1 / 3 and r["observed_levels"]["0.5"] == 0.0


def test_nothing_fed_gives_empty_float64_per_window_arrays() -> None:
    s = QuantileScores(LEVELS, 3)
    losses, cover = s.window_losses(), s.window_coverage()
    assert losses.shape == (0, 3) and losses.dtype == torch.float64
    assert set(cover) == {"10-90", "2-98"}
    assert all(c.shape == (0,) and c.dtype == torch.float64 for c in cover.values())


def test_scores_without_window_coverage_hold_none_and_say_so() -> None:
    s = QuantileScores(LEVELS, 3, 100, window_coverage=False)
    assert all(not parts for parts in s._window_covered.values())  # no (N,) array allocated
    with pytest.raises(
        ValueError, match=r"^these scores keep no per-window coverage \(window_coverage=False\)$"
    ):
        s.window_coverage()
