"""The learning-rate schedule: a pure function of the optimizer step (and, under a time budget,
of the share of the budget spent).

Linear warm-up from ``peak_lr / warmup_steps`` to ``peak_lr`` over ``warmup_steps`` steps, then a
half cosine down to ``min_ratio * peak_lr`` at ``total_steps``. Because the rate is a function of
the step alone, resuming needs nothing but the step counter: there is no scheduler object whose
state could drift from the optimizer's.

With ``--max-minutes`` the run usually ends long before ``total_steps``; a cosine laid over the
steps would then stop near its peak and the weights would never see the low rates that settle
them. So the cosine runs on whichever budget is further spent: ``time_fraction`` (the share of
the wall-clock budget used, carried over resumes by :class:`foxhunt.train.deadline.Deadline`)
moves the decay forward when the clock, not the step count, will end the run. Without a time
budget it is 0 and the schedule is the step-only one.
"""

from __future__ import annotations

import math


def lr_at(
    step: int,
    *,
    peak_lr: float,
    warmup_steps: int,
    total_steps: int,
    min_ratio: float = 0.1,
    time_fraction: float = 0.0,
) -> float:
    """Learning rate for optimizer step ``step`` (0-based: the step about to be taken).

    Args:
        step: Optimizer steps already taken (>= 0).
        peak_lr: Rate at the end of warm-up.
        warmup_steps: Linear warm-up length; 0 starts at ``peak_lr``.
        total_steps: Steps in the whole run; the cosine reaches its floor here and stays there.
        min_ratio: Floor of the cosine as a fraction of ``peak_lr``.
        time_fraction: Share of a wall-clock budget already spent (0 without one); the decay
            is at least this far along once warm-up is over.

    Returns:
        The learning rate, in ``(0, peak_lr]``.

    Raises:
        ValueError: If ``step`` is negative or ``total_steps`` < 1.
    """
    progress = decay_progress(  # and the arguments' checks
        step, warmup_steps=warmup_steps, total_steps=total_steps, time_fraction=time_fraction
    )
    if step < warmup_steps:
        return peak_lr * (step + 1) / warmup_steps
    cosine = 0.5 * (1.0 + math.cos(math.pi * progress))  # 1 -> 0
    return peak_lr * (min_ratio + (1.0 - min_ratio) * cosine)


def decay_progress(
    step: int, *, warmup_steps: int, total_steps: int, time_fraction: float = 0.0
) -> float:
    """How far the cosine of :func:`lr_at` has gone at ``step``, in [0, 1]: 0 until warm-up
    ends, 1 at its floor (``total_steps``, or the end of the time budget, whichever is first).

    Raises:
        ValueError: If ``step`` is negative or ``total_steps`` < 1.
    """
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    if total_steps < 1:
        raise ValueError(f"total_steps must be >= 1, got {total_steps}")
    if step < warmup_steps:
        return 0.0
    decay_steps = max(1, total_steps - warmup_steps)
    return min(1.0, max((step - warmup_steps) / decay_steps, time_fraction))
