from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from foxhunt.train.optimizer.schedule import decay_progress, lr_at


def test_warmup_then_cosine_values() -> None:
    kw = {"peak_lr": 1e-3, "warmup_steps": 10, "total_steps": 110, "min_ratio": 0.1}
    assert lr_at(0, **kw) == pytest.approx(1e-4)
    assert lr_at(9, **kw) == pytest.approx(1e-3)
    assert lr_at(10, **kw) == pytest.approx(1e-3)
    assert lr_at(60, **kw) == pytest.approx(1e-3 * (0.1 + 0.9 * 0.5))  # half-way down the cosine
    assert lr_at(110, **kw) == pytest.approx(1e-4)
    assert lr_at(10_000, **kw) == pytest.approx(1e-4)


def test_no_warmup_starts_at_peak() -> None:
    assert lr_at(0, peak_lr=0.5, warmup_steps=0, total_steps=10) == pytest.approx(0.5)


@given(
    step=st.integers(0, 10_000),
    warmup=st.integers(0, 500),
    total=st.integers(1, 5_000),
    peak=st.floats(1e-6, 1.0),
)
def test_bounded_with_fixed_anchor_points(step: int, warmup: int, total: int, peak: float) -> None:
    a = lr_at(step, peak_lr=peak, warmup_steps=warmup, total_steps=total)
    assert 0.0 < a <= peak * (1 + 1e-12) and math.isfinite(a)
    # Anchors that hold for any run: the peak right after warm-up, the floor from the end on.
    assert lr_at(warmup, peak_lr=peak, warmup_steps=warmup, total_steps=total) == pytest.approx(
        peak
    )
    if step >= total > warmup:
        assert a == pytest.approx(0.1 * peak)
    if step < warmup:
        assert a == pytest.approx(peak * (step + 1) / warmup)


@given(warmup=st.integers(0, 50), total=st.integers(60, 500))
def test_monotone_after_warmup(warmup: int, total: int) -> None:
    lrs = [lr_at(s, peak_lr=1.0, warmup_steps=warmup, total_steps=total) for s in range(total + 5)]
    assert all(x <= y for x, y in zip(lrs[:warmup], lrs[1 : warmup + 1], strict=True))
    assert all(x >= y for x, y in zip(lrs[warmup:], lrs[warmup + 1 :], strict=False))


def test_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="step must be >= 0, got -1"):
        lr_at(-1, peak_lr=1.0, warmup_steps=0, total_steps=10)
    with pytest.raises(ValueError, match="total_steps must be >= 1, got 0"):
        lr_at(0, peak_lr=1.0, warmup_steps=0, total_steps=0)


def test_a_time_budget_moves_the_cosine_forward() -> None:
    """Under --max-minutes the decay follows whichever budget is further spent: half the time
    gone at step 10 of 1,000 puts the rate half-way down; the end of the time budget puts it
    at the floor; time never slows the step schedule, and warm-up ignores it."""
    kw = {"peak_lr": 1e-3, "warmup_steps": 10, "total_steps": 1010, "min_ratio": 0.1}
    half = 1e-3 * (0.1 + 0.9 * 0.5)
    assert lr_at(10, **kw, time_fraction=0.5) == pytest.approx(half)
    assert lr_at(10, **kw, time_fraction=1.0) == pytest.approx(1e-4)
    assert lr_at(510, **kw, time_fraction=0.1) == pytest.approx(half)  # steps further along
    assert lr_at(510, **kw) == pytest.approx(lr_at(510, **kw, time_fraction=0.0))
    assert lr_at(3, **kw, time_fraction=0.9) == pytest.approx(lr_at(3, **kw))  # warm-up


def test_decay_progress_is_how_far_the_cosine_has_gone() -> None:
    """What early stopping waits on (train/loop.py): 0 in warm-up, the step share after it, or
    the time share when that is further along, 1 at the floor."""
    kw = {"warmup_steps": 10, "total_steps": 110}
    assert decay_progress(5, **kw) == 0.0
    assert decay_progress(5, **kw, time_fraction=0.9) == 0.0  # warm-up ignores the clock
    assert decay_progress(60, **kw) == pytest.approx(0.5)
    assert decay_progress(60, **kw, time_fraction=0.7) == pytest.approx(0.7)
    assert decay_progress(60, **kw, time_fraction=0.2) == pytest.approx(0.5)
    assert decay_progress(500, **kw) == 1.0
    half = lr_at(60, peak_lr=1.0, min_ratio=0.0, **kw)
    assert half == pytest.approx(0.5)  # the rate is half-way down where progress is 0.5
    with pytest.raises(ValueError, match="step must be >= 0, got -1"):
        decay_progress(-1, **kw)
    with pytest.raises(ValueError, match="total_steps must be >= 1, got 0"):
        decay_progress(0, warmup_steps=0, total_steps=0)
