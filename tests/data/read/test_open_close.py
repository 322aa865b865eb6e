"""Open and close read the wrong way round (``close,high,low,open`` as ``open,high,low,close``):
refused naming both columns and the ``--columns`` that swaps them; correct bars pass."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.open_close import MIN_PAIRS, RATIO, check_open_close, swapped_symbol
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError


def _walk(n: int, seed: int = 0, gap: float = 0.0) -> pl.DataFrame:
    """``n`` one-minute bars of a random walk: each opens at the previous close (plus a
    ``gap`` of noise of that scale)."""
    rng = np.random.default_rng(seed)
    close = 100.0 + np.cumsum(rng.normal(0.0, 0.05, n))
    opens = np.concatenate([[100.0], close[:-1]]) + (rng.normal(0.0, gap, n) if gap else 0.0)
    return pl.DataFrame(
        {
            "symbol": ["X"] * n,
            "ts": [datetime(2024, 1, 2, tzinfo=UTC) + timedelta(minutes=i) for i in range(n)],
            "open": opens.round(4),
            "close": close.round(4),
            "__file": [0] * n,
        }
    )


def test_bars_that_open_at_the_previous_close_pass_and_swapped_are_found() -> None:
    bars = _walk(500)
    assert swapped_symbol(bars) is None
    swapped = bars.with_columns(open=pl.col("close"), close=pl.col("open"))
    symbol, gap, two = swapped_symbol(swapped)  # type: ignore[misc]
    assert symbol == "X" and two == 0.0 and gap > 0


def test_a_gap_as_large_as_the_moves_is_no_evidence() -> None:
    """Daily bars gap overnight as much as they move: neither reading is called swapped."""
    bars = _walk(500, seed=1, gap=0.05)
    assert swapped_symbol(bars) is None
    assert swapped_symbol(bars.with_columns(open=pl.col("close"), close=pl.col("open"))) is None


def test_the_ratio_and_the_pair_count_bound_the_rule() -> None:
    rng = np.random.default_rng(2)
    n = MIN_PAIRS + 1
    two = np.abs(rng.normal(1.0, 0.01, n))

    def frame(scale: float, rows: int = n) -> pl.DataFrame:
        # close - previous open = +-1, open - previous close = +-scale: medians 1 and scale
        o, c = np.zeros(rows), np.zeros(rows)
        for i in range(1, rows):
            c[i] = o[i - 1] + two[i] * (-1) ** i
            o[i] = c[i - 1] + scale * two[i] * (-1) ** i
        return pl.DataFrame({"symbol": ["X"] * rows, "open": o + 1000, "close": c + 1000})

    assert swapped_symbol(frame(RATIO * 1.05)) is not None
    assert swapped_symbol(frame(RATIO * 0.95)) is None
    assert swapped_symbol(frame(RATIO * 1.05, rows=MIN_PAIRS)) is None  # 99 pairs


def test_the_message_names_file_symbol_columns_and_the_flag(tmp_path: Path) -> None:
    bars = _walk(300).with_columns(open=pl.col("close"), close=pl.col("open"))
    with pytest.raises(DataError) as e:
        check_open_close(bars, [tmp_path / "x.csv"], [{"open": "Open", "close": "Close"}], "__file")
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'x.csv'}: symbol 'X': columns 'Open' (open) and 'Close'")
    assert msg.endswith("--columns open=Close,close=Open reads them so")


def test_a_headerless_close_high_low_open_file_is_refused_and_read_with_the_flag(
    tmp_path: Path,
) -> None:
    """yfinance's column order (Close, High, Low, Open) written without its header passes
    every check of a bar; it was read with open and close swapped."""
    bars = _walk(300)
    lines = [
        f"{t:%Y-%m-%d %H:%M:%S}+00:00,{c},{max(o, c) + 0.01},{min(o, c) - 0.01},{o},5\n"
        for t, o, c in zip(bars["ts"], bars["open"], bars["close"], strict=True)
    ]
    path = tmp_path / "BTCUSD.csv"
    path.write_text("".join(lines))
    with pytest.raises(DataError, match="look swapped.*--columns open=close,close=open"):
        read_bars(path, min_bars=1)
    fixed = read_bars(path, min_bars=1, options=ReadOptions(columns=("open=close", "close=open")))
    assert fixed["open"].to_list() == bars["open"].to_list()


def test_exactly_three_times_and_flat_bars_are_no_evidence() -> None:
    """The rule is strict: a gap of exactly 3 times the two-bar move, or a flat series (both
    medians 0), is not called swapped."""
    n = MIN_PAIRS + 1
    o, c = np.zeros(n), np.zeros(n)
    for i in range(1, n):  # close - previous open = +-2, open - previous close = +-6: exact
        sign = (-1) ** i
        c[i] = o[i - 1] + 2 * sign
        o[i] = c[i - 1] + 6 * sign
    exact = pl.DataFrame({"symbol": ["X"] * n, "open": o + 1000, "close": c + 1000})
    assert swapped_symbol(exact) is None  # 6 is not over 3 x 2
    flat = pl.DataFrame({"symbol": ["X"] * n, "open": [5.0] * n, "close": [5.0] * n})
    assert swapped_symbol(flat) is None


def test_the_first_swapped_symbol_of_several_and_its_first_file(tmp_path: Path) -> None:
    frames = [
        _walk(150, seed=k).with_columns(
            symbol=pl.lit(s), open=pl.col("close"), close=pl.col("open")
        )
        for k, s in enumerate("EDCBA")
    ]
    bars = pl.concat(frames).with_columns(  # each symbol's first bar from file 1, the rest 0
        pl.when(pl.int_range(pl.len()).over("symbol") == 0).then(1).otherwise(0).alias("__file")
    )
    assert swapped_symbol(bars)[0] == "E"  # type: ignore[index]
    files = [tmp_path / "rest.csv", tmp_path / "first.csv"]
    with pytest.raises(DataError) as e:
        check_open_close(bars, files, [{}, {}], "__file")
    assert str(e.value).startswith(
        f"{tmp_path / 'first.csv'}: symbol 'E': columns 'open' (open) and 'close' (close) look"
    )
    assert str(e.value).endswith("--columns open=close,close=open reads them so")
