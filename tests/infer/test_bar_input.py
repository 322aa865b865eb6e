"""Live bars checked before they reach the streaming state (infer/bar_input.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest

from foxhunt.errors import DataError
from foxhunt.infer.bar_input import (
    bar_arrays,
    check_order,
    fast_arrays,
    group_rows,
    normalise,
)


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


def _raw(n: int = 3) -> pl.DataFrame:
    times = [datetime(2024, 6, 3, 14, 30, tzinfo=UTC) + timedelta(minutes=i) for i in range(n)]
    return pl.DataFrame(
        {
            "ts": times,
            "symbol": ["ES", "NQ", "ES"][:n],
            "open": [100.0, 200.0, 100.5],
            "high": [101.0, 201.0, 101.5],
            "low": [99.0, 199.0, 99.5],
            "close": [100.5, 200.5, 101.0],
            "volume": [10, 0, 12],  # integers, as many feeds send them
            "extra": ["a", "b", "c"],
        }
    ).with_columns(pl.col("ts").dt.cast_time_unit("us"))


def test_fast_arrays_of_a_normalised_layout_are_normalises() -> None:
    raw = _raw()
    fast = fast_arrays(raw)
    assert fast is not None
    slow = bar_arrays(normalise(raw))
    np.testing.assert_array_equal(fast.ts, slow.ts)
    np.testing.assert_array_equal(fast.symbol, slow.symbol)
    np.testing.assert_array_equal(fast.values, slow.values)
    assert fast.values.dtype == np.float64


@pytest.mark.parametrize(
    "change",
    [
        pl.col("ts").dt.convert_time_zone("Europe/London"),  # another zone: normalise converts
        pl.col("ts").dt.cast_time_unit("ns"),
        pl.col("ts").dt.replace_time_zone(None),  # naive: normalise reads it as UTC
        pl.col("open").cast(pl.String),
        pl.when(pl.int_range(pl.len()) == 1).then(None).otherwise(pl.col("close")).alias("close"),
        pl.when(pl.int_range(pl.len()) == 2).then(90.0).otherwise(pl.col("high")).alias("high"),
        pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("")).otherwise("symbol").alias("symbol"),
        pl.when(pl.int_range(pl.len()) == 1).then(-1).otherwise("volume").alias("volume"),
    ],
    ids=["zone", "ns", "naive", "text", "null", "high_below_close", "empty_symbol", "neg_volume"],
)
def test_anything_normalise_would_change_or_refuse_takes_the_full_path(change: pl.Expr) -> None:
    assert fast_arrays(_raw().with_columns(change)) is None


def test_other_spellings_take_the_full_path() -> None:
    assert fast_arrays(_raw().rename({"ts": "timestamp"})) is None
    assert fast_arrays(_raw().rename({"close": "Close"})) is None
    assert fast_arrays(_raw().to_pandas()) is None
