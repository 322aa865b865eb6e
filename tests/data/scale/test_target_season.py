"""The time-of-day season of the window target scale: the half-hour of a bar, the scale against a
hand computation, and the training-split choice (cross-fitted: a real season is found, a false
one is not)."""

from __future__ import annotations

import math
from datetime import date

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.config import DataConfig, RunConfig, TFTConfig
from foxhunt.data.features.table import compute_features, feature_spec
from foxhunt.data.scale.choice import choose_target_scale
from foxhunt.data.scale.scaler import ScalerParams, fit_scaler
from foxhunt.data.scale.target import (
    RETURN_FEATURE,
    SEASON_BUCKETS,
    TOD_FEATURES,
    WINDOW_FLOOR,
    TargetScale,
    tod_bucket,
)
from foxhunt.data.sources.demo import demo_bars
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.errors import ConfigError

L, H = 12, 4


def _angle(minutes: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    a = torch.as_tensor(minutes, dtype=torch.float64) * (2 * math.pi / 1440)
    return torch.sin(a), torch.cos(a)


def test_a_bar_falls_in_the_half_hour_it_opens_even_after_float32_z_scoring() -> None:
    minutes = np.array([0, 1, 29, 30, 570, 599, 600, 1410, 1439])
    want = [0, 0, 0, 1, 19, 19, 20, 47, 47]
    assert tod_bucket(*_angle(minutes)).tolist() == want
    sin, cos = _angle(minutes)
    mean, std = 0.013, 0.71  # through a float32 z-score and back, as the batch holds them
    back = [((x - mean) / std).float().double() * std + mean for x in (sin, cos)]
    assert tod_bucket(*back).tolist() == want


def _season() -> tuple[float, ...]:
    m = np.ones(SEASON_BUCKETS)
    m[18:26] = 3.0  # a busy morning
    m[40:] = 0.3  # a quiet evening
    return tuple(float(x) for x in m)


def test_seasonal_scale_equals_a_hand_computation() -> None:
    rng = np.random.default_rng(0)
    b, season = 3, np.asarray(_season())
    r = rng.normal(0, 1e-3, size=(b, L))
    start = np.array([500, 1180, 1400])  # minutes of each window's first bar (5-minute bars)
    minutes = (start[:, None] + 5 * np.arange(L + H)[None, :]) % 1440
    mean, std = 1e-4, 2e-3  # the return input's z-score
    sm, ss, cm, cs = 0.01, 0.7, -0.02, 0.72  # the time-of-day inputs'
    sin, cos = _angle(minutes)
    known = torch.stack([(sin - sm) / ss, (cos - cm) / cs], dim=-1)  # (B, L + H, 2)
    hist = torch.from_numpy((r - mean) / std)[:, :, None]  # (B, L, 1)
    target_std = (1e-3, 1.4e-3, 1.7e-3, 2e-3)
    ts = TargetScale("window", target_std, decay=0.9, ret_index=0, ret_mean=mean, ret_std=std,
                     reversion=0.8, season=tuple(season), tod_index=(0, 1),
                     tod_affine=(sm, ss, cm, cs))  # fmt: skip
    got = ts.scale(hist, known).numpy()
    v = std**2 + mean**2
    m = season[(minutes // 30) % SEASON_BUCKETS]  # (B, L + H)
    w = 0.9 ** np.arange(L - 1, -1, -1)
    want = np.empty((b, H))
    for i in range(b):
        s = float(np.sum(w * r[i] ** 2 / m[i, :L]) / w.sum())
        per_bar = [m[i, L + k] * (v + 0.8**k * (s - v)) for k in range(H)]
        want[i] = np.maximum(np.sqrt(np.cumsum(per_bar)), WINDOW_FLOOR * np.asarray(target_std))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(ValueError, match="known inputs"):
        ts.scale(hist)


def test_the_season_is_dropped_without_the_time_of_day_inputs() -> None:
    spec = feature_spec(H).__class__(static=(), historical=(RETURN_FEATURE,), known=(),
                                     targets=feature_spec(H).targets, warmup=0)  # fmt: skip
    scaler = ScalerParams(
        columns=(RETURN_FEATURE,), mean=(0.0,), std=(1e-3,), target_std=(1e-3,) * H
    )
    data = DataConfig(target_scale="window", target_scale_season=_season())
    assert TargetScale.of(data, spec, scaler).season == ()


def test_the_config_holds_48_positive_multipliers_or_none() -> None:
    assert DataConfig(target_scale_season=[1] * 48).target_scale_season == (1.0,) * 48
    for bad in ([1.0] * 47, [1.0] * 47 + [0.0], [1.0] * 47 + [math.inf]):
        with pytest.raises(ConfigError, match="target_scale_season"):
            DataConfig(target_scale_season=bad)
    cfg = RunConfig(data=DataConfig(target_scale="window", target_scale_season=_season()))
    assert RunConfig.from_dict(cfg.to_dict()) == cfg  # config.json round trip


def _bars(busy: float, seed: int) -> pl.DataFrame:
    """6,000 5-minute bars whose one-bar volatility is ``busy`` x higher from 08:30 to 11:00
    on the calendar's clock (Chicago) than at other times."""
    base = demo_bars(6000, seed=seed, start="2024-06-03")
    local = base["ts"].dt.convert_time_zone("America/Chicago")
    minutes = (local.dt.hour().cast(pl.Int32) * 60 + local.dt.minute().cast(pl.Int32)).to_numpy()
    vol = np.where((minutes >= 510) & (minutes < 660), busy, 1.0) * 4e-4
    r = np.random.default_rng(seed).standard_t(6, size=len(base)) * vol / math.sqrt(1.5)
    close = 5000.0 * np.exp(np.cumsum(r))
    open_ = np.concatenate([[5000.0], close[:-1]])
    return base.with_columns(
        pl.Series("open", open_), pl.Series("close", close),
        pl.Series("high", np.maximum(open_, close) * 1.0001),
        pl.Series("low", np.minimum(open_, close) * 0.9999),
        pl.col("volume").cast(pl.Float64),
    )  # fmt: skip


def _choice(bars: pl.DataFrame):  # noqa: ANN202
    spec = feature_spec(H)
    feats = compute_features(bars, H)
    scaler = fit_scaler(feats, spec)
    train = WindowDataset(feats, spec, L, H, scaler=scaler)
    cfg = RunConfig(model=TFTConfig(encoder_length=L, horizon=H),
                    data=DataConfig(target_scale="window", target_scale_search=True))  # fmt: skip
    return choose_target_scale(train, spec, scaler, cfg)


@pytest.mark.slow
def test_the_choice_finds_a_real_season() -> None:
    choice = _choice(_bars(busy=3.0, seed=1))
    assert choice is not None and len(choice.season) == SEASON_BUCKETS
    m = np.asarray(choice.season)
    assert m[17:22].min() > 2.0 and m[:16].max() < 1.0  # 08:30-11:00 CT is busy
    assert min(choice.season_losses.values()) < min(choice.losses.values())
    assert set(TOD_FEATURES) <= set(feature_spec(H).known)


@pytest.mark.slow
def test_the_choice_keeps_no_season_where_there_is_none() -> None:
    choice = _choice(_bars(busy=1.0, seed=2))
    assert choice is not None and choice.season == ()
    assert choice.season_losses  # the cross-fitted season was tried, and lost
    assert min(choice.season_losses.values()) >= min(choice.losses.values())


def _daily_bars() -> pl.DataFrame:
    """Three years of weekday bars of a symbol the instrument table does not know (calendar
    fx_24x5, New York clock), dated as Quantiacs' files are (midnight UTC): on the calendar's
    clock they fall at 19:00 in summer and 20:00 in winter (two half-hours)."""
    days = pl.date_range(date(2019, 1, 1), date(2021, 12, 31), "1d", eager=True)
    days = days.filter(days.dt.weekday() <= 5)
    ts = days.cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
    r = np.random.default_rng(7).standard_t(5, size=len(ts)) * 0.01
    close = 100.0 * np.exp(np.cumsum(r))
    open_ = np.concatenate([[100.0], close[:-1]])
    return pl.DataFrame(
        {
            "ts": ts.dt.convert_time_zone("UTC"),
            "symbol": "F_CL",
            "open": open_,
            "high": np.maximum(open_, close) * 1.005,
            "low": np.minimum(open_, close) * 0.995,
            "close": close,
            "volume": np.full(len(ts), 1000.0),
        }
    )


@pytest.mark.slow
def test_daily_bars_across_daylight_saving_get_no_season() -> None:
    bars = _daily_bars()
    feats = compute_features(bars, H)
    assert feats["known__tod_sin"].round(6).n_unique() == 2  # the clock moves with the DST
    choice = _choice(bars)
    assert choice is not None and choice.season == () and choice.season_losses == {}
