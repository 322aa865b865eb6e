"""JSON answers found by a sweep of plausible vendor files (:mod:`foxhunt.data.read.json_bars`):
bars one object down under a word that names them (Tradier, Bitstamp, CryptoCompare) read with
the file name's symbol, never that word's; an answer's empty error field is no empty file
(Kraken, Bybit, CryptoCompare); and the volume names of the same sweep (CryptoCompare's
``volumefrom``, NSE India's ``TTL_TRD_QNTY``: :data:`foxhunt.data.read.columns.ALIASES`)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.columns import map_columns
from foxhunt.data.read.json_bars import read_json_bars
from foxhunt.errors import DataError

START = 1704295800  # 2024-01-03 15:30 UTC, 10:30 in New York


def _minutes(n: int = 6) -> list[dict[str, object]]:
    """Tradier's one-minute records: its naive New York ``time`` and the epoch ``timestamp``."""
    return [
        {
            "time": f"2024-01-03T10:{30 + i}:00",
            "timestamp": START + 60 * i,
            "price": 185.5 + i,
            "open": 185.0 + i,
            "high": 186.0 + i,
            "low": 184.0 + i,
            "close": 185.5 + i,
            "volume": 1000 + i,
            "vwap": 185.5 + i,
        }
        for i in range(n)
    ]


def _days() -> list[dict[str, object]]:
    dates = ("2024-01-03", "2024-01-04", "2024-01-05", "2024-01-08")
    return [
        {"date": d, "open": 180.0 + i, "high": 182.0 + i, "low": 179.0 + i, "close": 181.0 + i,
         "volume": 1_000_000 + i}
        for i, d in enumerate(dates)
    ]  # fmt: skip


def _bitstamp(n: int = 6) -> list[dict[str, str]]:
    return [
        {"close": str(42500.5 + i), "high": str(42501.0 + i), "low": str(42499.0 + i),
         "open": str(42500.0 + i), "timestamp": str(1704535200 + 60 * i), "volume": "0.5"}
        for i in range(n)
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "opens"),
    [
        ({"series": {"data": _minutes()}}, [185.0 + i for i in range(6)]),  # was symbol "data"
        ({"history": {"day": _days()}}, [180.0 + i for i in range(4)]),  # was symbol "day"
    ],
)
def test_tradiers_answers_take_the_files_symbol(
    tmp_path: Path, answer: dict[str, object], opens: list[float]
) -> None:
    path = tmp_path / "AAPL.json"
    path.write_text(json.dumps(answer))
    bars = read_bars(path)
    assert bars["symbol"].unique().to_list() == ["AAPL"]
    assert bars["open"].to_list() == opens


def test_tradiers_timesales_read_their_epoch(tmp_path: Path) -> None:
    path = tmp_path / "AAPL.json"
    path.write_text(json.dumps({"series": {"data": _minutes()}}))
    bars = read_bars(path)
    assert bars["ts"].dt.epoch("s").to_list() == [START + 60 * i for i in range(6)]


@pytest.mark.parametrize(
    "answer",
    [
        {"data": {"pair": "BTC/USD", "ohlc": _bitstamp()}},  # was refused: no list of records
        {"data": {"ohlc": _bitstamp()}},  # was the symbol "ohlc" on the NYSE's calendar
    ],
)
def test_bitstamps_ohlc_under_data(tmp_path: Path, answer: dict[str, object]) -> None:
    path = tmp_path / "BTCUSD.json"
    path.write_text(json.dumps(answer))
    bars = read_bars(path)
    assert bars["symbol"].unique().to_list() == ["BTCUSD"]
    assert bars["close"].to_list() == [42500.5 + i for i in range(6)]


def test_bars_keyed_by_symbol_stay_keyed_by_symbol(tmp_path: Path) -> None:
    """Alpaca's answer for one symbol: its key is the symbol, not a word for the bars."""
    records = [{"t": (START + 60 * i) * 1000, "o": 1.0, "h": 2.0, "l": 0.5, "c": 1.5, "v": 9}
               for i in range(3)]  # fmt: skip
    path = tmp_path / "bars.json"
    path.write_text(json.dumps({"bars": {"MSFT": records}, "next_page_token": None}))
    assert read_json_bars(path)["symbol"].to_list() == ["MSFT"] * 3
    path.write_text(json.dumps({"bars": {"MSFT": records}}))
    assert read_json_bars(path)["symbol"].to_list() == ["MSFT"] * 3


def _cryptocompare(data: list[dict[str, object]]) -> dict[str, object]:
    return {
        "Response": "Success",
        "Message": "",
        "HasWarning": False,
        "Type": 100,
        "RateLimit": {},
        "Data": {"Aggregated": False, "TimeFrom": 1704535200, "TimeTo": 1704535500, "Data": data},
    }


def test_cryptocompares_histominute_reads_its_base_volume(tmp_path: Path) -> None:
    """Was refused as an empty file (its ``RateLimit`` is ``{}``); its volume is ``volumefrom``
    (in BTC), not ``volumeto`` (in USD), and was 0 for want of a volume column."""
    records = [
        {"time": 1704535200 + 60 * i, "high": 42501.0 + i, "low": 42499.0 + i,
         "open": 42500.0 + i, "volumefrom": 262 + i, "volumeto": 11135015.72 + i,
         "close": 42500.5 + i, "conversionType": "direct", "conversionSymbol": ""}
        for i in range(6)
    ]  # fmt: skip
    path = tmp_path / "BTCUSD.json"
    path.write_text(json.dumps(_cryptocompare(records)))
    bars = read_bars(path)
    assert bars["symbol"].unique().to_list() == ["BTCUSD"]
    assert bars["volume"].to_list() == [262.0 + i for i in range(6)]
    csv = tmp_path / "csv" / "BTCUSD.csv"
    csv.parent.mkdir()
    pl.DataFrame(records).write_csv(csv)
    assert read_bars(csv)["volume"].to_list() == [262.0 + i for i in range(6)]


def test_nse_bhavcopys_total_traded_quantity_is_the_volume() -> None:
    names = [
        "SYMBOL", " SERIES", " DATE1", " OPEN_PRICE", " HIGH_PRICE", " LOW_PRICE",
        " CLOSE_PRICE", " TTL_TRD_QNTY", " TURNOVER_LACS", " NO_OF_TRADES", " DELIV_QTY",
    ]  # fmt: skip
    assert map_columns(names).volume == " TTL_TRD_QNTY"


def _refusal(path: Path, answer: object) -> str:
    path.write_text(json.dumps(answer))
    with pytest.raises(DataError) as refused:
        read_json_bars(path)
    return str(refused.value).removeprefix(f"{path}: ")


KRAKEN_ROWS = [[1704535200 + 60 * i, "42500.1", "42500.14", "42500.06", "42500.06", "42500.06",
                "0.262", 10] for i in range(3)]  # fmt: skip
BYBIT_ROWS = [[str(1704535860000 - 60000 * i), "42496.4", "42497.2", "42496.4", "42497.0",
               "0.427", "18146.219"] for i in range(3)]  # fmt: skip


def _bybit(rows: list[list[str]]) -> dict[str, object]:
    result = {"symbol": "BTCUSDT", "category": "linear", "list": rows}
    return {"retCode": 0, "retMsg": "OK", "result": result, "retExtInfo": {}, "time": 1}


def test_an_empty_error_field_is_no_empty_file(tmp_path: Path) -> None:
    """Kraken's ``"error": []`` and Bybit's ``"retExtInfo": {}`` were taken for the bars' key
    and the file called empty: the bars are there, as rows without names, read in the
    vendor's order since session 59 (refused as rows without names before)."""
    path = tmp_path / "BTCUSD.json"
    path.write_text(json.dumps({"error": [], "result": {"XXBTZUSD": KRAKEN_ROWS, "last": 1}}))
    kraken = read_json_bars(path)
    assert kraken["volume"].cast(pl.Float64).to_list() == [0.262] * 3  # the 7th field, not VWAP
    path.write_text(json.dumps(_bybit(BYBIT_ROWS)))
    bybit = read_json_bars(path)
    assert bybit["symbol"].to_list() == ["BTCUSDT"] * 3
    assert bybit["high"].cast(pl.Float64).to_list() == [42497.2] * 3


def test_an_empty_file_is_where_the_bars_would_be(tmp_path: Path) -> None:
    path = tmp_path / "BTCUSD.json"
    polygon = {"ticker": "AAPL", "resultsCount": 0, "results": []}
    assert _refusal(path, polygon) == "empty file (no bars): 'results' holds no records"
    assert _refusal(path, _bybit([])) == "empty file (no bars): 'result'['list'] holds no records"
    assert (
        _refusal(path, _cryptocompare([]))
        == "empty file (no bars): 'Data'['Data'] holds no records"
    )
    assert _refusal(path, {"error": [], "retExtInfo": {}}).startswith(
        "a JSON object ('error', 'retExtInfo') with no list of bar records"
    )


def test_several_objects_holding_bars_are_refused_naming_them(tmp_path: Path) -> None:
    path = tmp_path / "BTCUSD.json"
    both = {"spot": {"data": _bitstamp()}, "perp": {"data": _bitstamp()}, "ok": True}
    assert _refusal(path, both).startswith(
        "a JSON object ('spot', 'perp', 'ok') with several list of bar records"
    )
    nested = {"answer": {"a": {"data": _bitstamp()}, "b": {"data": _bitstamp()}}}
    assert _refusal(path, nested).startswith(
        "'answer' holds a JSON object ('a', 'b') with several list of bar records"
    )


def _tiingo(ticker: str, price: float) -> dict[str, object]:
    data = [
        {
            "date": f"2024-01-03T14:0{m}:00+00:00",
            "open": price,
            "high": price + 1,
            "low": price - 1,
            "close": price + 0.5,
            "volume": 1.25,
            "volumeNotional": 52500,
            "tradesDone": 125,
        }
        for m in range(3)
    ]
    return {"ticker": ticker, "baseCurrency": ticker[:3], "quoteCurrency": "usd", "priceData": data}


def test_tiingos_answers_in_a_list_read_one_symbol_each(tmp_path: Path) -> None:
    """Tiingo's crypto prices, ``[{"ticker": "btcusd", ..., "priceData": [...]}]``: until session
    53 refused as missing 'open' (columns ticker, baseCurrency, quoteCurrency, priceData)."""
    path = tmp_path / "tiingo.json"
    path.write_text(json.dumps([_tiingo("btcusd", 42000.0), _tiingo("ethusd", 2200.0)]))
    df = read_bars(path, min_bars=1)
    assert df.group_by("symbol").len().sort("symbol").rows() == [("BTCUSD", 3), ("ETHUSD", 3)]
    assert df.filter(pl.col("symbol") == "ETHUSD").row(0)[2:] == (
        2200.0,
        2201.0,
        2199.0,
        2200.5,
        1.25,
    )


def test_a_streams_messages_are_left_out_before_the_symbol_is_chosen(tmp_path: Path) -> None:
    """Alpaca's stream saved line by line: its ``success`` and ``subscription`` messages hold
    no price, and ``T``, the message type, was taken as the symbol (``b``) until session 53."""
    lines = [
        {"T": "success", "msg": "connected"},
        {"T": "subscription", "trades": [], "quotes": [], "bars": ["AAPL"]},
    ] + [
        {"T": "b", "S": "AAPL", "o": 182.25, "h": 182.26, "l": 182.18, "c": 182.21, "v": 1120,
         "t": f"2024-01-03T14:3{m}:00Z", "n": 12, "vw": 182.2}
        for m in range(3)
    ]  # fmt: skip
    path = tmp_path / "alpaca_stream.ndjson"
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    df = read_bars(path, min_bars=1)
    assert df["symbol"].to_list() == ["AAPL"] * 3
    assert df.row(0)[2:] == (182.25, 182.26, 182.18, 182.21, 1120.0)


def test_crypto_coms_instrument_name_is_the_symbol(tmp_path: Path) -> None:
    data = [
        {"t": 1704292200000 + 60_000 * m, "o": "42000.5", "h": "42001", "l": "41997",
         "c": "41998.5", "v": "1.12"}
        for m in range(3)
    ]  # fmt: skip
    answer = {"id": -1, "method": "public/get-candlestick", "code": 0,
              "result": {"interval": "1m", "instrument_name": "BTC_USDT", "data": data}}  # fmt: skip
    path = tmp_path / "cryptocom_candles.json"
    path.write_text(json.dumps(answer))
    assert read_bars(path, min_bars=1)["symbol"].to_list() == ["BTC_USDT"] * 3


def test_nasdaq_data_links_names_beside_its_rows(tmp_path: Path) -> None:
    """``{"dataset_data": {"column_names": [...], "data": [[...]]}}``: until session 53 refused
    as rows without names."""
    rows = [[f"2024-01-0{d}", 182.25, 182.26, 182.18, 182.21, 1120] for d in (3, 4, 5)]
    answer = {
        "dataset_data": {
            "limit": None,
            "column_names": ["Date", "Open", "High", "Low", "Close", "Volume"],
            "start_date": "2024-01-03",
            "frequency": "daily",
            "data": rows,
        }
    }
    path = tmp_path / "WIKI-AAPL.json"
    path.write_text(json.dumps(answer))
    df = read_bars(path, min_bars=1)
    assert df["symbol"].to_list() == ["AAPL"] * 3
    assert df.row(0)[2:] == (182.25, 182.26, 182.18, 182.21, 1120.0)
