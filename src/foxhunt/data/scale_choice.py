"""Choose the window target scale's decay and mean reversion on the training split.

A TFT with the ``window`` target scale starts at the *scale-only* forecast
(:mod:`foxhunt.train.head_init`): ``Q_z[q] x scale[b, h]``, ``Q_z`` the empirical quantiles of
the standardised training targets pooled over horizons. Its network barely moves from there on
short budgets (docs/recipe.md), so the scale is what decides whether the forecast beats the
EWMA and GARCH baselines. :func:`choose_target_scale` scores that forecast on the training
windows for every (decay, reversion) of :data:`DECAYS` x :data:`REVERSIONS` and returns the
pair with the lowest mean pinball loss; :func:`resolve_target_scale` writes it into the run's
config (``target_scale_search`` on), so ``config.json`` holds the values inference uses.
Only training windows are read: validation stays for early stopping and calibration.
"""

from __future__ import annotations

import dataclasses
import logging

import torch

from foxhunt.config import RunConfig
from foxhunt.data.features import FeatureSpec
from foxhunt.data.scaling import ScalerParams
from foxhunt.data.target_scale import TargetScale
from foxhunt.data.windows import WindowDataset

log = logging.getLogger(__name__)

DECAYS = (0.8, 0.9, 0.94, 0.97, 0.985, 0.995)
"""EWMA decays tried (over the encoder's bars)."""
REVERSIONS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.97, 0.99, 1.0)
"""Mean reversions tried (1: none)."""
MAX_WINDOWS = 20_000
"""Training windows scored at most (evenly spaced, the latest included)."""


@dataclasses.dataclass(frozen=True)
class ScaleChoice:
    """The chosen pair and the training pinball loss of every pair tried.

    Attributes:
        decay: the chosen EWMA decay.
        reversion: the chosen mean reversion.
        losses: ``(decay, reversion) -> mean pinball`` (log-return units) of each pair.
    """

    decay: float
    reversion: float
    losses: dict[tuple[float, float], float]


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
    returns, y = _returns_and_targets(train, base.ret_index, scaler)
    levels = torch.tensor(cfg.model.quantiles, dtype=torch.float64)
    losses = {}
    for decay in decays:
        for phi in reversions:
            candidate = dataclasses.replace(base, decay=decay, reversion=phi, ret_index=0)
            scale = candidate.scale(returns)  # (N, H)
            q_z = torch.quantile((y / scale).reshape(-1), levels)  # (Q,)
            losses[(decay, phi)] = _mean_pinball(y, scale[:, :, None] * q_z, levels)
    decay, phi = min(losses, key=lambda k: losses[k])
    return ScaleChoice(decay, phi, losses)


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
        "target scale: decay %g, reversion %g (training pinball %.4e)",
        choice.decay,
        choice.reversion,
        choice.losses[(choice.decay, choice.reversion)],
    )
    return cfg.replace(
        data={"target_scale_decay": choice.decay, "target_scale_reversion": choice.reversion}
    )


def _returns_and_targets(
    train: WindowDataset, ret_index: int, scaler: ScalerParams, batch_size: int = 2048
) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, T, 1) return inputs (z-scored, as the batch holds them) and (N, H) log-return
    targets of at most :data:`MAX_WINDOWS` training windows."""
    n = len(train)
    step = max(1, -(-n // MAX_WINDOWS))
    rows = list(range(n - 1, -1, -step))[::-1]
    hist, ys = [], []
    for a in range(0, len(rows), batch_size):
        batch = train.batch(rows[a : a + batch_size])
        assert batch.target is not None
        hist.append(batch.historical[:, :, ret_index : ret_index + 1].double())
        ys.append(batch.target.double())
    std = torch.tensor(scaler.target_std, dtype=torch.float64)
    return torch.cat(hist), torch.cat(ys) * std


def _mean_pinball(y: torch.Tensor, pred: torch.Tensor, levels: torch.Tensor) -> float:
    e = y[:, :, None] - pred
    return float(torch.maximum(levels * e, (levels - 1) * e).mean())
