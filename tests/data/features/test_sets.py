"""Feature sets: minimal and custom (names and SQL expressions) select the right columns with
the default set's values; expressions that read later bars are refused."""

from __future__ import annotations

import polars as pl
import pytest

from foxhunt.config import DataConfig
from foxhunt.data.features.inputs import input_columns
from foxhunt.data.features.sets import (
    MINIMAL,
    check_causal,
    expression_columns,
    feature_names,
    read_feature_file,
)
from foxhunt.data.features.table import compute_features, feature_spec
from foxhunt.errors import DataError, InputError

LINES = (
    "ret1_lag0",
    "obs__rsi_14",
    "log_range = LN(high / low)",
    "mom5 = LN(close) - LN(LAG(close, 5) OVER (ORDER BY ts))",
)


@pytest.fixture(scope="module")
def bars() -> pl.DataFrame:
    from foxhunt.data.sources.demo import demo_bars

    return demo_bars(320, seed=2).with_columns(pl.col("volume").cast(pl.Float64))


def test_minimal_is_a_subset_with_the_same_values(bars) -> None:
    names = feature_names("minimal")
    assert names == MINIMAL and len(names) == 16 and len(set(names)) == 16
    full = compute_features(bars, 2)
    mini = compute_features(bars, 2, inputs=DataConfig(features="minimal"))
    spec = feature_spec(2, DataConfig(features="minimal"))
    assert spec.historical == MINIMAL and spec.known == feature_spec(2).known
    assert mini.equals(full.select(mini.columns))


def test_custom_lines_give_names_and_values(bars) -> None:
    data = DataConfig(features="custom", feature_lines=LINES)
    spec = feature_spec(2, data)
    assert spec.historical == ("obs__ret1_lag0", "obs__rsi_14", "obs__log_range", "obs__mom5")
    feats = compute_features(bars, 2, inputs=data)
    full = compute_features(bars, 2)
    assert feats["obs__rsi_14"].equals(full["obs__rsi_14"])
    src = bars.with_columns(
        (pl.col("high") / pl.col("low")).log().alias("lr"),
        (pl.col("close").log() - pl.col("close").shift(5).log()).alias("m5"),
    ).join(feats, on=["ts", "symbol"])
    assert (src["obs__log_range"] - src["lr"]).abs().max() < 1e-6
    assert (src["obs__mom5"] - src["m5"]).abs().max() < 1e-6


@pytest.mark.parametrize(
    "sql",
    [
        "LEAD(close) OVER (ORDER BY ts)",  # the next bar
        "close / AVG(close)",  # a mean over the whole series, future included
        "SUM(close) OVER (ORDER BY ts DESC)",  # a cumulative sum run backwards
    ],
)
def test_expressions_that_read_later_bars_are_refused(sql) -> None:
    with pytest.raises(DataError, match="reads later bars"):
        check_causal("x", pl.sql_expr(sql))


def test_causal_expressions_pass() -> None:
    for sql in ("close - LAG(close, 3) OVER (ORDER BY ts)", "LN(high / low)", "volume * 2"):
        check_causal("x", pl.sql_expr(sql))


def test_feature_file_errors_name_the_line(tmp_path) -> None:
    f = tmp_path / "feats.txt"
    f.write_text("# my features\nret1_lag0\n\nnext = LEAD(close) OVER (ORDER BY ts)\n")
    with pytest.raises(InputError, match=r"feats.txt, line 4: feature 'next' reads later bars"):
        read_feature_file(f)
    f.write_text("ret1_lag0\nnosuch\n")
    with pytest.raises(InputError, match=r"line 2: unknown feature 'nosuch'"):
        read_feature_file(f)
    f.write_text("ret1_lag0  # comment\nspread_z = spread * 2\n")
    assert read_feature_file(f) == ("ret1_lag0", "spread_z = spread * 2")
    data = DataConfig(features="custom", feature_lines=read_feature_file(f))
    assert expression_columns(data.feature_lines) == ("spread",)
    assert input_columns(data) == ("spread",)  # the reader keeps the column an expression reads
    f.write_text("# nothing\n")
    with pytest.raises(InputError, match="lists no feature"):
        read_feature_file(f)


def test_each_custom_line_is_probed_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every compute_features of a custom set selects its lines again (a forecast from bar
    tails does, per forecast): the causality probe runs once per line, a refusal every time."""
    from foxhunt.data.features import sets

    sets._check_causal_once.cache_clear()
    calls: list[str] = []
    real = sets.check_causal
    monkeypatch.setattr(
        sets, "check_causal", lambda name, expr: calls.append(name) or real(name, expr)
    )
    lines = ("mom = close - LAG(close, 7) OVER (ORDER BY ts)", "lr = LN(high / low)")
    assert sets.selected_features(lines) and sets.selected_features(lines)
    assert calls == ["mom", "lr"]
    for _ in range(2):
        with pytest.raises(DataError, match="reads later bars"):
            sets.selected_features(("ahead = LEAD(close) OVER (ORDER BY ts)",))
    assert calls == ["mom", "lr", "ahead", "ahead"]


def test_builtin_expressions_are_built_once_and_callers_get_their_own_list() -> None:
    from foxhunt.data.features.observed import observed_features
    from foxhunt.data.features.sets import _builtin, feature_names, selected_features

    assert _builtin() is _builtin()
    assert feature_names("default") == tuple(n for n, _ in observed_features())
    first = selected_features((), "default")
    first.clear()  # a caller's list is its own: the cache is untouched
    again = selected_features((), "default")
    assert [n for n, _ in again] == list(feature_names("default")) and len(again) == 210
