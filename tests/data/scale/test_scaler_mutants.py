"""Scaler contracts that `make mutate` found unguarded."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.scale.scaler import (
    MIN_STD,
    ScalerParams,
    _safe_std,
    apply_scaler,
    fit_scaler,
    fit_scaler_columns,
    unscale_targets,
)
from foxhunt.errors import DataError

PARAMS = ScalerParams(
    columns=("obs__a", "obs__b"), mean=(1.0, 2.0), std=(2.0, 4.0), target_std=(0.5, 2.0)
)


def test_unscaling_a_tensor_multiplies_each_horizon_by_its_std_in_its_dtype() -> None:
    values = torch.tensor([[1.0, 1.0], [2.0, -3.0]])
    out = unscale_targets(values, PARAMS)
    assert out.dtype == torch.float32
    torch.testing.assert_close(out, torch.tensor([[0.5, 2.0], [1.0, -6.0]]))
    quantiles = torch.ones(1, 2, 3, dtype=torch.float64)  # [B, H, Q], horizons on axis 1
    out = unscale_targets(quantiles, PARAMS, horizon_axis=1)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out[0, :, 0], torch.tensor([0.5, 2.0], dtype=torch.float64))


def test_unscaling_keeps_the_tensors_device() -> None:
    # the meta device stands in for CUDA: the std must follow the values there
    out = unscale_targets(torch.zeros(4, 2, device="meta"), PARAMS)
    assert out.device.type == "meta" and out.shape == (4, 2)


def test_unscaling_an_array_gives_an_array() -> None:
    out = unscale_targets(np.array([[2.0, 2.0]], dtype=np.float32), PARAMS)
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, [[1.0, 4.0]])


def test_a_missing_scaled_column_is_refused_naming_it() -> None:
    df = pl.DataFrame({"obs__a": [1.0, 3.0]})
    with pytest.raises(DataError, match=r"^features lack column 'obs__b' required by the scaler$"):
        apply_scaler(df, PARAMS)


def test_params_of_unequal_lengths_are_not_silently_truncated() -> None:
    bad = ScalerParams(columns=("obs__a", "obs__b"), mean=(1.0,), std=(2.0,), target_std=())
    df = pl.DataFrame({"obs__a": [1.0, 3.0], "obs__b": [2.0, 6.0]})
    with pytest.raises(ValueError):
        apply_scaler(df, bad)


def test_bad_params_dict_is_a_data_error_saying_so() -> None:
    with pytest.raises(DataError, match=r"^invalid scaler params: "):
        ScalerParams.from_dict({"columns": ["a"]})


SPEC = FeatureSpec(
    historical=("obs__a", "obs__flat"), known=(), static=(), targets=("target__h1",), warmup=0
)


def test_fit_scaler_stores_each_columns_population_std_and_one_for_flat_columns() -> None:
    train = pl.DataFrame(
        {"obs__a": [1.0, 3.0, 5.0, 7.0], "obs__flat": [2.0] * 4, "target__h1": [0.0, 0.0, 2.0, 2.0]}
    )
    params = fit_scaler(train, SPEC)
    assert params.mean == (4.0, 2.0)
    assert params.std == pytest.approx((5.0**0.5, 1.0))  # ddof 0: mean square deviation 5
    assert params.target_std == (1.0,)


def test_fit_scaler_refuses_an_empty_split_and_names_a_missing_column() -> None:
    one_row = pl.DataFrame({"obs__a": [1.0], "obs__flat": [2.0], "target__h1": [0.5]})
    assert fit_scaler(one_row, SPEC).std == (1.0, 1.0)  # a single row is fitted, not refused
    with pytest.raises(DataError, match=r"^cannot fit the scaler on an empty training split$"):
        fit_scaler(one_row.clear(), SPEC)
    with pytest.raises(DataError, match=r"^training features lack column 'target__h1'$"):
        fit_scaler(one_row.drop("target__h1"), SPEC)


def test_an_all_null_training_column_gets_mean_nan_and_std_one() -> None:
    """A column with no value in the training rows (a covariate the split never saw): no mean,
    and a std of 1 so scaling leaves it as it is rather than dividing by nothing."""
    columns = {
        "obs__a": pl.Series([1.0, 3.0]),
        "obs__flat": pl.Series([None, None], dtype=pl.Float64),
        "target__h1": pl.Series([0.0, 2.0]),
    }
    params = fit_scaler_columns(columns.__getitem__, SPEC)
    assert params.mean[0] == 2.0 and math.isnan(params.mean[1])
    assert params.std == (1.0, 1.0)
    assert params.target_std == (1.0,)


def test_a_std_of_exactly_min_std_is_kept_and_below_it_is_one() -> None:
    assert _safe_std(MIN_STD) == MIN_STD
    assert _safe_std(MIN_STD / 2) == 1.0
    assert _safe_std(None) == 1.0
    assert _safe_std(math.inf) == 1.0


def test_params_of_unequal_lengths_from_a_dict_say_so() -> None:
    bad = {"columns": ["a", "b"], "mean": [0.0], "std": [1.0], "target_std": [1.0]}
    with pytest.raises(
        DataError, match=r"^invalid scaler params: columns, mean and std differ in length$"
    ):
        ScalerParams.from_dict(bad)
