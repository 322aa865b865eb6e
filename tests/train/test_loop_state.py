"""The loop's counters: what one epoch's end does to them."""

from __future__ import annotations

import math
from dataclasses import asdict

from foxhunt.train.loop_state import LoopState


def test_a_fresh_state_has_seen_nothing_and_has_no_best() -> None:
    assert asdict(LoopState()) == {
        "epoch": 0,
        "step": 0,
        "samples_seen": 0,
        "best_val_loss": math.inf,
        "best_epoch": 0,
        "epochs_without_improvement": 0,
        "micro_batch": 0,
        "start_val_loss": math.inf,
        "train_seconds": 0.0,
    }


def test_end_epoch_counts_improvements_and_the_epochs_since_the_best() -> None:
    state = LoopState(best_val_loss=0.5)  # the start's loss
    assert state.end_epoch(1, 0.6, 32) is False  # worse than the start
    assert (state.epoch, state.best_epoch, state.epochs_without_improvement) == (1, 0, 1)
    assert state.end_epoch(2, 0.4, 16) is True
    assert (state.best_epoch, state.best_val_loss, state.epochs_without_improvement) == (2, 0.4, 0)
    assert state.micro_batch == 16
    assert state.end_epoch(3, 0.4, 16) is False  # a tie is not an improvement
    assert state.end_epoch(4, 0.45, 8) is False
    assert (state.epoch, state.best_epoch, state.epochs_without_improvement) == (4, 2, 2)
    assert (state.best_val_loss, state.micro_batch) == (0.4, 8)
    assert state.end_epoch(5, 0.39, 8) is True
    assert (state.best_epoch, state.epochs_without_improvement) == (5, 0)


def test_a_nan_loss_never_improves() -> None:
    state = LoopState()
    assert state.end_epoch(1, math.nan, 4) is False
    assert state.best_epoch == 0 and state.best_val_loss == math.inf
    assert state.epochs_without_improvement == 1
