"""row_arrays contracts that `make mutate` found unguarded (mutation/mutate.py)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.windows.row_arrays import row_arrays
from foxhunt.errors import DataError

SPEC = FeatureSpec(
    historical=("obs__a", "obs__b"),
    known=("known__k",),
    static=("static__s",),
    targets=("target__h1", "target__h2", "target__h3"),
    warmup=0,
)
FRAME = pl.DataFrame(
    {
        "obs__a": [1.0, 2.0, 3.0],
        "obs__b": [10, 20, 40],  # integer column: still float32 out
        "known__k": [0.5, 0.5, 1.5],
        "static__s": [7.0, 7.0, 7.0],
        "target__h1": [0.1, -0.2, 0.3],
        "target__h2": [1.0, 2.0, 3.0],
        "target__h3": [-4.0, 0.0, 4.0],
    }
)
SCALER = ScalerParams(
    columns=SPEC.inputs,
    mean=(2.0, 20.0, 0.5, 7.0),
    std=(0.5, 10.0, 1.0, 1.0),
    target_std=(0.1, 2.0, 4.0, 99.0),  # one more horizon than kept: sliced to H
)


def test_targets_are_divided_by_their_per_horizon_std() -> None:
    hist, known, static, target = row_arrays(FRAME, SPEC, 3, SCALER, with_target=True)
    assert target is not None and target.dtype == torch.float32
    expected = np.array([[1.0, 0.5, -1.0], [-2.0, 1.0, 0.0], [3.0, 1.5, 1.0]], dtype=np.float32)
    np.testing.assert_allclose(target.numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(hist.numpy(), [[-2.0, -1.0], [0.0, 0.0], [2.0, 2.0]])
    np.testing.assert_allclose(known.numpy(), [[0.0], [0.0], [1.0]])
    np.testing.assert_allclose(static.numpy(), [[0.0], [0.0], [0.0]])


def test_unscaled_targets_are_the_column_values() -> None:
    *_, target = row_arrays(FRAME, SPEC, 3, None, with_target=True)
    assert target is not None
    np.testing.assert_allclose(
        target.numpy(), FRAME.select(SPEC.targets).to_numpy().astype(np.float32)
    )
    assert row_arrays(FRAME, SPEC, 3, None, with_target=False)[3] is None


def test_a_scaler_without_an_input_is_refused_naming_it() -> None:
    partial = ScalerParams(
        columns=("obs__a", "known__k", "static__s"),
        mean=(0.0, 0.0, 0.0),
        std=(1.0, 1.0, 1.0),
        target_std=(1.0, 1.0, 1.0),
    )
    with pytest.raises(DataError, match=r"^scaler params lack input 'obs__b'$"):
        row_arrays(FRAME, SPEC, 3, partial, with_target=False)
