"""Choose the window target scale's decay and mean reversion on the training split.

A TFT with the ``window`` target scale starts at the *scale-only* forecast
(:mod:`foxhunt.train.head_init`): ``Q_z[q] x scale[b, h]``, ``Q_z`` the empirical quantiles of
the standardised training targets pooled over horizons. Its network barely moves from there on
short budgets (docs/recipe.md), so the scale is what decides whether the forecast beats the
EWMA and GARCH baselines. :func:`choose_target_scale` scores that forecast on the training
windows for every (decay, reversion) of :data:`DECAYS` x :data:`REVERSIONS` and returns the
pair with the lowest mean pinball loss, each pair with and without a time-of-day season
(:func:`fit_season`, fitted on the same training split) and, when the run has the 120-bar
realised volatility input, with and without the per-window anchor
(:attr:`~foxhunt.config.DataConfig.target_scale_anchor`), and, when the run has the gap and
log-range inputs, with each bar's variance from its close-to-close return and from its gap and
range (:attr:`~foxhunt.config.DataConfig.target_scale_estimator`; the range variance's ratio to
the squared return fitted on the same windows); :func:`resolve_target_scale` writes
the choice into the run's config (``target_scale_search`` on), so ``config.json`` holds the
values inference uses. Only training windows are read: validation stays for early stopping and
calibration. Without the time-of-day inputs, with bars that all fall in one half-hour, or with
bars a day or more apart (daily bars, whose UTC half-hour moves with daylight saving), the season
is not tried.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import math

import numpy as np
import polars as pl
import torch

from foxhunt.config import RunConfig, TargetScaleEstimator
from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.scale.target import (
    ANCHOR_FEATURE,
    RANGE_FEATURES,
    RETURN_FEATURE,
    SEASON_BUCKETS,
    TOD_FEATURES,
    ScaleParts,
    TargetScale,
    range_inputs_affine,
    tod_bucket,
)
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.model.quantile import pinball

log = logging.getLogger(__name__)

DECAYS = (0.8, 0.9, 0.94, 0.97, 0.985, 0.995)
"""EWMA decays tried (over the encoder's bars)."""
REVERSIONS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.97, 0.99, 1.0)
"""Mean reversions tried (1: none)."""
MAX_WINDOWS = 20_000
"""Training windows scored at most (evenly spaced, the latest included)."""
SCORE_ROWS = 2048
"""Windows whose pinball losses are computed at once while a candidate is scored."""
SEASON_SHRINK = 50.0
"""Pseudo-bars at multiplier 1 added to each half-hour of :func:`fit_season` (a half-hour with
few training bars stays near 1)."""
INTRADAY_HOURS = 12.0
"""Bars at most this far apart (median) are intraday: only they get a time-of-day season."""
SEASON_FLOOR = 0.1
"""Smallest seasonal multiplier (the encoder's returns are divided by its square root)."""


@dataclasses.dataclass(frozen=True)
class ScaleChoice:
    """The chosen pair and the training pinball loss of every pair tried.

    Attributes:
        decay: the chosen EWMA decay.
        reversion: the chosen mean reversion.
        losses: ``(decay, reversion) -> mean pinball`` (log-return units) of each pair.
        season: the chosen time-of-day multipliers, () for none.
        season_losses: the same losses with the fitted season (empty when it was not tried).
        anchor: whether the chosen scale is anchored (``losses`` and ``season_losses`` are
            those of the chosen anchoring).
        other_loss: the best loss of the other anchoring (None when only one was tried).
        estimator: the chosen bars' variance estimator (``close`` or ``range``).
        range_ratio: the range variance's multiplier (1 for ``close``).
        estimator_losses: the best loss of each estimator tried.
    """

    decay: float
    reversion: float
    losses: dict[tuple[float, float], float]
    season: tuple[float, ...] = ()
    season_losses: dict[tuple[float, float], float] = dataclasses.field(default_factory=dict)
    anchor: bool = False
    other_loss: float | None = None
    estimator: TargetScaleEstimator = "close"
    range_ratio: float = 1.0
    estimator_losses: dict[str, float] = dataclasses.field(default_factory=dict)

    @property
    def best_loss(self) -> float:
        """The training pinball loss of the chosen scale."""
        losses = self.season_losses if self.season else self.losses
        return losses[(self.decay, self.reversion)]


def choose_target_scale(
    train: WindowDataset,
    spec: FeatureSpec,
    scaler: ScalerParams,
    cfg: RunConfig,
    *,
    decays: tuple[float, ...] = DECAYS,
    reversions: tuple[float, ...] = REVERSIONS,
) -> ScaleChoice | None:
    """The (decay, reversion) whose scale-only forecast has the lowest training pinball loss.

    Args:
        train: the training windows (globally scaled targets, as the pipeline builds them).
        spec: the run's feature spec.
        scaler: the run's fitted scaler.
        cfg: the run's config (target scale settings, quantile levels).

    Returns:
        The choice; None when the run's scale is not ``window`` (see
        :meth:`TargetScale.of`) or there are no training windows.

    Raises:
        ValueError: ``train`` already standardises its targets (``with_target_scale``).
    """
    if train.target_scale is not None:
        raise ValueError("choose_target_scale needs the pipeline's windows (no target scale)")
    if cfg.data.target_scale != "window" or len(train) == 0:
        return None
    base = TargetScale.of(cfg.data, spec, scaler)
    if base.mode != "window":
        return None
    tod = _tod_columns(spec, scaler)
    rows = _scored_rows(len(train))
    anchor = _anchor_column(spec, scaler)
    ranges = range_inputs_affine(spec, scaler)
    returns, known, y = _returns_and_targets(
        train, rows, base.ret_index, scaler, tod, anchor, ranges is not None
    )
    # one base per bars' variance estimator, reading `returns`' columns
    own = base.level_index >= 0 and anchor is not None  # the own floor reads the anchor column
    estimators = [
        dataclasses.replace(
            base, ret_index=0, estimator="close", range_ratio=1.0,
            level_index=1 if own else -1, level_affine=anchor if own and anchor else (0.0, 1.0),
        )
    ]  # fmt: skip
    if ranges is not None:
        first = 2 if anchor is not None else 1  # the gap and range columns of `returns`
        ranged = dataclasses.replace(
            estimators[0], estimator="range", range_index=(first, first + 1), range_affine=ranges
        )
        ratio = _range_ratio(returns, estimators[0], ranged)
        if ratio is not None:
            estimators.append(dataclasses.replace(ranged, range_ratio=ratio))
    levels = torch.tensor(cfg.model.quantiles, dtype=torch.float64)
    season = fit_season(train, base.ret_index, scaler, tod) if tod and _intraday(train) else ()
    # Cross-fitted seasons: windows on even days are scored with the season of odd days' bars
    # and the other way round, so the season is chosen only where it holds out of sample.
    halves: list[torch.Tensor] = []
    crossed: list[tuple[float, ...]] = []
    if season and tod is not None:
        days = _day_parity(train)
        halves = [torch.as_tensor(days[rows] == g) for g in (0, 1)]
        crossed = [fit_season(train, base.ret_index, scaler, tod, days == 1 - g) for g in (0, 1)]

    def score(candidate: TargetScale, parts: ScaleParts) -> float:
        return _scored_loss(y, candidate.scale_of(parts), levels)

    def score_crossed(candidate: TargetScale, parts: list[ScaleParts]) -> float:
        scale = torch.empty_like(y)
        for half, half_parts in zip(halves, parts, strict=True):
            scale[half] = candidate.scale_of(half_parts)
        return _scored_loss(y, scale, levels)

    cross_fitted = bool(crossed) and all(crossed) and all(bool(h.any()) for h in halves)
    choices = []
    for estimator, anchored in itertools.product(
        estimators, (False, True) if anchor is not None else (False,)
    ):
        plain = dataclasses.replace(
            estimator,
            season=(),
            anchor_index=1 if anchored else -1,
            anchor_affine=anchor if anchored and anchor is not None else (0.0, 1.0),
        )
        # what every (decay, reversion) shares: computed once (TargetScale.parts)
        plain_parts = plain.parts(returns)  # no season: the known inputs are not read
        seasonal, crossed_parts = plain, []
        if cross_fitted:
            assert known is not None and tod is not None  # a season needs both
            # time of day: columns 0, 1 of `known`; windows of each day parity scaled with the
            # season of the other parity's bars (the parts hold each half's multipliers)
            seasonal = dataclasses.replace(plain, tod_index=(0, 1), tod_affine=tod)
            crossed_parts = [
                dataclasses.replace(seasonal, season=other).parts(returns[half], known[half])
                for half, other in zip(halves, crossed, strict=True)
            ]
        losses, season_losses = {}, {}
        for decay in decays:
            for phi in reversions:
                candidate = dataclasses.replace(plain, decay=decay, reversion=phi)
                losses[(decay, phi)] = score(candidate, plain_parts)
                if crossed_parts:
                    candidate = dataclasses.replace(seasonal, decay=decay, reversion=phi)
                    season_losses[(decay, phi)] = score_crossed(candidate, crossed_parts)
        decay, phi = min(losses, key=lambda k: losses[k])
        chosen_season: tuple[float, ...] = ()
        if season_losses and min(season_losses.values()) < losses[(decay, phi)]:
            decay, phi = min(season_losses, key=lambda k: season_losses[k])
            chosen_season = season
        choices.append(
            ScaleChoice(
                decay, phi, losses, chosen_season, season_losses, anchored,
                estimator=estimator.estimator, range_ratio=estimator.range_ratio,
            )
        )  # fmt: skip
    best = min(choices, key=lambda c: c.best_loss)
    by_estimator = {
        e.estimator: min(c.best_loss for c in choices if c.estimator == e.estimator)
        for e in estimators
    }
    other = [c for c in choices if c.estimator == best.estimator and c is not best]
    return dataclasses.replace(
        best,
        other_loss=other[0].best_loss if other else None,
        estimator_losses=by_estimator if len(by_estimator) > 1 else {},
    )


def fit_season(
    train: WindowDataset,
    ret_index: int,
    scaler: ScalerParams,
    tod: tuple[float, float, float, float],
    windows: np.ndarray | None = None,
    shrink: float = SEASON_SHRINK,
) -> tuple[float, ...]:
    """Time-of-day variance multipliers from the training split's bars, or () when they all
    fall in one half-hour.

    Each training window's origin bar counts once: its squared one-bar return goes to its
    half-hour (from the known time-of-day inputs). Per half-hour ``m = (n x mean / v +
    shrink) / (n + shrink)`` (``v`` the mean over all of them, ``n`` the half-hour's bars), then
    rescaled to a bar-weighted mean of 1 and floored at :data:`SEASON_FLOOR`.

    Args:
        train: the training windows.
        ret_index: column of the return input in the historical inputs.
        scaler: the fitted scaler (to undo the z-scoring).
        tod: (sin mean, sin std, cos mean, cos std) of the time-of-day inputs.
        windows: (N,) bool, the windows whose origin bars count (default: all).
        shrink: pseudo-bars at 1 per half-hour.

    Returns:
        :data:`SEASON_BUCKETS` multipliers, or ().
    """
    origin_rows = train.origin_rows()
    if windows is not None:
        origin_rows = origin_rows[windows]
    rows = torch.as_tensor(origin_rows, dtype=torch.long)
    if rows.numel() == 0:
        return ()
    col = scaler.columns.index(RETURN_FEATURE)
    # one value of every origin row: read a block at a time (row_values), so windows mapped
    # from files (row_files.py) do not become resident whole
    r = train.row_values("historical", rows, ret_index).double() * scaler.std[col]
    r = r + scaler.mean[col]
    sin_k, cos_k = _tod_known_indices(train)
    sin = train.row_values("known", rows, sin_k).double() * tod[1] + tod[0]
    cos = train.row_values("known", rows, cos_k).double() * tod[3] + tod[2]
    bucket = tod_bucket(sin, cos)
    counts = torch.bincount(bucket, minlength=SEASON_BUCKETS).double()
    if int((counts > 0).sum()) < 2:
        return ()
    r2 = r.square()
    v = float(r2.mean())
    if v <= 0:
        return ()
    sums = torch.bincount(bucket, weights=r2, minlength=SEASON_BUCKETS)
    m = (sums / v + shrink) / (counts + shrink)
    m = m / float((m * counts).sum() / counts.sum())
    return tuple(float(x) for x in m.clamp_min(SEASON_FLOOR))


def _scored_rows(n: int) -> np.ndarray:
    """At most :data:`MAX_WINDOWS` window indices, evenly spaced, the latest included."""
    step = max(1, -(-n // MAX_WINDOWS))
    return np.arange(n - 1, -1, -step)[::-1].copy()


def _intraday(train: WindowDataset) -> bool:
    """Whether the windows' bars are intraday: the median time between a symbol's consecutive
    origins, per bar of ``stride``, is under :data:`INTRADAY_HOURS`. Daily bars stamped at
    midnight local time fall in two half-hours of UTC across daylight saving; a "season" fitted
    on them would be summer against winter, not a time of day."""
    origins = train.origins()
    gaps = (
        origins.with_columns(gap=pl.col("ts").diff().over("symbol").dt.total_seconds())
        .filter(pl.col("gap") > 0)["gap"]
        .median()
    )
    if gaps is None:
        return False
    return float(gaps) / train.stride < INTRADAY_HOURS * 3600.0  # type: ignore[arg-type]


def _day_parity(train: WindowDataset) -> np.ndarray:
    """(N,) 0 or 1 per window: the parity of its origin's UTC day number."""
    days = train.origins()["ts"].dt.epoch("d").to_numpy()
    return (days % 2).astype(np.int64)


def _tod_known_indices(train: WindowDataset) -> tuple[int, int]:
    return train.spec.known.index(TOD_FEATURES[0]), train.spec.known.index(TOD_FEATURES[1])


def _tod_columns(
    spec: FeatureSpec, scaler: ScalerParams
) -> tuple[float, float, float, float] | None:
    """(sin mean, sin std, cos mean, cos std) of the time-of-day inputs, None without them."""
    if not all(f in spec.known and f in scaler.columns for f in TOD_FEATURES):
        return None
    s, c = (scaler.columns.index(f) for f in TOD_FEATURES)
    return scaler.mean[s], scaler.std[s], scaler.mean[c], scaler.std[c]


def resolve_target_scale(
    cfg: RunConfig, train: WindowDataset, spec: FeatureSpec, scaler: ScalerParams
) -> RunConfig:
    """``cfg`` with the chosen decay and reversion when ``data.target_scale_search`` is on
    (unchanged otherwise, or when :func:`choose_target_scale` has nothing to choose)."""
    if not cfg.data.target_scale_search:
        return cfg
    choice = choose_target_scale(train, spec, scaler, cfg)
    if choice is None:
        return cfg
    log.info(
        "target scale: decay %g, reversion %g, %s, %s, %s (training pinball %.4e%s%s)",
        choice.decay,
        choice.reversion,
        "time-of-day season" if choice.season else "no season",
        "anchored on the 120-bar volatility" if choice.anchor else "no anchor",
        "bar variance from the gap and range"
        if choice.estimator == "range"
        else "bar variance from the close-to-close return",
        choice.best_loss,
        "" if choice.other_loss is None else f"; {choice.other_loss:.4e} the other anchoring",
        "".join(
            f"; {v:.4e} {k}" for k, v in choice.estimator_losses.items() if k != choice.estimator
        ),
    )
    return cfg.replace(
        data={
            "target_scale_decay": choice.decay,
            "target_scale_reversion": choice.reversion,
            "target_scale_season": choice.season,
            "target_scale_anchor": choice.anchor,
            "target_scale_estimator": choice.estimator,
            "target_scale_range_ratio": choice.range_ratio,
        }
    )


def _anchor_column(spec: FeatureSpec, scaler: ScalerParams) -> tuple[float, float] | None:
    """(mean, std) of the anchor input, None when the run does not have it."""
    if ANCHOR_FEATURE not in spec.historical or ANCHOR_FEATURE not in scaler.columns:
        return None
    a = scaler.columns.index(ANCHOR_FEATURE)
    return scaler.mean[a], scaler.std[a]


def _range_ratio(returns: torch.Tensor, close: TargetScale, ranged: TargetScale) -> float | None:
    """The scored windows' mean squared return over their mean range variance (every encoder
    bar), None when either is not positive and finite."""
    r2 = float(close.bar_deviations(returns).square().mean())
    v = float(ranged.bar_deviations(returns).square().mean())
    ratio = r2 / v if v > 0 else math.inf
    return ratio if 0.0 < ratio < math.inf else None


def _returns_and_targets(
    train: WindowDataset,
    windows: np.ndarray,
    ret_index: int,
    scaler: ScalerParams,
    tod: tuple[float, float, float, float] | None,
    anchor: tuple[float, float] | None = None,
    ranges: bool = False,
    batch_size: int = 256,
) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
    """(N, T, C) inputs of ``windows`` (z-scored, as the batch holds them): the return in
    column 0, then the anchor input when ``anchor``, then the gap and range inputs when
    ``ranges``; (N, T + H, 2) time-of-day inputs (sin, cos; None without ``tod``) and (N, H)
    log-return targets."""
    rows = windows.tolist()
    known_cols = list(_tod_known_indices(train)) if tod is not None else []
    hist_cols = [ret_index]
    if anchor is not None:
        hist_cols.append(train.spec.historical.index(ANCHOR_FEATURE))
    if ranges:
        hist_cols += [train.spec.historical.index(f) for f in RANGE_FEATURES]
    hist, known, ys = [], [], []
    for a in range(0, len(rows), batch_size):
        batch = train.batch(rows[a : a + batch_size])
        assert batch.target is not None
        hist.append(batch.historical[:, :, hist_cols].double())
        if known_cols:
            known.append(batch.known[:, :, known_cols].double())
        ys.append(batch.target.double())
    std = torch.tensor(scaler.target_std, dtype=torch.float64)
    return torch.cat(hist), torch.cat(known) if known_cols else None, torch.cat(ys) * std


def _mean_quantile_loss(y: torch.Tensor, pred: torch.Tensor, levels: torch.Tensor) -> float:
    return float(pinball(pred, y, levels).mean())


def _scored_loss(
    y: torch.Tensor, scale: torch.Tensor, levels: torch.Tensor, rows: int = SCORE_ROWS
) -> float:
    """The mean pinball loss of the scale-only forecast: the scaled targets' own quantiles
    (``torch.quantile``'s linear interpolation through numpy's partial sort: the same values
    up to rounding, 3x faster on 138,000 values) times each window's ``scale``, summed
    ``rows`` windows at a time (the (N, H, Q) float64 losses of 20,000 windows and their
    temporaries would be ~70 MB at once)."""
    q_z = torch.from_numpy(np.quantile((y / scale).reshape(-1).numpy(), levels.numpy()))  # (Q,)
    total = 0.0
    for a in range(0, y.shape[0], rows):
        pred = scale[a : a + rows, :, None] * q_z  # (rows, H, Q)
        total += float(pinball(pred, y[a : a + rows], levels).sum())
    return total / (y.numel() * levels.numel())
