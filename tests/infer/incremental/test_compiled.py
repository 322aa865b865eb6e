"""The compiled feature step against the numpy one (``infer/incremental/compiled.py``).

Both kernels run on the same real bars (``real_bars.parquet``: BTC perpetual and GBP/USD,
test_engine.py's fixture), with bars fast-forwarded (no features) and bars without their
derived series mixed in, and must leave the same state and give the same features.
``test_engine.py`` checks each kernel against the batch pipeline.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from foxhunt.data.features.observed import RANK_SPECS, WARMUP
from foxhunt.infer.incremental.engine import (
    KERNEL_ENV,
    IncrementalFeatures,
    compiled_available,
    feature_names,
)

pytest.importorskip("numba")

from tests.infer.incremental.test_engine import FIXTURE, _inputs  # noqa: E402

RANKS = {f"obs__{k}_{w}_pctile_{n}" for k, w, n in RANK_SPECS}
N = 700


@pytest.fixture(scope="module")
def data() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    bars = pl.read_parquet(FIXTURE).group_by("symbol", maintain_order=True).head(N)
    return _inputs(bars)


def test_the_kernels_agree_on_state_and_every_feature(
    data: dict[str, tuple[np.ndarray, np.ndarray]],
) -> None:
    symbols = sorted(data)
    plain = IncrementalFeatures(capacity=1, compiled=False)  # both grow on the way
    fast = IncrementalFeatures(capacity=1, compiled=True)
    slots = plain.slot_of(symbols)
    assert fast.slot_of(symbols).tolist() == slots.tolist()
    names = feature_names()
    ranks = np.array([n in RANKS for n in names])
    compared = 0
    for i in range(N):
        values = np.stack([data[s][0][i] for s in symbols])
        session = np.array([data[s][1][i] for s in symbols], np.int32)
        derived, features = i % 97 != 5, i % 53 != 7
        a = plain.step(slots, values, session, derived=derived, features=features)
        b = fast.step(slots, values, session, derived=derived, features=features)
        if not features:
            assert a is None and b is None
            continue
        assert a is not None and b is not None
        if i < WARMUP:
            continue
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        # ranks may move by a tie step: the volatilities they rank agree to 1e-15, not bits
        np.testing.assert_allclose(b[:, ~ranks], a[:, ~ranks], rtol=1e-9, atol=1e-12)
        assert np.nanmax(np.abs(b[:, ranks] - a[:, ranks])) <= 0.05
        compared += 1
    assert compared > 400
    np.testing.assert_array_equal(plain.count, fast.count)
    np.testing.assert_array_equal(plain.session, fast.session)
    np.testing.assert_allclose(fast.packed, plain.packed, rtol=1e-12)
    np.testing.assert_allclose(fast.ring, plain.ring, rtol=1e-12, atol=0)
    for k in plain.state:  # the named views read the packed array
        np.testing.assert_array_equal(plain.state[k], fast.state[k])


def test_the_env_var_turns_the_kernel_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KERNEL_ENV, "numpy")
    assert not compiled_available()
    assert not IncrementalFeatures().compiled
    monkeypatch.setenv(KERNEL_ENV, "numba")
    assert compiled_available()
    assert IncrementalFeatures().compiled
