"""Candle rows without names read in their vendor's order (:mod:`foxhunt.data.read.json_rows`):
refused as "rows without names" until session 59."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foxhunt.data.read.json_bars import read_json_bars
from foxhunt.data.read.json_rows import positional_records

T0 = 1704067200  # 2024-01-01 00:00 UTC
BARS = [(T0, 100.0, 103.0, 98.0, 101.0, 1.5), (T0 + 60, 101.0, 104.0, 99.5, 99.75, 2.5)]
"""(time, open, high, low, close, volume): the open is no low, so every order reads apart."""


def _rows(vendor: str) -> object:
    """The two bars as ``vendor``'s candle API answers them."""
    if vendor == "coinbase":  # [time, low, high, open, close, volume], newest first
        return [[t, lo, h, o, c, v] for t, o, h, lo, c, v in reversed(BARS)]
    if vendor == "bitfinex":  # [MTS, OPEN, CLOSE, HIGH, LOW, VOLUME], milliseconds
        return [[t * 1000, o, c, h, lo, v] for t, o, h, lo, c, v in BARS]
    if vendor == "gemini":  # [time ms, open, high, low, close, volume]
        return [[t * 1000, o, h, lo, c, v] for t, o, h, lo, c, v in BARS]
    if vendor == "bybit":  # strings, newest first, the turnover last, the symbol beside
        rows = [[str(t * 1000), *map(str, (o, h, lo, c, v, v * c))] for t, o, h, lo, c, v in BARS]
        result = {"symbol": "BTCUSDT", "category": "linear", "list": rows[::-1]}
        return {"retCode": 0, "retMsg": "OK", "result": result, "retExtInfo": {}, "time": 1}
    if vendor == "okx":  # [ts, o, h, l, c, vol, volCcy, volCcyQuote, confirm]
        rows = [
            [str(t * 1000), *map(str, (o, h, lo, c, v, v, v * c)), "1"]
            for t, o, h, lo, c, v in BARS
        ]
        return {"code": "0", "msg": "", "data": rows[::-1]}
    if vendor == "kraken":  # [time, open, high, low, close, vwap, volume, count]
        rows = [[t, *map(str, (o, h, lo, c, (o + c) / 2, v)), 7] for t, o, h, lo, c, v in BARS]
        return {"error": [], "result": {"XXBTZUSD": rows, "last": T0}}
    assert vendor == "binance"  # 12 fields, the close time seventh
    return [
        [t * 1000, *map(str, (o, h, lo, c, v)), t * 1000 + 59_999, "1", 3, "0.5", "50", "0"]
        for t, o, h, lo, c, v in BARS
    ]


@pytest.mark.parametrize(
    "vendor", ["coinbase", "bitfinex", "gemini", "bybit", "okx", "kraken", "binance"]
)
def test_each_vendors_candle_rows_read_in_its_order(tmp_path: Path, vendor: str) -> None:
    path = tmp_path / "BTCUSD.json"
    path.write_text(json.dumps(_rows(vendor)))
    frame = read_json_bars(path)
    got = sorted(
        (float(r["t"]) / (1000 if float(r["t"]) > 1e11 else 1), *(float(r[k]) for k in "ohlcv"))
        for r in frame.rename(
            {"open": "o", "high": "h", "low": "l", "close": "c", "volume": "v"}
        ).iter_rows(named=True)
    )
    assert got == sorted(BARS)


def test_rows_no_order_reads_or_two_read_apart_are_refused() -> None:
    assert positional_records([[T0, 100.0, 99.0, 98.0, 101.0, 1.0]]) is None  # high under open
    assert positional_records([[T0, 1, 2, 3, 4, 5], [T0, 1, 2, 3]]) is None  # two lengths
    assert positional_records([[T0, 1.0, 2.0, 0.5, 1.5, 1.0, 2.0, 3.0, 4.0, 5.0]]) is None  # 10
    assert positional_records([[T0, "x", 2.0, 0.5, 1.5, 1.0]]) is None
    # the open is the low: Gemini's and Coinbase's orders read the same bar, so either will do
    same = positional_records([[T0, 1.0, 2.0, 1.0, 1.5, 3.0]])
    assert same == [{"t": T0, "open": 1.0, "high": 2.0, "low": 1.0, "close": 1.5, "volume": 3.0}]


def test_each_rule_of_a_bar_and_of_the_rows_is_kept() -> None:
    """One check each: a high under its open alone is no bar; a close at its high is one; two
    orders that read other bars (``10, 11, 11, 10``: Coinbase's open 11, Bitfinex's open 10)
    refuse; a row that is no list, or rows of two lengths (5 and 6), refuse."""
    assert positional_records([[T0, 101.0, 100.5, 99.0, 100.0, 1.0]]) is None
    at_high = positional_records([[T0, 100.0, 101.0, 99.0, 101.0, 1.0]])
    assert at_high == [
        {"t": T0, "open": 100.0, "high": 101.0, "low": 99.0, "close": 101.0, "volume": 1.0}
    ]
    assert positional_records([[T0, 10.0, 11.0, 11.0, 10.0, 1.0]]) is None
    assert positional_records([[T0, 1.0, 2.0, 0.5, 1.5, 1.0], 5]) is None
    assert positional_records([[T0, 1.0, 2.0, 0.5, 1.5], [T0, 1.0, 2.0, 0.5, 1.5, 3.0]]) is None
