"""Feature sets, pinned where mutation testing found gaps: the bars :func:`check_causal` probes
with (PROBE_BARS one-minute bars of symbol ``X`` from 2024-01-01, prices in [100, 101),
reproducible, bars after row PROBE_CUT replaced), its messages, duplicate and bad-name errors of custom lines, the
columns an expression reads, and feature-file comments and read errors."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import polars as pl
import pytest

from foxhunt.data.features.sets import (
    PROBE_BARS,
    PROBE_CUT,
    check_causal,
    expression_columns,
    read_feature_file,
    selected_features,
)
from foxhunt.errors import DataError, InputError

BAR_COLUMNS = ["open", "high", "low", "close", "volume"]
LATER = (
    "feature 'x' reads later bars (its past values change when the future does); "
    "use LAG, not LEAD, and no aggregate over the whole series"
)


def probe_frames() -> list[pl.DataFrame]:
    """The frames ``check_causal`` evaluates an expression on, seen from inside the expression."""
    seen: list[pl.DataFrame] = []

    def grab(s: pl.Series) -> pl.Series:
        seen.append(s.struct.unnest())
        return s.struct.field("close")

    check_causal("spy", pl.struct(pl.all()).map_batches(grab, return_dtype=pl.Float64))
    return seen


def test_the_probe_evaluates_twice_on_every_probe_bar() -> None:
    frames = probe_frames()
    assert [f.height for f in frames] == [PROBE_BARS, PROBE_BARS] == [4096, 4096]
    assert PROBE_CUT == 2047


def test_the_probe_bars_are_one_minute_bars_of_symbol_x_from_2024() -> None:
    ts = [datetime(2024, 1, 1) + timedelta(minutes=i) for i in range(PROBE_BARS)]
    for frame in probe_frames():
        assert frame.columns == ["ts", "symbol", *BAR_COLUMNS]
        assert frame["ts"].to_list() == ts
        assert frame["symbol"].to_list() == ["X"] * PROBE_BARS


def test_the_probe_prices_are_distinct_values_between_100_and_101() -> None:
    for frame in probe_frames():
        for c in BAR_COLUMNS:
            assert frame[c].dtype == pl.Float64
            assert frame[c].min() >= 100.0 and frame[c].max() < 101.0
            assert frame[c].n_unique() == PROBE_BARS


def test_the_probe_keeps_rows_up_to_the_cut_and_replaces_every_later_bar() -> None:
    base, changed = probe_frames()
    assert changed.head(PROBE_CUT + 1).equals(base.head(PROBE_CUT + 1))
    for c in BAR_COLUMNS:
        assert (changed[c].slice(PROBE_CUT + 1) != base[c].slice(PROBE_CUT + 1)).all()


def test_the_probe_is_reproducible() -> None:
    base, changed = probe_frames()
    again = probe_frames()
    assert base.equals(again[0]) and changed.equals(again[1])
    assert base["close"][0] == pytest.approx(100.07188583444753, abs=1e-12)
    assert changed["close"][PROBE_BARS - 1] == pytest.approx(100.90993788681477, abs=1e-12)


def test_an_aggregate_of_the_bars_up_to_the_cut_passes_and_one_bar_more_is_refused() -> None:
    check_causal("x", pl.col("close").head(PROBE_CUT + 1).sum())
    with pytest.raises(DataError) as excinfo:
        check_causal("x", pl.col("close").head(PROBE_CUT + 2).sum())
    assert str(excinfo.value) == LATER


def ahead(k: int) -> str:
    return (
        f"feature 'x' reads later bars ({k} bars ahead: LEAD, or LAG of a negative offset); "
        "use LAG, not LEAD"
    )


@pytest.mark.parametrize("k", [1, 100, PROBE_BARS - 1, PROBE_BARS, 10**6])
def test_a_lead_of_any_length_is_refused_from_the_plan(k: int) -> None:
    """LEAD(x, k) is a negative shift in the expression's plan: refused whatever k, also
    past the probe's bars (the probe alone saw nothing beyond them)."""
    with pytest.raises(DataError) as excinfo:
        check_causal("x", pl.sql_expr(f"close - LEAD(close, {k}) OVER (ORDER BY ts)"))
    assert str(excinfo.value) == ahead(k)
    with pytest.raises(DataError) as excinfo:
        check_causal("x", pl.sql_expr(f"LAG(close, -{k}) OVER (ORDER BY ts)"))
    assert str(excinfo.value) == ahead(k)


def test_a_lag_is_not_a_lead() -> None:
    check_causal("x", pl.sql_expr("close - LAG(close, 5000) OVER (ORDER BY ts)"))
    check_causal("x", pl.col("close").shift(3) - pl.col("close").shift(1))


def test_a_look_ahead_inside_a_long_window_is_refused_by_the_probe() -> None:
    # no literal negative shift in the plan: the probe's evaluation finds it
    expr = pl.col("close").rolling_mean(500).reverse().cum_max().reverse()
    assert "shift" not in str(expr)
    with pytest.raises(DataError) as excinfo:
        check_causal("x", expr)
    assert str(excinfo.value) == LATER


def test_an_expression_reading_symbol_sees_the_string_symbol() -> None:
    # whole-series sum where symbol is not 'X': passes only if the probe's symbol is "X"
    check_causal(
        "x",
        pl.when(pl.col("symbol") == "X").then(pl.col("close")).otherwise(pl.col("close").sum()),
    )


def test_reads_later_bars_message_is_exact() -> None:
    with pytest.raises(DataError) as excinfo:
        check_causal("x", pl.col("close") - pl.col("close").mean())
    assert str(excinfo.value) == LATER


def test_an_expression_that_fails_is_reported_with_the_first_line_of_its_error() -> None:
    def boom(s: pl.Series) -> pl.Series:
        raise ValueError("boom\nsecond line")

    with pytest.raises(DataError) as excinfo:
        check_causal("x", pl.col("close").map_batches(boom, return_dtype=pl.Float64))
    assert str(excinfo.value) == "feature 'x': cannot evaluate (boom)"


def test_expression_columns_never_keep_symbol() -> None:
    lines = ("s = CASE WHEN symbol = 'X' THEN spread ELSE 0 END",)
    assert expression_columns(lines) == ("spread",)


def test_expression_columns_split_a_line_at_its_first_equals_sign() -> None:
    assert expression_columns(("same = spread = close",)) == ("spread", "close")


def test_a_bad_feature_name_is_named() -> None:
    with pytest.raises(DataError) as excinfo:
        selected_features(("bad name = close",))
    assert str(excinfo.value) == "feature name 'bad name' must be letters, digits and _"


def test_bad_sql_is_named_with_the_parser_error() -> None:
    with pytest.raises(DataError) as excinfo:
        selected_features(("x = close +",))
    assert re.fullmatch(
        r"feature 'x': not an SQL expression \(.*'close \+'.*\)", str(excinfo.value)
    )


def test_a_feature_listed_twice_is_refused() -> None:
    with pytest.raises(DataError) as excinfo:
        selected_features(("ret1_lag0", "obs__ret1_lag0"))
    assert str(excinfo.value) == "feature 'obs__ret1_lag0' is listed twice"


def test_the_first_repeated_feature_is_named() -> None:
    lines = ("ret1_lag0", "lr = LN(high / low)", "obs__ret1_lag0", "lr = LN(close)")
    with pytest.raises(DataError) as excinfo:
        selected_features(lines)
    assert str(excinfo.value) == "feature 'obs__ret1_lag0' is listed twice"


def test_distinct_features_are_all_selected() -> None:
    names = [n for n, _ in selected_features(("ret1_lag0", "lr = LN(high / low)"))]
    assert names == ["obs__ret1_lag0", "obs__lr"]


def test_an_unreadable_feature_file_is_named_with_the_os_error(tmp_path) -> None:
    missing = tmp_path / "nosuch.txt"
    with pytest.raises(InputError) as excinfo:
        read_feature_file(missing)
    assert str(excinfo.value) == (
        f"--features {missing}: cannot read ([Errno 2] No such file or directory: '{missing}')"
    )


def test_a_comment_ends_the_line_at_its_first_hash(tmp_path) -> None:
    f = tmp_path / "feats.txt"
    f.write_text("ret1_lag0 # one # two\nlr = LN(high / low)  # range # log\n")
    assert read_feature_file(f) == ("ret1_lag0", "lr = LN(high / low)")


@pytest.mark.parametrize(
    "sql",
    [
        "SUM(volume) OVER (ORDER BY ts)",
        "MAX(high) OVER (ORDER BY ts)",
        "close - AVG(close) OVER (ORDER BY ts)",
        "COUNT(*) OVER (ORDER BY ts)",
    ],
)
def test_running_aggregates_ordered_by_time_are_causal(sql: str) -> None:
    """polars prints their peer test (``ts != ts.shift(-1)``, rows tied on ts) as a negative
    shift: that is no read of later values, and the plan check leaves it alone."""
    check_causal("x", pl.sql_expr(sql))
    with pytest.raises(DataError) as excinfo:  # a LEAD beside one is still found
        check_causal("x", pl.sql_expr(f"{sql} - LEAD(close, 2) OVER (ORDER BY ts)"))
    assert str(excinfo.value) == ahead(2)
