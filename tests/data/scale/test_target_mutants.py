"""Tests written against the surviving mutants of data/scale/target.py (``make mutate
MUTATE_MODULES=target_scale``; docs/testing.md, "Mutation testing"): the season's inputs found
by ``TargetScale.of``, an anchor in column 0 and read at the origin, the season and the anchor
together, dtypes, and the refusals."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest
import torch

from foxhunt.config import DataConfig
from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.scale.target import (
    ANCHOR_FEATURE,
    GAP_FEATURE,
    RANGE_FEATURE,
    RETURN_FEATURE,
    SEASON_BUCKETS,
    TOD_FEATURES,
    WINDOW_FLOOR,
    TargetScale,
    ewma_last,
    reverting_variance,
    tod_bucket,
)

L, H = 6, 3
TARGET_STD = (1.1e-3, 1.3e-3, 1.7e-3)
SEASON = tuple(float(x) for x in np.linspace(0.4, 2.2, SEASON_BUCKETS))


def _spec(historical: tuple[str, ...], known: tuple[str, ...] = ()) -> FeatureSpec:
    return FeatureSpec(
        historical=historical, known=known, static=(),
        targets=tuple(f"target__h{h}" for h in range(1, H + 1)), warmup=0,
    )  # fmt: skip


def _scaler(columns: tuple[str, ...]) -> ScalerParams:
    k = len(columns)
    return ScalerParams(
        columns=columns,
        mean=tuple(1e-4 * (i + 1) for i in range(k)),
        std=tuple(1e-3 * (i + 2) for i in range(k)),
        target_std=TARGET_STD,
    )


def test_of_finds_the_time_of_day_inputs_wherever_they_are() -> None:
    known = ("known__a", TOD_FEATURES[1], "known__b", TOD_FEATURES[0])  # cos before sin
    hist = ("obs__x", RETURN_FEATURE)
    columns = (*hist, *known)
    scaler = _scaler(columns)
    data = DataConfig(target_scale="window", target_scale_season=SEASON)
    ts = TargetScale.of(data, _spec(hist, known), scaler)
    assert ts.season == SEASON
    assert ts.tod_index == (3, 1)  # sin, cos in the known inputs
    s, c = columns.index(TOD_FEATURES[0]), columns.index(TOD_FEATURES[1])
    assert ts.tod_affine == (scaler.mean[s], scaler.std[s], scaler.mean[c], scaler.std[c])
    assert ts.ret_index == 1
    # and the scale it gives reads them: the multipliers of bars at known minutes
    minutes = torch.tensor([[0, 30, 600, 1410]], dtype=torch.float64)
    a = minutes * (2 * math.pi / 1440)
    z = torch.zeros(1, 4, 4, dtype=torch.float64)
    z[:, :, 3] = (torch.sin(a) - ts.tod_affine[0]) / ts.tod_affine[1]
    z[:, :, 1] = (torch.cos(a) - ts.tod_affine[2]) / ts.tod_affine[3]
    want = torch.tensor(SEASON, dtype=torch.float64)[[0, 1, 20, 47]]
    assert torch.allclose(ts.multipliers(z)[0], want)


@pytest.mark.parametrize("missing", [0, 1])
def test_a_season_without_one_time_of_day_input_is_dropped(
    missing: int, caplog: pytest.LogCaptureFixture
) -> None:
    known = tuple(f for i, f in enumerate(TOD_FEATURES) if i != missing)
    hist = (RETURN_FEATURE,)
    data = DataConfig(target_scale="window", target_scale_season=SEASON)
    with caplog.at_level(logging.WARNING):
        ts = TargetScale.of(data, _spec(hist, known), _scaler(hist + known))
    assert ts.season == () and "target_scale_season needs" in caplog.text
    # in the scaler's columns but not among the known inputs: dropped too
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        ts = TargetScale.of(data, _spec(hist, known), _scaler(hist + TOD_FEATURES))
    assert ts.season == () and "target_scale_season needs" in caplog.text


def test_no_season_asked_gives_none_and_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    hist = (RETURN_FEATURE,)
    with caplog.at_level(logging.WARNING):
        ts = TargetScale.of(DataConfig(target_scale="window"), _spec(hist), _scaler(hist))
    assert ts.season == () and caplog.text == ""


@pytest.mark.parametrize("feature", [ANCHOR_FEATURE, GAP_FEATURE])
def test_an_input_the_scaler_knows_but_the_spec_does_not_is_not_used(
    feature: str, caplog: pytest.LogCaptureFixture
) -> None:
    hist = (RETURN_FEATURE,)
    columns = (RETURN_FEATURE, ANCHOR_FEATURE, GAP_FEATURE, RANGE_FEATURE)
    data = DataConfig(
        target_scale="window", target_scale_anchor=True, target_scale_estimator="range"
    )
    with caplog.at_level(logging.WARNING):
        ts = TargetScale.of(data, _spec(hist), _scaler(columns))
    assert ts.anchor_index == -1 and ts.estimator == "close"
    assert feature in caplog.text


def test_an_anchor_in_column_0_is_read_at_the_origin() -> None:
    ts = TargetScale("window", TARGET_STD, anchor_index=0, anchor_affine=(2e-3, 1e-3))
    hist = torch.zeros(2, L, 2, dtype=torch.float64)
    hist[:, :, 0] = torch.arange(L, dtype=torch.float64)  # a different anchor on every bar
    got = ts.anchor_variance(hist)
    assert got is not None
    want = (torch.tensor([L - 1.0, L - 1.0]) * 1e-3 + 2e-3) ** 2
    assert torch.allclose(got, want.double(), rtol=1e-12)


def test_the_season_and_the_anchor_together() -> None:
    """The anchor is divided by the encoder's mean multiplier, seeds the deseasonalised EWMA and
    is what the variance reverts to; rows at different times get their own means."""
    ts = TargetScale(
        "window", TARGET_STD, decay=0.8, ret_index=0, ret_mean=0.0, ret_std=1e-3,
        reversion=0.7, season=SEASON, tod_index=(0, 1), tod_affine=(0.0, 1.0, 0.0, 1.0),
        anchor_index=1, anchor_affine=(0.0, 1e-3),
    )  # fmt: skip
    rng = np.random.default_rng(5)
    b = 2
    hist = torch.zeros(b, L, 2, dtype=torch.float64)
    hist[:, :, 0] = torch.from_numpy(rng.normal(size=(b, L)))  # returns of ~1e-3
    hist[:, :, 1] = torch.tensor([[1.5], [4.0]])  # anchors 1.5e-3 and 4e-3
    start = torch.tensor([[60.0], [1200.0]])  # minutes of each window's first bar
    minutes = start + 30.0 * torch.arange(L + H, dtype=torch.float64)[None, :]
    a = minutes * (2 * math.pi / 1440)
    known = torch.stack([torch.sin(a), torch.cos(a)], dim=-1)
    got = ts.scale(hist, known)
    m = torch.tensor(SEASON, dtype=torch.float64)[tod_bucket(torch.sin(a), torch.cos(a))]
    anchor = (hist[:, -1, 1] * 1e-3) ** 2 / m[:, :L].mean(dim=1)
    r = hist[:, :, 0] * 1e-3
    var = ewma_last(r / m[:, :L].sqrt(), 0.8, anchor)
    cum = reverting_variance(var, anchor, 0.7, H, m[:, L : L + H])
    want = torch.maximum(cum.sqrt(), WINDOW_FLOOR * torch.tensor(TARGET_STD).double())
    assert torch.allclose(got, want, rtol=1e-12)
    assert got.dtype == torch.float64
    # standardise and to_returns pass the known inputs on (a seasonal scale needs them)
    y = torch.full((b, H), 1e-3, dtype=torch.float32)
    z = ts.standardise(y, hist, known)
    assert z.dtype == torch.float32
    assert torch.allclose(z.double(), y.double() * torch.tensor(TARGET_STD).double() / want)
    back = ts.to_returns(torch.ones(b, H, 1), hist, known)
    assert torch.allclose(back[:, :, 0], want)
    with pytest.raises(ValueError, match=r"^a seasonal target scale needs the batch's known"):
        ts.scale(hist)


def test_the_global_scale_is_the_float64_target_std() -> None:
    ts = TargetScale("global", TARGET_STD)
    got = ts.scale(torch.zeros(3, L, 1, dtype=torch.float32))
    assert got.dtype == torch.float64
    assert got.tolist() == [list(TARGET_STD)] * 3  # exact: not through float32
    y = torch.randn(3, H)
    assert torch.equal(ts.standardise(y, torch.zeros(3, L, 1)), y)


def test_the_window_floor_is_exact_in_float64() -> None:
    ts = TargetScale("window", TARGET_STD, ret_index=0, ret_std=1.0)
    flat = torch.zeros(1, L, 1, dtype=torch.float64)  # no movement: the floor
    got = ts.scale(flat)
    assert got[0].tolist() == [WINDOW_FLOOR * s for s in TARGET_STD]


@pytest.mark.parametrize("decay", [0.0, 1.0, 1.5])
def test_ewma_last_needs_a_decay_strictly_between_0_and_1(decay: float) -> None:
    with pytest.raises(ValueError, match=r"decay must be in \(0, 1\), got"):
        ewma_last(torch.ones(1, 3), decay)
