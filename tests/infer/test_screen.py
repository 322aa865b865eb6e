"""The follower's row-by-row judge: every reason, and order judged against the bars taken."""

from __future__ import annotations

import polars as pl

from foxhunt.data.sources.demo import demo_bars
from foxhunt.infer.screen import WHERE, screen


def _rows() -> pl.DataFrame:
    bars = demo_bars(9, seed=1).with_columns(pl.int_range(2, 11, dtype=pl.Int64).alias(WHERE))
    ts = bars["ts"].to_list()
    ts[5], ts[6] = ts[4], ts[2]  # line 7 repeats line 6; line 8 is earlier than both
    at = pl.col(WHERE)
    return bars.with_columns(
        pl.Series("ts", ts),
        pl.when(at == 3).then(None).otherwise(pl.col("close")).alias("close"),
        pl.when(at == 4).then(pl.lit("NQ")).otherwise(pl.col("symbol")).alias("symbol"),
        pl.when(at == 9).then(-1.0).otherwise(pl.col("low")).alias("low"),
        pl.when(at == 10).then(pl.col("close") * 2).otherwise(pl.col("open")).alias("open"),
    )


def test_every_reason_in_file_order() -> None:
    good, rejects = screen(_rows(), {}, frozenset({"ES"}))
    assert good[WHERE].to_list() == [2, 5, 6]
    assert [(r.where, r.reason) for r in rejects] == [
        (3, "malformed"),
        (4, "unknown_symbol"),
        (7, "duplicate"),
        (8, "out_of_order"),
        (9, "invalid"),
        (10, "invalid"),
    ]
    details = {r.where: r.detail for r in rejects}
    assert details[3] == "close missing or not a number"
    assert details[4] == "symbol 'NQ' is not one the model serves (ES)"
    assert details[9] == "non-positive price low -1.0"
    assert details[10].startswith("high ") and "< max(open, close)" in details[10]


def test_order_is_judged_against_the_bars_already_taken() -> None:
    rows = _rows()
    held = int(rows["ts"].dt.epoch("us")[3])  # line 5's time
    good, rejects = screen(rows, {"ES": held}, None)  # None: any symbol
    assert good[WHERE].to_list() == [4, 6]  # NQ is served now; line 5 equals the held bar
    assert [(r.where, r.reason) for r in rejects if r.reason in ("duplicate", "out_of_order")] == [
        (2, "out_of_order"),
        (5, "duplicate"),
        (7, "duplicate"),
        (8, "out_of_order"),
    ]
