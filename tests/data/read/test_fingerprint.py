"""bars_fingerprint: every part of the bars moves it, and its layout is pinned (runs store the
fingerprint, so a change of recipe would refuse every saved run's ``--resume`` and ``evaluate``)."""

from __future__ import annotations

import hashlib
from datetime import datetime

import numpy as np
import polars as pl
import pytest

from foxhunt.data.read.fingerprint import bars_fingerprint

OHLCV = ("open", "high", "low", "close", "volume")


def _bars(**extra: list) -> pl.DataFrame:
    ts = [datetime(2024, 1, 2, 9, m) for m in (0, 1, 2)] + [datetime(2024, 1, 2, 9, 0)]
    return pl.DataFrame(
        {
            "ts": ts,
            "symbol": ["ES", "ES", "ES", "NQ"],
            "open": [1.0, 2.0, 3.0, 4.0],
            "high": [1.5, 2.5, 3.5, 4.5],
            "low": [0.5, 1.5, 2.5, 3.5],
            "close": [1.25, 2.25, 3.25, 4.25],
            "volume": [10.0, 20.0, 30.0, 40.0],
            **extra,
        }
    ).with_columns(pl.col("ts").dt.cast_time_unit("us"))


def _by_hand(bars: pl.DataFrame, inputs: tuple[str, ...] = ()) -> str:
    h = hashlib.sha256()
    h.update(b"ES\x003\x00NQ\x001\x00")  # each symbol and its bar count, in order of appearance
    us = [int(t.timestamp() * 1_000_000) for t in bars["ts"].dt.replace_time_zone("UTC")]
    h.update(np.array(us, dtype=np.int64).tobytes())
    for c in OHLCV:
        h.update(np.array(bars[c].to_list(), dtype=np.float64).tobytes())
    for c in inputs:
        h.update(f"\x00{c}\x00".encode())
        h.update(np.array(bars[c].to_list(), dtype=np.float64).tobytes())
    return h.hexdigest()


def test_the_recipe_is_symbols_counts_times_values_then_inputs_by_name() -> None:
    bars = _bars()
    assert bars_fingerprint(bars) == _by_hand(bars)
    with_input = _bars(vix=[1, 2, 3, 4], contract=["ESH4"] * 3 + ["NQH4"])
    assert bars_fingerprint(with_input) == _by_hand(with_input, ("vix",))  # contract is not hashed


def _changed(column: str, row: int, value: object) -> pl.DataFrame:
    bars = _bars(vix=[1.0, 2.0, 3.0, 4.0])
    values = bars[column].to_list()
    values[row] = value
    return bars.with_columns(pl.Series(column, values, dtype=bars[column].dtype))


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("ts", datetime(2024, 1, 2, 9, 3)),
        ("symbol", "ES"),  # one bar moves from NQ to ES: the counts differ
        ("open", 3.5),
        ("high", 4.75),
        ("low", 3.25),
        ("close", 4.0),
        ("volume", 41.0),
        ("vix", 4.5),
    ],
)
def test_any_one_value_changes_it(column: str, value: object) -> None:
    assert bars_fingerprint(_changed(column, 3, value)) != bars_fingerprint(
        _bars(vix=[1.0, 2.0, 3.0, 4.0])
    )


def test_a_renamed_symbol_or_input_column_changes_it_and_a_contract_column_does_not() -> None:
    base = bars_fingerprint(_bars())
    renamed = _bars().with_columns(pl.col("symbol").replace("NQ", "YM"))
    assert bars_fingerprint(renamed) != base
    assert bars_fingerprint(_bars(vix=[0.0] * 4)) != bars_fingerprint(_bars(vvix=[0.0] * 4))
    assert bars_fingerprint(_bars(vix=[0.0] * 4)) != base
    assert bars_fingerprint(_bars(contract=["ESH4"] * 4)) == base
