"""Bars built from prints (trades, quotes, closes) with --bar-minutes: the prints of real
one-minute bars give those bars back, exactly."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.bars import load_bars, read_bars
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.resample import aggregate_bars
from foxhunt.errors import DataError

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
BTC = REAL / "btc-perp-20211231-20220201_1m.csv.gz"
PRICES = ["open", "high", "low", "close"]


@pytest.fixture(scope="module")
def bars() -> pl.DataFrame:
    """1,500 real one-minute bars of the BTC perpetual (24/7: no session cuts a bucket)."""
    return read_bars(BTC).head(1500)


def _prints(bars: pl.DataFrame) -> pl.DataFrame:
    """Four prints per bar: the open at 1 s, the extremes at 20 s and 40 s (the low first on an
    up bar), the close at 59.5 s; half the volume on the open, half on the close (halves add
    up exactly)."""
    up = pl.col("close") >= pl.col("open")
    second = pl.when(up).then(pl.col("low")).otherwise(pl.col("high"))
    third = pl.when(up).then(pl.col("high")).otherwise(pl.col("low"))
    half = pl.col("volume") / 2
    parts = [
        bars.select((pl.col("ts") + offset).alias("ts"), price.alias("price"), size.alias("size"))
        for offset, price, size in (
            (timedelta(seconds=1), pl.col("open"), half),
            (timedelta(seconds=20), second, pl.lit(0.0)),
            (timedelta(seconds=40), third, pl.lit(0.0)),
            (timedelta(seconds=59.5), pl.col("close"), half),
        )
    ]
    return pl.concat(parts).sort("ts", maintain_order=True)


def _write(frame: pl.DataFrame, path: Path) -> Path:
    frame.with_columns(pl.col("ts").dt.strftime("%Y-%m-%d %H:%M:%S%.3f")).write_csv(path)
    return path


def test_trades_give_the_bars_they_came_from(tmp_path: Path, bars: pl.DataFrame) -> None:
    path = _write(_prints(bars), tmp_path / "BTC-PERP_trades.csv")
    one = read_bars(path, options=ReadOptions(bar_minutes=1))
    cols = ["ts", *PRICES, "volume"]
    assert one.select(cols).equals(bars.select(cols))
    assert one["symbol"].unique().to_list() == ["BTC-PERP"]
    five = read_bars(path, options=ReadOptions(bar_minutes=5))
    assert five.select(cols).equals(aggregate_bars(bars, 5).select(cols))


def test_quotes_are_read_at_their_mid_and_counted(tmp_path: Path, bars: pl.DataFrame) -> None:
    """Dukascopy's tick export: ``Gmt time,Ask,Bid,AskVolume,BidVolume``; a crossed quote (ask
    below bid) is a mid like another."""
    ticks = _prints(bars).select(
        pl.col("ts").dt.strftime("%d.%m.%Y %H:%M:%S%.3f").alias("Gmt time"),
        (pl.col("price") + 0.5).alias("Ask"),
        (pl.col("price") - 0.5).alias("Bid"),
        pl.lit(1.5).alias("AskVolume"),
        pl.lit(2.5).alias("BidVolume"),
    )
    ticks[3, "Ask"], ticks[3, "Bid"] = ticks[3, "Bid"], ticks[3, "Ask"]  # crossed
    path = tmp_path / "BTC-PERP_Ticks.csv"
    ticks.write_csv(path)
    one = read_bars(path, options=ReadOptions(bar_minutes=1))
    assert one.select("ts", *PRICES).equals(bars.select("ts", *PRICES))
    assert one["volume"].unique().to_list() == [4.0]  # the tick volume
    loaded = load_bars(path, options=ReadOptions(bar_minutes=1))
    assert loaded.extra == (("AskVolume", "BidVolume"),)  # listed as not read


def test_prints_of_one_time_keep_file_order_and_unsorted_ones_are_sorted(tmp_path: Path) -> None:
    path = tmp_path / "CL_trades.csv"
    path.write_text(
        "timestamp,price\n"
        "2024-03-04 15:00:30,80.0\n"
        "2024-03-04 15:00:10,79.0\n"  # earlier than the row above: the minute's open
        "2024-03-04 15:00:50,81.5\n"
        "2024-03-04 15:00:50,81.0\n"  # same time as the row above, later in the file: the close
        "2024-03-04 15:02:05,81.2\n"
    )
    bars = read_bars(path, options=ReadOptions(bar_minutes=1, allow_odd_times=True))
    assert bars.select(*PRICES, "volume").rows() == [
        (79.0, 81.5, 79.0, 81.0, 4.0),  # no size column: the number of prints
        (81.2, 81.2, 81.2, 81.2, 1.0),
    ]


def test_sparse_prints_aggregate_whatever_their_gaps(tmp_path: Path) -> None:
    """Prints two minutes apart build one-minute bars two minutes apart, which five-minute
    buckets take (bars two minutes apart do not divide five minutes: refused as bars)."""
    times = pl.datetime_range(
        pl.datetime(2024, 1, 3, 0, 0, 30),
        pl.datetime(2024, 1, 3, 2, 0, 30),
        interval="2m",
        eager=True,
    )
    trades = pl.DataFrame({"ts": times, "price": [100.0 + i for i in range(len(times))]})
    path = _write(trades.with_columns(pl.lit(2.0).alias("qty")), tmp_path / "BTCUSD.csv")
    five = read_bars(path, options=ReadOptions(bar_minutes=5))
    assert five["ts"].dt.minute().to_list()[:3] == [0, 5, 10]
    assert five.select(*PRICES, "volume").row(0) == (100.0, 102.0, 100.0, 102.0, 6.0)
    assert five["volume"].sum() == 2.0 * len(times)
    as_bars = trades.with_columns(*(pl.col("price").alias(c) for c in PRICES)).drop("price")
    bar_path = _write(as_bars, tmp_path / "BTCUSD_bars.csv")
    with pytest.raises(DataError, match="--bar-minutes 5 needs bars that divide"):
        read_bars(bar_path, options=ReadOptions(bar_minutes=5))


def test_a_file_of_prints_is_refused_naming_the_flag(tmp_path: Path) -> None:
    path = tmp_path / "ES_trades.csv"
    path.write_text("timestamp,price,size\n2024-03-04 15:00:30,5000.25,3\n")
    with pytest.raises(DataError) as refused:  # or bars whose open went unrecognised
        load_bars(path)
    assert str(refused.value).endswith(
        "ES_trades.csv: missing column 'open' (columns: timestamp, price, size); --columns "
        "open=COLUMN names it; or, if its rows are prices at times (column 'price': trades or "
        "closes), --bar-minutes K builds K-minute bars from them (open the first price, high "
        "the highest, low the lowest, close the last; --bar-minutes 1 reads a series of closes "
        "a minute or more apart bar for bar)"
    )
    with pytest.raises(
        DataError,
        match=r"ES_trades.csv: holds prices at times .*--stamps end is for bars stamped at their "
        r"end \(a print's time is its own\); leave it out$",
    ):
        load_bars(path, options=ReadOptions(bar_minutes=5, stamps="end"))
    quotes = tmp_path / "EURUSD_quotes.csv"
    quotes.write_text("time,bid_price,ask_price\n2024-03-04 15:00:30,1.08,1.0801\n")
    with pytest.raises(DataError) as refused:
        load_bars(quotes)
    assert str(refused.value).endswith(
        "EURUSD_quotes.csv: holds quotes (bid 'bid_price', ask 'ask_price'), not bars (no open, "
        "high or low): --bar-minutes K builds K-minute bars from them (open the first price, "
        "high the highest, low the lowest, close the last)"
    )


def test_a_bad_print_is_named_by_its_row(tmp_path: Path) -> None:
    path = tmp_path / "ES_trades.csv"
    path.write_text(
        "timestamp,price,size\n"
        "2024-03-04 15:00:30,5000.25,3\n"
        "2024-03-04 15:00:40,abc,1\n"
        "2024-03-04 15:01:40,5001,1\n"
    )
    with pytest.raises(DataError, match=r"column 'price', row 1 \(2024-03-04 15:00:40.*'abc'"):
        read_bars(path, options=ReadOptions(bar_minutes=1))
    quotes = tmp_path / "EURUSD_quotes.csv"
    quotes.write_text("time,bid,ask\n2024-03-04 15:00:30,1.08,1.0801\n2024-03-04 15:00:31,,1.1\n")
    with pytest.raises(DataError, match=r"column 'bid', row 1 .*missing value"):
        read_bars(quotes, options=ReadOptions(bar_minutes=1))


def test_bars_with_a_price_column_are_no_prints(tmp_path: Path) -> None:
    """Investing.com's ``Price`` is the close of bars that have an open, high and low."""
    path = tmp_path / "SPX.csv"
    path.write_text(
        "Date,Price,Open,High,Low\n2024-01-02,4742.8,4745.2,4754.3,4722.7\n"
        "2024-01-03,4704.8,4725.1,4729.3,4699.7\n"
    )
    loaded = load_bars(path)
    assert loaded.prints == (False,)
    assert loaded.frame["close"].to_list() == [4742.8, 4704.8]


def test_a_bar_is_named_by_its_first_prints_row(tmp_path: Path) -> None:
    """A price 100 times off (a print in cents) is refused on its bar, named by the row of the
    bar's first print."""
    minutes = pl.datetime_range(
        pl.datetime(2024, 1, 3), pl.datetime(2024, 1, 3, 6), interval="1m", eager=True
    )
    trades = pl.DataFrame(
        {
            "ts": pl.concat([minutes + timedelta(seconds=10), minutes + timedelta(seconds=40)]),
            "price": [100.0 + 0.01 * (i % 7) for i in range(2 * len(minutes))],
        }
    ).sort("ts")
    trades[201, "price"] = 10_000.0  # the second print of minute 100
    path = _write(trades, tmp_path / "BTCUSD.csv")
    with pytest.raises(DataError, match=r"column 'price', row 200 \(2024-01-03 01:40:00.*off by"):
        read_bars(path, options=ReadOptions(bar_minutes=1))


@pytest.mark.parametrize(
    ("names", "found"),
    [
        (["time", "bid", "ask", "bid_size"], ("quotes", ("bid", "ask"), None)),
        (["Gmt time", "Ask", "Bid", "AskVolume", "BidVolume"], ("quotes", ("Bid", "Ask"), None)),
        (["ts_event", "bid_px_00", "ask_px_00"], ("quotes", ("bid_px_00", "ask_px_00"), None)),
        (["time", "last", "quantity"], ("trades", ("last",), "quantity")),
        (["id", "price", "qty", "quote_qty", "time"], ("trades", ("price",), "qty")),
        (["time", "price", "volume"], ("trades", ("price",), "volume")),
        (["time", "close"], ("trades", ("close",), None)),  # a series of closes
        (["time", "bid", "bid_size"], None),  # one side alone
        (["time", "qty", "volume"], None),  # a size without a price
        (["time", "open", "close"], None),  # some of a bar's prices: bars, missing a column
    ],
    ids=["quotes", "dukascopy", "databento-mbp", "last-quantity", "binance-trades", "volume",
         "closes", "one-side", "no-price", "part-bars"],
)  # fmt: skip
def test_what_prints_a_file_holds(names: list[str], found: tuple[object, ...] | None) -> None:
    from foxhunt.data.read.columns import map_columns
    from foxhunt.data.read.prints import find_prints

    prints = find_prints(map_columns(names, where="f.csv"))
    assert (prints and (prints.kind, prints.prices, prints.size)) == found


def test_a_daily_series_of_closes_reads_bar_for_bar_at_one_minute(tmp_path: Path) -> None:
    """``Date,Price,Volume``: each day its own bar, on its date (the refusal names the flag)."""
    path = tmp_path / "SPY.csv"
    days = ["2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05", "2024-01-08"]
    path.write_text(
        "Date,Price,Volume\n" + "".join(f"{d},{470 + i},100\n" for i, d in enumerate(days))
    )
    bars = read_bars(path, min_bars=1, options=ReadOptions(bar_minutes=1))
    assert bars["ts"].dt.strftime("%Y-%m-%d %H:%M").to_list() == [f"{d} 00:00" for d in days]
    assert bars.select(*PRICES).rows() == [(470.0 + i,) * 4 for i in range(5)]


def test_databentos_book_events_other_than_trades_are_left_out(tmp_path: Path) -> None:
    """An mbp-1 file holds adds, cancels and trades (``action`` A, C, T) with their prices:
    every event was a print (open 5000, volume 311 for one trade of 1 at 5000.25)."""
    head = "ts_recv,ts_event,action,side,price,size,bid_px_00,ask_px_00,symbol\n"
    rows = [
        ("00.1", "A", "B", "5000.00", 10),
        ("01.1", "A", "A", "5000.25", 300),
        ("02.1", "T", "A", "5000.25", 1),
        ("03.1", "C", "A", "5000.25", 300),
        ("30.0", "T", "B", "5000.00", 2),
    ]
    path = tmp_path / "glbx-mdp3-mbp-1.csv"
    path.write_text(
        head
        + "".join(
            f"2024-03-07T14:30:{t}Z,2024-03-07T14:30:{t}Z,{a},{s},{p},{n},5000.00,5000.25,ESH4\n"
            for t, a, s, p, n in rows
        )
    )
    loaded = load_bars(path, options=ReadOptions(bar_minutes=1))
    assert loaded.frame.select(*PRICES, "volume").rows() == [
        (5000.25, 5000.25, 5000.0, 5000.0, 3.0)
    ]
    assert (
        "2 prints built into 1 one-minute bars (3 events other than trades left out)"
        in (loaded.guesses[0])
    )
    assert loaded.frame.columns[:7] == ["ts", "symbol", "open", "high", "low", "close", "volume"]
    assert not [c for c in loaded.frame.columns if "action" in c.lower()]


def test_a_print_without_its_size_counts_none_inside_its_minute(tmp_path: Path) -> None:
    """An empty size left the print out of its bar, as a bar of its own: the minute's open and
    close were wrong, and prints of one second with every size empty were "duplicate bars"."""
    path = tmp_path / "XYZ.csv"
    path.write_text(
        "timestamp,price,size\n2024-03-07 14:30:00.500,100.0,\n2024-03-07 14:30:10,102.0,1\n"
        "2024-03-07 14:30:40,101.0,5\n2024-03-07 14:30:40,101.5,\n"
    )
    bars = read_bars(path, options=ReadOptions(bar_minutes=1, allow_odd_times=True))
    assert bars.select(*PRICES, "volume").rows() == [(100.0, 102.0, 100.0, 101.5, 6.0)]


def test_a_minute_split_between_files_is_one_bar(tmp_path: Path) -> None:
    """Tick files cut mid-minute (by size, not by day) were each built on their own: the
    minute they share was a duplicate bar."""
    folder = tmp_path / "XYZ"
    folder.mkdir()
    (folder / "XYZ_part1.csv").write_text(
        "time,price,size\n2024-03-07 14:30:01,100,1\n2024-03-07 14:31:10,105,2\n"
    )
    (folder / "XYZ_part2.csv").write_text(
        "time,price,size\n2024-03-07 14:31:40,99,3\n2024-03-07 14:32:50,98,4\n"
    )
    bars = read_bars(folder, options=ReadOptions(bar_minutes=1, allow_odd_times=True))
    assert bars.select(*PRICES, "volume").rows() == [
        (100.0, 100.0, 100.0, 100.0, 1.0),
        (105.0, 105.0, 99.0, 99.0, 5.0),
        (98.0, 98.0, 98.0, 98.0, 4.0),
    ]


def test_a_symbol_in_two_cases_is_one_within_a_minute(tmp_path: Path) -> None:
    path = tmp_path / "ticks.csv"
    path.write_text(
        "ts,symbol,price,size\n2024-03-07 14:30:01,BTCUSD,100.0,1\n"
        "2024-03-07 14:30:02,BTCUSD,101.0,1\n2024-03-07 14:30:03,btcusd,102.0,1\n"
        "2024-03-07 14:31:01,BTCUSD,100.0,1\n"
    )
    bars = read_bars(path, options=ReadOptions(bar_minutes=1))
    assert bars.select("symbol", *PRICES, "volume").rows()[0] == (
        "BTCUSD", 100.0, 102.0, 100.0, 102.0, 3.0,
    )  # fmt: skip


def test_a_signed_size_counts_by_its_size(tmp_path: Path) -> None:
    """Bitfinex writes a sell's ``AMOUNT`` negative (refused as a negative volume)."""
    path = tmp_path / "BTCUSD.csv"
    path.write_text(
        "ID,MTS,AMOUNT,PRICE\n1,1704067200100,0.5,42000\n2,1704067210100,-0.25,42001\n"
        "3,1704067270100,0.1,42002\n"
    )
    bars = read_bars(path, options=ReadOptions(bar_minutes=1))
    assert bars["volume"].to_list() == [0.75, 0.1]


def test_bars_whose_names_were_not_recognised_are_no_prints(tmp_path: Path) -> None:
    """``First, Max, Min, Last``: with --bar-minutes the file was read as prices of ``Last``,
    its highs and lows dropped (verdict valid)."""
    path = tmp_path / "BTCUSD.csv"
    path.write_text(
        "Time,First,Max,Min,Last,Volume\n2024-01-02 00:00,42000,42100,41900,42050,10\n"
        "2024-01-02 00:01,42050,42200,42000,42150,11\n2024-01-02 00:02,42150,42160,41800,41850,12\n"
    )
    with pytest.raises(DataError) as refused:
        read_bars(path, options=ReadOptions(bar_minutes=5))
    assert str(refused.value).endswith(
        "BTCUSD.csv: missing column 'open'; columns 'Max' and 'Min' stay above and below 'Last' "
        "as a bar's high and low do: bars whose names were not recognised, not prices at times "
        "(--bar-minutes reads those); --columns open=COLUMN,high=Max,low=Min names them "
        "(--columns close=Last reads the file as prices)"
    )
    as_prices = read_bars(path, options=ReadOptions(bar_minutes=5, columns=("close=Last",)))
    assert as_prices.select(*PRICES).row(0) == (42050, 42150, 41850, 41850)
    named = ReadOptions(bar_minutes=5, columns=("open=First", "high=Max", "low=Min"))
    assert read_bars(path, options=named).select(*PRICES).row(0) == (42000, 42200, 41800, 41850)


def test_daily_closes_are_read_bar_for_bar_only_at_one_minute(tmp_path: Path) -> None:
    """At K = 60 every day was moved to the evening before (the hour of the trading day's
    start), with verdict valid."""
    path = tmp_path / "AAPL.csv"
    days = ["2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05", "2024-01-08"]
    path.write_text(
        "Date,Close,Volume\n" + "".join(f"{d},{180 + i},100\n" for i, d in enumerate(days))
    )
    with pytest.raises(
        DataError, match=r"prints 1 day, 0:00:00 apart, further than --bar-minutes 60"
    ):
        read_bars(path, min_bars=1, options=ReadOptions(bar_minutes=60))


def test_a_quote_files_volume_is_listed_as_not_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "EURUSD.csv"
    path.write_text(
        "time,bid,ask,volume\n2024-03-04 15:00:30,1.08,1.0801,3\n2024-03-04 15:01:30,1.08,1.0801,3\n"
    )
    import logging

    with caplog.at_level(logging.WARNING):
        load_bars(path, options=ReadOptions(bar_minutes=1))
    assert any("ignored columns" in m and "volume" in m for m in caplog.messages)


@pytest.mark.parametrize(
    "header",
    [
        "timestamp,price,size,bid,ask",  # TAQ: a trade beside the quote it met
        "timestamp,price,size,day_high",  # a column above the price alone: no bar's low
    ],
)
def test_trades_beside_other_prices_are_prints(tmp_path: Path, header: str) -> None:
    """A trade's prevailing bid and ask bracket its price as a bar's low and high do: the file
    was refused as bars whose names were not recognised."""
    rows = [("14:30:01", 100.02, 100.01, 100.03), ("14:30:02", 100.03, 100.01, 100.03),
            ("14:31:03", 100.01, 100.01, 100.02)]  # fmt: skip
    quoted = header.endswith("ask")
    path = tmp_path / "XYZ.csv"
    path.write_text(
        header
        + "\n"
        + "".join(
            f"2024-03-07 {t},{p},5,{b},{a}\n" if quoted else f"2024-03-07 {t},{p},5,{a + 1}\n"
            for t, p, b, a in rows
        )
    )
    bars = read_bars(path, options=ReadOptions(bar_minutes=1, allow_odd_times=True))
    assert bars.select(*PRICES, "volume").rows() == [
        (100.02, 100.03, 100.02, 100.03, 10.0),
        (100.01, 100.01, 100.01, 100.01, 5.0),
    ]


@pytest.mark.parametrize("header", ["timestamp,high,close", "timestamp,low,close"])
def test_a_file_with_some_of_a_bars_prices_is_no_prints(tmp_path: Path, header: str) -> None:
    """A close beside a high or a low (no open) is bars missing a column, not prints."""
    path = tmp_path / "ES.csv"
    path.write_text(header + "\n2024-03-07 14:30,100,100\n")
    with pytest.raises(
        DataError, match=rf"missing column 'open' \(columns: {header.replace(',', ', ')}\)"
    ):
        load_bars(path, options=ReadOptions(bar_minutes=1))


def test_a_penny_coins_prints_are_bars(tmp_path: Path) -> None:
    """Prices under 1 (a meme coin at 0.00001) are prices like others."""
    path = tmp_path / "SHIBUSDT.csv"
    path.write_text(
        "timestamp,price,qty\n2024-03-07 14:30:01,0.00002500,1000000\n"
        "2024-03-07 14:30:31,0.00002510,1500000\n2024-03-07 14:30:31,0.00002510,500000\n"
        "2024-03-07 14:31:01,0.00002490,500000\n"
    )
    bars = read_bars(path, options=ReadOptions(bar_minutes=1))
    assert bars.select(*PRICES, "volume").rows() == [
        (0.000025, 0.0000251, 0.000025, 0.0000251, 3_000_000.0),
        (0.0000249, 0.0000249, 0.0000249, 0.0000249, 500_000.0),
    ]


@pytest.mark.parametrize(("bad", "what"), [("0", "non-positive price"), ("-1.5", "non-positive")])
def test_a_bad_price_is_named_by_its_own_row_not_its_bars(
    tmp_path: Path, bad: str, what: str
) -> None:
    path = tmp_path / "ES_trades.csv"
    path.write_text(
        "timestamp,price,size\n2024-03-04 15:00:10,5000.25,3\n2024-03-04 15:00:20,5000.5,1\n"
        f"2024-03-04 15:00:30,{bad},1\n2024-03-04 15:01:40,5001,1\n"
    )
    with pytest.raises(DataError, match=rf"column 'price', row 2 \(2024-03-04 15:00:30.*{what}"):
        read_bars(path, options=ReadOptions(bar_minutes=1))


def test_each_file_counts_its_own_prints_and_bars(tmp_path: Path) -> None:
    folder = tmp_path / "XYZ"
    folder.mkdir()
    (folder / "XYZ_a.csv").write_text(
        "time,price,size\n2024-03-07 14:30:01,100,1\n2024-03-07 14:31:01,101,1\n"
        "2024-03-07 14:31:02,101,1\n"
    )
    (folder / "XYZ_b.csv").write_text("time,price,size\n2024-03-07 14:32:01,99,1\n")
    loaded = load_bars(folder, options=ReadOptions(bar_minutes=1))
    said = [[g for g in guesses if "built into" in g] for guesses in loaded.guesses]
    assert said == [
        ["3 prints built into 2 one-minute bars"],
        ["1 prints built into 1 one-minute bars"],
    ]
    assert loaded.frame.columns[:7] == ["ts", "symbol", "open", "high", "low", "close", "volume"]
    assert not [c for c in loaded.frame.columns if "action" in c]


def test_a_bars_kept_column_is_its_last_prints(tmp_path: Path) -> None:
    """A covariate kept beside prints (``--observed-cols spread``) is the minute's last value,
    as ``--bar-minutes`` keeps the last bar's."""
    path = tmp_path / "XYZ.csv"
    path.write_text(
        "time,price,size,spread\n2024-03-07 14:30:01,100,1,0.5\n2024-03-07 14:30:31,101,1,0.7\n"
        "2024-03-07 14:31:01,101,1,0.9\n"
    )
    bars = read_bars(
        path, keep=("spread",), options=ReadOptions(bar_minutes=1, allow_odd_times=True)
    )
    assert bars["spread"].to_list() == [0.7, 0.9]


_MT5_HEADER = "<DATE>\t<TIME>\t<BID>\t<ASK>\t<LAST>\t<VOLUME>\t<FLAGS>\n"


def _mt5_ticks(path: Path, rows: list[tuple[str, str, str, int]]) -> Path:
    """MetaTrader 5's tick export (UTF-16, tabs): each row holds the side that changed, the
    other cell blank; <LAST> and <VOLUME> are empty for a currency."""
    lines = [f"2024.01.03\t{t}\t{bid}\t{ask}\t\t\t{flags}\n" for t, bid, ask, flags in rows]
    path.write_text(_MT5_HEADER + "".join(lines), encoding="utf-16")
    return path


def test_metatrader_5_ticks_carry_each_side_forward(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Until session 53 read as trades of the empty <LAST> (0 prints, "no bars") with
    --bar-minutes, and refused naming <LAST> without it."""
    path = _mt5_ticks(
        tmp_path / "EURUSD_ticks.csv",
        [
            ("15:30:00.100", "", "1.0002", 4),  # no bid yet: no quote, dropped
            ("15:30:00.291", "1.0000", "1.0002", 6),
            ("15:30:09.064", "", "1.0004", 4),  # mid (1.0000 + 1.0004) / 2
            ("15:30:18.874", "0.9996", "", 2),  # mid (0.9996 + 1.0004) / 2
            ("15:31:00.020", "", "1.0006", 4),  # the next minute: bid 0.9996 carried over
        ],
    )
    import logging

    with caplog.at_level(logging.INFO):
        loaded = load_bars(path, options=ReadOptions(bar_minutes=1))
    df = loaded.frame
    assert df["ts"].dt.strftime("%H:%M").to_list() == ["15:30", "15:31"]
    assert df.select(PRICES).row(0) == pytest.approx((1.0001, 1.0002, 1.0000, 1.0000))
    assert df.select(PRICES).row(1) == pytest.approx((1.0001, 1.0001, 1.0001, 1.0001))
    assert df["volume"].to_list() == [3.0, 1.0]  # prints counted; the first row held no quote
    assert any("the first 1 rows hold one side of a quote only" in m for m in caplog.messages)
    assert any("side of the quote that changed" in g for g in loaded.guesses[0])
    with pytest.raises(DataError, match=r"holds quotes \(bid '<BID>', ask '<ASK>'\), not bars"):
        read_bars(path)


def test_a_quote_file_without_flags_names_its_missing_side_by_row(tmp_path: Path) -> None:
    """Blank sides are carried only in a file with MetaTrader's <FLAGS>: elsewhere a blank bid is
    a missing value, named by its row."""
    path = tmp_path / "EURUSD.csv"
    rows = "".join(f"2024.01.03 15:30:{s:02d},,1.0002\n" for s in range(1, 5))
    path.write_text("time,bid,ask\n2024.01.03 15:30:00,1.0,1.0002\n" + rows)
    with pytest.raises(DataError, match=r"column 'bid', row 1 .*missing value"):
        read_bars(path, options=ReadOptions(bar_minutes=1))


def test_a_metatrader_file_with_both_sides_on_every_row_is_plain_quotes(tmp_path: Path) -> None:
    path = _mt5_ticks(
        tmp_path / "EURUSD_ticks.csv",
        [("15:30:00.291", "1.0000", "1.0002", 6), ("15:30:09.064", "1.0001", "1.0003", 6)],
    )
    loaded = load_bars(path, options=ReadOptions(bar_minutes=1))
    assert loaded.frame.select(PRICES).row(0) == pytest.approx((1.0001, 1.0002, 1.0001, 1.0002))
    assert not any("side of the quote that changed" in g for g in loaded.guesses[0])


def test_a_metatrader_tick_that_is_no_number_is_named_not_carried(tmp_path: Path) -> None:
    path = _mt5_ticks(
        tmp_path / "EURUSD_ticks.csv",
        [
            ("15:30:00.291", "1.0000", "1.0002", 6),
            ("15:30:09.064", "abc", "", 2),  # a damaged bid: named, never the bid before it
            ("15:30:18.874", "0.9996", "", 2),
        ],
    )
    with pytest.raises(DataError, match=r"column '<BID>', row 1 .*'abc'"):
        read_bars(path, options=ReadOptions(bar_minutes=1))


def test_a_metatrader_files_empty_last_is_listed_with_the_columns_read_past(tmp_path: Path) -> None:
    path = _mt5_ticks(
        tmp_path / "EURUSD_ticks.csv",
        [("15:30:00.291", "1.0000", "1.0002", 6), ("15:30:09.064", "", "1.0004", 4)],
    )
    loaded = load_bars(path, options=ReadOptions(bar_minutes=1))
    assert set(loaded.extra[0]) == {"<LAST>", "<VOLUME>", "<FLAGS>"}
