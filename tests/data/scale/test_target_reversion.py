"""The window scale's mean reversion (``target_scale_reversion``) and its choice on the training
split (``foxhunt.data.scale.choice``); old configs load without either."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from foxhunt.config import DataConfig, RunConfig, TFTConfig
from foxhunt.data.features.table import feature_spec
from foxhunt.data.scale.choice import choose_target_scale, resolve_target_scale
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.scale.target import RETURN_FEATURE, TargetScale, reverting_variance
from foxhunt.errors import ConfigError

L, H = 12, 4
SPEC = dataclasses.replace(
    feature_spec(H), static=(), historical=("obs__x", RETURN_FEATURE), known=(), warmup=0
)


def _scaler(mean: float = 1e-4, std: float = 2e-3) -> ScalerParams:
    return ScalerParams(columns=(RETURN_FEATURE,), mean=(mean,), std=(std,), target_std=(1e-3,) * H)


def _scale(reversion: float, scaler: ScalerParams | None = None) -> TargetScale:
    data = DataConfig(target_scale="window", target_scale_decay=0.9,
                      target_scale_reversion=reversion)  # fmt: skip
    return TargetScale.of(data, SPEC, scaler or _scaler())


def test_reverting_variance_sums_the_per_bar_variances() -> None:
    var = torch.tensor([4.0, 1.0], dtype=torch.float64)
    got = reverting_variance(var, long_run=2.0, phi=0.5, horizon=3)
    # per bar: 2 + 0.5^k (s - 2): s=4 -> 4, 3, 2.5; s=1 -> 1, 1.5, 1.75
    np.testing.assert_allclose(got.numpy(), [[4, 7, 9.5], [1, 2.5, 4.25]])
    np.testing.assert_allclose(reverting_variance(var, 2.0, 0.0, 3).numpy(), [[4, 6, 8], [1, 3, 5]])
    np.testing.assert_allclose(
        reverting_variance(var, 2.0, 1.0, 3).numpy(), [[4, 8, 12], [1, 2, 3]]
    )


def test_reversion_pulls_the_scale_to_the_training_variance() -> None:
    hist = torch.zeros(2, L, 2, dtype=torch.float64)
    hist[0, :, 1] = 3.0  # returns far above the training mean: a volatile window
    hist[1, :, 1] = torch.tensor([0.2, -0.2] * (L // 2))  # a calm one
    none, some = _scale(1.0).scale(hist), _scale(0.7).scale(hist)
    np.testing.assert_allclose(none[:, 0], some[:, 0], rtol=1e-12)  # next bar: the EWMA alone
    long_run = _scale(0.7).long_run_var
    assert long_run == pytest.approx(2e-3**2 + 1e-4**2)
    per_bar_none, per_bar_some = none[:, -1] ** 2 / H, some[:, -1] ** 2 / H
    assert per_bar_some[0] < per_bar_none[0]  # volatile: the far horizons are calmer
    assert per_bar_some[1] > per_bar_none[1]  # calm: they are more volatile
    assert long_run < per_bar_none[0] and long_run > per_bar_none[1]


def test_an_old_config_loads_with_no_reversion_and_no_search() -> None:
    d = RunConfig(data=DataConfig(target_scale="window")).to_dict()
    for key in ("target_scale_reversion", "target_scale_search"):
        del d["data"][key]
    data = RunConfig.from_dict(d).data
    assert data.target_scale_reversion == 1.0 and not data.target_scale_search


def test_reversion_out_of_range_is_refused() -> None:
    with pytest.raises(ConfigError, match="target_scale_reversion"):
        DataConfig(target_scale_reversion=1.5)


class _Windows:
    """The part of a WindowDataset the choice reads: ``batch`` and ``len``."""

    target_scale = None

    def __init__(self, returns: np.ndarray, target: np.ndarray) -> None:
        self.hist = torch.zeros(len(returns), L, 2, dtype=torch.float64)
        self.hist[:, :, 1] = torch.from_numpy((returns - 1e-4) / 2e-3)
        self.target = torch.from_numpy(target / 1e-3)  # globally scaled, as the pipeline's

    def __len__(self) -> int:
        return len(self.hist)

    def batch(self, rows: list[int]) -> object:
        return type("B", (), {"historical": self.hist[rows], "target": self.target[rows]})


def _reverting_windows(phi: float, n: int = 1500) -> _Windows:
    """Windows whose future per-bar variance reverts to 4e-6 at rate ``phi``."""
    rng = np.random.default_rng(0)
    sigma = np.exp(rng.normal(np.log(2e-3), 0.8, size=n))  # each window's current vol
    returns = rng.normal(size=(n, L)) * sigma[:, None]
    k = np.arange(H)
    per_bar = 4e-6 + phi ** k[None, :] * (sigma[:, None] ** 2 - 4e-6)
    target = np.cumsum(rng.normal(size=(n, H)) * np.sqrt(per_bar), axis=1)
    return _Windows(returns, target)


def _cfg(search: bool = True) -> RunConfig:
    return RunConfig(
        model=TFTConfig(encoder_length=L, horizon=H),
        data=DataConfig(target_scale="window", target_scale_search=search),
    )


def test_the_choice_finds_mean_reversion_where_there_is_some() -> None:
    strong = choose_target_scale(_reverting_windows(0.5), SPEC, _scaler(), _cfg())  # type: ignore[arg-type]
    none = choose_target_scale(_reverting_windows(1.0), SPEC, _scaler(), _cfg())  # type: ignore[arg-type]
    assert strong is not None and none is not None
    assert strong.reversion <= 0.7
    assert none.reversion >= 0.97
    assert len(strong.losses) == 48
    assert strong.losses[(strong.decay, strong.reversion)] == min(strong.losses.values())


def test_resolve_writes_the_choice_into_the_config_only_with_search() -> None:
    windows = _reverting_windows(0.5)
    resolved = resolve_target_scale(_cfg(), windows, SPEC, _scaler())  # type: ignore[arg-type]
    choice = choose_target_scale(windows, SPEC, _scaler(), _cfg())  # type: ignore[arg-type]
    assert choice is not None
    assert resolved.data.target_scale_decay == choice.decay
    assert resolved.data.target_scale_reversion == choice.reversion
    assert resolved.data.target_scale_search  # config.json says the values were chosen
    assert resolve_target_scale(_cfg(False), windows, SPEC, _scaler()) == _cfg(False)  # type: ignore[arg-type]


def test_no_choice_for_the_global_scale() -> None:
    cfg = _cfg().replace(data={"target_scale": "global"})
    assert choose_target_scale(_reverting_windows(0.5), SPEC, _scaler(), cfg) is None  # type: ignore[arg-type]
