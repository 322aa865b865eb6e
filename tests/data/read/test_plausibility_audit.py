"""Plausibility, planted bug of issue 28: the interleaved-levels rule must flag the bars of the
level with FEWER bars, whichever of the two price levels that is (a 500/500 tie says nothing
about it: the user deletes the rows the message names)."""

from __future__ import annotations

import polars as pl
import pytest

from foxhunt.data.read.plausibility import RULE, find_outliers, interleaved_levels, level
from foxhunt.data.sources.demo import demo_bars


def _bars(n: int, seed: int, symbol: str) -> pl.DataFrame:
    return demo_bars(n, seed=seed, symbol=symbol).with_columns(pl.col("volume").cast(pl.Float64))


def _interleaved(major: pl.DataFrame, minor: pl.DataFrame) -> pl.DataFrame:
    """One symbol (``major``'s) whose file also holds ``minor``'s bars, a minute after each."""
    minor = minor.with_columns(
        pl.col("ts") + pl.duration(minutes=1), pl.lit(major["symbol"][0]).alias("symbol")
    )
    return pl.concat([major, minor]).sort("ts", maintain_order=True)


@pytest.mark.parametrize(
    ("major", "minor", "minor_above"),
    [
        (("ES", 0), ("NQ", 1), True),  # 500 ES at ~4700, 100 NQ at ~17000: the high level
        (("NQ", 1), ("ES", 0), False),  # 500 NQ, 100 ES: the low level is the outlier
    ],
)
def test_the_minority_level_is_flagged_whichever_level_it_is(
    major: tuple[str, int], minor: tuple[str, int], minor_above: bool
) -> None:
    many = _bars(500, seed=major[1], symbol=major[0])
    few = _bars(100, seed=minor[1], symbol=minor[0])
    both = _interleaved(many, few).with_row_index("pos")
    lo, hi = interleaved_levels(both)  # type: ignore[misc]
    assert lo < 10_000 < hi and level(hi) == "17000"
    out = find_outliers(both)
    assert set(out[RULE]) == {"interleaved"}
    # Exactly the 100 minority bars: their rows (a minute past the 5-minute grid), no other.
    want = both.filter(pl.col("ts").dt.minute() % 5 == 1)["pos"].to_list()
    assert len(want) == 100
    assert out["pos"].to_list() == want
    if minor_above:
        assert out["close"].min() > 10_000
    else:
        assert out["close"].max() < 10_000
