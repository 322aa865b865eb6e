"""Which windows ``evaluate`` scores: a window is before its symbol's training end when its
origin is earlier than that end (a symbol without one: the last end of all), and the end is
said as one time or a range."""

from __future__ import annotations

import datetime as dt

import polars as pl

from foxhunt.data.windows.scope import SCOPES, before_end, end_text

T0 = dt.datetime(2024, 3, 1, 21, 0, tzinfo=dt.UTC)


class _Windows:
    """What before_end reads of a WindowDataset: its origins."""

    def __init__(self, rows: list[tuple[str, int]]) -> None:
        self.frame = pl.DataFrame(
            {"symbol": [s for s, _ in rows], "ts": [T0 + dt.timedelta(minutes=m) for _, m in rows]},
            schema={"symbol": pl.String, "ts": pl.Datetime("us", "UTC")},
        )

    def origins(self) -> pl.DataFrame:
        return self.frame


def test_a_window_is_before_its_own_symbols_end_only() -> None:
    windows = _Windows([("ES", 0), ("ES", 5), ("ES", 10), ("NQ", 0), ("CL", 0), ("NQ", 20)])
    ends = {"NQ": T0 + dt.timedelta(minutes=10), "ES": T0 + dt.timedelta(minutes=5)}
    got = before_end(windows, ends)  # type: ignore[arg-type]
    # ES at its end is not before it; CL (a symbol the run never saw) takes the last end, NQ's
    assert got.dtype == bool and got.tolist() == [True, False, False, True, True, False]
    assert before_end(windows, {}).tolist() == [False] * 6  # type: ignore[arg-type]


def test_a_symbol_without_its_own_end_is_judged_by_the_last_end_of_all() -> None:
    """A run of futures to 2009 scored on another future's 1990-2014: only 2010 on is new."""
    windows = _Windows([("CL", 0), ("CL", 30), ("CL", 31), ("ES", 0)])
    ends = {"ES": T0 + dt.timedelta(minutes=10), "NQ": T0 + dt.timedelta(minutes=31)}
    assert before_end(windows, ends).tolist() == [True, True, False, True]  # type: ignore[arg-type]


def test_the_end_reads_as_one_time_or_a_range_per_symbol() -> None:
    one = T0.replace(minute=59)
    assert end_text({"ES": one}) == "2024-03-01 21:59 UTC"
    assert end_text({"ES": one, "NQ": one}) == "2024-03-01 21:59 UTC"
    later = one + dt.timedelta(days=2, hours=1)
    assert end_text({"NQ": later, "ES": one, "CL": one}) == (
        "2024-03-01 21:59 UTC to 2024-03-03 22:59 UTC, per symbol"
    )
    middle = one + dt.timedelta(days=1)
    assert end_text({"NQ": later, "ES": one, "CL": middle}) == (
        "2024-03-01 21:59 UTC to 2024-03-03 22:59 UTC, per symbol"  # the first and the last
    )
    assert SCOPES == ("new", "test", "all")
