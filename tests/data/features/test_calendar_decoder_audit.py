"""Calendar decoder, planted bug of issue 28: the decoder's scheduled bar times and their known
features come from the symbol's OWN calendar, not ``globex``.

A stock on the NYSE calendar (30-minute bars, 09:30-16:00 New York) across Christmas 2023:
after Friday 22 December comes Tuesday 26 December (25 December is a holiday; ``globex``
would schedule the overnight session and 25 December as a trading day), and the clock-time
features are read in New York, not Chicago."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest

from foxhunt.data.features.calendar_decoder import calendar_decoder_known
from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.market.calendar import KNOWN_FEATURES, known_features
from foxhunt.data.market.calendars import sessions
from foxhunt.data.windows.dataset import WindowDataset

H, L = 4, 3
CAL = "xnys"


def _session(day: int) -> list[datetime]:
    """The 13 half-hour bar opens of one NYSE day of December 2023 (14:30-20:30 UTC)."""
    start = datetime(2023, 12, day, 14, 30, tzinfo=UTC)
    return [start + timedelta(minutes=30 * i) for i in range(13)]


# Wed 20 .. Fri 22, then Tue 26 .. Thu 28 December; the first 3 bars of the 26th are missing
# (a data hole), so the windows whose next H rows span it are computed from the calendar.
TIMES = [t for d in (20, 21, 22, 26, 27, 28) for t in _session(d)]
HOLE = _session(26)[:3]
BARS = [t for t in TIMES if t not in HOLE]
ORIGIN = datetime(2023, 12, 22, 20, 0, tzinfo=UTC)  # 15:00 New York, the Friday before
# Its schedule, written by hand: the Friday's last bar, then Tuesday's open (not the 25th).
SCHEDULE = [
    datetime(2023, 12, 22, 20, 30, tzinfo=UTC),
    datetime(2023, 12, 26, 14, 30, tzinfo=UTC),
    datetime(2023, 12, 26, 15, 0, tzinfo=UTC),
    datetime(2023, 12, 26, 15, 30, tzinfo=UTC),
]


@pytest.fixture(scope="module", autouse=True)
def _nyse_sessions() -> None:
    """The NYSE sessions, built once per process (about 4 s from pandas_market_calendars,
    cached; shared with every other test that uses the calendar)."""
    sessions(CAL)


def _us(times: list[datetime]) -> np.ndarray:
    return pl.Series(times).dt.epoch("us").to_numpy().astype(np.int64)


def _known(times: list[datetime], calendar: str) -> np.ndarray:
    frame = pl.DataFrame({"ts": pl.Series(times).dt.convert_time_zone("UTC")})
    return frame.select(known_features(pl.col("ts"), calendar)).to_numpy()


def test_off_schedule_windows_are_scheduled_on_the_symbols_calendar() -> None:
    ts = _us(BARS)
    origin = np.arange(len(BARS) - H, dtype=np.int64)  # every row with H rows after it
    slot, known = calendar_decoder_known(
        ts,
        origin,
        np.array([0]),
        np.array([len(BARS)]),
        [origin.size],
        H,
        KNOWN_FEATURES,
        None,
        calendars=[CAL],
    )
    assert slot is not None and known is not None
    # Only the H windows whose next H rows jump over the hole: on the NYSE calendar the
    # nights, the weekend and Christmas are no gap at all.
    hit = np.flatnonzero(slot.numpy() >= 0)
    k = BARS.index(datetime(2023, 12, 22, 20, 30, tzinfo=UTC))  # the last bar before the jump
    assert hit.tolist() == list(range(k + 1 - H, k + 1))
    at = BARS.index(ORIGIN)
    want = _known(SCHEDULE, CAL)
    np.testing.assert_allclose(known[slot[at]].numpy(), want, rtol=1e-6, atol=1e-6)
    # The same times read on globex are other numbers (Chicago clock, another session).
    assert not np.allclose(want, _known(SCHEDULE, "globex"), atol=1e-3)


def bars_table(spec: FeatureSpec, *columns: pl.Series) -> pl.DataFrame:
    """A feature table of ``BARS`` for symbol AAPL: the calendar's known features, a rising
    observed input, ``columns`` and zero targets."""
    return (
        pl.DataFrame({"ts": pl.Series(BARS).dt.convert_time_zone("UTC")})
        .with_columns(known_features(pl.col("ts"), CAL))
        .with_columns(
            pl.lit("AAPL").alias("symbol"),
            pl.Series("obs__x", np.linspace(0.0, 1.0, len(BARS))),
            *columns,
            pl.lit(1.0).alias("static__x"),
            *[pl.lit(0.0).alias(t) for t in spec.targets],
        )
    )


def test_window_dataset_passes_each_symbols_calendar_to_the_decoder() -> None:
    spec = FeatureSpec(
        historical=("obs__x",),
        known=KNOWN_FEATURES,
        static=("static__x",),
        targets=tuple(f"target__h{i}" for i in range(1, H + 1)),
        warmup=0,
    )
    ds = WindowDataset(bars_table(spec), spec, L, H, calendars={"AAPL": CAL})
    assert ds.calendar_windows == H
    i = int(np.flatnonzero(ds.origin_rows() == BARS.index(ORIGIN))[0])
    batch = ds.batch([i])
    np.testing.assert_allclose(
        batch.known[0, L:].numpy(), _known(SCHEDULE, CAL), rtol=1e-6, atol=1e-6
    )
