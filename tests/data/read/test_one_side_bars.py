"""Bars of one quote side only are the prices (Oanda's v20 candles, ``{"mid": {"o": ...}}``,
refused until session 52 as missing 'open' with columns no ``--columns`` could name; a CSV of
``BidOpen ... BidClose`` alone); bid and ask side by side are still refused naming the flags
that read the mid or the bid. A JSON record's objects are spread into columns by their path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.json_bars import read_json_bars
from foxhunt.errors import DataError

MINUTES = range(30, 36)


def _candle(m: int, sides: tuple[str, ...]) -> dict[str, object]:
    prices = {"o": f"1.09{m}0", "h": f"1.09{m}4", "l": f"1.09{m}0", "c": f"1.09{m}2"}
    return {
        "complete": True,
        "volume": 300 + m,
        "time": f"2024-01-03T15:{m}:00.000000000Z",
        **{side: prices for side in sides},
    }


def _oanda(tmp_path: Path, sides: tuple[str, ...]) -> Path:
    path = tmp_path / "EUR_USD_M1.json"
    answer = {
        "instrument": "EUR_USD",
        "granularity": "M1",
        "candles": [_candle(m, sides) for m in MINUTES],
    }
    path.write_text(json.dumps(answer))
    return path


def test_oandas_mid_candles_are_the_prices(tmp_path: Path) -> None:
    path = _oanda(tmp_path, ("mid",))
    assert read_json_bars(path).columns == [
        "complete",
        "volume",
        "time",
        "mid.o",
        "mid.h",
        "mid.l",
        "mid.c",
    ]
    bars = read_bars(path, min_bars=1)
    assert bars["open"].to_list() == [float(f"1.09{m}0") for m in MINUTES]
    assert bars["close"].to_list() == [float(f"1.09{m}2") for m in MINUTES]
    assert bars["volume"].to_list() == [300.0 + m for m in MINUTES]
    assert set(bars["symbol"]) == {"EURUSD"}


def test_bid_and_ask_candles_are_refused_naming_the_flags(tmp_path: Path) -> None:
    path = _oanda(tmp_path, ("bid", "ask"))
    with pytest.raises(
        DataError,
        match=r"\(bid and ask bars: --columns open=bid.o,high=bid.h,low=bid.l,close=bid.c reads the bid side\)",
    ):
        read_bars(path, min_bars=1)


def test_a_csv_of_the_bid_sides_bars_alone_is_read(tmp_path: Path) -> None:
    path = tmp_path / "EURUSD.csv"
    path.write_text(
        "DateTime,BidOpen,BidHigh,BidLow,BidClose,Volume\n"
        + "".join(f"2024-01-03 15:{m}:00Z,1.0945,1.0947,1.0944,1.0946,{m}\n" for m in MINUTES)
    )
    bars = read_bars(path, min_bars=1)
    assert bars["high"].to_list() == [1.0947] * 6
