"""How a run cuts each symbol's rows, and how many bars a symbol needs to train: torch-free, so
``data inspect`` can say it before anything is trained."""

from __future__ import annotations

from foxhunt.config import RunConfig
from foxhunt.data.features.table import feature_spec
from foxhunt.data.windows.splits import SplitCut, fewest_rows


def split_cut(cfg: RunConfig) -> SplitCut:
    """The run's split fractions and embargo (default: encoder + horizon rows), and the fewest
    rows a split may have per symbol (one window: encoder + horizon)."""
    L, H = cfg.model.encoder_length, cfg.model.horizon
    embargo = cfg.data.embargo if cfg.data.embargo is not None else L + H
    return SplitCut(cfg.data.val_fraction, cfg.data.test_fraction, embargo, min_rows=L + H)


def training_bars_needed(cfg: RunConfig) -> int:
    """Bars a symbol needs for ``cfg``'s training splits (warm-up, horizon and the fewest
    feature rows its train, validation and test splits take), as training's refusal counts."""
    cut = split_cut(cfg)
    fewest = fewest_rows(
        cut.min_rows,
        val_fraction=cut.val_fraction,
        test_fraction=cut.test_fraction,
        embargo=cut.embargo,
    )
    return feature_spec(cfg.model.horizon, cfg.data).warmup + cfg.model.horizon + fewest
