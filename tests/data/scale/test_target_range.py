"""The window scale's ``range`` estimator (``target_scale_estimator``): each encoder bar's
variance is ``kappa (gap**2 + log(high/low)**2 / (4 ln 2))`` instead of the squared return; the
search tries it beside ``close`` and keeps the one that scores better on the training windows."""

from __future__ import annotations

import dataclasses
import logging
import math

import numpy as np
import pytest
import torch
from choice_windows import ChoiceWindows

from foxhunt.config import ConfigError, DataConfig, RunConfig, TFTConfig
from foxhunt.data.features.table import feature_spec
from foxhunt.data.scale.choice import choose_target_scale, resolve_target_scale
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.scale.target import (
    GAP_FEATURE,
    RANGE_FEATURE,
    RETURN_FEATURE,
    TargetScale,
)

L, H = 12, 4
SPEC = dataclasses.replace(
    feature_spec(H),
    static=(),
    historical=(RETURN_FEATURE, GAP_FEATURE, RANGE_FEATURE),
    known=(),
    warmup=0,
)
AFFINE = ((1e-4, 2e-3), (-2e-5, 1e-3), (4e-3, 2e-3))  # (mean, std) of return, gap, range


def _scaler() -> ScalerParams:
    return ScalerParams(
        columns=SPEC.historical,
        mean=tuple(a[0] for a in AFFINE),
        std=tuple(a[1] for a in AFFINE),
        target_std=(1e-3,) * H,
    )


def _hist(returns: np.ndarray, gap: np.ndarray, hl: np.ndarray) -> torch.Tensor:
    """(N, L, 3) z-scored inputs: return, gap and log range of every bar."""
    raw = np.stack([returns, gap, hl], axis=-1)
    mean = np.array([a[0] for a in AFFINE])
    std = np.array([a[1] for a in AFFINE])
    return torch.from_numpy((raw - mean) / std)


def test_the_range_scale_is_the_ewma_of_the_scaled_gap_and_parkinson_variance() -> None:
    data = DataConfig(
        target_scale="window",
        target_scale_decay=0.9,
        target_scale_estimator="range",
        target_scale_range_ratio=1.7,
    )
    scale = TargetScale.of(data, SPEC, _scaler())
    assert scale.estimator == "range" and scale.range_index == (1, 2)
    rng = np.random.default_rng(1)
    r, gap = rng.normal(size=(2, 3, L)) * 1e-3
    hl = rng.uniform(1e-3, 8e-3, size=(3, L))
    got = scale.scale(_hist(r, gap, hl)).numpy() ** 2  # (3, H) cumulative variances
    v = 1.7 * (gap**2 + hl**2 / (4 * math.log(2)))
    w = 0.9 ** np.arange(L - 1, -1, -1)
    ewma = (v * w).sum(axis=1) / w.sum()
    np.testing.assert_allclose(got, ewma[:, None] * np.arange(1, H + 1)[None, :], rtol=1e-9)
    close = TargetScale.of(
        dataclasses.replace(data, target_scale_estimator="close"), SPEC, _scaler()
    )
    assert close.estimator == "close"
    want = (r**2 * w).sum(axis=1) / w.sum()
    np.testing.assert_allclose(
        close.scale(_hist(r, gap, hl)).numpy() ** 2, want[:, None] * np.arange(1, H + 1), rtol=1e-9
    )


def test_a_range_scale_without_the_inputs_warns_and_uses_the_close(
    caplog: pytest.LogCaptureFixture,
) -> None:
    spec = dataclasses.replace(SPEC, historical=(RETURN_FEATURE, GAP_FEATURE))
    scaler = ScalerParams(
        columns=spec.historical, mean=(1e-4, 0.0), std=(2e-3, 1e-3), target_std=(1e-3,) * H
    )
    data = DataConfig(target_scale="window", target_scale_estimator="range")
    with caplog.at_level(logging.WARNING):
        scale = TargetScale.of(data, spec, scaler)
    assert scale.estimator == "close"
    assert RANGE_FEATURE in caplog.text


def test_the_config_refuses_an_unknown_estimator_and_a_bad_ratio() -> None:
    with pytest.raises(ConfigError, match="target_scale_estimator"):
        DataConfig(target_scale_estimator="parkinson")  # type: ignore[arg-type]
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ConfigError, match="target_scale_range_ratio"):
            DataConfig(target_scale_range_ratio=bad)


def _windows(informative: bool, n: int = 1500) -> ChoiceWindows:
    """Windows whose volatility differs from window to window; the bars' ranges track it
    closely (``informative``: a Parkinson range is a far less noisy variance than a squared
    return) or are noise unrelated to it. The ranges are twice what the returns' level implies,
    so the ratio the search fits is about 1/4."""
    rng = np.random.default_rng(6)
    sigma = np.exp(rng.uniform(np.log(5e-4), np.log(5e-3), size=n))
    returns = rng.normal(size=(n, L)) * sigma[:, None]
    target = np.cumsum(rng.normal(size=(n, H)) * sigma[:, None], axis=1)
    level = sigma if informative else rng.permutation(sigma)
    noise = np.exp(rng.normal(scale=0.1, size=(n, L)))
    hl = 2.0 * math.sqrt(4 * math.log(2)) * level[:, None] * noise
    gap = np.zeros((n, L))
    return ChoiceWindows(_hist(returns, gap, hl), target, SPEC)


def _cfg() -> RunConfig:
    return RunConfig(
        model=TFTConfig(encoder_length=L, horizon=H),
        data=DataConfig(target_scale="window", target_scale_search=True),
    )


def test_the_search_takes_the_range_where_it_tracks_the_volatility_and_not_where_it_is_noise() -> (
    None
):
    good = choose_target_scale(_windows(True), SPEC, _scaler(), _cfg())  # type: ignore[arg-type]
    noise = choose_target_scale(_windows(False), SPEC, _scaler(), _cfg())  # type: ignore[arg-type]
    assert good is not None and noise is not None
    assert good.estimator == "range" and noise.estimator == "close"
    assert set(good.estimator_losses) == {"close", "range"}
    assert good.estimator_losses["range"] < good.estimator_losses["close"]
    assert noise.estimator_losses["close"] < noise.estimator_losses["range"]
    # mean r**2 / mean (hl**2 / (4 ln 2)) = 1 / 4 here, up to the noise's log-normal factor
    assert 0.2 < good.range_ratio < 0.3
    assert noise.range_ratio == 1.0 and good.best_loss == good.estimator_losses["range"]


def test_resolve_stores_the_estimator_and_ratio_in_the_config() -> None:
    resolved = resolve_target_scale(_cfg(), _windows(True), SPEC, _scaler())  # type: ignore[arg-type]
    assert resolved.data.target_scale_estimator == "range"
    back = RunConfig.from_dict(resolved.to_dict())
    assert back.data.target_scale_estimator == "range"
    assert back.data.target_scale_range_ratio == resolved.data.target_scale_range_ratio != 1.0
    old = resolved.to_dict()
    del old["data"]["target_scale_estimator"], old["data"]["target_scale_range_ratio"]
    loaded = RunConfig.from_dict(old)  # a config.json written before the option
    assert loaded.data.target_scale_estimator == "close"
    assert loaded.data.target_scale_range_ratio == 1.0


def test_a_run_without_the_range_inputs_only_tries_the_close() -> None:
    spec = dataclasses.replace(SPEC, historical=(RETURN_FEATURE,))
    scaler = ScalerParams(
        columns=(RETURN_FEATURE,), mean=(AFFINE[0][0],), std=(AFFINE[0][1],),
        target_std=(1e-3,) * H,
    )  # fmt: skip
    w = _windows(True)
    w.hist, w.spec = w.hist[:, :, :1], spec
    choice = choose_target_scale(w, spec, scaler, _cfg())  # type: ignore[arg-type]
    assert choice is not None and choice.estimator == "close"
    assert choice.estimator_losses == {} and choice.range_ratio == 1.0
