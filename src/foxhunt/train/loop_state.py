"""The training loop's counters (:class:`LoopState`): plain numbers, saved in the resume state."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class LoopState:
    """Counters that make a run resumable (plain numbers, saved in the resume state).

    Attributes:
        epoch: Epochs completed.
        step: Optimizer steps taken.
        samples_seen: Training samples that went into an optimizer step.
        best_val_loss: Lowest validation loss so far, the start's included.
        best_epoch: Epoch of ``best_val_loss`` (0: the starting weights, or none yet).
        epochs_without_improvement: Epochs since ``best_epoch``.
        micro_batch: Current micro-batch size (smaller after OOM back-offs).
        start_val_loss: Validation loss of the starting weights (inf: not measured).
        train_seconds: Wall-clock seconds of the loop so far, over resumes (``max_minutes``).
    """

    epoch: int = 0
    step: int = 0
    samples_seen: int = 0
    best_val_loss: float = math.inf
    best_epoch: int = 0
    epochs_without_improvement: int = 0
    micro_batch: int = 0
    start_val_loss: float = math.inf
    train_seconds: float = 0.0

    def end_epoch(self, epoch: int, val_loss: float, micro_batch: int) -> bool:
        """Count ``epoch`` as complete; True if ``val_loss`` is the best so far."""
        self.epoch, self.micro_batch = epoch, micro_batch
        improved = val_loss < self.best_val_loss
        if improved:
            self.best_val_loss, self.best_epoch = val_loss, epoch
            self.epochs_without_improvement = 0
        else:
            self.epochs_without_improvement += 1
        return improved
