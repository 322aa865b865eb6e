"""JSON bars (``foxhunt.data.read.json_bars``): an API's records read as the same bars as a CSV
of them; rows without names and other shapes are refused saying what the file holds. Were all
refused as "JSON is not read"."""

from __future__ import annotations

import gzip
import io
import json
import logging
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.row_count import estimate_rows
from foxhunt.errors import DataError

BTC = Path(__file__).parents[1] / "fixtures" / "real" / "btc-perp-20211231-20220201_1m.csv.gz"


@pytest.fixture(scope="module")
def btc() -> pl.DataFrame:
    """The first 600 real BTC one-minute bars, times in UTC."""
    frame = pl.read_csv(io.BytesIO(gzip.decompress(BTC.read_bytes())), n_rows=600)
    return frame.with_columns(
        pl.col("timestamp").str.to_datetime(time_zone="UTC", time_unit="ms").alias("timestamp")
    )


def _csv_bars(tmp_path: Path, frame: pl.DataFrame, name: str) -> pl.DataFrame:
    path = tmp_path / "csv" / f"{name}.csv"
    path.parent.mkdir(exist_ok=True)
    frame.write_csv(path)
    return read_bars(path)


def _records(frame: pl.DataFrame, iso: bool = False) -> list[dict[str, object]]:
    """Polygon's and Alpaca's names: t (epoch ms, or RFC 3339 for Alpaca), o h l c v, and the
    extras they send (n, vw)."""
    t = (
        pl.col("timestamp").dt.strftime("%Y-%m-%dT%H:%M:%SZ")
        if iso
        else pl.col("timestamp").dt.epoch("ms")
    )
    return frame.select(
        t.alias("t"),
        pl.col("open").alias("o"),
        pl.col("high").alias("h"),
        pl.col("low").alias("l"),
        pl.col("close").alias("c"),
        pl.col("volume").alias("v"),
        pl.lit(7).alias("n"),
        pl.col("close").alias("vw"),
    ).to_dicts()


def test_polygon_aggregates_read_as_the_csv_of_their_bars(
    tmp_path: Path, btc: pl.DataFrame
) -> None:
    answer = {
        "ticker": "X:BTCUSD",
        "queryCount": 600,
        "resultsCount": 600,
        "adjusted": True,
        "results": _records(btc),
        "status": "OK",
        "request_id": "6a7e466379af0a71039d60cc78e72282",
        "count": 600,
    }
    path = tmp_path / "aggs_2022.json"  # the symbol is the answer's ticker, less Polygon's X:
    path.write_text(json.dumps(answer))
    assert_frame_equal(read_bars(path), _csv_bars(tmp_path, btc, "BTCUSD"))
    assert estimate_rows(path) == 600  # one line of records: counted by reading them


def test_alpaca_bars_of_one_and_of_several_symbols(tmp_path: Path, btc: pl.DataFrame) -> None:
    one = tmp_path / "bars.json"  # the symbol is the answer's
    one.write_text(
        json.dumps({"bars": _records(btc, iso=True), "symbol": "BTCUSD", "next_page_token": None})
    )
    expected = _csv_bars(tmp_path, btc, "BTCUSD")
    assert_frame_equal(read_bars(one), expected)
    several = tmp_path / "alpaca_several.json"
    later = btc.with_columns(pl.col("close") * 2, pl.col("open") * 2, pl.col("high") * 2,
                             pl.col("low") * 2)  # fmt: skip
    bars = {"BTCUSD": _records(btc, iso=True), "ETHUSD": _records(later, iso=True)}
    several.write_text(json.dumps({"bars": bars, "next_page_token": None}))
    both = read_bars(several)
    assert both.group_by("symbol").len().sort("symbol").rows() == [("BTCUSD", 600), ("ETHUSD", 600)]
    assert_frame_equal(both.filter(pl.col("symbol") == "BTCUSD"), expected)


@pytest.mark.filterwarnings("ignore:.*'epoch' date format is deprecated")
def test_pandas_records_and_json_lines(tmp_path: Path, btc: pl.DataFrame) -> None:
    """pandas writes datetimes as epoch milliseconds (its default before pandas 4) or ISO."""
    frame = btc.to_pandas()
    frame["timestamp"] = frame["timestamp"].dt.tz_localize(None)
    records, lines = tmp_path / "BTCUSD.json", tmp_path / "lines" / "BTCUSD.jsonl"
    lines.parent.mkdir()
    frame.to_json(records, orient="records", date_format="epoch")
    frame.to_json(lines, orient="records", lines=True, date_format="iso")
    assert json.loads(records.read_text())[0]["timestamp"] == 1640991660000
    assert json.loads(lines.read_text().splitlines()[0])["timestamp"] == "2021-12-31T23:01:00.000"
    expected = _csv_bars(tmp_path, btc, "BTCUSD")
    assert_frame_equal(read_bars(records), expected)
    assert_frame_equal(read_bars(lines), expected)


def test_json_beside_other_bars_is_named_not_read_and_alone_is_read(
    tmp_path: Path, btc: pl.DataFrame, caplog: pytest.LogCaptureFixture
) -> None:
    btc.write_csv(tmp_path / "BTCUSD.csv")
    (tmp_path / "instruments.json").write_text('{"BTCUSD": {"calendar": "24x7"}}')
    (tmp_path / "metadata.json").write_text('{"query": {}}')  # Databento's: never bars
    with caplog.at_level(logging.WARNING):
        assert read_bars(tmp_path)["symbol"].unique().to_list() == ["BTCUSD"]
    said = [m for m in caplog.messages if "JSON beside" in m]
    assert said == [
        f"{tmp_path / 'instruments.json'}: JSON beside other bar files is not read as bars (a "
        "vendor's metadata, an instrument table): give its path alone to read it"
    ]
    only = tmp_path / "json"
    only.mkdir()
    (only / "BTCUSD.json").write_text(json.dumps(_records(btc)))
    (only / "ETHUSD.json").write_text(json.dumps(_records(btc)))
    assert read_bars(only).group_by("symbol").len().sort("symbol").rows() == [
        ("BTCUSD", 600),
        ("ETHUSD", 600),
    ]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (  # no vendor's order reads a high under the open (read in their order: json_rows)
            '[[1704067200000, "42283.58", "42280.62", "42283.57", "42298.61", "1.2"]]',
            "the file holds rows without names (JSON lists): candle APIs write their columns in "
            "orders that differ by vendor (Coinbase puts the low first); save them as CSV with a "
            "header naming each column",
        ),
        (  # bars keyed by time are read (json_keyed): a bar without a high is refused so
            '{"Meta Data": {"2. Symbol": "IBM"}, "Time Series (5min)": {"2024-01-02 09:35:00": '
            '{"1. open": "161.5"}}}',
            "missing column 'high' (columns: timestamp, open, symbol)",
        ),
        (  # keys of no time: the old refusal
            '{"Meta Data": {"2. Symbol": "IBM"}, "Series": {"first": {"1. open": "161.5"}}}',
            "a JSON object ('Meta Data', 'Series') with no list of bar records under its keys: "
            'save the bars as a list of records (pandas: df.to_json(path, orient="records")) or '
            "as CSV",
        ),
        (
            '{"open": {"0": 1.0, "1": 1.5}, "close": {"0": 1.2, "1": 1.4}}',  # pandas' default
            "a JSON object ('open', 'close') with no list of bar records",
        ),
        ('{"a": [{"t": 1}], "b": [{"t": 2}]}', "a JSON object ('a', 'b') with several list"),
        ("[]", "empty file (no bars)"),
        ("[1, 2", "not JSON (Expecting ',' delimiter: line 1 column 6 (char 5))"),
    ],
)
def test_json_of_another_shape_is_refused_saying_what_it_holds(
    tmp_path: Path, content: str, said: str
) -> None:
    assert _json_error(tmp_path / "BTCUSD.json", content, read_bars).startswith(said)


def test_a_json_lines_row_that_is_no_record_is_named_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "BTCUSD.jsonl"
    path.write_text('{"t": 1704067200000, "o": 1, "h": 1, "l": 1, "c": 1, "v": 1}\n\n[1, 2]\n')
    with pytest.raises(DataError) as refused:
        read_bars(path)
    assert str(refused.value) == f"{path} line 3: JSON lists, not a record with names"
    path.write_text('{"t": 1704067200000}\n{"t": \n')
    with pytest.raises(DataError, match=r"BTCUSD.jsonl line 2: not JSON \("):
        read_bars(path)


def test_a_csv_holding_json_is_told_to_be_named_json(tmp_path: Path) -> None:
    path = tmp_path / "BTCUSD.csv"
    path.write_text('[{"t": 1704067200000, "o": 1}]')
    with pytest.raises(DataError) as refused:
        read_bars(path)
    assert str(refused.value) == (
        f"{path}: the file holds JSON, not delimited bars: name it .json (a list of records with "
        "names is read) or write it as CSV"
    )


def test_binance_klines_with_sorted_keys_read_t_not_t_upper(
    tmp_path: Path, btc: pl.DataFrame
) -> None:
    """A Binance kline (websocket ``k``) saved with sorted keys puts ``T`` (the close time) before
    ``t`` and ``L`` (a trade id) before ``l``: the lower-case names are the bar's (the close time
    read as the time put every bar a minute late, verdict valid). ``s`` is its symbol."""
    ms = btc["timestamp"].dt.epoch("ms")
    lines = [
        json.dumps(
            {"t": t, "T": t + 59_999, "s": "ETHUSDT", "i": "1m", "f": 100, "L": 200, "o": str(o),
             "c": str(c), "h": str(h), "l": str(lo), "v": str(v), "n": 100, "x": True, "q": "1",
             "V": "0.5", "Q": "0.5", "B": "0"},
            sort_keys=True,
        )
        for t, o, h, lo, c, v in zip(ms, *(btc[k] for k in ("open", "high", "low", "close", "volume")), strict=True)
    ]  # fmt: skip
    path = tmp_path / "klines.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert_frame_equal(read_bars(path), _csv_bars(tmp_path, btc, "ETHUSDT"))


def test_a_records_own_symbol_polygon_grouped_and_alpaca_stream(
    tmp_path: Path, btc: pl.DataFrame
) -> None:
    grouped = [{**r, "T": sym} for sym in ("AAPL", "MSFT") for r in _records(btc)]
    path = tmp_path / "grouped.json"
    path.write_text(json.dumps({"queryCount": 2, "results": grouped, "status": "OK"}))
    frame = _json_frame(path)  # BTC's hours on a stock's calendar: the frame, not the check
    assert frame.group_by("symbol").len().sort("symbol").rows() == [("AAPL", 600), ("MSFT", 600)]
    stream = tmp_path / "stream.jsonl"  # Alpaca: T is the message type, S the symbol
    stream.write_text("\n".join(json.dumps({"T": "b", "S": "BTCUSD", **r}) for r in _records(btc)))
    assert_frame_equal(read_bars(stream), _csv_bars(tmp_path, btc, "BTCUSD"))


def _json_frame(path: Path) -> pl.DataFrame:
    from foxhunt.data.read.json_bars import read_json_bars

    return read_json_bars(path)


def test_twelve_data_names_its_symbol_and_zone_in_meta(tmp_path: Path, btc: pl.DataFrame) -> None:
    """Twelve Data: ``{"meta": {"symbol", "exchange_timezone"}, "values": [...]}``, newest first,
    numbers as strings, naive times on the exchange's clock. Two such files in a folder were one
    symbol, their times read as UTC."""
    new_york = btc.with_columns(
        pl.col("timestamp")
        .dt.convert_time_zone("America/New_York")
        .dt.strftime("%Y-%m-%d %H:%M:%S")
    )
    for symbol in ("BTCUSD", "ETHUSD"):
        values = [
            {"datetime": r["timestamp"], **{k: str(r[k]) for k in ("open", "high", "low", "close", "volume")}}
            for r in reversed(new_york.to_dicts())
        ]  # fmt: skip
        meta = {"symbol": symbol, "interval": "1min", "exchange_timezone": "America/New_York"}
        (tmp_path / f"time_series_{symbol}.json").write_text(
            json.dumps({"meta": meta, "values": values, "status": "ok"})
        )
    both = read_bars(tmp_path)
    expected = _csv_bars(tmp_path, btc, "BTCUSD")
    for symbol in ("BTCUSD", "ETHUSD"):  # each its own, at the UTC times of the CSV
        one = both.filter(pl.col("symbol") == symbol).with_columns(pl.lit("BTCUSD").alias("symbol"))
        assert_frame_equal(one, expected)


def test_yahoos_chart_answer_reads_its_lists_beside_the_epochs(
    tmp_path: Path, btc: pl.DataFrame
) -> None:
    """Yahoo's chart API: the prices of each symbol in lists under ``indicators.quote[0]``
    beside ``timestamp`` (epoch seconds), the symbol in ``meta``; a minute without a trade is
    nulls, not a bar. Refused as missing 'open' until session 58."""
    quote = {k: btc[k].to_list() for k in ("open", "high", "low", "close", "volume")}
    for k in quote:
        quote[k][7] = None  # Yahoo's gap: every list null at that time
    times = btc["timestamp"].dt.epoch("s").to_list()
    meta = {"symbol": "BTC-USD", "exchangeTimezoneName": "UTC", "dataGranularity": "1m"}
    result = {"meta": meta, "timestamp": times, "indicators": {"quote": [quote], "adjclose": []}}
    path = tmp_path / "chart.json"
    path.write_text(json.dumps({"chart": {"result": [result], "error": None}}))
    got = read_bars(path)
    expected = _csv_bars(tmp_path, btc, "BTCUSD")
    assert got["symbol"].unique().to_list() == ["BTCUSD"]
    gone = btc["timestamp"][7]
    assert_frame_equal(got, expected.filter(pl.col("ts") != gone))


def test_yahoos_daily_chart_is_dated_by_its_exchange(tmp_path: Path) -> None:
    """A day's bar of Sydney opens at 10:00 there, 23:00 UTC the day before: its exchange's
    date, not the UTC one (a Sunday for Monday's bar)."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    sydney = ZoneInfo("Australia/Sydney")
    days = [datetime(2024, 1, d, 10, tzinfo=sydney) for d in (8, 9, 10, 11, 12, 15)]
    quote = {k: [40.0 + i for i in range(len(days))] for k in ("open", "high", "low", "close")}
    quote["volume"] = [1000] * len(days)
    meta = {"symbol": "BHP.AX", "exchangeTimezoneName": "Australia/Sydney", "dataGranularity": "1d"}
    result = {
        "meta": meta,
        "timestamp": [int(d.timestamp()) for d in days],
        "indicators": {"quote": [quote]},
    }
    path = tmp_path / "chart.json"
    path.write_text(json.dumps({"chart": {"result": [result], "error": None}}))
    bars = read_bars(path)
    assert bars["symbol"].unique().to_list() == ["BHP.AX"]
    assert [t.date().isoformat() for t in bars["ts"]] == [d.date().isoformat() for d in days]


def test_empty_answers_pandas_split_and_a_lower_case_ticker(
    tmp_path: Path, btc: pl.DataFrame
) -> None:
    empty = tmp_path / "aggs.json"
    empty.write_text(json.dumps({"ticker": "AAPL", "resultsCount": 0, "results": []}))
    with pytest.raises(DataError) as refused:
        read_bars(empty)
    assert str(refused.value) == f"{empty}: empty file (no bars): 'results' holds no records"
    several = tmp_path / "several.json"  # one symbol had no bars in the span asked
    several.write_text(
        json.dumps({"bars": {"BTCUSD": _records(btc), "ETHUSD": None, "SOLUSD": []}})
    )
    assert read_bars(several)["symbol"].unique().to_list() == ["BTCUSD"]
    split = tmp_path / "split" / "BTCUSD.json"
    split.parent.mkdir()
    frame = btc.to_pandas()
    frame["timestamp"] = frame["timestamp"].dt.tz_localize(None)
    frame.to_json(split, orient="split", date_format="iso", index=False)
    assert_frame_equal(read_bars(split), _csv_bars(tmp_path, btc, "BTCUSD"))
    lower = tmp_path / "lower.json"
    lower.write_text(json.dumps({"ticker": "x:btcusd", "results": _records(btc)}))
    assert read_bars(lower)["symbol"].unique().to_list() == ["BTCUSD"]


def _json_error(path: Path, content: str, read: Callable[[Path], object] | None = None) -> str:
    """The refusal of ``content`` in ``path``, less the path (by ``read``; the JSON reader
    alone by default, before the calendar's checks)."""
    path.write_text(content)
    with pytest.raises(DataError) as refused:
        (read or _json_frame)(path)
    assert str(refused.value).startswith(f"{path}: ")
    return str(refused.value).removeprefix(f"{path}: ")


def test_each_shape_refused_names_where_and_what(tmp_path: Path) -> None:
    p = tmp_path / "a.json"
    assert _json_error(p, "42") == "the file holds JSON numbers, not a list of bar records"
    assert _json_error(p, '"x"') == "the file holds JSON strings, not a list of bar records"
    assert _json_error(p, '{"results": [[1, 2, 3]]}').startswith(
        "'results' holds rows without names (JSON lists)"
    )
    assert _json_error(p, '{"bars": {"AAPL": [[1, 2]], "MSFT": [{"t": 1}]}}').startswith(
        "'bars'['AAPL'] holds rows without names (JSON lists)"
    )
    keys = ", ".join(f"'k{i}'" for i in range(6))
    assert _json_error(p, json.dumps({f"k{i}": i for i in range(8)})).startswith(
        f"a JSON object ({keys}) with no list"
    )
    ragged = {"columns": ["t", "o"], "index": [0, 1], "data": [[1, 2], [3]]}
    assert _json_error(p, json.dumps(ragged)).startswith(
        "'data' holds rows without names (JSON lists)"
    )
    assert _json_error(p, '[{"t": 1, "o": "x"}, {"t": 2, "o": [1]}]').startswith(
        "records that are no table (could not append value"
    )
    lines = tmp_path / "a.jsonl"
    for line, what in (
        ("null", "nulls"),
        ("true", "booleans"),
        ('"x"', "strings"),
        ("[]", "lists"),
    ):
        lines.write_text('{"t": 1}\n' + line + "\n")
        with pytest.raises(DataError) as refused:
            _json_frame(lines)
        assert str(refused.value) == f"{lines} line 2: JSON {what}, not a record with names"


def test_which_symbol_and_time_the_records_keep(tmp_path: Path) -> None:
    p = tmp_path / "a.json"
    own = [{"t": 1, "symbol": "ESH4", "o": 1}]  # the record's own symbol over the answer's
    p.write_text(json.dumps({"ticker": "ES", "results": own}))
    assert _json_frame(p)["symbol"].to_list() == ["ESH4"]
    ticker = [{"t": 1, "Ticker": "AAPL", "S": "XX", "o": 1}]  # a Ticker: no S taken for it
    p.write_text(json.dumps(ticker))
    assert _json_frame(p).columns == ["t", "Ticker", "S", "o"]
    for key in ("date", "time", "timestamp"):  # the answer's zone names each spelling of time
        p.write_text(json.dumps({"meta": {"timezone": "Asia/Tokyo"}, "v": [{key: "2024-01-04"}]}))
        assert _json_frame(p).columns == [f"{key} (Asia/Tokyo)"]
    p.write_text(json.dumps({"values": [{"datetime": "2024-01-04 09:00:00", "o": 1}]}))
    assert _json_frame(p).columns == ["datetime", "o"]  # no zone named: as written
    epochs = {"meta": {"exchange_timezone": "America/New_York"}, "values": [{"timestamp": 1}]}
    p.write_text(json.dumps(epochs))  # an epoch is no clock time: its name stays
    assert _json_frame(p).columns == ["timestamp"]
    late = [{"t": i, "v": 1} for i in range(150)] + [{"t": 150, "v": 1.5}]
    p.write_text(json.dumps(late))  # a float after 150 integers: the column is float
    assert _json_frame(p)["v"].to_list()[-1] == 1.5


@pytest.mark.parametrize("codec", ["gz", "bz2", "xz", "zst"])
def test_compressed_json_and_json_lines_read_as_the_plain_files(
    tmp_path: Path, btc: pl.DataFrame, codec: str
) -> None:
    """An API's answers saved compressed (``aggs.json.gz``): refused as an unsupported file type
    until session 57, where ``.csv.gz`` was read."""
    import bz2
    import lzma

    import pyarrow as pa

    def packed(data: bytes) -> bytes:
        if codec == "zst":
            sink = pa.BufferOutputStream()
            with pa.CompressedOutputStream(sink, "zstd") as out:
                out.write(data)
            return sink.getvalue().to_pybytes()
        return {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[codec](data)

    answer = {"ticker": "X:BTCUSD", "results": _records(btc), "status": "OK"}
    path = tmp_path / f"aggs_2022.json.{codec}"
    path.write_bytes(packed(json.dumps(answer).encode()))
    expected = _csv_bars(tmp_path, btc, "BTCUSD")
    assert_frame_equal(read_bars(path), expected)
    lines = tmp_path / "lines" / f"BTCUSD.jsonl.{codec}"
    lines.parent.mkdir()
    lines.write_bytes(packed("\n".join(json.dumps(r) for r in _records(btc)).encode()))
    assert_frame_equal(read_bars(lines), expected)


def test_a_damaged_compressed_json_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "BTCUSD.json.gz"
    path.write_bytes(gzip.compress(b'{"results": []}')[:-6])
    with pytest.raises(DataError, match=r"BTCUSD\.json\.gz: cannot read \("):
        read_bars(path)
