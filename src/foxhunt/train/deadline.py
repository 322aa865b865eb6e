"""``--max-minutes``: a wall-clock budget for the training loop, read at step boundaries.

The budget covers the loop itself (the start's validation, the steps, every epoch's validation
and checkpoint), not the data preparation before it nor the calibration after it. The loop asks
:meth:`Deadline.passed` before each optimizer step after the epoch's first: once the budget is
spent the epoch ends there, is validated and checkpointed like any other (its weights compete
for the final checkpoint), and the run stops with ``stop_reason`` ``max_minutes``. Seconds
spent are carried in the loop state, so a run interrupted and resumed with ``--resume`` gets
the rest of its budget, not a new one. The clock is injected (tests pass a fake one).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

Clock = Callable[[], float]
"""Seconds from an arbitrary origin (``time.monotonic``)."""


class Deadline:
    """A budget of ``minutes`` of wall clock, ``spent`` of it already used (by earlier runs of
    the same training, before a resume).

    Args:
        minutes: The budget; None: no limit.
        spent: Seconds already used.
        clock: Where the time comes from.
    """

    def __init__(self, minutes: float | None, spent: float = 0.0, clock: Clock = time.monotonic):
        self._limit = math.inf if minutes is None else 60.0 * minutes
        self._spent, self._clock = spent, clock
        self._t0 = clock()

    @property
    def seconds(self) -> float:
        """Seconds used so far, the earlier runs' included."""
        return self._spent + (self._clock() - self._t0)

    def fraction(self) -> float:
        """Share of the budget used, in [0, 1]; 0 without a budget (the learning-rate schedule
        decays on it, :func:`foxhunt.train.optimizer.schedule.lr_at`)."""
        if math.isinf(self._limit):
            return 0.0
        return min(1.0, self.seconds / self._limit) if self._limit > 0 else 1.0

    def passed(self) -> bool:
        """True once the budget is used up."""
        return self.seconds >= self._limit
