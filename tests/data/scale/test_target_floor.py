"""The window scale's floor (``target_scale_floor``, session 57): ``pooled``, a tenth of the
training std of the h-bar return over every symbol, or ``own``, a tenth of the window's own
120-bar volatility x sqrt(h), held between a hundredth of the pooled floor and the pooled floor.

A calm symbol trained beside volatile ones (the fed funds future beside a meme stock, or beside
ES) had every window's scale at the pooled floor, 30-700 times its own volatility: its bands
covered every outcome. Hand-made windows here: returns and the 120-bar std set per window."""

from __future__ import annotations

import dataclasses
import logging

import numpy as np
import pytest
from choice_windows import ChoiceWindows
from test_target_anchor import RET_AFFINE, SPEC, H, L, _hist, _scaler

from foxhunt.config import DataConfig, RunConfig, TFTConfig, preset
from foxhunt.data.scale.choice import choose_target_scale
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.scale.target import (
    ANCHOR_FEATURE,
    OWN_FLOOR_MIN,
    RETURN_FEATURE,
    WINDOW_FLOOR,
    TargetScale,
)

POOLED = 1e-3  # _scaler's target std at every horizon


def _data(floor: str) -> DataConfig:
    return DataConfig(target_scale="window", target_scale_decay=0.9, target_scale_floor=floor)


def test_a_calm_window_keeps_its_own_scale_under_the_own_floor() -> None:
    """Window 0: returns of 1e-5 and a 120-bar std of 1e-5 (a rates future's day) beside a
    pooled std of 1e-3. Pooled: its scale is the floor, 1e-4 x sqrt(h) no matter what; own:
    its EWMA, 1e-5 x sqrt(h), over its own floor of 1e-6 x sqrt(h)."""
    r = np.full((2, L), 1e-5)
    r[1] = 2e-3  # window 1: as volatile as the pool
    sd = np.array([1e-5, 2e-3])
    h = np.sqrt(np.arange(1, H + 1))
    pooled = TargetScale.of(_data("pooled"), SPEC, _scaler()).scale(_hist(r, sd)).numpy()
    own_scale = TargetScale.of(_data("own"), SPEC, _scaler())
    assert own_scale.level_index == 1
    own = own_scale.scale(_hist(r, sd)).numpy()
    np.testing.assert_allclose(pooled[0], np.full(H, WINDOW_FLOOR * POOLED))
    np.testing.assert_allclose(own[0], 1e-5 * h, rtol=1e-6)
    np.testing.assert_allclose(own[1], pooled[1], rtol=1e-12)  # 2e-3 x sqrt(h): no floor
    np.testing.assert_allclose(own[1], 2e-3 * h, rtol=1e-6)


def test_the_own_floor_is_a_tenth_of_the_windows_level_between_its_bounds() -> None:
    """A flat encoder (returns 0) and a pooled std of 0.05: the scale is the floor itself.
    A 120-bar std of 3e-3: 3e-4 x sqrt(h); of 1e-9 (120 flat bars): a hundredth of the pooled
    floor, 5e-5; of 0.1: the pooled floor, 5e-3, never above it."""
    scaler = dataclasses.replace(_scaler(), target_std=(0.05,) * H)
    flat = np.zeros((3, L))
    sd = np.array([3e-3, 1e-9, 0.1])
    got = TargetScale.of(_data("own"), SPEC, scaler).scale(_hist(flat, sd)).numpy()
    h = np.sqrt(np.arange(1, H + 1))
    pooled_floor = WINDOW_FLOOR * 0.05
    np.testing.assert_allclose(got[0], WINDOW_FLOOR * 3e-3 * h, rtol=1e-6)
    np.testing.assert_allclose(got[1], np.full(H, OWN_FLOOR_MIN * pooled_floor))
    np.testing.assert_allclose(got[2], np.full(H, pooled_floor))
    pooled = TargetScale.of(_data("pooled"), SPEC, scaler).scale(_hist(flat, sd)).numpy()
    np.testing.assert_allclose(pooled, np.full((3, H), pooled_floor))


def test_the_own_floor_without_the_input_warns_and_is_pooled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    spec = dataclasses.replace(SPEC, historical=(RETURN_FEATURE,))
    scaler = ScalerParams(
        columns=(RETURN_FEATURE,), mean=(RET_AFFINE[0],), std=(RET_AFFINE[1],),
        target_std=(POOLED,) * H,
    )  # fmt: skip
    with caplog.at_level(logging.WARNING):
        scale = TargetScale.of(_data("own"), spec, scaler)
    assert scale.level_index == -1
    assert f"target_scale_floor 'own' needs the input {ANCHOR_FEATURE}" in caplog.text


def test_the_presets_floor_is_own_and_older_runs_keep_the_pooled_one() -> None:
    for name in ("demo", "fast", "tft-225"):
        assert preset(name).data.target_scale_floor == "own"
    old = preset("fast").to_dict()
    del old["data"]["target_scale_floor"]  # a config.json written before the option
    assert RunConfig.from_dict(old).data.target_scale_floor == "pooled"
    with pytest.raises(ValueError, match="target_scale_floor must be 'pooled' or 'own'"):
        DataConfig(target_scale_floor="mine")  # type: ignore[arg-type]


def test_the_search_scores_its_candidates_with_the_runs_floor() -> None:
    """Pooled symbols whose levels differ a hundredfold: the calm half's scale-only forecast
    is the pooled floor's under ``pooled``, its own under ``own``, and scores better (the
    volatile half's losses, a hundred times the calm half's, are the same under both)."""
    rng = np.random.default_rng(6)
    n = 1200
    sigma = np.where(np.arange(n) % 2 == 0, 2e-5, 2e-3)
    returns = rng.normal(size=(n, L)) * sigma[:, None]
    target = np.cumsum(rng.normal(size=(n, H)) * sigma[:, None], axis=1)
    windows = ChoiceWindows(_hist(returns, sigma), target, SPEC)
    losses = {}
    for floor in ("pooled", "own"):
        cfg = RunConfig(
            model=TFTConfig(encoder_length=L, horizon=H),
            data=dataclasses.replace(_data(floor), target_scale_search=True),
        )
        choice = choose_target_scale(windows, SPEC, _scaler(), cfg)  # type: ignore[arg-type]
        assert choice is not None
        losses[floor] = choice.best_loss
    assert losses["own"] < 0.98 * losses["pooled"]  # 3.88e-4 against 4.03e-4
