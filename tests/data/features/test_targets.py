"""--target: a price column's log return or a column of one-bar returns summed over h bars."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from foxhunt.config import DataConfig
from foxhunt.data.features.table import compute_features
from foxhunt.data.features.targets import check_target_prices, target_extra_columns
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError

H = 3


@pytest.fixture(scope="module")
def bars() -> pl.DataFrame:
    b = demo_bars(260, seed=6).with_columns(pl.col("volume").cast(pl.Float64))
    return b.with_columns(pl.Series("r", np.random.default_rng(1).normal(size=b.height)))


def _naive(values: np.ndarray, t: int, h: int, *, log: bool) -> float:
    if log:
        return float(np.log(values[t + h] / values[t]))
    return float(values[t + 1 : t + h + 1].sum())  # r[t+1] + ... + r[t+h]


@pytest.mark.parametrize(
    ("target", "column", "log"), [("high", "high", True), ("return:r", "r", False)]
)
def test_targets_match_a_loop(bars, target, column, log) -> None:
    feats = compute_features(bars, H, inputs=DataConfig(target=target))
    default = compute_features(bars, H)
    values = bars[column].to_numpy()
    index = {ts: i for i, ts in enumerate(bars["ts"].to_list())}
    for row in feats.head(5).iter_rows(named=True):
        t = index[row["ts"]]
        for h in range(1, H + 1):
            assert row[f"target__h{h}"] == pytest.approx(_naive(values, t, h, log=log), abs=1e-9)
    assert feats.drop("^target.*$").equals(default.drop("^target.*$"))  # inputs unchanged
    assert not feats["target__h1"].equals(default["target__h1"])


def test_close_target_is_the_default(bars) -> None:
    assert compute_features(bars, H, inputs=DataConfig(target="close")).equals(
        compute_features(bars, H)
    )


def test_bad_targets(bars) -> None:
    with pytest.raises(DataError, match="not a positive price.*return:COLUMN"):
        compute_features(bars, H, inputs=DataConfig(target="r"))
    with pytest.raises(DataError, match="name a price column"):
        compute_features(bars, H, inputs=DataConfig(target="volume"))


def test_a_price_target_is_refused_at_its_first_non_positive_value_only() -> None:
    bars = demo_bars(5, seed=1).with_columns(pl.Series("p", [2.0, 0.5, 0.0, -1.0, 3.0]))
    with pytest.raises(DataError) as refused:
        check_target_prices(bars, "p")
    ts = bars["ts"][2]
    assert str(refused.value) == (
        f"--target p: value 0.0 of symbol 'ES' at {ts} is not a positive price "
        "(for a column of returns use --target return:COLUMN)"
    )
    check_target_prices(bars.head(2), "p")  # 0.5 is a price
    check_target_prices(bars, "return:p")  # returns may be anything
    check_target_prices(bars, "missing")  # checked where the column is read


def test_only_a_column_beyond_the_bars_values_is_an_extra_column() -> None:
    assert target_extra_columns("close") == target_extra_columns("high") == ()
    assert target_extra_columns("vwap") == ("vwap",)
    assert target_extra_columns("return:ret_1m") == ("ret_1m",)
