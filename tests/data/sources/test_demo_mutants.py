"""The demo generator's output is pinned: the docs' demo numbers (docs/benchmarks.md, the
README's quickstart) were measured on these bars, so any change to the generator's constants,
profile or random draws must show here. ES prices lie on the 0.25 tick grid and volumes are
integers, so the sums below are exact in binary floating point; numpy's generator draws the
same numbers on every platform. Also: the argument bounds and defaults, and ``write_demo_bars``
passing every argument on."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.sources.demo import demo_bars, write_demo_bars
from foxhunt.errors import InputError

PINNED = {
    # column: (sum, sum of squares) of demo_bars(700, seed=0): 2.5 sessions of ES, with the
    # gaps at two session opens, the European, US cash and after-close parts of the profile
    "open": (3307662.0, 15629653245.25),
    "high": (3308300.75, 15635689465.3125),
    "low": (3306989.5, 15623299103.0),
    "close": (3307619.5, 15629251453.0),
    "volume": (3005805, 24821453511),
}


def test_the_demo_bars_are_the_ones_the_docs_were_measured_on() -> None:
    bars = demo_bars(700, seed=0)
    got = {c: (bars[c].sum(), (bars[c] * bars[c]).sum()) for c in PINNED}
    assert got == PINNED
    assert bars.schema == {
        "ts": pl.Datetime("us", "UTC"),
        "symbol": pl.String,
        "open": pl.Float64,
        "high": pl.Float64,
        "low": pl.Float64,
        "close": pl.Float64,
        "volume": pl.Int64,
    }
    assert bars["ts"][0] == datetime(2024, 1, 1, 23, 0, tzinfo=UTC)  # 17:00 CT, Jan 1
    assert bars["ts"][-1] == datetime(2024, 1, 4, 11, 15, tzinfo=UTC)


WEEKEND = {
    # demo_bars(400, seed=1, start="2024-01-05"): Friday's session, the weekend, Monday's
    "open": (1888517.25, 8916288457.4375),
    "high": (1888989.5, 8920748674.5),
    "low": (1888045.75, 8911835794.8125),
    "close": (1888487.75, 8916009428.4375),
    "volume": (1614766, 13838315938),
}


def test_the_gap_over_a_weekend_grows_with_the_hours_closed() -> None:
    """Between two sessions of one week the market is closed an hour, so the gap's scale
    (``sqrt`` of the hours closed) is 1 and only a weekend shows how it is applied."""
    bars = demo_bars(400, seed=1, start="2024-01-05")
    assert {c: (bars[c].sum(), (bars[c] * bars[c]).sum()) for c in WEEKEND} == WEEKEND
    assert bars["ts"][0] == datetime(2024, 1, 4, 23, 0, tzinfo=UTC)  # Thursday 17:00 CT
    assert bars["ts"][-1] == datetime(2024, 1, 8, 9, 15, tzinfo=UTC)  # Monday


def test_one_bar_is_the_least() -> None:
    one = demo_bars(1)
    assert one.height == 1 and one["ts"][0] == datetime(2024, 1, 1, 23, 0, tzinfo=UTC)
    assert one["low"][0] <= min(one["open"][0], one["close"][0])
    assert one["high"][0] >= max(one["open"][0], one["close"][0])
    with pytest.raises(InputError) as caught:
        demo_bars(0)
    assert str(caught.value) == "--bars must be >= 1, got 0"


def test_the_defaults() -> None:
    default = demo_bars()
    assert default.height == 1000 and set(default["symbol"]) == {"ES"}
    assert default.equals(demo_bars(1000, seed=0, symbol="ES", start="2024-01-02"))


def test_write_demo_bars_passes_every_argument_on(tmp_path: Path) -> None:
    got = write_demo_bars(tmp_path / "nq.parquet", 40, seed=3, symbol="NQ", start="2024-02-06")
    want = demo_bars(40, seed=3, symbol="NQ", start="2024-02-06")
    assert got.equals(want) and pl.read_parquet(tmp_path / "nq.parquet").equals(want)
    assert want["ts"][0] == datetime(2024, 2, 5, 23, 0, tzinfo=UTC)
    default = write_demo_bars(tmp_path / "es.csv")
    assert default.equals(demo_bars())
    assert pl.read_csv(tmp_path / "es.csv").height == 1000
