"""What the training loop needs from a dataset (``WindowDataset``, a sharded view, a fake)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from foxhunt.model.batch import TFTBatch


class WindowSource(Protocol):
    """Its length and a vectorised batch of windows."""

    def __len__(self) -> int: ...

    def batch(self, indices: Sequence[int]) -> TFTBatch: ...
