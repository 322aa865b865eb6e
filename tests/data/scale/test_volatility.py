"""The causal EWMA variance: recursion by hand, no look-ahead, floors."""

import numpy as np
import pytest

from foxhunt.data.scale.volatility import VARIANCE_FLOOR, ewma_variance, log_returns


def test_log_returns_first_is_zero_and_rest_by_hand() -> None:
    r = log_returns(np.array([100.0, 101.0, 99.0]))
    assert r[0] == 0.0
    assert r[1] == pytest.approx(np.log(101 / 100))
    assert r[2] == pytest.approx(np.log(99 / 101))


def test_recursion_with_initial_matches_hand_computation() -> None:
    r = np.array([0.01, -0.02, 0.0])
    s = ewma_variance(r, decay=0.9, initial=4e-4)
    s0 = 0.9 * 4e-4 + 0.1 * 1e-4
    s1 = 0.9 * s0 + 0.1 * 4e-4
    s2 = 0.9 * s1
    assert s == pytest.approx([s0, s1, s2])


def test_normalised_weights_without_initial() -> None:
    r = np.array([0.03, 0.01])
    s = ewma_variance(r, decay=0.5)
    assert s[0] == pytest.approx(9e-4)  # the only return seen
    assert s[1] == pytest.approx((0.5 * 9e-4 + 1e-4) / 1.5)


@pytest.mark.parametrize("initial", [None, 1e-4])
def test_truncating_the_future_never_changes_the_past(initial: float | None) -> None:
    r = np.random.default_rng(0).standard_normal(500) * 0.01
    full = ewma_variance(r, 0.97, initial)
    for cut in (1, 7, 250):
        assert np.array_equal(ewma_variance(r[:cut], 0.97, initial), full[:cut])


def test_floor_and_bad_decay() -> None:
    assert ewma_variance(np.zeros(3), 0.9).min() == VARIANCE_FLOOR
    with pytest.raises(ValueError, match="decay"):
        ewma_variance(np.zeros(3), 1.0)


@pytest.mark.parametrize("initial", [None, 3e-4])
def test_filter_matches_the_recursion_written_as_a_loop(initial: float | None) -> None:
    r = np.random.default_rng(1).standard_normal(2000) * 0.01
    ref, s, num, den = np.empty(len(r)), initial, 0.0, 0.0
    for t, x in enumerate(r**2):
        if initial is None:
            num, den = 0.94 * num + x, 0.94 * den + 1.0
            ref[t] = num / den
        else:
            s = 0.94 * s + 0.06 * x
            ref[t] = s
    np.testing.assert_allclose(ewma_variance(r, 0.94, initial), ref, rtol=1e-12)
