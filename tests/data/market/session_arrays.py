"""Five arrays shaped as a calendar's sessions (:class:`foxhunt.data.market.calendars.Sessions`),
different for every seed, for the session cache's tests."""

from __future__ import annotations

import numpy as np


def session_arrays(seed: int, n: int = 7) -> tuple[np.ndarray, ...]:
    """``n`` disjoint intervals (µs): opens, closes, day, day_open, day_close, int64."""
    rng = np.random.default_rng(seed)
    opens = np.sort(rng.choice(10**6, n, replace=False)).astype(np.int64) * 86_400_000_000
    closes = opens + rng.integers(1, 86_400_000_000, n)
    return opens, closes, opens // 86_400_000_000, opens, closes
