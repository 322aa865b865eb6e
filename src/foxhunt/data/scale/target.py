"""The scale a window's targets are divided by: global per horizon, or per window (causal).

The network predicts quantiles of *standardised* cumulative log returns ``z = y / scale``; the
scale is reapplied outside the network (:meth:`TargetScale.to_returns`). Two scales:

* ``global``: ``scale[h] = target_std[h]``, the training split's std of the h-bar return (the
  behaviour of every run trained before this option; ``data/scale/scaler.py``).
* ``window``: ``scale[b, h] = sigma_b * sqrt(h)``, where ``sigma_b**2`` is the exponentially
  weighted variance of the one-bar log returns of window ``b``'s encoder bars, up to and
  including the origin (RiskMetrics with normalised weights, as
  :func:`foxhunt.data.scale.volatility.ewma_variance` without ``initial``). This is what
  pytorch-forecasting's ``EncoderNormalizer`` does: the scale is a function of the encoder
  alone, so training, ``evaluate``, ``predict`` and the streaming ``Forecaster`` compute the
  same number from the same bars, and it never sees a bar after the origin. It is floored at
  ``WINDOW_FLOOR x target_std[h]`` so a flat encoder cannot blow a target up (``pooled``, the
  runs before session 57), or, with ``DataConfig.target_scale_floor`` ``own`` (the presets'),
  at ``WINDOW_FLOOR x sqrt(h x L_b)``, ``L_b`` the window's own 120-bar variance at the origin
  (the anchor's input, below), held between :data:`OWN_FLOOR_MIN` of the pooled floor and the
  pooled floor: the pooled std is every symbol's, and a calm one (a rates future beside equity
  futures, its daily std 3.6e-5 against a pooled 0.0078) had bands of the floor, 30-700 times
  its own.

  With ``reversion`` ``phi < 1`` the window's variance reverts to the training split's mean
  squared one-bar return ``v`` as a GARCH(1,1) forecast does: the k-th bar ahead has variance
  ``v + phi^(k-1) (sigma_b**2 - v)`` and ``scale[b, h]**2`` is their sum over k = 1..h
  (``phi = 1``: ``sigma_b**2 x h``, the scale above). ``v`` is read from the fitted scaler
  (``std**2 + mean**2`` of the return input), so inference reproduces it.

  With a time-of-day ``season`` (``DataConfig.target_scale_season``: :data:`SEASON_BUCKETS`
  variance multipliers ``m``, one per half-hour of the calendar's clock, bar-weighted mean 1 on
  the training split) the encoder's returns are deseasonalised before the EWMA
  (``r_t / sqrt(m(t))``) and the k-th bar ahead's variance is multiplied by its own half-hour's
  ``m``: ``m(t+k) (v + phi^(k-1) (sigma_b**2 - v))``. Intraday volatility follows the clock
  (the open, the lunch lull, the session overlaps); an EWMA alone carries the last hour's level
  into the next. The half-hour of every bar, the forecast bars' included, is read from the
  batch's known inputs ``known__tod_sin`` / ``known__tod_cos`` (the calendar's, so ``predict``
  and the ``Forecaster`` know it for bars not yet seen).

  With an ``anchor`` (``DataConfig.target_scale_anchor``) the window's own long-run level
  ``L_b`` (the square of the observed input ``obs__rv_cc_120`` at the origin: the variance of
  the last 120 one-bar returns, computed by the feature pipeline over the whole history, not
  only the encoder) replaces two things: the EWMA starts from it instead of normalising its
  weights over the encoder (``lambda^T L_b + (1 - lambda) sum_t lambda^(T-1-t) r_t**2``, as
  a RiskMetrics recursion seeded with ``L_b`` T bars back), and the mean reversion goes to it
  instead of the training split's pooled ``v``. A short encoder (16 bars) then still carries
  each symbol's own volatility level, which matters most for pooled daily futures whose
  levels differ tenfold (a GARCH(1,1) fitted per symbol has its own long-run level). With a
  season, ``L_b`` is divided by the mean multiplier of the encoder's bars.

With the ``range`` ``estimator`` (``DataConfig.target_scale_estimator``) each encoder bar's
variance in the EWMA is not the squared close-to-close return but ``kappa (gap**2 +
log(high/low)**2 / (4 ln 2))``: the squared opening gap plus Parkinson's estimate from the bar's
range, which sees the bar's whole path instead of its two ends (several times as efficient for
a random walk), times ``kappa`` (``target_scale_range_ratio``), the training split's mean squared
return over its mean range variance, so the EWMA, the mean reversion and the anchor share one
scale. Gap and range are read from ``obs__gap_lag0`` and ``obs__log_range_lag0``.

The one-bar returns are read back from the batch's observed input ``obs__ret1_lag0`` (z-scored
with the training mean and std; undone here in float64), the anchor from ``obs__rv_cc_120``
likewise.
"""

from __future__ import annotations

import functools
import logging
import math
from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor

from foxhunt.config import DataConfig, TargetScaleEstimator, TargetScaleMode
from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.scale.volatility import VARIANCE_FLOOR

log = logging.getLogger(__name__)

RETURN_FEATURE = "obs__ret1_lag0"
"""The observed input holding the bar's one-bar log return."""
ANCHOR_FEATURE = "obs__rv_cc_120"
"""The observed input holding the std of the last 120 one-bar log returns (the anchor)."""
GAP_FEATURE = "obs__gap_lag0"
"""The observed input holding the bar's opening gap ``log(open / previous close)``."""
RANGE_FEATURE = "obs__log_range_lag0"
"""The observed input holding the bar's ``log(high / low)``."""
RANGE_FEATURES = (GAP_FEATURE, RANGE_FEATURE)
"""What the ``range`` estimator reads."""
PARKINSON = 1.0 / (4.0 * math.log(2.0))
"""Parkinson's factor: ``E[log(high/low)**2] = 4 ln 2 sigma**2`` for a driftless random walk."""
WINDOW_FLOOR = 0.1
"""Smallest window scale, as a fraction of the global per-horizon std (``pooled``) or of the
window's own 120-bar volatility x sqrt(h) (``own``)."""
OWN_FLOOR_MIN = 0.01
"""The ``own`` floor is at least this fraction of the pooled floor: a window whose 120 bars
did not move (an illiquid stretch) cannot blow its targets up."""
TOD_FEATURES = ("known__tod_sin", "known__tod_cos")
"""The known inputs holding each bar's time of day (angle ``2 pi minutes / 1440``)."""
SEASON_BUCKETS = 48
"""Half-hours per day of the seasonal profile."""


class ScaleParts(NamedTuple):
    """:meth:`TargetScale.parts`: the windows' bar deviations (B, T_enc) float64, deseasonalised
    with a season; each window's long-run variance (B,) with an anchor (divided by the mean
    encoder multiplier with a season), else None; the forecast bars' season multipliers (B, H),
    else None."""

    deviations: Tensor
    anchor: Tensor | None
    per_bar: Tensor | None
    level: Tensor | None = None
    """Each window's own 120-bar variance (B,) for the ``own`` floor, else None."""


@dataclass(frozen=True)
class TargetScale:
    """How targets are standardised, with everything needed to do it from a batch.

    Attributes:
        mode: ``global`` or ``window`` (see the module docstring).
        target_std: (H,) training std of the h-bar return, h = 1..H.
        decay: EWMA decay of the window scale (RiskMetrics lambda).
        ret_index: column of :data:`RETURN_FEATURE` in the batch's historical inputs.
        ret_mean: training mean the return input was centred with.
        ret_std: training std the return input was divided by.
        reversion: mean reversion ``phi`` of the window variance towards the training mean
            squared return (1: none).
        season: :data:`SEASON_BUCKETS` time-of-day variance multipliers, or () for none.
        tod_index: columns of :data:`TOD_FEATURES` in the batch's known inputs.
        tod_affine: (sin mean, sin std, cos mean, cos std) they were z-scored with.
        anchor_index: column of :data:`ANCHOR_FEATURE` in the historical inputs, or -1 for no
            anchor.
        anchor_affine: (mean, std) it was z-scored with.
        estimator: each bar's variance: ``close`` (squared return) or ``range`` (gap and
            Parkinson range; module docstring).
        range_index: columns of :data:`GAP_FEATURE` and :data:`RANGE_FEATURE` in the
            historical inputs (``range`` only).
        range_affine: (gap mean, gap std, range mean, range std) they were z-scored with.
        range_ratio: ``kappa``, the range variance's multiplier.
    """

    mode: TargetScaleMode
    target_std: tuple[float, ...]
    decay: float = 0.94
    ret_index: int = 0
    ret_mean: float = 0.0
    ret_std: float = 1.0
    reversion: float = 1.0
    season: tuple[float, ...] = ()
    tod_index: tuple[int, int] = (0, 1)
    tod_affine: tuple[float, float, float, float] = (0.0, 1.0, 0.0, 1.0)
    anchor_index: int = -1
    anchor_affine: tuple[float, float] = (0.0, 1.0)
    estimator: TargetScaleEstimator = "close"
    range_index: tuple[int, int] = (0, 0)
    range_affine: tuple[float, float, float, float] = (0.0, 1.0, 0.0, 1.0)
    range_ratio: float = 1.0
    level_index: int = -1
    """Column of :data:`ANCHOR_FEATURE` for the ``own`` floor, or -1: the ``pooled`` floor."""
    level_affine: tuple[float, float] = (0.0, 1.0)

    @classmethod
    def of(cls, data: DataConfig, spec: FeatureSpec, scaler: ScalerParams) -> TargetScale:
        """The scale of a run (its data config, its spec and fitted scaler).

        ``window`` needs the close's one-bar return among the inputs and a price target: a run
        with a custom feature set without :data:`RETURN_FEATURE`, or a ``return:COLUMN`` target
        (another series than the close), gets the ``global`` scale, with a warning. The choice
        is a pure function of the stored config and features, so training and inference agree.
        """
        mode, decay = data.target_scale, data.target_scale_decay
        if mode == "window" and (
            RETURN_FEATURE not in spec.historical
            or RETURN_FEATURE not in scaler.columns
            or data.target.startswith("return:")
        ):
            log.warning(
                "target_scale 'window' needs the input %s and a price target; using 'global'",
                RETURN_FEATURE,
            )
            mode = "global"
        if mode == "global":
            return cls("global", tuple(scaler.target_std), decay)
        col = scaler.columns.index(RETURN_FEATURE)
        season, tod_index, tod_affine = (
            tuple(data.target_scale_season),
            (0, 1),
            (0.0, 1.0, 0.0, 1.0),
        )
        if season and not all(f in spec.known and f in scaler.columns for f in TOD_FEATURES):
            log.warning(
                "target_scale_season needs the known inputs %s; the scale has no season",
                " and ".join(TOD_FEATURES),
            )
            season = ()
        if season:
            sin_col, cos_col = (scaler.columns.index(f) for f in TOD_FEATURES)
            tod_index = (spec.known.index(TOD_FEATURES[0]), spec.known.index(TOD_FEATURES[1]))
            tod_affine = (
                scaler.mean[sin_col], scaler.std[sin_col], scaler.mean[cos_col], scaler.std[cos_col]
            )  # fmt: skip
        anchor_index, anchor_affine = -1, (0.0, 1.0)
        if data.target_scale_anchor:
            anchor_index, anchor_affine = _level_input(
                spec, scaler, "target_scale_anchor needs the input %s; the scale has no anchor"
            )
        estimator, range_index, range_affine = "close", (0, 0), (0.0, 1.0, 0.0, 1.0)
        if data.target_scale_estimator == "range":
            affine = range_inputs_affine(spec, scaler)
            if affine is not None:
                estimator, range_affine = "range", affine
                range_index = (
                    spec.historical.index(GAP_FEATURE),
                    spec.historical.index(RANGE_FEATURE),
                )
            else:
                log.warning(
                    "target_scale_estimator 'range' needs the inputs %s; using 'close'",
                    " and ".join(RANGE_FEATURES),
                )
        level_index, level_affine = -1, (0.0, 1.0)
        if data.target_scale_floor == "own":
            level_index, level_affine = _level_input(
                spec, scaler, "target_scale_floor 'own' needs the input %s; the floor is pooled"
            )
        return cls(
            "window",
            tuple(scaler.target_std),
            decay,
            spec.historical.index(RETURN_FEATURE),
            scaler.mean[col],
            scaler.std[col],
            data.target_scale_reversion,
            season,
            tod_index,
            tod_affine,
            anchor_index,
            anchor_affine,
            estimator,
            range_index,
            range_affine,
            data.target_scale_range_ratio,
            level_index,
            level_affine,
        )

    def scale(self, historical: Tensor, known: Tensor | None = None) -> Tensor:
        """Each window's scale per horizon, in log-return units.

        Args:
            historical: (B, T_enc, V_h) observed inputs as the model gets them (z-scored).
            known: (B, T_enc + H, V_k) known inputs (z-scored); needed with a ``season``.

        Returns:
            (B, H) float64 on ``historical``'s device.

        Raises:
            ValueError: a seasonal scale without ``known``.
        """
        if self.mode == "global":
            std = constant_tensor(self.target_std, torch.float64, historical.device)
            return std.expand(historical.shape[0], -1).clone()  # (B, H)
        return self.scale_of(self.parts(historical, known))

    def parts(self, historical: Tensor, known: Tensor | None = None) -> ScaleParts:
        """What :meth:`scale` computes from the windows before ``decay`` and ``reversion``
        enter: the same for every (decay, reversion), so the choice among them
        (:mod:`foxhunt.data.scale.choice`) computes it once per estimator and season.
        ``window`` mode only; arguments as for :meth:`scale`."""
        r = self.bar_deviations(historical)  # (B, T_enc): squared, each bar's variance
        anchor = self.anchor_variance(historical)  # (B,) or None
        level = self.level_variance(historical)  # (B,) or None
        if not self.season:
            return ScaleParts(r, anchor, None, level)
        if known is None:
            raise ValueError("a seasonal target scale needs the batch's known inputs")
        t_enc = r.shape[1]
        m = self.multipliers(known.to(historical.device))  # (B, T_enc + H)
        if anchor is not None:
            anchor = anchor / m[:, :t_enc].mean(dim=1)
        per_bar = m[:, t_enc : t_enc + len(self.target_std)]  # (B, H) the forecast bars'
        return ScaleParts(r / m[:, :t_enc].sqrt(), anchor, per_bar, level)  # deseasonalised

    def scale_of(self, parts: ScaleParts) -> Tensor:
        """:meth:`scale` from its :meth:`parts` (``window`` mode), (B, H) float64."""
        std = constant_tensor(self.target_std, torch.float64, parts.deviations.device)
        long_run: Tensor | float = self.long_run_var if parts.anchor is None else parts.anchor
        horizon = len(self.target_std)
        var = ewma_last(parts.deviations, self.decay, parts.anchor)  # (B,)
        h = constant_tensor(tuple(range(1, horizon + 1)), torch.float64, var.device)
        floor = WINDOW_FLOOR * std[None, :]  # (1, H): pooled
        if parts.level is not None:  # own: the window's 120-bar volatility x sqrt(h)
            own = WINDOW_FLOOR * (parts.level[:, None] * h[None, :]).sqrt()
            floor = torch.minimum(torch.maximum(own, OWN_FLOOR_MIN * floor), floor)
        if parts.per_bar is not None:
            cum = reverting_variance(var, long_run, self.reversion, horizon, parts.per_bar)
            return torch.maximum(cum.sqrt(), floor)
        if self.reversion < 1.0:
            window = reverting_variance(var, long_run, self.reversion, horizon).sqrt()
        else:
            window = var.sqrt()[:, None] * h.sqrt()[None, :]  # (B, H)
        return torch.maximum(window, floor)

    def bar_deviations(self, historical: Tensor) -> Tensor:
        """Each encoder bar's one-bar return (``close``) or the square root of its scaled range
        variance (``range``): what the EWMA squares. (B, T_enc) float64."""
        if self.estimator != "range":
            return historical[:, :, self.ret_index].double() * self.ret_std + self.ret_mean
        g_mean, g_std, r_mean, r_std = self.range_affine
        gap = historical[:, :, self.range_index[0]].double() * g_std + g_mean
        hl = historical[:, :, self.range_index[1]].double() * r_std + r_mean
        var = gap.square() + PARKINSON * hl.square()
        return (self.range_ratio * var).sqrt()

    def anchor_variance(self, historical: Tensor) -> Tensor | None:
        """Each window's long-run variance ``L_b`` (the anchor at the origin, squared), (B,)
        float64 floored at :data:`VARIANCE_FLOOR`; None without an anchor."""
        return _origin_variance(historical, self.anchor_index, self.anchor_affine)

    def level_variance(self, historical: Tensor) -> Tensor | None:
        """The same input for the ``own`` floor, (B,) float64; None with the pooled floor."""
        return _origin_variance(historical, self.level_index, self.level_affine)

    def multipliers(self, known: Tensor) -> Tensor:
        """The ``season`` multiplier of every bar of the windows, (B, T) float64.

        Args:
            known: (B, T, V_k) known inputs (z-scored), with the time of day at ``tod_index``.
        """
        sin_mean, sin_std, cos_mean, cos_std = self.tod_affine
        sin = known[:, :, self.tod_index[0]].double() * sin_std + sin_mean
        cos = known[:, :, self.tod_index[1]].double() * cos_std + cos_mean
        return self.season_table(known.device)[tod_bucket(sin, cos)]

    def season_table(self, device: torch.device) -> Tensor:
        """``season`` as a (SEASON_BUCKETS,) float64 tensor."""
        return constant_tensor(self.season, torch.float64, device)

    @property
    def long_run_var(self) -> float:
        """The training split's mean squared one-bar return (what the window variance reverts
        to)."""
        return self.ret_std**2 + self.ret_mean**2

    def standardise(
        self, target: Tensor, historical: Tensor, known: Tensor | None = None
    ) -> Tensor:
        """Globally scaled targets ``y / target_std`` (B, H) -> ``y / scale`` (same dtype)."""
        if self.mode == "global":
            return target
        std = constant_tensor(self.target_std, torch.float64, target.device)
        return (target.double() * std / self.scale(historical, known)).to(target.dtype)

    def to_returns(self, z: Tensor, historical: Tensor, known: Tensor | None = None) -> Tensor:
        """Standardised quantiles (B, H, Q) -> log-return quantiles (float64, same device)."""
        return z.double() * self.scale(historical, known)[:, :, None]


def range_inputs_affine(
    spec: FeatureSpec, scaler: ScalerParams
) -> tuple[float, float, float, float] | None:
    """(gap mean, gap std, range mean, range std) the ``range`` estimator's inputs were z-scored
    with, None when the run does not have them."""
    if not all(f in spec.historical and f in scaler.columns for f in RANGE_FEATURES):
        return None
    g, r = (scaler.columns.index(f) for f in RANGE_FEATURES)
    return scaler.mean[g], scaler.std[g], scaler.mean[r], scaler.std[r]


@functools.lru_cache(maxsize=256)
def constant_tensor(values: tuple, dtype: torch.dtype, device: torch.device | str) -> Tensor:
    """``torch.tensor(values)``, made once per (values, dtype, device) and shared: a live
    update scales one window at a time, where making these small tensors costs as much as the
    arithmetic. An ordinary tensor (made outside inference mode); never write to it."""
    with torch.inference_mode(False):
        return torch.tensor(values, dtype=dtype, device=device)


@functools.lru_cache(maxsize=256)
def _powers(base: float, n: int, reverse: int, device: torch.device | str) -> Tensor:
    """``base ** arange(n)`` (float64), reversed with ``reverse``; made once and shared."""
    with torch.inference_mode(False):
        if reverse:
            return base ** torch.arange(n - 1, -1, -1, dtype=torch.float64, device=device)
        return base ** torch.arange(n, dtype=torch.float64, device=device)


def tod_bucket(sin: Tensor, cos: Tensor) -> Tensor:
    """The half-hour (0..SEASON_BUCKETS-1) of each time-of-day angle, as a long tensor.

    A bar on a half-hour boundary (09:30) falls in the half-hour it opens, whatever the float
    rounding of its sine and cosine."""
    frac = torch.remainder(torch.atan2(sin, cos), 2 * math.pi) / (2 * math.pi)  # [0, 1)
    return (frac * SEASON_BUCKETS + 1e-4).floor().long().remainder(SEASON_BUCKETS)


def reverting_variance(
    var: Tensor,
    long_run: Tensor | float,
    phi: float,
    horizon: int,
    per_bar_scale: Tensor | None = None,
) -> Tensor:
    """Cumulative variance over h = 1..H bars when each bar's variance reverts to ``long_run``.

    Args:
        var: (B,) the variance of the next bar.
        long_run: the variance it reverts to: one for all rows, or (B,) one per row.
        phi: reversion per bar in [0, 1] (1: none, ``var x h``).
        horizon: H.
        per_bar_scale: (B, H) multipliers of each bar's variance (a time-of-day season), or
            None.

    Returns:
        (B, H) float64: ``sum_{k=1..h} m_k (long_run + phi^(k-1) (var - long_run))``.
    """
    level = long_run.double()[:, None] if isinstance(long_run, Tensor) else long_run
    per_bar = level + _powers(phi, horizon, 0, var.device)[None, :] * (
        var.double()[:, None] - level
    )  # (B, H)
    if per_bar_scale is not None:
        per_bar = per_bar * per_bar_scale.double()
    return per_bar.cumsum(dim=1)


def ewma_last(returns: Tensor, decay: float, initial: Tensor | None = None) -> Tensor:
    """The EWMA variance after the last of each row's returns.

    Without ``initial``: normalised weights, ``ewma_variance(r, decay)[-1]`` (no ``initial``) of
    :mod:`foxhunt.data.scale.volatility` for every row, vectorised over the batch. With it: the
    RiskMetrics recursion ``s <- decay s + (1 - decay) r**2`` started at ``s = initial`` before
    the first return, ``decay**T initial + (1 - decay) sum_t decay**(T-1-t) r_t**2``.

    Args:
        returns: (B, T) one-bar returns, oldest first.
        decay: in (0, 1).
        initial: (B,) starting variances, or None.

    Returns:
        (B,) float64, floored at :data:`~foxhunt.data.scale.volatility.VARIANCE_FLOOR`.
    """
    if not 0.0 < decay < 1.0:
        raise ValueError(f"decay must be in (0, 1), got {decay}")
    t = returns.shape[1]
    w = _powers(decay, t, 1, returns.device)  # (T,): decay^(T-1) .. decay^0
    weighted = (returns.double().square() * w).sum(dim=1)  # (B,)
    if initial is None:
        var = weighted / w.sum()
    else:
        var = decay**t * initial.double() + (1.0 - decay) * weighted
    return var.clamp_min(VARIANCE_FLOOR)


def _level_input(
    spec: FeatureSpec, scaler: ScalerParams, missing: str
) -> tuple[int, tuple[float, float]]:
    """The column of :data:`ANCHOR_FEATURE` in the historical inputs and its (mean, std), or
    ``(-1, (0, 1))`` with the warning ``missing`` where the run does not have it."""
    if ANCHOR_FEATURE in spec.historical and ANCHOR_FEATURE in scaler.columns:
        a = scaler.columns.index(ANCHOR_FEATURE)
        return spec.historical.index(ANCHOR_FEATURE), (scaler.mean[a], scaler.std[a])
    log.warning(missing, ANCHOR_FEATURE)
    return -1, (0.0, 1.0)


def _origin_variance(historical: Tensor, index: int, affine: tuple[float, float]) -> Tensor | None:
    """The squared input at ``index`` at each window's origin (un-z-scored with ``affine``),
    (B,) float64 floored at :data:`VARIANCE_FLOOR`; None for ``index`` -1."""
    if index < 0:
        return None
    mean, std = affine
    sd = historical[:, -1, index].double() * std + mean
    return sd.clamp_min(0.0).square().clamp_min(VARIANCE_FLOOR)
