"""TargetScale: the causal per-window volatility scale against ewma_variance, its floor, and
the round trip standardise -> to_returns; WindowDataset.with_target_scale."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.config import DataConfig
from foxhunt.data.features.table import compute_features, feature_spec
from foxhunt.data.scale.scaler import ScalerParams, fit_scaler
from foxhunt.data.scale.target import RETURN_FEATURE, WINDOW_FLOOR, TargetScale, ewma_last
from foxhunt.data.scale.volatility import ewma_variance
from foxhunt.data.windows.dataset import WindowDataset

SPEC = feature_spec(4)
L, H = 12, 4


@pytest.mark.parametrize("decay", [0.5, 0.94, 0.99])
def test_ewma_last_equals_the_last_value_of_ewma_variance(decay: float) -> None:
    r = torch.from_numpy(np.random.default_rng(0).normal(0, 1e-3, size=(5, 20)))
    want = [ewma_variance(row.numpy(), decay)[-1] for row in r]
    assert ewma_last(r, decay).numpy() == pytest.approx(want, rel=1e-12)


def _scaler(target_std: tuple[float, ...], mean: float = 1e-4, std: float = 2e-3) -> ScalerParams:
    return ScalerParams(columns=(RETURN_FEATURE,), mean=(mean,), std=(std,), target_std=target_std)


def _spec_scale(mode: str, scaler: ScalerParams) -> TargetScale:
    spec = SPEC.__class__(
        static=(), historical=("obs__x", RETURN_FEATURE), known=(), targets=SPEC.targets, warmup=0
    )
    return TargetScale.of(DataConfig(target_scale=mode, target_scale_decay=0.9), spec, scaler)  # type: ignore[arg-type]


def test_window_scale_is_ewma_vol_times_sqrt_h_of_the_encoder_returns() -> None:
    scaler = _scaler((1e-3, 1.4e-3, 1.7e-3, 2e-3))
    ts = _spec_scale("window", scaler)
    assert ts.ret_index == 1
    raw = np.random.default_rng(1).normal(0, 3e-3, size=(3, L))  # one-bar log returns
    hist = torch.zeros(3, L, 2)
    hist[:, :, 1] = torch.from_numpy((raw - 1e-4) / 2e-3)  # z-scored as the model sees them
    got = ts.scale(hist)
    sigma = np.sqrt([ewma_variance(row, 0.9)[-1] for row in raw])
    want = sigma[:, None] * np.sqrt(np.arange(1, H + 1))[None, :]
    assert got.shape == (3, H)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


def test_window_scale_is_floored_for_a_flat_encoder() -> None:
    std = (1e-3, 1.4e-3, 1.7e-3, 2e-3)
    ts = _spec_scale("window", _scaler(std, mean=0.0))
    got = ts.scale(torch.zeros(2, L, 2))  # no move at all
    np.testing.assert_allclose(got.numpy(), [[WINDOW_FLOOR * s for s in std]] * 2)


def test_global_scale_is_the_training_std() -> None:
    std = (1e-3, 2e-3, 3e-3, 4e-3)
    ts = _spec_scale("global", _scaler(std))
    hist = torch.randn(2, L, 2)
    np.testing.assert_allclose(ts.scale(hist).numpy(), [std, std])
    t = torch.randn(2, H)
    assert torch.equal(ts.standardise(t, hist), t)


def test_standardise_then_to_returns_gives_log_returns_back() -> None:
    std = (1e-3, 2e-3, 3e-3, 4e-3)
    ts = _spec_scale("window", _scaler(std))
    hist = torch.randn(5, L, 2, dtype=torch.float64)
    y = torch.randn(5, H, dtype=torch.float64) * 1e-3  # log returns
    z = ts.standardise(y / torch.tensor(std, dtype=torch.float64), hist)
    back = ts.to_returns(z[:, :, None], hist)[:, :, 0]
    np.testing.assert_allclose(back.numpy(), y.numpy(), rtol=1e-12)


def test_window_mode_falls_back_to_global_without_the_close_return() -> None:
    """A custom feature set without the one-bar return, or a ``return:`` target: global."""
    spec = SPEC.__class__(static=(), historical=("a",), known=(), targets=SPEC.targets, warmup=0)
    assert (
        TargetScale.of(DataConfig(target_scale="window"), spec, _scaler((1.0,) * H)).mode
        == "global"
    )
    ok = _spec_scale("window", _scaler((1.0,) * H))
    assert ok.mode == "window"
    other = DataConfig(target_scale="window", target="return:carry")
    spec2 = SPEC.__class__(
        static=(), historical=("obs__x", RETURN_FEATURE), known=(), targets=SPEC.targets, warmup=0
    )
    assert TargetScale.of(other, spec2, _scaler((1.0,) * H)).mode == "global"


def test_dataset_with_target_scale_divides_targets_by_the_window_scale(
    panel_bars: pl.DataFrame,
) -> None:
    feats = compute_features(panel_bars, H)
    scaler = fit_scaler(feats, SPEC)
    plain = WindowDataset(feats, SPEC, L, H, scaler=scaler)
    ts = TargetScale.of(DataConfig(target_scale="window"), SPEC, scaler)
    scaled = plain.with_target_scale(ts)
    idx = [0, 7, len(plain) - 1]
    a, b = plain.batch(idx), scaled.batch(idx)
    assert plain.target_scale is None and scaled.historical is plain.historical  # shared arrays
    assert b.target is not None and a.target is not None
    y = a.target.double() * torch.tensor(scaler.target_std, dtype=torch.float64)  # log returns
    np.testing.assert_allclose(
        b.target.double().numpy(), (y / ts.scale(a.historical)).numpy(), rtol=1e-5
    )
    # the scale only reads the encoder: it equals the EWMA of the origin-and-earlier returns
    rows = plain.origin_rows()[idx]
    r1 = feats.get_column(RETURN_FEATURE).to_numpy().astype(np.float64)
    for k, row in enumerate(rows):
        sigma = math.sqrt(ewma_variance(r1[row - L + 1 : row + 1], 0.94)[-1])
        assert float(ts.scale(a.historical)[k, 0]) == pytest.approx(sigma, rel=1e-5)
