"""The pieces of the training-split target-scale search (``foxhunt.data.scale.choice``) against
hand computations on a small feature table: the time-of-day season of :func:`fit_season`, the
inputs and targets the search scores, which windows it reads, when bars count as intraday, the
day parity of the cross-fitting, the scaler's time-of-day and anchor columns, the range ratio,
and the refusal of windows that already standardise their targets."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.config import DataConfig, RunConfig, TFTConfig
from foxhunt.data.features.table import compute_features, feature_spec
from foxhunt.data.scale.choice import (
    MAX_WINDOWS,
    SEASON_FLOOR,
    SEASON_SHRINK,
    _anchor_column,
    _day_parity,
    _intraday,
    _range_ratio,
    _returns_and_targets,
    _scored_loss,
    _scored_rows,
    _tod_columns,
    choose_target_scale,
    fit_season,
)
from foxhunt.data.scale.scaler import ScalerParams, fit_scaler
from foxhunt.data.scale.target import (
    ANCHOR_FEATURE,
    RANGE_FEATURES,
    RETURN_FEATURE,
    SEASON_BUCKETS,
    TOD_FEATURES,
    TargetScale,
    tod_bucket,
)
from foxhunt.data.sources.demo import demo_bars
from foxhunt.data.windows.dataset import WindowDataset

L, H = 12, 4


def _quiet_bars(n: int = 1500) -> pl.DataFrame:
    """5-minute bars whose one-bar volatility is 1/20 of the rest from 00:00 to 02:00 UTC (some
    half-hours' multipliers fall under the floor when nothing shrinks them)."""
    base = demo_bars(n, seed=3, start="2024-06-03")
    hour = base["ts"].dt.hour().to_numpy()
    vol = np.where(hour < 2, 0.05, 1.0) * 4e-4
    r = np.random.default_rng(3).standard_normal(len(base)) * vol
    close = 5000.0 * np.exp(np.cumsum(r))
    open_ = np.concatenate([[5000.0], close[:-1]])
    return base.with_columns(
        pl.Series("open", open_), pl.Series("close", close),
        pl.Series("high", np.maximum(open_, close) * 1.0001),
        pl.Series("low", np.minimum(open_, close) * 0.9999),
        pl.col("volume").cast(pl.Float64),
    )  # fmt: skip


@pytest.fixture(scope="module")
def table() -> tuple[pl.DataFrame, object, ScalerParams, WindowDataset]:
    spec = feature_spec(H)
    feats = compute_features(_quiet_bars(), H)
    scaler = fit_scaler(feats, spec)
    return feats, spec, scaler, WindowDataset(feats, spec, L, H, scaler=scaler)


def _tod(scaler: ScalerParams) -> tuple[float, float, float, float]:
    tod = _tod_columns(feature_spec(H), scaler)
    assert tod is not None
    return tod


def _hand_season(
    feats: pl.DataFrame, rows: np.ndarray, shrink: float, floor: bool = True
) -> np.ndarray:
    """fit_season's formula on the unscaled table's origin rows, in float64."""
    r = torch.as_tensor(feats[RETURN_FEATURE].to_numpy()[rows], dtype=torch.float64)
    sin = torch.as_tensor(feats[TOD_FEATURES[0]].to_numpy()[rows], dtype=torch.float64)
    cos = torch.as_tensor(feats[TOD_FEATURES[1]].to_numpy()[rows], dtype=torch.float64)
    bucket = tod_bucket(sin, cos).numpy()
    n = np.bincount(bucket, minlength=SEASON_BUCKETS).astype(np.float64)
    sums = np.bincount(bucket, weights=r.numpy() ** 2, minlength=SEASON_BUCKETS)
    v = float((r.numpy() ** 2).mean())
    m = (sums / v + shrink) / (n + shrink)
    m = m / ((m * n).sum() / n.sum())
    return np.maximum(m, SEASON_FLOOR) if floor else m


def test_the_season_equals_the_formula_on_the_origin_bars(table) -> None:  # noqa: ANN001
    feats, spec, scaler, train = table
    ret = spec.historical.index(RETURN_FEATURE)
    got = np.asarray(fit_season(train, ret, scaler, _tod(scaler)))
    want = _hand_season(feats, train.origin_rows(), SEASON_SHRINK)
    assert got.shape == (SEASON_BUCKETS,)
    np.testing.assert_allclose(got, want, rtol=2e-5)
    # the four quiet half-hours (00:00-02:00 UTC; the buckets are on the calendar's clock)
    assert np.sort(got)[3] < 0.7 < np.sort(got)[4]  # (shrunk towards 1: 5 days of bars)


def test_the_season_of_some_windows_with_another_shrink_and_the_floor(table) -> None:  # noqa: ANN001
    feats, spec, scaler, train = table
    ret = spec.historical.index(RETURN_FEATURE)
    windows = np.arange(len(train)) % 3 == 1
    got = np.asarray(fit_season(train, ret, scaler, _tod(scaler), windows, shrink=0.5))
    unfloored = _hand_season(feats, train.origin_rows()[windows], 0.5, floor=False)
    assert unfloored.min() < SEASON_FLOOR  # the quiet hours: the floor decides there
    np.testing.assert_allclose(got, np.maximum(unfloored, SEASON_FLOOR), rtol=2e-5)
    assert got.min() == pytest.approx(SEASON_FLOOR)


def test_no_season_from_no_bars_one_half_hour_or_no_variance(table) -> None:  # noqa: ANN001
    feats, spec, scaler, train = table
    ret, tod = spec.historical.index(RETURN_FEATURE), _tod(scaler)
    none = np.zeros(len(train), dtype=bool)
    assert fit_season(train, ret, scaler, tod, none) == ()
    origin_ts = train.origins()["ts"]
    half_hour = (origin_ts.dt.hour() * 2 + origin_ts.dt.minute() // 30).to_numpy()
    assert fit_season(train, ret, scaler, tod, half_hour == 20) == ()
    two = fit_season(train, ret, scaler, tod, (half_hour == 20) | (half_hour == 21))
    assert len(two) == SEASON_BUCKETS  # two half-hours are enough
    lone = np.flatnonzero(half_hour == 21)[0]  # ... even when one of them has a single bar
    one_more = (half_hour == 20) | (np.arange(len(train)) == lone)
    assert len(fit_season(train, ret, scaler, tod, one_more)) == SEASON_BUCKETS
    col = scaler.columns.index(RETURN_FEATURE)
    flat = dataclasses.replace(
        scaler,
        mean=tuple(0.0 if i == col else m for i, m in enumerate(scaler.mean)),
        std=tuple(0.0 if i == col else s for i, s in enumerate(scaler.std)),
    )
    assert fit_season(train, ret, flat, tod) == ()  # every return 0: no variance to share


def test_the_scored_inputs_and_targets_are_the_tables_at_the_windows(table) -> None:  # noqa: ANN001
    feats, spec, scaler, train = table
    ret = spec.historical.index(RETURN_FEATURE)
    windows = np.array([0, 5, len(train) - 1])
    tod, anchor = _tod(scaler), _anchor_column(spec, scaler)
    returns, known, y = _returns_and_targets(
        train, windows, ret, scaler, tod, anchor, ranges=True, batch_size=2
    )
    batch = train.batch(windows.tolist())
    assert returns.dtype == known.dtype == y.dtype == torch.float64  # type: ignore[union-attr]
    assert returns.shape == (3, L, 4) and known is not None and known.shape == (3, L + H, 2)
    hist_cols = [ret, spec.historical.index(ANCHOR_FEATURE)]
    hist_cols += [spec.historical.index(f) for f in RANGE_FEATURES]
    assert torch.equal(returns, batch.historical[:, :, hist_cols].double())
    tod_cols = [spec.known.index(f) for f in TOD_FEATURES]
    assert torch.equal(known, batch.known[:, :, tod_cols].double())
    std = torch.tensor(scaler.target_std, dtype=torch.float64)
    assert batch.target is not None
    assert torch.equal(y, batch.target.double() * std)
    rows = train.origin_rows()[windows]
    want = np.stack([feats[t].to_numpy()[rows] for t in spec.targets], axis=1)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-9)  # log returns, unscaled
    # without time of day, anchor or ranges: the return alone
    returns, known, _ = _returns_and_targets(train, windows, ret, scaler, None)
    assert known is None and returns.shape == (3, L, 1)


def test_the_scored_windows_are_evenly_spaced_and_end_at_the_latest() -> None:
    assert _scored_rows(0).tolist() == []
    assert _scored_rows(5).tolist() == [0, 1, 2, 3, 4]
    assert np.array_equal(_scored_rows(MAX_WINDOWS), np.arange(MAX_WINDOWS))
    for n in (MAX_WINDOWS + 1, 2 * MAX_WINDOWS, 3 * MAX_WINDOWS + 7):
        rows = _scored_rows(n)
        step = -(-n // MAX_WINDOWS)
        assert rows[-1] == n - 1 and len(rows) <= MAX_WINDOWS
        assert set(np.diff(rows).tolist()) == {step} and rows[0] < step


@dataclasses.dataclass
class _Origins:
    """What _intraday and _day_parity read of a WindowDataset."""

    frame: pl.DataFrame
    stride: int = 1

    def origins(self) -> pl.DataFrame:
        return self.frame


def _origins(hours_apart: float, n: int = 6, symbols: tuple[str, ...] = ("ES",)) -> pl.DataFrame:
    start = datetime(2024, 3, 4, 13, tzinfo=UTC)
    return pl.DataFrame(
        {
            "symbol": [s for s in symbols for _ in range(n)],
            "ts": [start + timedelta(hours=hours_apart * i) for _ in symbols for i in range(n)],
        }
    ).with_columns(pl.col("ts").dt.cast_time_unit("us"))


def test_bars_are_intraday_when_their_median_gap_per_stride_is_under_twelve_hours() -> None:
    assert _intraday(_Origins(_origins(5 / 60)))  # type: ignore[arg-type]
    assert _intraday(_Origins(_origins(1 / 3600)))  # type: ignore[arg-type]  # 1-second bars
    assert _intraday(_Origins(_origins(11.5)))  # type: ignore[arg-type]
    assert not _intraday(_Origins(_origins(12.0)))  # type: ignore[arg-type]
    assert not _intraday(_Origins(_origins(24.0)))  # type: ignore[arg-type]
    assert _intraday(_Origins(_origins(24.0), stride=4))  # type: ignore[arg-type]  # 6 h a bar
    assert not _intraday(_Origins(_origins(1.0, n=1)))  # type: ignore[arg-type]  # no gap
    # gaps are within a symbol: two symbols on the same hourly clock stay hourly, and the
    # median ignores a weekend
    assert _intraday(_Origins(_origins(1.0, symbols=("ES", "NQ"))))  # type: ignore[arg-type]
    frame = _origins(1.0, n=4)
    weekend = frame.with_columns(pl.col("ts") + timedelta(days=2))
    assert _intraday(_Origins(pl.concat([frame, weekend])))  # type: ignore[arg-type]


def test_the_day_parity_is_the_utc_day_numbers() -> None:
    frame = _origins(6.0, n=9)
    days = np.array([(ts - datetime(1970, 1, 1, tzinfo=UTC)).days for ts in frame["ts"]])
    assert _day_parity(_Origins(frame)).tolist() == (days % 2).tolist()  # type: ignore[arg-type]
    assert set(_day_parity(_Origins(frame)).tolist()) == {0, 1}  # type: ignore[arg-type]
    empty = _Origins(frame.clear())
    assert _day_parity(empty).dtype == np.int64 and len(_day_parity(empty)) == 0  # type: ignore[arg-type]


def test_the_time_of_day_and_anchor_columns_come_from_the_scaler(table) -> None:  # noqa: ANN001
    _, spec, scaler, _ = table
    s, c = (scaler.columns.index(f) for f in TOD_FEATURES)
    assert _tod_columns(spec, scaler) == (
        scaler.mean[s],
        scaler.std[s],
        scaler.mean[c],
        scaler.std[c],
    )
    assert len({scaler.mean[s], scaler.std[s], scaler.mean[c], scaler.std[c]}) == 4
    a = scaler.columns.index(ANCHOR_FEATURE)
    assert _anchor_column(spec, scaler) == (scaler.mean[a], scaler.std[a])
    without_cos = dataclasses.replace(
        spec, known=tuple(k for k in spec.known if k != TOD_FEATURES[1])
    )
    assert _tod_columns(without_cos, scaler) is None
    unscaled = dataclasses.replace(
        scaler, columns=tuple("other" if k == TOD_FEATURES[0] else k for k in scaler.columns)
    )
    assert _tod_columns(spec, unscaled) is None
    no_anchor = dataclasses.replace(
        spec, historical=tuple(k for k in spec.historical if k != ANCHOR_FEATURE)
    )
    assert _anchor_column(no_anchor, scaler) is None
    unscaled = dataclasses.replace(
        scaler, columns=tuple("other" if k == ANCHOR_FEATURE else k for k in scaler.columns)
    )
    assert _anchor_column(spec, unscaled) is None


class _Deviations:
    """A scale whose bar deviations are one column of the returns."""

    def __init__(self, column: int) -> None:
        self.column = column

    def bar_deviations(self, returns: torch.Tensor) -> torch.Tensor:
        return returns[..., self.column]


def test_the_range_ratio_is_the_mean_squares_ratio_when_both_are_positive() -> None:
    returns = torch.stack([torch.full((3, 5), 2.0), torch.full((3, 5), 4.0)], dim=-1)
    close, ranged = _Deviations(0), _Deviations(1)
    assert _range_ratio(returns, close, ranged) == pytest.approx(0.25)  # type: ignore[arg-type]
    zero_returns = returns * torch.tensor([0.0, 1.0])
    assert _range_ratio(zero_returns, close, ranged) is None  # type: ignore[arg-type]
    zero_ranges = returns * torch.tensor([1.0, 0.0])
    assert _range_ratio(zero_ranges, close, ranged) is None  # type: ignore[arg-type]
    huge = returns * torch.tensor([1e200, 1e-200])
    assert _range_ratio(huge, close, ranged) is None  # type: ignore[arg-type]  # inf


def test_windows_that_already_standardise_their_targets_are_refused(table) -> None:  # noqa: ANN001
    _, spec, scaler, train = table
    cfg = RunConfig(
        model=TFTConfig(encoder_length=L, horizon=H),
        data=DataConfig(target_scale="window", target_scale_search=True),
    )
    scaled = train.with_target_scale(TargetScale.of(cfg.data, spec, scaler))
    with pytest.raises(ValueError, match=r"^choose_target_scale needs the pipeline's windows \(no"):
        choose_target_scale(scaled, spec, scaler, cfg)


def _search_cfg(**data: object) -> RunConfig:
    return RunConfig(
        model=TFTConfig(encoder_length=L, horizon=H),
        data=DataConfig(target_scale="window", target_scale_search=True, **data),  # type: ignore[arg-type]
    )


GRID = {"decays": (0.9, 0.97), "reversions": (0.8, 1.0)}


@pytest.fixture(scope="module")
def searched(table) -> object:  # noqa: ANN001
    _, spec, scaler, train = table
    return choose_target_scale(train, spec, scaler, _search_cfg(), **GRID)  # type: ignore[arg-type]


def _served_loss(train: WindowDataset, spec, scaler, data: DataConfig, seasons=None) -> float:  # noqa: ANN001
    """The scale-only forecast's mean pinball on every training window with the scale a run
    whose config holds ``data`` serves (TargetScale.of), per day parity's season when
    ``seasons`` (cross-fitted: windows on even days get the season of odd days' bars)."""
    batch = train.batch(list(range(len(train))))
    assert batch.target is not None
    y = batch.target.double() * torch.tensor(scaler.target_std, dtype=torch.float64)
    if seasons is None:
        scale = TargetScale.of(data, spec, scaler).scale(batch.historical, batch.known)
    else:
        days = torch.as_tensor(_day_parity(train))
        scale = torch.empty_like(y)
        for g in (0, 1):
            half = days == g
            served = TargetScale.of(
                dataclasses.replace(data, target_scale_season=seasons[g]), spec, scaler
            )
            scale[half] = served.scale(batch.historical[half], batch.known[half])
    levels = torch.tensor(_search_cfg().model.quantiles, dtype=torch.float64)
    return _scored_loss(y, scale, levels)


def test_every_loss_of_the_search_is_the_served_scales_loss(table, searched) -> None:  # noqa: ANN001
    """What the search scores is what TargetScale.of serves from the config it writes: every
    (decay, reversion) of the chosen estimator and anchoring, with and without the cross-fitted
    season."""
    _, spec, scaler, train = table
    choice = searched
    assert choice is not None and choice.season  # a quiet night: the season wins here
    assert (
        set(choice.losses)
        == set(choice.season_losses)
        == {(d, p) for d in GRID["decays"] for p in GRID["reversions"]}
    )
    assert len(set(choice.losses.values())) == 4 and len(set(choice.season_losses.values())) == 4
    chosen = {
        "target_scale_anchor": choice.anchor,
        "target_scale_estimator": choice.estimator,
        "target_scale_range_ratio": choice.range_ratio,
    }
    days = _day_parity(train)
    ret = spec.historical.index(RETURN_FEATURE)
    crossed = [fit_season(train, ret, scaler, _tod(scaler), days == 1 - g) for g in (0, 1)]
    for (decay, phi), loss in choice.losses.items():
        data = _search_cfg(**chosen, target_scale_decay=decay, target_scale_reversion=phi).data
        assert _served_loss(train, spec, scaler, data) == pytest.approx(loss, rel=1e-12, abs=0)
        seasonal = choice.season_losses[(decay, phi)]
        assert _served_loss(train, spec, scaler, data, crossed) == pytest.approx(
            seasonal, rel=1e-12, abs=0
        )
    # the chosen pair is the best of the chosen season's losses
    best = min(choice.season_losses, key=lambda k: choice.season_losses[k])
    assert (choice.decay, choice.reversion) == best
    assert choice.best_loss == min(choice.season_losses.values()) < min(choice.losses.values())


def test_the_search_does_not_depend_on_the_values_it_chooses(table, searched) -> None:  # noqa: ANN001
    """A config that already holds a search's values (config.json of an earlier run) searches
    the same: the candidates are built from the inputs, not from the config's scale."""
    _, spec, scaler, train = table
    earlier = _search_cfg(
        target_scale_decay=0.8,
        target_scale_reversion=0.5,
        target_scale_season=(2.0,) * SEASON_BUCKETS,
        target_scale_anchor=True,
        target_scale_estimator="range",
        target_scale_range_ratio=3.0,
    )
    again = choose_target_scale(train, spec, scaler, earlier, **GRID)  # type: ignore[arg-type]
    assert again == searched
    assert set(searched.estimator_losses) == {"close", "range"}  # type: ignore[union-attr]
    assert searched.other_loss is not None  # type: ignore[union-attr]


def test_no_windows_no_choice_and_one_window_is_enough(table) -> None:  # noqa: ANN001
    feats, spec, scaler, _ = table
    one = WindowDataset(feats.head(400 + L + H - 1).tail(L + H), spec, L, H, scaler=scaler)
    none = WindowDataset(feats.head(L + H - 1), spec, L, H, scaler=scaler)
    assert len(one) == 1 and len(none) == 0
    assert choose_target_scale(none, spec, scaler, _search_cfg(), **GRID) is None  # type: ignore[arg-type]
    choice = choose_target_scale(one, spec, scaler, _search_cfg(), **GRID)  # type: ignore[arg-type]
    assert choice is not None and choice.season == () and choice.season_losses == {}


def test_the_range_estimators_best_loss_is_the_served_range_scales(table, searched) -> None:  # noqa: ANN001
    """The range estimator's ratio is the scored windows' mean squared return over their mean
    range variance, and its best loss is the best served loss over the anchorings and seasons
    with that ratio (the search reads the gap and range inputs after the anchor's column)."""
    _, spec, scaler, train = table
    batch = train.batch(list(range(len(train))))
    unit = _search_cfg(target_scale_estimator="range").data  # ratio 1
    ranged = TargetScale.of(unit, spec, scaler).bar_deviations(batch.historical)
    close = TargetScale.of(_search_cfg().data, spec, scaler).bar_deviations(batch.historical)
    ratio = float(close.square().mean() / ranged.square().mean())
    days = _day_parity(train)
    ret = spec.historical.index(RETURN_FEATURE)
    crossed = [fit_season(train, ret, scaler, _tod(scaler), days == 1 - g) for g in (0, 1)]
    served = []
    for anchored in (False, True):
        for decay in GRID["decays"]:
            for phi in GRID["reversions"]:
                data = _search_cfg(
                    target_scale_estimator="range",
                    target_scale_range_ratio=ratio,
                    target_scale_anchor=anchored,
                    target_scale_decay=decay,
                    target_scale_reversion=phi,
                ).data
                served.append(_served_loss(train, spec, scaler, data))
                served.append(_served_loss(train, spec, scaler, data, crossed))
    best = searched.estimator_losses["range"]  # type: ignore[union-attr]
    assert best == pytest.approx(min(served), rel=1e-9, abs=0)
