"""Demo bars: deterministic, on the tick grid, consistent OHLC, Globex hours, realistic shape."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from foxhunt.cli import main
from foxhunt.data.market.calendar import clock_minutes, closed_time
from foxhunt.data.read.bars import read_bars
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError, InputError


@pytest.fixture(scope="module")
def long_bars() -> pl.DataFrame:
    return demo_bars(20_000, seed=7)


def test_deterministic() -> None:
    assert_frame_equal(demo_bars(500, seed=3), demo_bars(500, seed=3))
    assert not demo_bars(500, seed=3).equals(demo_bars(500, seed=4))


def test_invariants(long_bars: pl.DataFrame) -> None:
    b = long_bars
    assert b.height == 20_000 and b["symbol"].unique().to_list() == ["ES"]
    for c in ("open", "high", "low", "close"):
        ticks = b[c].to_numpy() / 0.25
        assert np.array_equal(ticks, np.round(ticks)), c
    assert b.select((pl.col("high") >= pl.max_horizontal("open", "close")).all()).item()
    assert b.select((pl.col("low") <= pl.min_horizontal("open", "close")).all()).item()
    assert b["volume"].dtype == pl.Int64 and b["volume"].min() >= 1
    assert b["ts"].is_sorted() and b["ts"].n_unique() == b.height
    assert not b.select(closed_time(pl.col("ts")).any()).item()  # no halt, no weekend bars
    weekday = b["ts"].dt.convert_time_zone("America/Chicago").dt.weekday()
    assert 6 not in weekday.to_list()  # never Saturday
    # Tuesday 2 Jan 2024's session opens Monday 17:00 CT = 23:00 UTC.
    assert b["ts"][0].isoformat() == "2024-01-01T23:00:00+00:00"


def test_intraday_u_shape_and_clustering(long_bars: pl.DataFrame) -> None:
    b = long_bars.with_columns(
        clock_minutes(pl.col("ts")).alias("m"),
        pl.col("close").log().diff().abs().alias("absret"),
    )

    def mean(col: str, lo: float, hi: float) -> float:
        return b.filter((pl.col("m") >= lo) & (pl.col("m") < hi))[col].mean()  # type: ignore[return-value]

    # US open (08:30-09:00 CT) > midday (11:00-13:00) < close (14:30-15:00); Asia quietest.
    for col in ("absret", "volume"):
        us_open, midday, close = mean(col, 510, 540), mean(col, 660, 780), mean(col, 870, 900)
        asia = mean(col, 1140, 1440)
        assert us_open > 1.5 * midday and close > midday and midday > asia, col
    # Volatility clustering: |r| is autocorrelated even after removing the intraday profile.
    r = b.filter(pl.col("m").is_between(660, 780))["absret"].drop_nulls().to_numpy()
    ac = np.corrcoef(r[:-1], r[1:])[0, 1]
    assert ac > 0.05


def test_jumps_fat_tails(long_bars: pl.DataFrame) -> None:
    r = np.diff(np.log(long_bars["close"].to_numpy()))
    z = (r - r.mean()) / r.std()
    kurt = np.mean(z**4)
    assert kurt > 6.0  # fat tails (normal: 3)


def test_other_roots_and_bad_args() -> None:
    cl = demo_bars(50, seed=0, symbol="CLZ4")
    assert cl["close"].mean() == pytest.approx(72.0, rel=0.05)
    cents = cl["close"].to_numpy() * 100
    assert np.allclose(cents, np.round(cents))
    with pytest.raises(DataError, match="unknown futures root"):
        demo_bars(10, symbol="ZZZ")
    with pytest.raises(InputError, match="--bars"):
        demo_bars(0)
    with pytest.raises(InputError, match="--start"):
        demo_bars(10, start="yesterday")


def test_cli_writes_readable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ES_FUT_small.parquet"
    assert main(["data", "demo", "--bars", "1000", "--seed", "0", "--out", str(out)]) == 0
    assert "wrote 1,000 ES 5-minute bars" in capsys.readouterr().out
    got = read_bars(out)
    want = demo_bars(1000, seed=0).with_columns(pl.col("volume").cast(pl.Float64))
    assert_frame_equal(got, want)
    assert main(["data", "demo", "--bars", "10", "--out", str(tmp_path / "x.csv")]) == 0
    assert read_bars(tmp_path / "x.csv").height == 10
    assert main(["data", "demo", "--bars", "10", "--out", str(tmp_path / "x.txt")]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ES_FUT_small.parquet", "x.csv"]
