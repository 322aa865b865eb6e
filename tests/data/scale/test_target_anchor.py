"""The window scale's anchor (``target_scale_anchor``): each window's own long-run variance from
the 120-bar realised volatility input seeds the EWMA and is what the scale reverts to; the
search tries it and keeps it only where it scores better."""

from __future__ import annotations

import dataclasses
import logging

import numpy as np
import pytest
import torch
from choice_windows import ChoiceWindows

from foxhunt.config import DataConfig, RunConfig, TFTConfig
from foxhunt.data.features.table import feature_spec
from foxhunt.data.scale.choice import choose_target_scale, resolve_target_scale
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.scale.target import ANCHOR_FEATURE, RETURN_FEATURE, TargetScale, ewma_last

L, H = 12, 4
SPEC = dataclasses.replace(
    feature_spec(H), static=(), historical=(RETURN_FEATURE, ANCHOR_FEATURE), known=(), warmup=0
)
RET_AFFINE = (1e-4, 2e-3)
ANCHOR_AFFINE = (3e-3, 1e-3)


def _scaler() -> ScalerParams:
    return ScalerParams(
        columns=(RETURN_FEATURE, ANCHOR_FEATURE),
        mean=(RET_AFFINE[0], ANCHOR_AFFINE[0]),
        std=(RET_AFFINE[1], ANCHOR_AFFINE[1]),
        target_std=(1e-3,) * H,
    )


def _hist(returns: np.ndarray, anchor_sd: np.ndarray) -> torch.Tensor:
    """(N, L, 2) z-scored inputs: returns, and the anchor (the 120-bar std) on every bar."""
    hist = torch.zeros(len(returns), L, 2, dtype=torch.float64)
    hist[:, :, 0] = torch.from_numpy((returns - RET_AFFINE[0]) / RET_AFFINE[1])
    hist[:, :, 1] = torch.from_numpy((anchor_sd[:, None] - ANCHOR_AFFINE[0]) / ANCHOR_AFFINE[1])
    return hist


def test_ewma_with_an_initial_value_is_the_riskmetrics_recursion() -> None:
    rng = np.random.default_rng(3)
    r = rng.normal(size=(3, 9)) * 1e-3
    start = np.array([1e-6, 4e-6, 9e-8])
    want = start.copy()
    for t in range(r.shape[1]):
        want = 0.9 * want + 0.1 * r[:, t] ** 2
    got = ewma_last(torch.from_numpy(r), 0.9, torch.from_numpy(start))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_the_anchored_scale_starts_from_and_reverts_to_each_windows_own_level() -> None:
    data = DataConfig(
        target_scale="window",
        target_scale_decay=0.9,
        target_scale_reversion=0.8,
        target_scale_anchor=True,
    )
    scale = TargetScale.of(data, SPEC, _scaler())
    assert scale.anchor_index == 1
    rng = np.random.default_rng(4)
    r = rng.normal(size=(2, L)) * 1e-3
    sd = np.array([1e-3, 5e-3])  # two windows, two long-run levels
    got = scale.scale(_hist(r, sd)).numpy() ** 2  # (2, H) cumulative variances
    seeded = 0.9**L * sd**2 + 0.1 * (r**2 * 0.9 ** np.arange(L - 1, -1, -1)).sum(axis=1)
    per_bar = sd[:, None] ** 2 + 0.8 ** np.arange(H)[None, :] * (seeded - sd**2)[:, None]
    np.testing.assert_allclose(got, per_bar.cumsum(axis=1), rtol=1e-6)
    plain = TargetScale.of(dataclasses.replace(data, target_scale_anchor=False), SPEC, _scaler())
    assert plain.anchor_index == -1
    assert not np.allclose(plain.scale(_hist(r, sd)).numpy() ** 2, got)


def test_an_anchor_without_the_input_warns_and_is_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    spec = dataclasses.replace(SPEC, historical=(RETURN_FEATURE,))
    scaler = ScalerParams(
        columns=(RETURN_FEATURE,), mean=(RET_AFFINE[0],), std=(RET_AFFINE[1],),
        target_std=(1e-3,) * H,
    )  # fmt: skip
    data = DataConfig(target_scale="window", target_scale_anchor=True)
    with caplog.at_level(logging.WARNING):
        scale = TargetScale.of(data, spec, scaler)
    assert scale.anchor_index == -1
    assert ANCHOR_FEATURE in caplog.text


def _windows(informative: bool, n: int = 1500) -> ChoiceWindows:
    """Pooled symbols whose volatility levels differ tenfold and stay put: the anchor is each
    window's true level (``informative``) or unrelated noise."""
    rng = np.random.default_rng(5)
    sigma = np.exp(rng.uniform(np.log(5e-4), np.log(5e-3), size=n))  # each symbol's level
    returns = rng.normal(size=(n, L)) * sigma[:, None]
    target = np.cumsum(rng.normal(size=(n, H)) * sigma[:, None], axis=1)
    anchor = sigma if informative else rng.permutation(sigma)
    return ChoiceWindows(_hist(returns, anchor), target, SPEC)


def _cfg() -> RunConfig:
    return RunConfig(
        model=TFTConfig(encoder_length=L, horizon=H),
        data=DataConfig(target_scale="window", target_scale_search=True),
    )


def test_the_search_anchors_where_the_level_is_informative_and_not_where_it_is_noise() -> None:
    good = choose_target_scale(_windows(True), SPEC, _scaler(), _cfg())  # type: ignore[arg-type]
    noise = choose_target_scale(_windows(False), SPEC, _scaler(), _cfg())  # type: ignore[arg-type]
    assert good is not None and noise is not None
    assert good.anchor and good.other_loss is not None and good.best_loss < good.other_loss
    assert not noise.anchor and noise.other_loss is not None
    assert noise.best_loss < noise.other_loss


def test_resolve_stores_the_anchor_in_the_config() -> None:
    resolved = resolve_target_scale(_cfg(), _windows(True), SPEC, _scaler())  # type: ignore[arg-type]
    assert resolved.data.target_scale_anchor
    back = RunConfig.from_dict(resolved.to_dict())
    assert back.data.target_scale_anchor
    old = resolved.to_dict()
    del old["data"]["target_scale_anchor"]  # a config.json written before the option
    assert not RunConfig.from_dict(old).data.target_scale_anchor
