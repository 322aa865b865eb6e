"""Vendors' files swept in session 60: each read right where it was misread or refused."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.market.instruments import resolve
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.vendors import guess_from_name
from foxhunt.errors import DataError


def _weekdays(n: int) -> list[datetime]:
    days, day = [], datetime(2024, 1, 2)
    while len(days) < n:
        if day.weekday() < 5:
            days.append(day)
        day += timedelta(days=1)
    return days


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_tz_for_iso_dates_alone_is_applied_and_not_said_otherwise(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    """Daily bars dated ``2024-01-02`` (ISO text, or a parquet column typed date) read with
    ``--tz America/New_York`` start at New York's midnight; until session 60 a warning said
    ``--tz`` was not applied ("holds times with their own zone or UTC offset"), as it said of
    ``01/02/2024`` until session 59."""
    days = _weekdays(30)
    frame = pl.DataFrame(
        {
            "Date": [d.date() for d in days],
            "Open": [4780.25] * 30,
            "High": [4781.0] * 30,
            "Low": [4779.0] * 30,
            "Close": [4780.5] * 30,
            "Volume": [1000] * 30,
        }
    )
    path = tmp_path / f"SPX.{kind}"
    if kind == "csv":
        frame.write_csv(path)
        assert path.read_text().splitlines()[1].startswith("2024-01-02,")
    else:
        frame.write_parquet(path)
    with caplog.at_level(logging.WARNING):
        bars = read_bars(path, tz="America/New_York")
    assert bars["ts"][0] == datetime(2024, 1, 2, 5, tzinfo=UTC)
    assert "not applied" not in caplog.text


def test_times_with_an_offset_still_say_tz_is_not_applied(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The warning stays where it is true: times written with their own offset keep it."""
    path = tmp_path / "SPX.csv"
    rows = [f"2024-01-02T09:{30 + i}:00-05:00,4780.25,4781,4779,4780.5,10" for i in range(3)]
    path.write_text("time,open,high,low,close,volume\n" + "\n".join(rows) + "\n")
    with caplog.at_level(logging.WARNING):
        read_bars(path, min_bars=1, tz="Asia/Tokyo")
    assert "--tz Asia/Tokyo not applied: column 'time' holds times with their own" in caplog.text


def test_a_csv_read_again_as_text_says_its_dialect_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A file whose numbers are quoted with thousands separators is read a second time as
    text; the guessed dialect is said once (until session 60 twice)."""
    path = tmp_path / "NDX.csv"
    rows = [
        f'"2024-01-{d:02d}","16,{500 + d}.25","16,{520 + d}.50","16,{480 + d}.00",'
        f'"16,{510 + d}.75","{d},250,000"'
        for d in range(2, 12)
    ]
    path.write_text('"Date","Open","High","Low","Close","Volume"\n' + "\n".join(rows) + "\n")
    with caplog.at_level(logging.INFO):
        bars = read_bars(path, min_bars=1)
    assert bars["open"][0] == 16502.25
    said = [m for m in caplog.messages if "CSV read with" in m]
    assert said == [
        f"{path}: CSV read with delimiter ',', header, commas between thousands (guessed from "
        "the first lines)"
    ]


def test_a_refused_headerless_file_says_its_dialect_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Rows without a header whose prices no order reads (low, open, close, high) are refused
    naming the order they were read in; the hint's look back at the file does not say its
    dialect again."""
    path = tmp_path / "@ESH24.csv"
    path.write_text(
        "2024-01-02 09:31:00,4779.00,4780.25,4779.50,4781.75,1500,120,30\n"
        "2024-01-02 09:32:00,4778.25,4779.50,4780.00,4780.50,1620,120,28\n"
    )
    with caplog.at_level(logging.INFO), pytest.raises(DataError, match="has no header"):
        read_bars(path, min_bars=1)
    assert len([m for m in caplog.messages if "CSV read with" in m]) == 1


@pytest.mark.parametrize(
    ("name", "symbol"),
    [
        ("tBTCF0:USTF0_1m.csv", "BTCUSDT-PERP"),
        ("tETHF0:USTF0.csv", "ETHUSDT-PERP"),
        ("tBTCF0_USTF0_1h.csv", "BTCUSDT-PERP"),  # a colon is no Windows file name's
        ("tBTCUSD_1m.csv", "BTCUSD"),  # a pair, as before
    ],
)
def test_bitfinex_perpetuals_are_named_as_perpetuals(name: str, symbol: str) -> None:
    """Bitfinex's perpetual ``tBTCF0:USTF0`` is ``BTCUSDT-PERP``, as other venues' perpetuals
    are named (until session 60 ``TBTCF0``, an unknown instrument)."""
    assert guess_from_name(Path(name)).symbol == symbol


def test_an_unknown_base_in_bitfinexs_perpetual_form_keeps_the_old_word() -> None:
    assert guess_from_name(Path("tXYZF0:USTF0.csv")).symbol == "TXYZF0"


@pytest.mark.parametrize(
    ("name", "symbol", "minutes"),
    [
        ("tiingo_aapl_1min.json", "AAPL", 1),
        ("polygon_AAPL.json", "AAPL", None),
        ("kibot_IBM.txt", "IBM", None),
        ("yahoo_MSFT.csv", "MSFT", None),
        ("firstrate_AAPL_1min.txt", "AAPL", 1),
        ("dukascopy_EURUSD.csv", "EURUSD", None),
        ("databento_ES_1m.csv", "ES", 1),
        ("alphavantage_IBM_5min.json", "IBM", 5),
    ],
)
def test_a_data_vendors_name_before_the_ticker_is_no_symbol(
    name: str, symbol: str, minutes: int | None
) -> None:
    """``{vendor}_{ticker}``, as download scripts name their files: the ticker (until session
    60 the vendor's name, ``TIINGO``, an unknown instrument on a 24x7 calendar)."""
    guess = guess_from_name(Path(name))
    assert guess.symbol == symbol
    assert guess.interval == (None if minutes is None else timedelta(minutes=minutes))


def _alpha_vantage(series: str, meta: dict[str, str], rows: dict[str, dict[str, str]]) -> str:
    """Alpha Vantage's answer: its metadata, then the bars keyed by time, newest first."""
    return json.dumps({"Meta Data": meta, series: dict(reversed(list(rows.items())))})


def _av_bars(times: list[str], volume: bool = True) -> dict[str, dict[str, str]]:
    rows = {}
    for i, t in enumerate(times):
        bar = {"1. open": f"{161 + i * 0.1:.4f}", "2. high": f"{161.3 + i * 0.1:.4f}"}
        bar |= {"3. low": f"{160.9 + i * 0.1:.4f}", "4. close": f"{161.1 + i * 0.1:.4f}"}
        rows[t] = bar | ({"5. volume": str(1000 + i)} if volume else {})
    return rows


def test_alpha_vantages_intraday_answer_reads_in_its_zone(tmp_path: Path) -> None:
    """``"Time Series (5min)"`` keyed by New York's clock (``"6. Time Zone": "US/Eastern"``):
    09:30 is 14:30 UTC, the symbol is ``"2. Symbol"``'s (until session 60 refused as a JSON
    object with no list of bar records)."""
    times = [
        f"2024-01-02 {9 + (30 + 5 * i) // 60:02d}:{(30 + 5 * i) % 60:02d}:00" for i in range(12)
    ]
    meta = {"1. Information": "Intraday (5min)", "2. Symbol": "IBM", "6. Time Zone": "US/Eastern"}
    path = tmp_path / "av.json"
    path.write_text(_alpha_vantage("Time Series (5min)", meta, _av_bars(times)))
    bars = read_bars(path, min_bars=1)
    assert bars["symbol"].unique().to_list() == ["IBM"]
    assert bars["ts"][0] == datetime(2024, 1, 2, 14, 30, tzinfo=UTC)
    assert bars["ts"][-1] == datetime(2024, 1, 2, 15, 25, tzinfo=UTC)
    assert bars.row(0, named=True)["open"] == 161.0
    assert bars.row(0, named=True)["high"] == 161.3
    assert bars.row(0, named=True)["volume"] == 1000


def test_alpha_vantages_fx_and_crypto_series_are_their_pairs(tmp_path: Path) -> None:
    """FX (``"2. From Symbol"``, ``"3. To Symbol"``) and crypto (``"2. Digital Currency
    Code"``, ``"4. Market Code"``) answers name no symbol: the pair their sides spell."""
    fx = tmp_path / "av_fx.json"
    times = [f"2024-01-02 10:{5 * i:02d}:00" for i in range(10)]
    meta = {"2. From Symbol": "EUR", "3. To Symbol": "USD", "7. Time Zone": "UTC"}
    fx.write_text(_alpha_vantage("Time Series FX (5min)", meta, _av_bars(times, volume=False)))
    bars = read_bars(fx, min_bars=1)
    assert bars["symbol"].unique().to_list() == ["EURUSD"]
    assert bars["ts"][0] == datetime(2024, 1, 2, 10, tzinfo=UTC)
    crypto = tmp_path / "av_crypto.json"
    days = [f"2024-01-{d:02d}" for d in range(1, 15)]
    meta = {"2. Digital Currency Code": "BTC", "4. Market Code": "EUR", "7. Time Zone": "UTC"}
    crypto.write_text(_alpha_vantage("Time Series (Digital Currency Daily)", meta, _av_bars(days)))
    bars = read_bars(crypto, min_bars=1)
    assert bars["symbol"].unique().to_list() == ["BTCEUR"]
    assert bars.height == 14


def _minute_frame() -> pl.DataFrame:
    times = [datetime(2024, 1, 2, 14, 30, tzinfo=UTC) + timedelta(minutes=i) for i in range(8)]
    return pl.DataFrame(
        {
            "time": times,
            "open": [470.0 + i for i in range(8)],
            "high": [471.0 + i for i in range(8)],
            "low": [469.5 + i for i in range(8)],
            "close": [470.5 + i for i in range(8)],
            "volume": [100 + i for i in range(8)],
        }
    )


@pytest.mark.parametrize("orient", ["columns", "index"])
@pytest.mark.parametrize("stamps", ["epoch", "iso"])
def test_pandas_json_of_bars_indexed_by_time_reads(
    tmp_path: Path, orient: str, stamps: str
) -> None:
    """pandas' ``df.to_json(path)`` of bars indexed by time (its default ``orient="columns"``:
    ``{"open": {"1704205800000": 470.0, ...}}``) and ``orient="index"``, epoch milliseconds or
    ISO times as keys (until session 60 refused as no list of bar records)."""
    frame = _minute_frame()
    keys = [
        str(int(t.timestamp() * 1000)) if stamps == "epoch" else f"{t:%Y-%m-%dT%H:%M:%S.000Z}"
        for t in frame["time"]
    ]
    records = frame.drop("time").to_dicts()
    if orient == "index":
        data: dict[str, object] = dict(zip(keys, records, strict=True))
    else:
        data = {f: dict(zip(keys, frame[f].to_list(), strict=True)) for f in records[0]}
    path = tmp_path / "SPY.json"
    path.write_text(json.dumps(data))
    bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == frame["time"].to_list()
    assert bars["close"].to_list() == frame["close"].to_list()
    assert bars["volume"].to_list() == [float(v) for v in frame["volume"]]


def test_pandas_json_by_row_number_is_still_refused(tmp_path: Path) -> None:
    """Row numbers are no times: pandas' default orient of a frame without its time index is
    refused, naming what the file holds."""
    path = tmp_path / "SPY.json"
    path.write_text('{"open": {"0": 1.0, "1": 1.5}, "close": {"0": 1.2, "1": 1.4}}')
    with pytest.raises(DataError, match="a JSON object \\('open', 'close'\\) with no list"):
        read_bars(path, min_bars=1)


def _iqfeed_rows(days: int = 2, bars: int = 130) -> str:
    """IQFeed's interval history as saved without a header: a time, high, low, open, close,
    the day's running total of the volume, the bar's own, its number of trades."""
    rows, price = [], 4780.0
    for day in range(days):
        total = 0
        for i in range(bars):
            t = datetime(2024, 1, 2 + day, 9, 31) + timedelta(minutes=i)
            o, c = price, price + (0.5 if (i * 7 + day) % 3 else -0.75)
            h, lo, price = max(o, c) + 0.25 * (i % 3), min(o, c) - 0.25 * (i % 2), c
            volume = 100 + (i * 37) % 250
            total += volume
            rows.append(
                f"{t:%Y-%m-%d %H:%M:%S},{h:.2f},{lo:.2f},{o:.2f},{c:.2f},{total},{volume},9"
            )
    return "\n".join(rows) + "\n"


def test_iqfeeds_headerless_rows_read_in_its_order(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """High, low, open, close (IQFeed's order), then its running total, the bar's volume and
    its trades: read so, and said (until session 60 refused naming the order read, and with
    ``--columns`` for the prices refused again for the running total read as the volume)."""
    path = tmp_path / "@ESH24.csv"
    path.write_text(_iqfeed_rows())
    with caplog.at_level(logging.INFO):
        bars = read_bars(path, tz="America/New_York")
    first = bars.row(0, named=True)
    assert first["ts"] == datetime(2024, 1, 2, 14, 31, tzinfo=UTC)
    assert (first["open"], first["close"]) == (4780.0, 4779.25)
    assert (first["high"], first["low"]) == (4780.0, 4779.25)
    assert bars["volume"].to_list()[:3] == [100.0, 137.0, 174.0]  # each bar's, not the total
    said = [m for m in caplog.messages if "prices read as" in m]
    assert said == [
        f"{path}: no header: prices read as high, low, open, close (IQFeed's), the one order "
        "that reads the first rows as bars; --columns names each field's column"
    ]


def test_coinbases_headerless_candles_read_in_its_order(tmp_path: Path) -> None:
    """Coinbase's candles saved without a header: time, low, high, open, close, volume."""
    path = tmp_path / "BTC-USD.csv"
    rows = [
        f"{1704153600 + 3600 * i},{42000 + i},{42300 + i},{42100 + i},{42200 + i},1.5"
        for i in range(6)
    ]
    path.write_text("\n".join(rows) + "\n")
    bars = read_bars(path, min_bars=1)
    first = bars.row(0, named=True)
    assert (first["open"], first["high"], first["low"], first["close"]) == (
        42100.0,
        42300.0,
        42000.0,
        42200.0,
    )


def test_a_headerless_file_in_the_usual_order_is_read_as_before(tmp_path: Path) -> None:
    """Where the usual order reads every sampled row as a bar, no other order is tried, even
    one that would read them too (a bar whose open is its high)."""
    path = tmp_path / "ES.csv"
    path.write_text(
        "2024-01-02 14:30:00,4772.25,4772.25,4769.50,4770.00,10\n"
        "2024-01-02 14:31:00,4770.00,4771.00,4769.75,4770.50,12\n"
    )
    bars = read_bars(path, min_bars=1)
    assert bars.row(0, named=True)["open"] == 4772.25
    assert bars.row(0, named=True)["close"] == 4770.0


def test_a_list_of_bars_beside_an_object_keyed_by_dates_is_the_bars(tmp_path: Path) -> None:
    """Polygon's ``results`` beside dividends keyed by their dates: the records are the bars
    (refused for the dividends until the review of session 60 put the keyed read after them)."""
    t0 = 1704205800000
    results = [
        {"t": t0 + 60_000 * i, "o": 185.0 + i, "h": 186.0 + i, "l": 184.5 + i, "c": 185.5 + i,
         "v": 1000 + i}
        for i in range(5)
    ]  # fmt: skip
    path = tmp_path / "AAPL_polygon.json"
    answer = {"ticker": "AAPL", "status": "OK", "results": results,
              "dividends": {"2024-02-09": {"amount": 0.24}}}  # fmt: skip
    path.write_text(json.dumps(answer))
    bars = read_bars(path, min_bars=1)
    assert bars["close"].to_list() == [185.5, 186.5, 187.5, 188.5, 189.5]
    assert bars["ts"][0] == datetime(2024, 1, 2, 14, 30, tzinfo=UTC)


def test_a_named_symbol_wins_over_the_pairs_sides_and_a_note_beside_is_no_metadata(
    tmp_path: Path,
) -> None:
    """An answer that names its ``Symbol`` beside a pair's sides keeps the name; a text beside
    the objects (a ``"Note"``) is no metadata of the bars, and no error."""
    times = [f"2024-01-02 10:{5 * i:02d}:00" for i in range(10)]
    meta = {"2. Symbol": "EUR/USD", "3. From Symbol": "EUR", "4. To Symbol": "USD",
            "7. Time Zone": "UTC"}  # fmt: skip
    answer = json.loads(_alpha_vantage("Time Series FX (5min)", meta, _av_bars(times)))
    path = tmp_path / "av.json"
    path.write_text(json.dumps({**answer, "Note": "Thank you for using Alpha Vantage!"}))
    bars = read_bars(path, min_bars=1)
    assert bars["symbol"].unique().to_list() == ["EUR/USD"]  # as named (the sides: EURUSD)
    assert bars.height == 10


@pytest.mark.parametrize(
    ("ticker", "symbol", "calendar"),
    [("C:EUR-USD", "EURUSD", "fx_24x5"), ("X:BTC-USD", "BTCUSD", "24x7")],
)
def test_polygons_flat_file_tickers_lose_their_market_prefix(
    tmp_path: Path, ticker: str, symbol: str, calendar: str
) -> None:
    """Polygon's (Massive's) flat files, ``ticker,...,window_start`` in nanoseconds: the
    market prefix and the dash are no part of the symbol (the sweep of session 61 found
    ``C:EUR-USD`` kept, an unknown market on 24x7, as Polygon's JSON already read it right)."""
    start = datetime(2024, 1, 2, tzinfo=UTC)  # a Tuesday: FX open all day
    lines = ["ticker,volume,open,close,high,low,window_start,transactions"]
    for i in range(300):
        ns = int((start + timedelta(minutes=5 * i)).timestamp()) * 1_000_000_000
        lines.append(f"{ticker},884,1.0900,1.0894,1.0901,1.0892,{ns},884")
    path = tmp_path / "2024-01-02.csv"
    path.write_text("\n".join(lines) + "\n")
    df = read_bars(path)
    assert df["symbol"].unique().to_list() == [symbol]
    assert df["ts"][0] == start and df.height == 300
    assert resolve(symbol).calendar == calendar
