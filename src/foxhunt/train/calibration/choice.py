"""How much of the conformal correction to serve: a shrinkage chosen by cross-fitting.

The conformal offsets (:func:`foxhunt.train.calibration.calibrate.conformal_offsets`) are fitted on the
validation windows and, in-sample, put every level at nominal. Out of sample they can cost: on
every run scored both ways in session 5 the full correction made the test pinball worse
(docs/recipe.md), because the validation period's residuals are not the test period's. So the
run serves ``lambda x offsets`` with ``lambda`` in :data:`SHRINKAGES`, chosen out of sample
within the validation split:

1. cut each symbol's validation windows (in time order) into K consecutive blocks and drop the
   first ``embargo`` (= H) windows of every block after the first, so no two blocks share a
   target bar (:func:`crossfit_blocks`);
2. for each block, fit the offsets on the other blocks, and score every candidate ``lambda`` on
   the block's windows: mean pinball of ``sort(z + lambda x offsets) x scale`` (log-return
   units, as ``foxhunt evaluate`` scores);
3. pick the candidate with the lowest mean over all scored windows; ties go to the smaller
   ``lambda`` (the smaller intervention), so ``lambda`` 0 — no calibration — wins when the
   offsets do not help out of sample (:func:`choose_shrinkage`).

The run's final offsets are then fitted on all validation windows and stored times the chosen
``lambda`` (:class:`foxhunt.artifacts.calibration.Calibration`). No test window is read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from foxhunt.artifacts.calibration import ShrinkageChoice
from foxhunt.model.quantile import pinball

SHRINKAGES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""Candidate shares of the fitted offsets to serve (0: uncalibrated, 1: full CQR)."""
BLOCKS = 2
"""Consecutive validation blocks of the cross-fit."""

OffsetFit = Callable[[Tensor, Tensor, tuple[float, ...]], Tensor]
"""(z_pred (N, H, Q), z_y (N, H), levels) -> offsets (H, Q)."""


def crossfit_blocks(symbols: Sequence[str], embargo: int, k: int = BLOCKS) -> list[Tensor]:
    """Window indices of ``k`` consecutive blocks, each symbol cut on its own.

    Args:
        symbols: each window's symbol, in the dataset's order (each symbol's windows in time
            order, as :class:`foxhunt.data.windows.dataset.WindowDataset` holds them).
        embargo: windows dropped at the start of every block after the first, per symbol
            (the horizon: the windows whose targets overlap the previous block's).
        k: number of blocks.

    Returns:
        ``k`` int64 tensors of window indices, ascending; a block may be empty when a symbol
        has fewer than ``k`` windows beyond the embargoes.
    """
    blocks: list[list[int]] = [[] for _ in range(k)]
    by_symbol: dict[str, list[int]] = {}
    for i, s in enumerate(symbols):
        by_symbol.setdefault(s, []).append(i)
    for rows in by_symbol.values():
        n = len(rows)
        edges = [round(n * j / k) for j in range(k + 1)]
        for j in range(k):
            start = edges[j] + (embargo if j > 0 else 0)
            blocks[j].extend(rows[start : edges[j + 1]])
    return [torch.tensor(sorted(b), dtype=torch.long) for b in blocks]


def mean_quantile_loss(
    z_pred: Tensor, z_y: Tensor, scale: Tensor, quantiles: tuple[float, ...]
) -> Tensor:
    """Mean pinball loss of the sorted quantiles, in log-return units.

    Args:
        z_pred: (N, H, Q) standardised quantiles (any order along Q).
        z_y: (N, H) standardised targets.
        scale: (N, H) each window's target scale (log-return units per standardised unit).
        quantiles: the Q levels.

    Returns:
        Scalar float64: mean over windows, horizons and levels of
        ``QL_q(y, sort(z_pred) x scale)`` with ``y = z_y x scale``.
    """
    q = torch.tensor(quantiles, dtype=torch.float64)
    pred = torch.sort(z_pred.double(), dim=-1).values
    return pinball(pred, z_y.double(), q, scale.double()).mean()  # over (N, H, Q)


def choose_shrinkage(
    z_pred: Tensor,
    z_y: Tensor,
    scale: Tensor,
    quantiles: tuple[float, ...],
    blocks: Sequence[Tensor],
    fit: OffsetFit,
    *,
    embargo: int,
    candidates: tuple[float, ...] = SHRINKAGES,
) -> tuple[float, ShrinkageChoice]:
    """The shrinkage with the lowest cross-fitted pinball (module docstring).

    Args:
        z_pred: (N, H, Q) the model's standardised quantiles on the validation windows.
        z_y: (N, H) their standardised targets.
        scale: (N, H) their target scales.
        quantiles: the Q levels.
        blocks: window indices of each block (:func:`crossfit_blocks`); each must be non-empty.
        fit: the offsets of a set of windows (:func:`foxhunt.train.calibration.calibrate.conformal_offsets`).
        embargo: the blocks' embargo (recorded in the choice).
        candidates: shrinkages to try, ascending.

    Returns:
        ``(lambda, choice)``: the chosen shrinkage and every candidate's cross-fitted score.

    Raises:
        ValueError: a block is empty.
    """
    if any(len(b) == 0 for b in blocks):
        raise ValueError(f"empty cross-fitting block: sizes {[len(b) for b in blocks]}")
    total = torch.zeros(len(candidates), dtype=torch.float64)
    everything = torch.cat(list(blocks))
    for held in blocks:
        rest = everything[~torch.isin(everything, held)]
        off = fit(z_pred[rest], z_y[rest], quantiles)  # (H, Q) fitted without the held block
        for j, lam in enumerate(candidates):
            loss = mean_quantile_loss(
                z_pred[held] + lam * off[None], z_y[held], scale[held], quantiles
            )
            total[j] += loss * len(held)
    scores = total / len(everything)
    best = int(torch.argmin(scores))  # the first minimum: ties go to the smaller shrinkage
    choice = ShrinkageChoice(
        candidates=tuple(candidates),
        pinball=tuple(float(x) for x in scores),
        block_windows=tuple(len(b) for b in blocks),
        embargo=embargo,
    )
    return candidates[best], choice
