"""The part of a WindowDataset :func:`foxhunt.data.scale.choice.choose_target_scale` reads, for
the target-scale search tests."""

from __future__ import annotations

import numpy as np
import torch

from foxhunt.data.features.table import FeatureSpec


class ChoiceWindows:
    """Windows given as z-scored historical inputs and log-return targets.

    Args:
        hist: (N, T, V) historical inputs, as the batch holds them.
        target: (N, H) log-return targets; stored divided by the scaler's target std 1e-3, as
            the pipeline's globally scaled targets are.
        spec: the feature spec the inputs follow.
    """

    target_scale = None

    def __init__(self, hist: torch.Tensor, target: np.ndarray, spec: FeatureSpec) -> None:
        self.hist = hist
        self.target = torch.from_numpy(target / 1e-3)
        self.spec = spec

    def __len__(self) -> int:
        return len(self.hist)

    def batch(self, rows: list[int]) -> object:
        return type("B", (), {"historical": self.hist[rows], "target": self.target[rows]})
