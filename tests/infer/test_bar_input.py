"""Live bars checked before they reach the streaming state (infer/bar_input.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest

from foxhunt.errors import DataError
from foxhunt.infer.bar_input import bar_arrays, check_order, group_rows, normalise


def _bars(times: list[datetime]) -> pl.DataFrame:
    n = len(times)
    return normalise(
        pl.DataFrame(
            {
                "ts": times,
                "symbol": ["ES"] * n,
                "open": [100.0] * n,
                "high": [101.0] * n,
                "low": [99.0] * n,
                "close": [100.5] * n,
                "volume": [10.0] * n,
            }
        )
    )


def test_a_bar_far_beyond_the_wall_clock_is_refused_naming_its_row() -> None:
    """One bar stamped 2099 would put every later bar out of order, across restarts: it is a
    bad bar (issue 27), refused by both the fast and the naming check."""
    now = datetime.now(UTC).replace(microsecond=0)
    chunk = _bars([now - timedelta(minutes=2), datetime(2099, 1, 1, tzinfo=UTC)])
    assert group_rows(bar_arrays(chunk), lambda s: None, None) is None
    with pytest.raises(DataError, match=r"row 1, symbol 'ES', ts 2099-01-01.*bar after tomorrow"):
        check_order(chunk, lambda s: None, None)


def test_bars_up_to_a_day_ahead_of_the_clock_pass() -> None:
    """Bars stamped a few hours ahead (a feed in another zone's labels, a clock drift) pass."""
    now = datetime.now(UTC).replace(microsecond=0)
    chunk = _bars([now, now + timedelta(hours=20)])
    rows = group_rows(bar_arrays(chunk), lambda s: None, None)
    assert rows is not None and list(rows) == ["ES"] and rows["ES"].tolist() == [0, 1]
    assert list(check_order(chunk, lambda s: None, None)) == ["ES"]


def test_normalise_gives_one_frame_for_every_spelling_of_the_same_bars() -> None:
    """Naive (UTC) or zoned times in any unit, integer volume, a categorical symbol and extra
    columns all normalise to the same canonical frame, and :func:`bar_arrays` reads its
    columns as int64 µs, the symbols and float64 OHLCV."""
    times = [datetime(2024, 3, 4, 14, 30, tzinfo=UTC), datetime(2024, 3, 4, 14, 31, tzinfo=UTC)]
    canonical = _bars(times)
    spelled = [
        pl.DataFrame(
            {
                "timestamp": [t.replace(tzinfo=None) for t in times],  # naive means UTC
                "symbol": pl.Series(["ES", "ES"], dtype=pl.Categorical),
                "Open": [100, 100],
                "high": [101.0, 101.0],
                "low": [99.0, 99.0],
                "close": [100.5, 100.5],
                "volume": [10, 10],
                "note": ["a", "b"],
            }
        ),
        canonical.with_columns(
            pl.col("ts").dt.convert_time_zone("America/Chicago").dt.cast_time_unit("ms")
        ),
    ]
    for bars in spelled:
        got = normalise(bars)
        assert got.schema == canonical.schema and got.equals(canonical)
    a = bar_arrays(canonical)
    assert a.ts.dtype == np.int64 and a.ts.tolist() == [
        int(t.timestamp() * 1_000_000) for t in times
    ]
    assert a.symbol.tolist() == ["ES", "ES"]
    assert a.values.dtype == np.float64 and a.values[0].tolist() == [100, 101, 99, 100.5, 10]
