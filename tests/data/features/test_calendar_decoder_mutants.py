"""Calendar decoder (data/features/calendar_decoder.py), the edges its first mutation run
(session 21) found untested: several symbol blocks (one without windows, one of one window),
the scaling of the computed rows, the slot array's values and type, ``globex`` when no
calendar is given, and a calendar list that does not match the blocks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.data.features.calendar_decoder import calendar_decoder_known
from foxhunt.data.market.calendar import KNOWN_FEATURES, known_features, project_bar_times
from foxhunt.data.market.calendars import sessions

H = 3
CAL = "xnys"


@pytest.fixture(scope="module", autouse=True)
def _nyse_sessions() -> None:
    sessions(CAL)  # built once per process, cached (a few seconds from pandas_market_calendars)


def _day(day: int) -> list[datetime]:
    """The 13 half-hour bar opens of one NYSE day of December 2023 (14:30-20:30 UTC)."""
    start = datetime(2023, 12, day, 14, 30, tzinfo=UTC)
    return [start + timedelta(minutes=30 * i) for i in range(13)]


def _us(times: list[datetime]) -> np.ndarray:
    return pl.Series(times).dt.epoch("us").to_numpy().astype(np.int64)


def _scheduled(origin: datetime, calendar: str) -> np.ndarray:
    """(H, V_k) known features of the H bar times the calendar schedules after ``origin``."""
    start = pl.Series([origin]).dt.convert_time_zone("UTC")
    step = project_bar_times(start, H, timedelta(minutes=30), calendar=calendar)
    times = pl.Series([step[c][0] for c in step.columns]).dt.convert_time_zone("UTC")
    frame = pl.DataFrame({"ts": times})
    return frame.select(known_features(pl.col("ts"), calendar)).to_numpy()


# Three symbol blocks of the same NYSE days, each with a hole of a few bars on the 21st; the
# tests give each block its own windows (none, one, several; on and off the schedule).
DAYS = [t for d in (19, 20, 21, 22) for t in _day(d)]
HOLE = _day(21)[4:7]
BARS = [t for t in DAYS if t not in HOLE]
N = len(BARS)


def _call(
    origins: list[np.ndarray],
    scaling: tuple[list[float], list[float]] | None,
    calendars: list[str] | None = None,
) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    ts = np.concatenate([_us(BARS)] * 3)
    starts = np.array([0, N, 2 * N])
    origin = np.concatenate([o + s for o, s in zip(origins, starts, strict=True)])
    slot, known = calendar_decoder_known(
        ts,
        origin.astype(np.int64),
        starts,
        np.array([N, N, N]),
        [len(o) for o in origins],
        H,
        KNOWN_FEATURES,
        scaling,
        calendars=calendars,
    )
    return slot, known


def test_every_block_its_windows_scaled_in_window_order() -> None:
    k = BARS.index(_day(21)[3])  # the last bar before the hole
    on = np.array([0, 1], dtype=np.int64)  # block 0: two windows on the schedule
    two = np.array([k - 1, k])  # block 1: two windows over the hole (M = 2, not H)
    every = np.arange(N - H, dtype=np.int64)  # block 2: a window at every row
    rng = np.random.default_rng(0)
    mean = rng.normal(0.0, 1.0, len(KNOWN_FEATURES)).tolist()
    std = rng.uniform(0.5, 2.0, len(KNOWN_FEATURES)).tolist()
    slot, known = _call([on, two, every], (mean, std), [CAL] * 3)
    assert slot is not None and known is not None
    assert slot.dtype == torch.int32
    s = slot.numpy()
    # block 1's two windows, then block 2's H windows whose next H rows jump over the hole
    off = [4 + r for r in range(k + 1 - H, k + 1)]
    assert np.flatnonzero(s >= 0).tolist() == [2, 3, *off]
    assert s[[2, 3]].tolist() == [0, 1] and s[off].tolist() == [2, 3, 4]
    assert set(s[s < 0].tolist()) == {-1}
    assert known.shape == (5, H, len(KNOWN_FEATURES))
    windows = [(2, k - 1), (3, k), *((4 + r, r) for r in range(k + 1 - H, k + 1))]
    for window, origin_row in windows:
        want = (_scheduled(BARS[origin_row], CAL) - np.asarray(mean)) / np.asarray(std)
        got = known[s[window]].numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_unscaled_rows_and_globex_by_default() -> None:
    k = BARS.index(_day(21)[3])
    slot, known = _call(
        [np.array([], dtype=np.int64), np.array([k]), np.array([], dtype=np.int64)], None
    )
    assert slot is not None and known is not None
    assert slot.numpy().tolist() == [0]
    np.testing.assert_allclose(
        known[0].numpy(), _scheduled(BARS[k], "globex"), rtol=1e-5, atol=1e-5
    )


def test_no_off_schedule_window_gives_none() -> None:
    first = np.arange(3, dtype=np.int64)  # on the 19th: the next H rows are the schedule
    assert _call([first, first, first], None, [CAL] * 3) == (None, None)


def test_a_calendar_list_that_does_not_match_the_blocks_is_an_error() -> None:
    empty = np.array([], dtype=np.int64)
    with pytest.raises(ValueError, match="zip"):
        _call([empty, empty, np.array([0])], None, [CAL] * 2)
