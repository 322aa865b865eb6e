"""More vendors' exports as they come (session 37): each read right, none refused or misread.

Written after a sweep of plausible files the suite had not seen: a title before the header, a
clock written in digits (Portara, some TradeStation exports), Nasdaq.com's ``$`` prices and
``Close/Last``, Bloomberg's ``PX_*`` names, a trailing delimiter, Interactive Brokers' zone after
each time. Before the changes each of these was refused, and Portara's file was misread (the
clock taken for the open).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.csv_dialect import header_names, sniff_csv
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError

MINUTES = range(30, 36)
"""09:30 .. 09:35 on 2 January 2024."""


def _utc(hour: int, minute: int) -> datetime:
    return datetime(2024, 1, 2, hour, minute, tzinfo=UTC)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, newline="")
    return path


def _minutes(path: Path, **kw: object) -> list[datetime]:
    return read_bars(path, min_bars=1, **kw)["ts"].to_list()  # type: ignore[arg-type]


def test_a_title_and_notes_before_the_header_are_skipped(tmp_path: Path) -> None:
    table = "Date,Time,Open,High,Low,Close,Volume\n" + "".join(
        f"01/02/2024,09:{m},4700.25,4701,4699.5,4700,{m}\n" for m in MINUTES
    )
    plain = _write(tmp_path, "ES.csv", table)
    (tmp_path / "t").mkdir()
    titled = _write(tmp_path / "t", "ES.csv", "# ES 1 min bars\nSymbol: ES\n\n" + table)
    dialect = sniff_csv(titled)
    assert dialect.skip_lines == 3 and dialect.has_header
    assert "the first 3 lines skipped" in dialect.describe()
    assert header_names(titled, dialect) == header_names(plain, sniff_csv(plain))
    assert read_bars(titled, min_bars=1).equals(read_bars(plain, min_bars=1))


@pytest.mark.parametrize("title", ["SAP GY Equity,,,,,,\n", "E-mini daily,,,,,,\n,,,,,,\n"])
def test_a_title_excel_padded_to_the_tables_width_is_skipped(tmp_path: Path, title: str) -> None:
    """Excel's "Save as CSV" pads every line to the table's width: a Bloomberg ticker above
    its BDH table (``SAP GY Equity,,,,,``) and a blank line (``,,,,,``) were the header,
    and the file was refused as missing 'open', which no ``--columns`` could mend."""
    table = "Date,Time,Open,High,Low,Close,Volume\n" + "".join(
        f"01/02/2024,09:{m},4700.25,4701,4699.5,4700,{m}\n" for m in MINUTES
    )
    plain = _write(tmp_path, "ES.csv", table)
    (tmp_path / "t").mkdir()
    titled = _write(tmp_path / "t", "ES.csv", title + table)
    dialect = sniff_csv(titled)
    assert dialect.skip_lines == title.count("\n") and dialect.has_header
    assert read_bars(titled, min_bars=1).equals(read_bars(plain, min_bars=1))


def test_pandas_unnamed_index_header_is_no_padded_title(tmp_path: Path) -> None:
    """``df.to_csv()`` of a frame with an unnamed index writes ``,close,volume,open_interest``:
    an empty first name is no Excel padding (which pads a line's end), so it stays the header
    (an intermediate version took it for a title, 3 fields filled of 4, and the first bar for
    the header)."""
    rows = "".join(f"2024-01-02 09:{m}:00,4700.25,{m},100\n" for m in MINUTES)
    path = _write(tmp_path, "ES.csv", ",close,volume,open_interest\n" + rows)
    dialect = sniff_csv(path)
    assert dialect.skip_lines == 0 and dialect.has_header
    assert header_names(path, dialect)[1:] == ["close", "volume", "open_interest"]


def test_excels_tab_delimited_text_of_formatted_numbers_reads(tmp_path: Path) -> None:
    """Excel's "Text (Tab delimited)" keeps formatted cells: ``1,837.75`` and ``1,252,742``.
    Split on commas those rows have more fields than on tabs, and the file was read with
    commas, its header thrown away as a title and refused as missing 'open'."""
    rows = [
        ("1/2/2014", "1,837.75", "1,840.75", "1,821.75", "1,826.50", "1,252,742"),
        ("1/3/2014", "1,827.25", "1,833.00", "1,820.50", "1,825.50", "1,252,742"),
        ("1/6/2014", "1,825.00", "1,830.50", "1,817.25", "1,820.75", "963,149"),
    ]
    text = "Date\tOpen\tHigh\tLow\tClose\tVolume\r\n" + "".join("\t".join(r) + "\r\n" for r in rows)
    path = _write(tmp_path, "ES_daily.txt", text)
    assert sniff_csv(path).delimiter == "\t"
    bars = read_bars(path, min_bars=1)
    assert bars["open"].to_list() == [1837.75, 1827.25, 1825.0]
    assert bars["volume"].to_list() == [1252742.0, 1252742.0, 963149.0]


def test_portara_headerless_clock_in_digits(tmp_path: Path) -> None:
    """``20240102,0930,...``: a date then a clock in digits that changes within the date."""
    rows = "".join(f"20240102,09{m},4700.25,4701,4699.5,4700,{m},100\n" for m in MINUTES)
    path = _write(tmp_path, "ES.csv", rows)
    assert sniff_csv(path).names[:3] == ("date", "time", "open")
    bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == [_utc(9, m) for m in MINUTES]
    assert bars["open"].to_list() == [4700.25] * 6 and bars["volume"].to_list() == list(MINUTES)


def test_a_headerless_daily_file_with_a_price_after_the_date_is_not_a_clock(
    tmp_path: Path,
) -> None:
    """``20240102,930,...`` once per date is a daily bar opening at 930, not 09:30."""
    days = (2, 3, 4, 5, 8, 9)
    rows = "".join(f"202401{d:02d},930,935,925,932,1000\n" for d in days)
    path = _write(tmp_path, "SPY.csv", rows)
    assert sniff_csv(path).names[:2] == ("timestamp", "open")
    bars = read_bars(path, min_bars=1)
    assert bars["open"].to_list() == [930.0] * 6 and bars["high"].to_list() == [935.0] * 6


@pytest.mark.parametrize(
    ("clock", "expected"),
    [("930", (9, 30)), ("0930", (9, 30)), ("93000", (9, 30)), ("5", (0, 5)), ("1605", (16, 5))],
)
def test_a_time_column_in_digits(tmp_path: Path, clock: str, expected: tuple[int, int]) -> None:
    text = f"Date,Time,Open,High,Low,Close,Volume\n20240102,{clock},4700.25,4701,4699.5,4700,1\n"
    assert _minutes(_write(tmp_path, "ES.csv", text), tz="UTC") == [_utc(*expected)]


def test_an_hour_column_beside_the_date_is_the_hour_and_a_minute_column_its_minutes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``Date,Hour,...`` (0 .. 23) and ``Date,Hour,Minute,...``: the hour was padded as a clock in
    digits (``1`` -> 00:01), so a day's 24 hourly bars landed in its first 24 minutes, with
    verdict valid once ``--columns date=Date,time=Hour`` (the refusal's own advice) was given."""
    hourly = "Date,Hour,Open,High,Low,Close,Volume\n" + "".join(
        f"2024-01-02,{h},4700.25,4701,4699.5,4700,1\n" for h in range(24)
    )
    path = _write(tmp_path, "ES.csv", hourly)
    want = [_utc(h, 0) for h in range(24)]
    assert _minutes(path, tz="UTC") == want
    chosen = ReadOptions(tz="UTC", columns=("date=Date", "time=Hour"))
    assert _minutes(path, options=chosen) == want
    minutes = "Date,Hour,Minute,Open,High,Low,Close,Volume\n" + "".join(
        f"2024-01-02,9,{m},4700.25,4701,4699.5,4700,1\n" for m in (5, *MINUTES)
    )
    with caplog.at_level(logging.WARNING):
        got = _minutes(_write(tmp_path, "NQ.csv", minutes), tz="UTC")
    assert got == [_utc(9, m) for m in (5, *MINUTES)]
    assert not any("ignored columns" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("sep", [" ", "T"])
def test_an_hour_column_beside_a_date_that_holds_the_time_is_not_added_again(
    tmp_path: Path, sep: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``Date`` of ``2024-01-02 09:00`` (or ISO's ``2024-01-02T09:00``) beside ``Hour`` 9: the
    date column is the time (the hour was added to it, and the file refused as unparsable), and
    the hour column, left unread, is listed with the ignored columns (it was not, session 51)."""
    text = "Date,Hour,Open,High,Low,Close,Volume,OI\n" + "".join(
        f"2024-01-02{sep}{h:02d}:00,{h},4700.25,4701,4699.5,4700,1,7\n" for h in range(9, 15)
    )
    path = _write(tmp_path, "ES.csv", text)
    with caplog.at_level(logging.WARNING):
        assert _minutes(path, tz="UTC") == [_utc(h, 0) for h in range(9, 15)]
    assert f"ignored columns in {path}: Hour, OI" in caplog.text


def test_an_hour_column_that_holds_a_clock_is_read_as_one(tmp_path: Path) -> None:
    """``Hour`` of ``09:30`` beside a date: a clock already, read as written (whole hours are
    the ones made into a clock)."""
    text = "Date,Hour,Open,High,Low,Close,Volume\n" + "".join(
        f"2024-01-02,{h:02d}:30,4700.25,4701,4699.5,4700,1\n" for h in range(9, 15)
    )
    assert _minutes(_write(tmp_path, "ES.csv", text), tz="UTC") == [
        _utc(h, 30) for h in range(9, 15)
    ]


def test_hours_ending_1_to_24_are_refused_unless_stamped_at_their_end(tmp_path: Path) -> None:
    """Power markets number the hours 1-24, each the hour ending: read as starts they were an
    hour late (24 as the next midnight); refused naming ``--stamps end``, which reads them."""
    text = "Date,Hour,Open,High,Low,Close,Volume\n" + "".join(
        f"2024-01-02,{h},4700.25,4701,4699.5,4700,1\n" for h in range(1, 25)
    )
    path = _write(tmp_path, "PWR.csv", text)
    with pytest.raises(DataError) as e:
        read_bars(path, min_bars=1, tz="UTC")
    assert str(e.value) == (
        f"{path}: column 'Hour' runs to 24: the hours ending (1-24, as power markets number "
        "them), each bar stamped at its end; --stamps end reads them so"
    )
    ending = ReadOptions(tz="UTC", stamps="end", allow_odd_times=True)
    assert _minutes(path, options=ending) == [_utc(h, 0) for h in range(24)]


def test_nasdaq_com_dollar_prices_and_close_last(tmp_path: Path) -> None:
    days = (2, 3, 4, 5, 8)
    text = "Date,Close/Last,Volume,Open,High,Low\n" + "".join(
        f"01/{d:02d}/2024,$185.{d:02d},4567{d},$184.00,$186.00,$183.50\n" for d in reversed(days)
    )
    bars = read_bars(_write(tmp_path, "AAPL.csv", text), min_bars=1)
    assert bars["close"].to_list() == [185.02, 185.03, 185.04, 185.05, 185.08]
    assert bars["open"].to_list() == [184.0] * 5 and bars["volume"].to_list()[0] == 45672.0


def test_bloomberg_px_names(tmp_path: Path) -> None:
    text = "Dates,PX_OPEN,PX_HIGH,PX_LOW,PX_LAST,PX_VOLUME\n" + "".join(
        f"2024-01-02 09:{m}:00,4700.25,4701,4699.5,4700,{m}\n" for m in MINUTES
    )
    bars = read_bars(_write(tmp_path, "ES.csv", text), min_bars=1)
    assert bars["ts"].to_list() == [_utc(9, m) for m in MINUTES]
    assert bars["close"].to_list() == [4700.0] * 6 and bars["volume"].to_list() == list(MINUTES)


def test_a_trailing_delimiter_is_no_time_column(tmp_path: Path) -> None:
    """Its unnamed last column is empty: the time is the ``Date`` column (the unnamed column
    was once taken for pandas' index, and every time read as null)."""
    text = "Date\tOpen\tHigh\tLow\tClose\tVolume\t\r\n" + "".join(
        f"2024-01-02 09:{m}\t4700.25\t4701\t4699.5\t4700\t{m}\t\r\n" for m in MINUTES
    )
    assert _minutes(_write(tmp_path, "ES.txt", text)) == [_utc(9, m) for m in MINUTES]


def test_interactive_brokers_zone_after_each_time(tmp_path: Path) -> None:
    text = "date,open,high,low,close,volume\n" + "".join(
        f"20240102 09:{m}:00 US/Eastern,4700.25,4701,4699.5,4700,{m}\n" for m in MINUTES
    )
    path = _write(tmp_path, "ES.csv", text)
    assert _minutes(path) == [_utc(14, m) for m in MINUTES]  # 09:30 New York is 14:30 UTC
    assert _minutes(path, tz="Asia/Tokyo") == [_utc(14, m) for m in MINUTES]  # the file's zone
    other = text.replace("09:33:00 US/Eastern", "09:33:00 Europe/London")
    with pytest.raises(DataError, match=r"row 3: unparsable timestamp '20240102 09:33:00 Europe"):
        read_bars(_write(tmp_path, "ES.csv", other), min_bars=1)


def test_sierra_chart_spaces_after_the_commas_and_last(tmp_path: Path) -> None:
    text = "Date, Time, Open, High, Low, Last, Volume, NumberOfTrades, BidVolume, AskVolume\n" + (
        "".join(
            f"2024/1/2, 09:{m}:00.000, 4700.25, 4701, 4699.5, 4700, {m}, 5, 2, 3\n" for m in MINUTES
        )
    )
    bars = read_bars(_write(tmp_path, "ES.txt", text), min_bars=1)
    assert bars["ts"].to_list() == [_utc(9, m) for m in MINUTES]
    assert bars["close"].to_list() == [4700.0] * 6


@pytest.mark.parametrize(
    ("suffix", "hour"),
    [
        (" UTC", 9),  # BigQuery's CSV export
        (" GMT", 9),
        (" +0000", 9),  # a space before the offset
        (" Z", 9),
        (" -05:00", 14),
        (" +0000 UTC", 9),  # Go's time.String()
    ],
)
def test_times_with_a_spelt_out_zone_or_a_spaced_offset(
    tmp_path: Path, suffix: str, hour: int
) -> None:
    text = "ts,open,high,low,close,volume\n" + "".join(
        f"2024-01-02 09:{m}:00{suffix},4700.25,4701,4699.5,4700,{m}\n" for m in MINUTES
    )
    assert _minutes(_write(tmp_path, "ES.csv", text), tz="Asia/Tokyo") == [
        _utc(hour, m) for m in MINUTES
    ]


def test_a_zone_abbreviation_is_not_guessed(tmp_path: Path) -> None:
    """``EST`` is New York time to most vendors and UTC-5 to the zone database: refused by row,
    and read with the spelling and zone given."""
    text = "ts,open,high,low,close,volume\n" + "".join(
        f"2024-07-02 09:{m}:00 EST,4700.25,4701,4699.5,4700,{m}\n" for m in MINUTES
    )
    path = _write(tmp_path, "ES.csv", text)
    with pytest.raises(DataError, match=r"row 0: unparsable timestamp '2024-07-02 09:30:00 EST'"):
        read_bars(path, min_bars=1)
    opts = ReadOptions(ts_format="%Y-%m-%d %H:%M:%S EST", tz="America/New_York")
    got = read_bars(path, options=opts, min_bars=1)["ts"].to_list()
    assert got == [datetime(2024, 7, 2, 13, m, tzinfo=UTC) for m in MINUTES]  # EDT in July


@pytest.mark.parametrize("spelling", ["20240102T09{m}00", "20240102T09{m}"])
def test_iso_basic_format(tmp_path: Path, spelling: str) -> None:
    """ISO 8601's basic format (no separators), as some APIs write it."""
    text = "ts,open,high,low,close,volume\n" + "".join(
        f"{spelling.format(m=m)},4700.25,4701,4699.5,4700,{m}\n" for m in MINUTES
    )
    assert _minutes(_write(tmp_path, "ES.csv", text)) == [_utc(9, m) for m in MINUTES]


@pytest.mark.parametrize(
    ("header", "stamp"),
    [
        ("t,o,h,l,c,v,n,vw", "{ms},4700.25,4701,4699.5,4700,{m},7,4700"),  # Polygon, Alpaca
        ("Open time,Open,High,Low,Close,Volume,Close time", "{iso},4700.25,4701,4699.5,4700,{m},x"),
        ("window_start,open,high,low,close,volume", "{ns},4700.25,4701,4699.5,4700,{m}"),
        (  # Bybit's klines
            "startTime,openPrice,highPrice,lowPrice,closePrice,volume,turnover",
            "{ms},4700.25,4701,4699.5,4700,{m},1",
        ),
        (
            "time_period_start;time_period_end;price_open;price_high;price_low;price_close;"
            "volume_traded",
            "{iso}.0000000Z;x;4700.25;4701;4699.5;4700;{m}",  # CoinAPI
        ),
    ],
)
def test_timestamp_names_of_data_apis(tmp_path: Path, header: str, stamp: str) -> None:
    """Polygon's and Alpaca's ``t``, Binance's spreadsheet ``Open time``, Polygon's flat files'
    ``window_start`` (epoch ns), CoinAPI's ``time_period_start`` and ``price_*`` names."""
    rows = []
    for m in MINUTES:
        at = _utc(9, m)
        ms = int(at.timestamp()) * 1000
        iso = at.strftime("%Y-%m-%dT%H:%M:%S")
        rows.append(stamp.format(ms=ms, ns=ms * 10**6, iso=iso, m=m) + "\n")
    bars = read_bars(_write(tmp_path, "ES.csv", header + "\n" + "".join(rows)), min_bars=1)
    assert bars["ts"].to_list() == [_utc(9, m) for m in MINUTES]
    assert bars["close"].to_list() == [4700.0] * len(MINUTES)
    assert bars["volume"].to_list() == [float(m) for m in MINUTES]


@pytest.mark.parametrize(
    ("name", "hour"),
    [
        ("Time (UTC)", 9),
        ("Time (GMT+2)", 7),
        ("Time (EET)", 7),
        ("TIMESTAMP (UTC-5)", 14),
        ("Time (ET)", 14),  # New York's clock, daylight saving included
        ("Time (CT)", 15),
    ],
)
def test_a_zone_in_brackets_after_the_time_column_name(
    tmp_path: Path, name: str, hour: int
) -> None:
    """Exports that name their clock in the header (Dukascopy's ``Time (EET)``): the naive
    times are read in that zone, and ``--tz`` still wins."""
    text = f"{name},Open,High,Low,Close,Volume\n" + "".join(
        f"2024.01.02 09:{m}:00,4700.25,4701,4699.5,4700,{m}\n" for m in MINUTES
    )
    path = _write(tmp_path, "ES.csv", text)
    assert _minutes(path) == [_utc(hour, m) for m in MINUTES]
    opts = ReadOptions(tz="UTC")
    assert _minutes(path, options=opts) == [_utc(9, m) for m in MINUTES]


def test_a_date_column_and_a_time_column_naming_its_zone(tmp_path: Path) -> None:
    text = "Date,Time (GMT+1),Open,High,Low,Close\n" + "".join(
        f"02/01/2024,09:{m},4700.25,4701,4699.5,4700\n" for m in MINUTES
    )
    assert _minutes(_write(tmp_path, "ES.csv", text), dayfirst=True) == [
        _utc(8, m) for m in MINUTES
    ]


def test_a_bracketed_zone_that_is_no_zone_is_refused_naming_the_column(tmp_path: Path) -> None:
    """``Exchange`` is no zone: refused, not read as UTC."""
    text = "Time (Exchange),Open,High,Low,Close\n2024-01-02 09:30:00,1,1,1,1\n"
    with pytest.raises(
        DataError, match=r"ES.csv: column 'Time \(Exchange\)' names the zone 'Exchange'.*--tz"
    ):
        read_bars(_write(tmp_path, "ES.csv", text), min_bars=1)


def test_brackets_after_a_volume_name_are_its_unit_not_a_zone(tmp_path: Path) -> None:
    """``Volume (BTC)`` is the volume in its unit: read as the volume, not taken for a time."""
    text = "Date (UTC),Open,High,Low,Close,Volume (BTC)\n2024-01-02 09:30,1,1,1,1,5\n"
    bars = read_bars(_write(tmp_path, "ES.csv", text), min_bars=1)
    assert bars["volume"].to_list() == [5.0]
    assert bars["ts"].to_list() == [_utc(9, 30)]


def test_the_first_volume_named_with_its_unit_is_the_volume(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """CryptoDataDownload: a link above the header, ``Volume BTC`` (the base currency's,
    first) beside ``Volume USD``; a plain ``Volume`` column wins over both."""
    text = (
        "https://www.CryptoDataDownload.com\nunix,date,symbol,open,high,low,close,Volume BTC,Volume USD\n"
        + "".join(
            f"{1704187800 + 60 * i},2024-01-02 09:3{i}:00,BTC/USD,45216,45300,45200,45250,0.{i + 1},{(i + 1) * 4525}\n"
            for i in range(3)
        )
    )
    with caplog.at_level(logging.WARNING):
        bars = read_bars(_write(tmp_path, "Bitstamp_BTCUSD_minute.csv", text), min_bars=1)
    assert bars["volume"].to_list() == [0.1, 0.2, 0.3]
    assert "no volume column" not in caplog.text
    plain = text.replace("Volume USD", "Volume")
    bars = read_bars(_write(tmp_path, "plain.csv", plain), min_bars=1)
    assert bars["volume"].to_list() == [4525.0, 9050.0, 13575.0]


@pytest.mark.parametrize(
    "header",
    [
        "<TICKER>,<PER>,<DTYYYYMMDD>,<TIME>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>",  # MetaStock
        "Ticker,Per,Date_YMD,Time,Open,High,Low,Close,Volume",  # AmiBroker
        "Ticker,Per,Trade Date,Time,Open,High,Low,Close,Volume",  # CME DataMine
    ],
)
def test_date_column_names_of_metastock_amibroker_and_datamine(tmp_path: Path, header: str) -> None:
    """Was read as the time column alone: ``093000`` taken for epoch seconds in 1970."""
    text = (
        header
        + "\n"
        + "".join(f"ES,I,20240102,09{m}00,4700.25,4701,4699.5,4700,{m}\n" for m in MINUTES)
    )
    assert _minutes(_write(tmp_path, "bars.csv", text)) == [_utc(9, m) for m in MINUTES]


@pytest.mark.parametrize(
    ("stamp", "rows"),
    [
        # Dukascopy's Local time: Europe/Berlin's offset changes on 31 March 2024
        (
            "{d}.03.2024 {h}:{m}:00.000 GMT+0{o}00",
            [(30, 9, 1, 8), (31, 9, 2, 7), (31, 9, 2, 7)],
        ),
        ("03/{d}/2024 {h}:{m} -05:00", [(30, 9, 5, 14), (31, 9, 5, 14), (31, 10, 5, 15)]),
    ],
)
def test_a_trailing_offset_after_a_vendor_date_is_applied_row_by_row(
    tmp_path: Path, stamp: str, rows: list[tuple[int, int, int, int]]
) -> None:
    lines, want = [], []
    for i, (day, hour, offset, utc_hour) in enumerate(rows):
        lines.append(stamp.format(d=day, h=f"{hour:02d}", m=30 + i, o=offset) + ",1,1,1,1\n")
        want.append(datetime(2024, 3, day, utc_hour, 30 + i, tzinfo=UTC))
    path = _write(tmp_path, "ES.csv", "Local time,Open,High,Low,Close\n" + "".join(lines))
    got = read_bars(path, min_bars=1, options=ReadOptions(allow_odd_times=True))
    assert got["ts"].to_list() == want


def test_a_row_without_the_offset_the_others_have_is_named(tmp_path: Path) -> None:
    text = "Local time,Open,High,Low,Close\n" + "".join(
        f"02.01.2024 09:{m}:00.000{'' if m == 32 else ' GMT+0100'},1,1,1,1\n" for m in MINUTES
    )
    with pytest.raises(DataError, match=r"row 2: unparsable timestamp '02.01.2024 09:32:00.000'"):
        read_bars(_write(tmp_path, "ES.csv", text), min_bars=1)


@pytest.mark.parametrize("name", ["Date/Time", "Time Stamp", "Timestamp UTC", "DATE-TIME"])
def test_a_timestamp_name_with_other_separators(tmp_path: Path, name: str) -> None:
    """AmiBroker's ``Date/Time`` and other spellings of the timestamp names."""
    text = f"Ticker,{name},Open,High,Low,Close,Volume\n" + "".join(
        f"ES,2024-01-02 09:{m}:00,4700.25,4701,4699.5,4700,{m}\n" for m in MINUTES
    )
    assert _minutes(_write(tmp_path, "bars.csv", text)) == [_utc(9, m) for m in MINUTES]


def test_a_one_letter_t_is_only_a_time_as_written(tmp_path: Path) -> None:
    """``T.`` is no spelling of ``t``: the file has no timestamp and says so."""
    text = "T.,o,h,l,c\n1704187800000,1,1,1,1\n"
    with pytest.raises(DataError, match=r"missing column 'ts'"):
        read_bars(_write(tmp_path, "ES.csv", text), min_bars=1)


YF_ROWS = [
    "2024-01-02 14:30:00+00:00,184.96,185.03,184.95,185.0,3759",
    "2024-01-02 14:31:00+00:00,185.01,185.04,184.94,184.96,2048",
]


@pytest.mark.parametrize("index", ["Datetime", "Date"])
def test_a_yfinance_download_with_its_columns_in_levels(tmp_path: Path, index: str) -> None:
    """yfinance 0.2.51+ saves ``Price`` and ``Ticker`` header rows, then the index's name."""
    text = (
        "Price,Close,High,Low,Open,Volume\nTicker,AAPL,AAPL,AAPL,AAPL,AAPL\n"
        f"{index},,,,,\n" + "\n".join(YF_ROWS) + "\n"
    )
    path = _write(tmp_path, "prices.csv", text)
    fields = ("Close", "High", "Low", "Open", "Volume")
    # the ticker kept as parquet's levels are named: the symbol (since session 54; the file's
    # name was, "PRICES" here, Toyota's 7203.T a company name on 24x7)
    assert sniff_csv(path).names == (f"('{index}', '')", *(f"('{f}', 'AAPL')" for f in fields))
    bars = read_bars(path, min_bars=1)
    assert bars["symbol"].unique().to_list() == ["AAPL"]
    assert bars["ts"].to_list() == [_utc(14, 30), _utc(14, 31)]
    assert bars["open"].to_list() == [185.0, 184.96] and bars["close"][0] == 184.96
    assert bars["volume"].to_list() == [3759.0, 2048.0]


def test_a_yfinance_download_keeps_its_first_bars_however_long_it_is(tmp_path: Path) -> None:
    """The first bar's line is counted from the top of the levels: with more than a few bars
    in the sniffed sample, a line counted from its end skipped the first bars."""
    rows = [
        f"2024-01-02 14:{m}:00+00:00,185.{m},185.9,184.1,185.0,{1000 + m}" for m in range(30, 42)
    ]
    text = "Price,Close,High,Low,Open,Volume\nTicker,AAPL,AAPL,AAPL,AAPL,AAPL\nDatetime,,,,,\n"
    path = _write(tmp_path, "AAPL.csv", text + "\n".join(rows) + "\n")
    bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == [_utc(14, m) for m in range(30, 42)]
    assert bars["volume"].to_list() == [1000.0 + m for m in range(30, 42)]


def test_a_yfinance_download_of_several_tickers_is_refused_saying_what_to_do(
    tmp_path: Path,
) -> None:
    text = (
        "Price,Close,Close,Open,Open\nTicker,AAPL,MSFT,AAPL,MSFT\nDatetime,,,,\n"
        "2024-01-02 14:30:00+00:00,1,2,1,2\n"
    )
    with pytest.raises(
        DataError,
        match=r"AAPL.csv: columns in levels hold several Ticker \(AAPL, MSFT\): save one per file",
    ):
        read_bars(_write(tmp_path, "AAPL.csv", text), min_bars=1)


def test_a_first_bar_without_prices_is_no_index_name(tmp_path: Path) -> None:
    """A header, then a bar whose prices are empty, is a plain table (its row dropped)."""
    text = "Date,Open,High,Low,Close,Volume\n2024-01-01,,,,,\n2024-01-02,1,1,1,1,5\n"
    path = _write(tmp_path, "ES.csv", text)
    assert sniff_csv(path).has_header
    assert read_bars(path, min_bars=1)["volume"].to_list() == [5.0]


def test_six_digit_dates_are_dates_not_epoch_seconds(tmp_path: Path) -> None:
    """MetaStock's and CSI's old ``YYMMDD`` (``240102``) read as epoch seconds in January
    1970, and the file was refused as "before 1980"."""
    days = ["240102", "240103", "240104", "240105"]
    text = "".join(f"{d},4770,4770.75,4767.5,4768.25,{i + 1}\n" for i, d in enumerate(days))
    bars = read_bars(_write(tmp_path, "ES.txt", text), min_bars=1)
    assert bars["ts"].to_list() == [datetime(2024, 1, d, tzinfo=UTC) for d in (2, 3, 4, 5)]


@pytest.mark.parametrize(
    ("header", "clock"),
    [("Date,Time,", "09{m}"), ("<DATE>,<TIME>,", "09{m}00"), ("Date,Time,", "09:{m}")],
)
def test_six_digit_dates_with_a_time_column(tmp_path: Path, header: str, clock: str) -> None:
    """``240102,0930`` (MetaStock's and CSI's intraday exports): the date as a date-only file
    reads it, the time beside it; was refused as an unparsable ``'240102 0930'``."""
    rows = "".join(f"240102,{clock.format(m=m)},4700.25,4701,4699.5,4700,{m}\n" for m in MINUTES)
    text = header + "Open,High,Low,Close,Volume\n" + rows
    assert _minutes(_write(tmp_path, "ES.csv", text)) == [_utc(9, m) for m in MINUTES]


def test_a_futures_settle_is_the_close_over_the_last_trade(tmp_path: Path) -> None:
    """Quandl's CHRIS files keep the last trade and the settlement price: the settlement is the
    day's official close (the truth of session 40's sweep read 'Last'); 'Close' still wins."""
    head = "Date,Open,High,Low,Last,Change,Settle,Volume,Previous Day Open Interest\n"
    rows = "".join(
        f"2024-01-0{d},72.1,73.0,71.5,72.4{d},0.3,72.5{d},30000{d},250000\n" for d in (2, 3, 4, 5)
    )
    bars = read_bars(_write(tmp_path, "CHRIS-CME_CL1.csv", head + rows), min_bars=1)
    assert bars["close"].to_list() == [72.52, 72.53, 72.54, 72.55]
    text = "Date,Open,High,Low,Close,Settlement Price,Volume\n" + "".join(
        f"2024-01-0{d},72.1,73.0,71.5,72.4{d},72.5{d},300\n" for d in (2, 3, 4, 5)
    )
    assert read_bars(_write(tmp_path, "CL.csv", text), min_bars=1)["close"][0] == 72.42
    text = text.replace(",Close,", ",Last,")
    assert read_bars(_write(tmp_path, "CL.csv", text), min_bars=1)["close"][0] == 72.52


def test_a_settle_outside_the_days_range_names_the_last_trade(tmp_path: Path) -> None:
    """A deferred month's settlement above the day's high (Quandl's CHRIS ``ES2``): refused,
    naming the settlement as what was read and ``--columns close=Last`` (it named neither)."""
    head = "Date,Open,High,Low,Last,Change,Settle,Volume,Previous Day Open Interest\n"
    rows = "".join(
        f"2024-01-0{d},4800,4809,4795,4805,3,{4812.5 if d == 4 else 4806},1000,250000\n"
        for d in (2, 3, 4, 5)
    )
    path = _write(tmp_path, "CHRIS-CME_ES2.csv", head + rows)
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value).endswith(
        "high 4809.0 < max(open, close) 4812.5 (the close was read from 'Settle', a settlement "
        "price, which may fall outside the day's range; --columns close=Last reads the last "
        "trade as the close)"
    )
    last = read_bars(path, min_bars=1, options=ReadOptions(columns=("close=Last",)))
    assert last["close"].to_list() == [4805.0] * 4


# --- session 42's sweep: vendor layouts read wrong without a word ------------------------------


def _german(volumes: list[str]) -> str:
    head = "Date;Time;Open;High;Low;Close;Volume\n"
    return head + "".join(
        f"02.01.2024;09:{m};4.700;4.701;4.699;4.700;{v}\n"
        for m, v in zip(MINUTES, volumes, strict=True)
    )


def test_points_between_thousands_in_whole_prices_without_a_decimal_comma(
    tmp_path: Path,
) -> None:
    """A German export of a future with a whole-point tick: ``4.700`` is 4,700 and the volumes
    ``5.044`` beside ``820`` give it away (every dotted number in threes, none above 999 without
    its point); they were read as 4.7 and 5.044."""
    volumes = ["5.044", "820", "1.210", "99", "12.000", "7"]
    bars = read_bars(_write(tmp_path, "FESX.csv", _german(volumes)), min_bars=1)
    assert bars["open"].to_list() == [4700.0] * 6
    assert bars["volume"].to_list() == [5044.0, 820.0, 1210.0, 99.0, 12000.0, 7.0]


def test_three_decimals_beside_a_whole_number_of_four_digits_stay_decimals(
    tmp_path: Path,
) -> None:
    """``5044`` without its point beside ``1.210`` in one column: the points are decimals."""
    volumes = ["5044", "820", "1.210", "99", "12.000", "7"]
    bars = read_bars(_write(tmp_path, "FESX.csv", _german(volumes)), min_bars=1)
    assert bars["open"].to_list() == [4.7] * 6


def test_three_decimals_and_nothing_else_to_tell_are_refused_naming_decimal(
    tmp_path: Path,
) -> None:
    """USDJPY's ``151.234`` in a semicolon file looks like a German whole number (``4.700``):
    with nothing else to tell (session 42's second sweep: a German YM file without volume was
    read a thousand times too small), the read stops naming ``--decimal``, which reads it."""
    path = _write(tmp_path, "FESX.csv", _german(["820", "99", "7", "15", "300", "42"]))
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value) == (
        f"{path}: every number with a point has three digits after it ('4.700'), and nothing "
        "in the first lines tells a decimal point from points between thousands (a German "
        "export's '4.700' is 4700); --decimal point or --decimal comma says which"
    )
    point = read_bars(path, min_bars=1, options=ReadOptions(decimal="point"))
    assert point["open"].to_list() == [4.7] * 6
    comma = read_bars(path, min_bars=1, options=ReadOptions(decimal="comma"))
    assert comma["open"].to_list() == [4700.0] * 6
    assert comma["volume"].to_list() == [820.0, 99.0, 7.0, 15.0, 300.0, 42.0]
    with pytest.raises(DataError, match="--decimal must be point or comma, got 'dot'"):
        ReadOptions(decimal="dot")


def test_runs_of_blanks_between_date_and_time_are_one_space(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The IB API writes ``20180305  09:30:00``: read by polars' own parser it was not taken for
    a naive time, so nothing said it was read as UTC and the zone rules never ran (a New York
    file read 5 hours early, valid)."""
    one = "".join(f"20240102 09:{m}:00,4700.25,4701,4699.5,4700,{m}\n" for m in MINUTES)
    head = "date,open,high,low,close,volume\n"
    expected = [_utc(14, m) for m in MINUTES]
    for name, text in (("ES.csv", one), ("ES2.csv", one.replace(" ", "  "))):
        path = _write(tmp_path, name, head + text)
        assert _minutes(path, tz="America/New_York") == expected
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            _minutes(path)
        assert f"naive timestamps in {path} taken as UTC" in caplog.text


def test_a_moving_average_of_the_volume_is_not_the_volume(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """TradingView's chart export with its ``Volume MA`` study and no volume: volume 0 and the
    usual warning, not a 20-bar average read as the volume."""
    text = "time,open,high,low,close,Volume MA\n" + "".join(
        f"2024-01-02T09:{m}:00Z,4700.25,4701,4699.5,4700,{500 + m}.35\n" for m in MINUTES
    )
    with caplog.at_level(logging.WARNING):
        bars = read_bars(_write(tmp_path, "ES.csv", text), min_bars=1)
    assert bars["volume"].to_list() == [0.0] * 6
    assert "no volume column" in caplog.text
    units = "time,open,high,low,close,Volume BTC,Volume USD\n" + "".join(
        f"2024-01-02T09:{m}:00Z,4700.25,4701,4699.5,4700,{m},{m * 4700}\n" for m in MINUTES
    )
    kept = read_bars(_write(tmp_path, "BTCUSD.csv", units), min_bars=1)
    assert kept["volume"].to_list() == [float(m) for m in MINUTES]


def test_refinitiv_ric_is_the_symbol_column(tmp_path: Path) -> None:
    """Tick History's ``#RIC``: two contracts at the same times are two series (were refused as
    duplicate bars, or joined into one series when one followed the other)."""
    text = "#RIC,Date-Time,Open,High,Low,Last,Volume\n" + "".join(
        f"{ric},2024-01-02T14:{m}:00.000000000Z,4700.25,4701,4699.5,4700,{m}\n"
        for ric in ("ESH4", "ESM4")
        for m in MINUTES
    )
    bars = read_bars(_write(tmp_path, "ES_trth.csv", text), min_bars=1)
    assert sorted(set(bars["symbol"].to_list())) == ["ESH4", "ESM4"]
    assert bars.height == 12


def test_a_contract_column_is_the_symbol_column(tmp_path: Path) -> None:
    """A futures export's ``Contract`` column (CQG's ``F.US.EPH24``): one series per contract,
    each ES (were joined into one series of the file name's symbol across the roll)."""
    text = "Contract,Date,Time,Open,High,Low,Close,Volume\n" + "".join(
        f"{c},2024-03-0{d},14:{m}:00,4700.25,4701,4699.5,4700,{m}\n"
        for c, d in (("F.US.EPH24", 4), ("F.US.EPM24", 5))
        for m in MINUTES
    )
    bars = read_bars(_write(tmp_path, "es_cqg.csv", text), min_bars=1)
    assert sorted(set(bars["symbol"].to_list())) == ["F.US.EPH24", "F.US.EPM24"]
    assert bars.height == 12
    named = text.replace("Contract,", "Symbol,Contract,").replace("F.US.EP", "ES,F.US.EP")
    assert set(read_bars(_write(tmp_path, "es_two.csv", named), min_bars=1)["symbol"]) == {"ES"}


def test_bloomberg_na_rows_are_dropped_and_a_dash_volume_is_zero(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``#N/A N/A`` on every field of a holiday (Bloomberg) is a row without a bar, as Yahoo's
    ``null`` rows are; Investing.com's ``-`` for a volume it lacks reads as 0 with the warning
    (both were refused as "not a number")."""
    rows = [f"2024-01-0{d},4770,4771,4768,4769,{d}00\n" for d in (2, 3, 5)]
    rows.insert(2, "2024-01-04,#N/A N/A,#N/A N/A,#N/A N/A,#N/A N/A,#N/A N/A\n")
    text = "Date,Open,High,Low,Close,Volume\n" + "".join(rows)
    bars = read_bars(_write(tmp_path, "ES.csv", text), min_bars=1)
    assert [t.day for t in bars["ts"].to_list()] == [2, 3, 5]
    dashed = text.replace(",300\n", ",-\n").replace(rows[2], "")
    with caplog.at_level(logging.WARNING):
        vols = read_bars(_write(tmp_path, "ES2.csv", dashed), min_bars=1)["volume"].to_list()
    assert vols == [200.0, 0.0, 500.0]
    assert "volume NaN or empty (not reported) in 1 rows" in caplog.text


def test_tz_given_for_epoch_times_is_said_to_be_unused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """MetaTrader 5's ``copy_rates`` counts epoch seconds on the broker's clock: ``--tz`` cannot
    move epochs (UTC by definition) and was ignored without a word."""
    text = "time,open,high,low,close,tick_volume\n" + "".join(
        f"{1704187800 + 60 * i},1.1,1.2,1.0,1.1,{i}\n" for i in range(6)
    )
    with caplog.at_level(logging.WARNING):
        ts = _minutes(_write(tmp_path, "EURUSD.csv", text), tz="Europe/Athens")
    assert ts[0] == datetime(2024, 1, 2, 9, 30, tzinfo=UTC)  # as written: UTC
    assert "--tz Europe/Athens not applied: column 'time' holds epoch times" in caplog.text
    assert "--tz Europe/Athens --force-tz reads the clock they show in UTC" in caplog.text
    # the broker's clock: 09:30 in Athens, 07:30 UTC (session 57)
    forced_tz = ReadOptions(tz="Europe/Athens", force_tz=True)
    forced = _minutes(tmp_path / "EURUSD.csv", options=forced_tz)
    assert forced[0] == datetime(2024, 1, 2, 7, 30, tzinfo=UTC)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        _minutes(tmp_path / "EURUSD.csv")
    assert "not applied" not in caplog.text


@pytest.mark.parametrize(
    "header",
    [
        '"Datum","Zuletzt","Eröffn.","Hoch","Tief","Vol.","+/- %"',  # de.investing.com
        '"Date","Dernier","Ouv."," Plus Haut","Plus Bas","Vol.","Variation %"',  # fr.
        '"Fecha","Último","Apertura","Máximo","Mínimo","Vol.","% var."',  # es.
        '"Data","Ultimo","Apertura","Massimo","Minimo","Vol.","Var. %"',  # it.
    ],
)
def test_a_localized_investing_export_with_quoted_decimal_commas(
    tmp_path: Path, header: str
) -> None:
    """Investing.com in German, French, Spanish, Italian: the names in the site's language, and
    ``"16.751,64"`` quoted in a comma-delimited file (was "missing column 'open'", and with
    ``--columns`` every price "not a number")."""
    rows = [
        '"05.01.2024","16.751,64","16.725,53","16.783,39","16.695,37","51,34M","0,28%"',
        '"04.01.2024","16.704,56","16.650,10","16.749,95","16.600,00","60,12M","-0,10%"',
    ]
    bars = read_bars(_write(tmp_path, "DAX.csv", "\n".join([header, *rows]) + "\n"), min_bars=1)
    assert bars["ts"].to_list() == [datetime(2024, 1, d, tzinfo=UTC) for d in (4, 5)]
    assert bars["close"].to_list() == [16704.56, 16751.64]
    assert bars["open"].to_list() == [16650.10, 16725.53]
    assert bars["volume"].to_list() == [60.12e6, 51.34e6]


def test_excel_serial_dates_are_days_since_1899(tmp_path: Path) -> None:
    """A sheet saved as CSV without its date format: ``43102.39583`` is 2 January 2018 09:30
    (read as epoch seconds, every bar fell on 1 January 1970 and was refused as a duplicate)."""
    serials = [43102 + (9 * 60 + 30 + m) / 1440 for m in range(6)]
    text = "timestamp,open,high,low,close,volume\n" + "".join(
        f"{s:.5f},2700.25,2701,2699.75,2700.5,{i}\n" for i, s in enumerate(serials)
    )
    ts = _minutes(_write(tmp_path, "ES.csv", text), tz="America/New_York")
    assert ts == [datetime(2018, 1, 2, 14, 30 + m, tzinfo=UTC) for m in range(6)]
    daily = "Date,Open,High,Low,Close\n" + "".join(
        f"{43102 + d},2700.25,2701,2699.75,2700.5\n" for d in range(3)
    )
    assert _minutes(_write(tmp_path, "ES_daily.csv", daily)) == [
        datetime(2018, 1, d, tzinfo=UTC) for d in (2, 3, 4)
    ]


def test_a_dataframes_range_index_written_as_text_is_no_time(tmp_path: Path) -> None:
    """``df.to_csv()`` of ib_insync's bars: ``,date,open,...`` then ``0,2018-03-05 09:30:00-05:00``;
    the unnamed column counting 0, 1, 2 was taken for the time (epoch seconds of 1970)."""
    text = ",date,open,high,low,close,volume,average,barCount\n" + "".join(
        f"{i},2024-01-02 09:{m}:00-05:00,4700.25,4701,4699.5,4700,{m},4700.1,9\n"
        for i, m in enumerate(MINUTES)
    )
    assert _minutes(_write(tmp_path, "ES.csv", text)) == [_utc(14, m) for m in MINUTES]


def test_coinmarketcaps_bars_are_stamped_at_their_open(tmp_path: Path) -> None:
    """Its ``timestamp`` is the close (23:59:59.999); ``timeOpen`` is the bar's start."""
    text = "timeOpen;timeClose;name;open;high;low;close;volume;marketCap;timestamp\n" + "".join(
        f"2022-01-0{d}T00:00:00.000Z;2022-01-0{d}T23:59:59.999Z;2781;47300.0;47990.0;46650.0;"
        f"47320.0;1.2e9;8.9e11;2022-01-0{d}T23:59:59.999Z\n"
        for d in (3, 2, 1)
    )
    bars = read_bars(_write(tmp_path, "BTCUSD.csv", text), min_bars=1)
    assert bars["ts"].to_list() == [datetime(2022, 1, d, tzinfo=UTC) for d in (1, 2, 3)]


def test_gzip_data_is_read_in_a_zip_and_named_when_the_name_hides_it(tmp_path: Path) -> None:
    """Monthly ``.csv.gz`` files zipped together read as the others do; gzip bytes saved as
    ``.csv`` are named as such (were "a quote opens and does not close on its line 1")."""
    import gzip
    import zipfile

    text = "ts,open,high,low,close,volume\n" + "".join(
        f"2024-01-02T09:{m}:00Z,4700.25,4701,4699.5,4700,{m}\n" for m in MINUTES
    )
    with zipfile.ZipFile(tmp_path / "ES_2024.zip", "w") as z:
        z.writestr("ES_2024-01.csv.gz", gzip.compress(text.encode()))
    assert _minutes(tmp_path / "ES_2024.zip") == [_utc(9, m) for m in MINUTES]
    (tmp_path / "ES.csv").write_bytes(gzip.compress(text.encode()))
    with pytest.raises(DataError, match=r"ES.csv: the file holds gzip-compressed data, though"):
        read_bars(tmp_path / "ES.csv", min_bars=1)


def test_lines_ending_in_a_carriage_return_alone(tmp_path: Path) -> None:
    """Excel for Mac's "CSV (Macintosh)" ends lines in CR alone: was refused as "a column name
    spans lines"."""
    text = "ts,open,high,low,close,volume\r" + "".join(
        f"2024-01-02T09:{m}:00Z,4700.25,4701,4699.5,4700,{m}\r" for m in MINUTES
    )
    path = tmp_path / "ES.csv"
    path.write_bytes(text.encode())
    bars = read_bars(path, min_bars=1)
    assert bars["ts"].to_list() == [_utc(9, m) for m in MINUTES]
    assert bars["volume"].to_list() == [float(m) for m in MINUTES]


def test_float32_prices_read_back_to_their_digits(tmp_path: Path) -> None:
    """A parquet file of float32 prices: 1325.45 was read as 1325.449951171875 (and XAUUSD's
    tick inferred as 0.009887)."""
    import polars as pl

    from foxhunt.data.market.instruments import infer_tick_size

    prices = [1325.45, 1325.46, 1325.47, 1325.44, 1325.5, 1325.51]
    frame = pl.DataFrame(
        {
            "ts": [_utc(9, m) for m in MINUTES],
            **{k: prices for k in ("open", "high", "low", "close")},
            "volume": [1.0] * 6,
        }
    ).with_columns(pl.col("open", "high", "low", "close").cast(pl.Float32))
    frame.write_parquet(tmp_path / "XAUUSD.parquet")
    bars = read_bars(tmp_path / "XAUUSD.parquet", min_bars=1)
    assert bars["open"].to_list() == prices
    assert infer_tick_size(bars["close"].to_numpy()) == 0.01


def test_a_twelve_hour_clock_without_am_pm_is_refused(tmp_path: Path) -> None:
    """``12:59`` then ``01:00`` (1 pm): read on a 24-hour clock the afternoon fell into the small
    hours of the same day, sorted into place without a word (session 42's second sweep)."""
    clocks = ["11:58", "11:59", "12:00", "12:01", "01:00", "01:01", "01:02"]
    rows = "".join(
        f"{d:02d}/01/2024 {c},4700.25,4701,4699.5,4700,9\n" for d in (2, 3) for c in clocks
    )
    path = _write(tmp_path, "ES.csv", "Date,Open,High,Low,Close,Volume\n" + rows)
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1, tz="America/New_York")
    assert str(refused.value) == (
        f"{path}: column 'Date', row 4: the time goes back to 01:00 within the day on 2 of 2 "
        "days, and every hour is 1-12: a 12-hour clock written without AM/PM; write the times "
        "with AM/PM or on a 24-hour clock"
    )
    # newest first goes back all day long, and a morning on a 24-hour clock never: both read
    newest = "".join(reversed(rows.splitlines(keepends=True)[:4]))
    bars = read_bars(_write(tmp_path, "ES2.csv", "Date,Open,High,Low,Close,Volume\n" + newest))
    assert bars.height == 4


def test_a_symbol_written_in_two_cases_is_one_symbol(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``es`` and ``ES`` in one symbol column were two instruments, each with gaps."""
    rows = "".join(
        f"2024-01-02T09:{m}:00Z,{'es' if m % 3 == 0 else 'ES'},4700.25,4701,4699.5,4700,{m}\n"
        for m in MINUTES
    )
    with caplog.at_level(logging.WARNING):
        bars = read_bars(
            _write(tmp_path, "bars.csv", "ts,symbol,open,high,low,close,volume\n" + rows),
            min_bars=1,
        )
    assert bars["symbol"].to_list() == ["ES"] * 6
    assert "symbol written 'ES' and 'es': read as one symbol, 'ES'" in caplog.text


def test_a_european_export_reads_slashed_dates_day_first(tmp_path: Path) -> None:
    """A French export (semicolons, decimal commas) of one day, ``05/03/2018``: 5 March, as its
    locale writes dates (was read month-first, 3 May, with a warning only)."""
    text = "Date;Ouverture;Plus haut;Plus bas;Clôture;Volume\n" + "".join(
        f"05/03/2018 00:0{m};1,23178;1,23183;1,2316;1,2317;{m}\n" for m in range(6)
    )
    ts = _minutes(_write(tmp_path, "EURUSD.csv", text), tz="UTC")
    assert ts == [datetime(2018, 3, 5, 0, m, tzinfo=UTC) for m in range(6)]


@pytest.mark.parametrize(
    ("header", "prices"),
    [
        ("Date;Ouverture;Plus haut;Plus bas;Clôture;Volume", "2 682,00;2 682,50;2 681,75;2 682,25"),
        (
            "Date;Ouverture;Plus haut;Plus bas;Clôture;Volume",
            "2\u202f682,00;2\u00a0682,50;2 681,75;2 682,25",
        ),
        ("Datum;Eröffnung;Hoch;Tief;Schluss;Volumen", "2'682.00;2'682.50;2'681.75;2'682.25"),
        (
            "Datum;Eröffnung;Hoch;Tief;Schluss;Volumen",
            "2.682,00 €;2.682,50 €;2.681,75 €;2.682,25 €",
        ),
        ("Date;Open;High;Low;Close;Volume", "2682.00 USD;2682.50 USD;2681.75 USD;2682.25 USD"),
    ],
    ids=["french-space", "french-nbsp", "swiss-apostrophe", "euro-sign-after", "usd-after"],
)
def test_spaces_and_apostrophes_between_thousands_and_a_currency_after_the_price(
    tmp_path: Path, header: str, prices: str
) -> None:
    """French ``2 682,25``, Swiss ``2'682.25``, ``2.682,00 €``: were refused as "not a number"
    with no way to read them."""
    text = header + "\n" + "".join(f"05.03.2018 00:0{m};{prices};{m}\n" for m in range(6))
    bars = read_bars(_write(tmp_path, "SPXUSD.csv", text), min_bars=1, tz="UTC")
    assert bars.row(0)[2:6] == (2682.0, 2682.5, 2681.75, 2682.25)
    assert bars["ts"][0] == datetime(2018, 3, 5, tzinfo=UTC)


def test_json_or_a_web_page_named_csv_is_said_for_what_it_is(tmp_path: Path) -> None:
    """An API's JSON saved as ``.csv`` was "missing column 'open' (columns: [{"timestamp"...)";
    a login page saved as ``.csv`` was "missing column 'open'"."""
    (tmp_path / "ES.csv").write_text('[{"timestamp": "2024-01-02T09:30:00Z", "open": 4700.25}]')
    with pytest.raises(DataError, match=r"ES.csv: the file holds JSON, not delimited bars"):
        read_bars(tmp_path / "ES.csv", min_bars=1)
    (tmp_path / "NQ.csv").write_text("\n<!DOCTYPE html>\n<html><body>Sign in</body></html>\n")
    with pytest.raises(DataError) as refused:
        read_bars(tmp_path / "NQ.csv", min_bars=1)
    assert str(refused.value) == (
        f"{tmp_path / 'NQ.csv'}: the file holds a web page (HTML), not bars: a failed download "
        "or a login page? save the data itself (CSV)"
    )


@pytest.mark.parametrize(
    ("header", "hint"),
    [
        (
            "DateTime,BidOpen,BidHigh,BidLow,BidClose,AskOpen,AskHigh,AskLow,AskClose,TickQty",
            " (bid and ask bars: --columns open=BidOpen,high=BidHigh,low=BidLow,close=BidClose "
            "reads the bid side)",
        ),
        (
            "Time,Bid Open,Bid High,Bid Low,Bid Close,Ask Open,Ask High,Ask Low,Ask Close,Volume",
            " (bid and ask bars: --columns 'open=Bid Open,high=Bid High,low=Bid Low,"
            "close=Bid Close' reads the bid side)",
        ),
        (
            "timestamp,open_bid,high_bid,low_bid,close_bid,open_ask,high_ask,low_ask,close_ask",
            " (bid and ask bars: --columns open=open_bid,high=high_bid,low=low_bid,close=close_bid"
            " reads the bid side)",
        ),
        (
            "time,volume,bid.o,bid.h,bid.l,bid.c,mid.o,mid.h,mid.l,mid.c,ask.o,ask.h,ask.l,ask.c",
            " (bid, ask and mid bars: --columns open=mid.o,high=mid.h,low=mid.l,close=mid.c "
            "reads the mid side)",
        ),
    ],
    ids=["fxcm-bid-ask-bars", "spaced-sides", "side-suffix", "oanda-mid"],
)
def test_bid_and_ask_bars_are_said_for_what_they_are(
    tmp_path: Path, header: str, hint: str
) -> None:
    width = header.count(",")
    text = (
        header + "\n" + "".join(f"2024-01-02 09:3{m}:00" + ",1.5" * width + "\n" for m in range(6))
    )
    with pytest.raises(DataError) as refused:
        read_bars(_write(tmp_path, "EURUSD.csv", text), min_bars=1)
    assert str(refused.value).endswith("--columns open=COLUMN names it" + hint)


def test_the_first_bar_with_a_price_at_or_below_zero_is_named(tmp_path: Path) -> None:
    """Crude oil's April 2020: the low of 20 April (-40.32) is named, not the open of the day
    after (-14.00), which the check of the opens found first."""
    rows = [
        "2020-04-17,19.87,20.29,17.31,18.27,501223",
        "2020-04-20,17.73,17.85,-40.32,-37.63,247947",
        "2020-04-21,-14.00,1.00,-16.74,10.01,2288",
    ]
    path = _write(tmp_path, "CLK20.csv", "Date,Open,High,Low,Close,Volume\n" + "\n".join(rows))
    with pytest.raises(
        DataError, match=r"column 'Low', row 1 \(2020-04-20.*non-positive price low"
    ):
        read_bars(path, min_bars=1)


def test_a_header_line_in_another_order_mid_file_is_named_as_such(tmp_path: Path) -> None:
    """Two exports joined with ``cat``, the second with its columns in another order: was
    "unparsable timestamp 'timestamp' (--ts-format names its spelling ...)"."""
    text = (
        "timestamp,open,high,low,close,volume\n"
        "2024-01-02 09:30:00,4700.25,4701,4699.5,4700,5\n"
        "timestamp,high,low,open,close,volume\n"
        "2024-01-02 09:31:00,4701,4699.5,4700.25,4700,6\n"
    )
    path = _write(tmp_path, "ES.csv", text)
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value) == (
        f"{path}: column 'timestamp', row 1: 'timestamp' where a time belongs: a header line in "
        "the middle of the file (files joined with their headers, in another column order?); "
        "read the files apart, or remove that line"
    )


def test_dates_that_read_as_days_of_a_month_or_as_months_are_refused(tmp_path: Path) -> None:
    """``1/1/2012`` ... ``9/1/2012``: nine monthly bars month-first, or nine daily bars of
    January day-first; the shorter span won (nine months read as nine days, a BTC file valid)."""
    rows = "".join(f"{m}/1/2012,1274.75,1329.75,1259.75,1308.25,42\n" for m in range(1, 10))
    path = _write(tmp_path, "BTCUSD.csv", "Date,open,high,low,close,volume\n" + rows)
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value) == (
        f"{path} 'Date': its 9 dates read as days of one month (day-first) or as one day in "
        "each of 9 months in a row (month-first): daily or monthly bars, the dates cannot tell; "
        "--ts-format '%d/%m/%Y' or '%m/%d/%Y' says which"
    )
    monthly = read_bars(path, min_bars=1, options=ReadOptions(ts_format="%m/%d/%Y"))
    assert [t.month for t in monthly["ts"].to_list()] == list(range(1, 10))


def test_a_time_of_24_00_is_the_next_days_midnight(tmp_path: Path) -> None:
    """``24:00:00`` (or ``2400`` in a digits clock) ends a day: the next day's 00:00, on the
    local calendar across a daylight-saving change (was refused as unparsable, with advice to
    pass a --ts-format, which cannot read it either)."""
    rows = [("2024-03-08", "23:00:00"), ("2024-03-08", "24:00:00"), ("2024-03-11", "01:00:00")]
    text = "Date,Time,Open,High,Low,Close,Volume\n" + "".join(
        f"{d},{t},4700.25,4701,4699.5,4700,5\n" for d, t in rows
    )
    got = _minutes(_write(tmp_path, "BTCUSD.csv", text))
    assert got == [datetime(2024, 3, d, h, tzinfo=UTC) for d, h in ((8, 23), (9, 0), (11, 1))]
    digits = text.replace("23:00:00", "2300").replace("24:00:00", "2400").replace("01:00:00", "100")
    assert _minutes(_write(tmp_path, "BTCUSD2.csv", digits)) == got
    dst = text.replace("2024-03-08,24", "2024-03-10,24").replace("2024-03-11", "2024-03-12")
    local = _minutes(_write(tmp_path, "BTCUSD3.csv", dst), tz="America/New_York")
    assert local[1] == datetime(2024, 3, 11, 4, tzinfo=UTC)  # 00:00 EDT, not 24 h after 00:00 EST
    offset = "ts,open,high,low,close\n" + "".join(
        f"2024-01-02T{t}+01:00,1,1,1,1\n" for t in ("22:00:00", "23:00:00", "24:00")
    )
    assert _minutes(_write(tmp_path, "BTCUSD4.csv", offset)) == [
        _utc(21, 0),
        _utc(22, 0),
        _utc(23, 0),
    ]


def test_a_date_column_beside_a_time_column_it_did_not_take_is_named(tmp_path: Path) -> None:
    """AlgoSeek's ``Date`` (``20180301``) and ``TimeBarStart`` (``09:30``): the bars of a day
    collided as duplicates at midnight with no word of the time column."""
    text = "Date,Ticker,TimeBarStart,Open,High,Low,Close,Volume\n" + "".join(
        f"20180301,SPY,09:{m},271.3,271.5,271.2,271.4,{m}\n" for m in MINUTES
    )
    path = _write(tmp_path, "20180301_SPY.csv", text)
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value).endswith(
        "duplicate bar for symbol 'SPY' (same time as "
        f"{path} row 0): column 'Date' gives every bar the same time of day, so the bars of one "
        "day collide; if another column holds the time (column 'TimeBarStart'?), --columns "
        "date=Date,time=COLUMN reads both"
    )
    bars = read_bars(
        path, min_bars=1, tz="America/New_York",
        options=ReadOptions(columns=("date=Date", "time=TimeBarStart")),
    )  # fmt: skip
    assert bars["ts"].to_list() == [datetime(2018, 3, 1, 14, m, tzinfo=UTC) for m in MINUTES]


def test_quantconnect_lean_milliseconds_since_midnight_are_named(tmp_path: Path) -> None:
    """LEAN's minute files count milliseconds from the midnight of the date in their name: read
    as that day's naive times since session 59 (read as epoch seconds, 1970-1972, they were
    refused; before that, the refusal advised a --ts-format, which cannot read them)."""
    text = "".join(f"{60_000 * k},1.2,1.21,1.19,1.205,{k}\n" for k in range(570, 590))
    path = _write(tmp_path, "20180306_eurusd_minute_trade.csv", text)
    bars = read_bars(path, min_bars=1)
    assert bars["ts"][0] == datetime(2018, 3, 6, 9, 30, tzinfo=UTC)
    assert bars["ts"][-1] == datetime(2018, 3, 6, 9, 49, tzinfo=UTC)
    seconds = text.replace("000,1.2,", "001,1.2,")  # not whole thousands: another misread
    with pytest.raises(DataError, match="--ts-format .*reads it right"):
        read_bars(_write(tmp_path, "20180306_x.csv", seconds), min_bars=1)


def test_two_symbols_side_by_side_are_named_as_a_wide_file(tmp_path: Path) -> None:
    """The same names twice (``open,...,close,open,...,close``: NQ dropped, verdict valid) or
    ``ES_open ... NQ_open`` (refused with no word of the symbols)."""
    rows = "".join(f"2024-01-02T14:{m}:00Z,1,2,0.5,1.5,3,4,2.5,3.5\n" for m in MINUTES)
    same = _write(tmp_path, "futures.csv", "ts,open,high,low,close,open,high,low,close\n" + rows)
    with pytest.raises(DataError) as refused:
        read_bars(same, min_bars=1)
    assert str(refused.value) == (
        f"{same}: column 'open' appears more than once in the header: several symbols side by "
        "side under the same names? write one file per symbol, or one table with a symbol "
        "column (--columns open=open_duplicated_0 reads the later one)"
    )
    pandas = _write(
        tmp_path, "p.csv", "ts,open,high,low,close,open.1,high.1,low.1,close.1\n" + rows
    )
    with pytest.raises(DataError, match="column 'open' appears more than once"):
        read_bars(pandas, min_bars=1)
    wide = _write(
        tmp_path,
        "w.csv",
        "ts,ES_open,ES_high,ES_low,ES_close,NQ_open,NQ_high,NQ_low,NQ_close\n" + rows,
    )
    with pytest.raises(DataError) as refused:
        read_bars(wide, min_bars=1)
    assert str(refused.value).endswith(
        "--columns open=COLUMN names it; the columns look like several symbols side by side "
        "(ES, NQ): write one file per symbol, or one table with a symbol column"
    )


def test_a_decimal_comma_first_seen_past_the_sniffed_lines_names_the_flag(
    tmp_path: Path,
) -> None:
    rows = [f"2024-01-02 {9 + m // 60}:{m % 60:02d};46823;46831;46800;46820;5\n" for m in range(70)]
    rows[68] = "2024-01-02 10:08;46821,75;46831;46800;46820;5\n"
    path = _write(tmp_path, "BTCUSDT.csv", "time;open;high;low;close;volume\n" + "".join(rows))
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value).endswith(
        "not a number '46821,75' (a decimal comma? --decimal comma reads the file's numbers so)"
    )
    bars = read_bars(path, min_bars=1, options=ReadOptions(decimal="comma"))
    assert bars["open"][68] == 46821.75


def test_a_comma_before_three_digits_that_does_not_read_names_both_readings(
    tmp_path: Path,
) -> None:
    """Investing.com's export of a won-priced stock: ``"79,900"``, whole prices with thousands
    commas. The hint said only ``--decimal comma``, which reads 79.9: a thousand times too
    small, silently."""
    text = '"Date","Price","Open","High","Low","Vol.","Change %"\n' + "".join(
        f'"01/{d:02d}/2024","79,{d:02d}0","79,700","80,100","78,100","12.45M","0.51%"\n'
        for d in (16, 12, 11, 10, 9, 8)
    )
    path = _write(tmp_path, "SSNLF.csv", text)
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value).endswith(
        "not a number '79,700' (a decimal comma or a comma between thousands? --decimal comma "
        "reads it as 79.7, --decimal point as 79700)"
    )
    bars = read_bars(path, min_bars=1, options=ReadOptions(decimal="point"))
    assert bars["open"].to_list() == [79700.0] * 6


def test_a_date_column_stored_as_midnight_beside_a_time_column(tmp_path: Path) -> None:
    """pandas' ``parse_dates`` or Excel's date cells store the day as a midnight: joined with
    the time it read ``2018-01-01 00:00:00 22:00:00``, refused as unparsable."""
    day = datetime(2024, 1, 2)
    frame = pl.DataFrame(
        {
            "Date": [day] * 6,
            "Time": [f"09:{m}:00" for m in MINUTES],
            "Open": [1.0] * 6, "High": [2.0] * 6, "Low": [0.5] * 6, "Close": [1.5] * 6,
        }
    )  # fmt: skip
    path = tmp_path / "BTCUSD.parquet"
    frame.write_parquet(path)
    assert _minutes(path) == [_utc(9, m) for m in MINUTES]
    text = _write(
        tmp_path, "BTCUSD.csv",
        "Date,Time,Open,High,Low,Close\n"
        + "".join(f"2024-01-02 00:00:00,09:{m}:00,1,2,0.5,1.5\n" for m in MINUTES),
    )  # fmt: skip
    assert _minutes(text) == [_utc(9, m) for m in MINUTES]


def test_a_time_the_zone_skips_is_named_as_skipped(tmp_path: Path) -> None:
    """02:00-02:59 on 11 March 2018 does not exist in New York: the refusal said the time
    'lacks a UTC offset while the column's other timestamps have one' (none has one)."""
    rows = "".join(
        f"2018-03-11 0{h}:{m:02d}:00,1,2,0.5,1.5,3\n" for h in (1, 2, 3) for m in range(0, 60, 15)
    )
    path = _write(tmp_path, "BTCUSD.csv", "timestamp,open,high,low,close,volume\n" + rows)
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1, tz="America/New_York")
    assert str(refused.value) == (
        f"{path}: column 'timestamp', row 4: timestamp '2018-03-11 02:00:00' does not exist in "
        "America/New_York (the hour skipped when daylight saving starts): the file's clock keeps "
        "no daylight saving; --tz with its fixed offset (e.g. -05:00) or UTC reads it"
    )
    assert read_bars(path, min_bars=1, tz="-05:00").height == 12


def test_yfinance_column_levels_written_to_parquet(tmp_path: Path) -> None:
    """``yf.download(...).to_parquet()`` names its columns by two levels, ``('Close', 'AAPL')``:
    refused as missing an open column, with advice (``--columns``) that cannot name them."""
    index = pd.date_range("2024-01-02", periods=6, freq="B", name="Date")
    fields = ("Close", "High", "Low", "Open", "Volume")
    values = {"Close": 185.5, "High": 186.0, "Low": 184.0, "Open": 185.0, "Volume": 1e6}

    def frame(tickers: tuple[str, ...]) -> pd.DataFrame:
        columns = pd.MultiIndex.from_tuples(
            [(f, t) for f in fields for t in tickers], names=["Price", "Ticker"]
        )
        rows = [[values[f] for f in fields for _ in tickers]] * 6
        return pd.DataFrame(rows, index=index, columns=columns)

    one = tmp_path / "aapl.parquet"
    frame(("AAPL",)).to_parquet(one)
    bars = read_bars(one, min_bars=1)
    assert set(bars["symbol"]) == {"AAPL"} and bars["open"].to_list() == [185.0] * 6
    assert bars["ts"][0] == datetime(2024, 1, 2, tzinfo=UTC)
    two = tmp_path / "two.parquet"
    frame(("AAPL", "MSFT")).to_parquet(two)
    with pytest.raises(DataError) as refused:
        read_bars(two, min_bars=1)
    assert str(refused.value) == (
        f"{two}: columns of several tickers side by side (AAPL, MSFT): one table with a symbol "
        "column reads them (pandas: df.stack(level=1).reset_index())"
    )


def test_a_repeated_autumn_hour_read_as_utc_is_named(tmp_path: Path) -> None:
    """Naive Berlin times across 31 October 2021, read as UTC: 02:00-02:59 comes twice, and the
    refusal was a plain 'duplicate bar'."""
    wall = [f"2021-10-30 {h}:{m:02d}:00" for h in (22, 23) for m in range(0, 60, 20)]
    wall += [f"2021-10-31 0{h}:{m:02d}:00" for h in (0, 1, 2, 2, 3) for m in range(0, 60, 20)]
    rows = "".join(f"{w},{i + 1},{i + 2},{i + 0.5},{i + 1.5},3\n" for i, w in enumerate(wall))
    path = _write(tmp_path, "BTCUSD.csv", "timestamp,open,high,low,close,volume\n" + rows)
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value).endswith(
        f"(same time as {path} row 12): 2021-10-31 02:00 happens twice in Europe/Berlin (the "
        "hour repeated when daylight saving ends): local times read as UTC? --tz names their "
        "zone, but naive times cannot say which of the two; write them in UTC or with their "
        "offset"
    )


def test_an_epoch_that_lost_its_digits_in_scientific_notation_is_refused(tmp_path: Path) -> None:
    """Excel writes ``1.64100E+12`` once an epoch column is a number: 6 significant digits of
    13, so hourly bars land on a 10,000 s grid, hours off. Refused naming the lost digits
    (some value is off the whole minute), with or without ``--ts-format epoch-ms``; until
    session 61 the refusal without it suggested the flag, which cannot bring the digits back.
    R's exact ``1.7041536e+12`` (midnights, whole minutes) and every digit written
    (``1.704067200E+09``) are read, with the flag or without (session 61: until then only
    with it, and the refusal without it suggested ``epoch-ms`` for seconds)."""
    start = 1_641_000_000_000
    lossy = "open_time,open,high,low,close,volume\n" + "".join(
        f"{start + i * 3_600_000:.5E},46197,47987,46195,47760,1\n" for i in range(30)
    )
    path = _write(tmp_path, "BTCUSDT.csv", lossy)
    lost = (
        f"{path}: column 'open_time', row 0: timestamp '1.64100E+12' is an epoch in scientific "
        "notation, 6 significant digits of a 13-digit number: the others are lost (a "
        "spreadsheet's number format; bars apart read as one, or hours off): save the column "
        "as whole numbers"
    )
    for options in (None, ReadOptions(ts_format="epoch-ms")):
        with pytest.raises(DataError) as e:
            read_bars(path, min_bars=1, options=options)
        assert str(e.value) == lost
    seconds = "open_time,open,high,low,close,volume\n" + "".join(
        f"{1_641_000_000 + i * 3600:.5E},46197,47987,46195,47760,1\n" for i in range(30)
    )
    with pytest.raises(DataError, match="6 significant digits of a 10-digit number"):
        read_bars(_write(tmp_path, "ETHBTC.csv", seconds), min_bars=1)
    midnight = 1_704_153_600_000  # 2024-01-02 00:00 UTC, written by R as 1.7041536e+12
    exact = "ts,open,high,low,close,volume\n" + "".join(
        f"{midnight + i * 86_400_000:.10g},100,101,99,100.5,10\n" for i in range(30)
    )
    assert "1.7041536e+12" in exact
    for options in (None, ReadOptions(ts_format="epoch-ms")):
        got = read_bars(_write(tmp_path, "ETHUSDT.csv", exact), min_bars=1, options=options)
        assert got["ts"][0] == datetime(2024, 1, 2, tzinfo=UTC) and got.height == 30
    whole = "ts,open,high,low,close,volume\n" + "".join(
        f"{1_704_067_200 + i * 60:.9E},100,101,99,100.5,10\n" for i in range(30)
    )
    assert "1.704067260E+09" in whole  # seconds, every digit written
    got = read_bars(_write(tmp_path, "SOLUSDT.csv", whole), min_bars=1)
    assert got["ts"].to_list() == [
        datetime(2024, 1, 1, tzinfo=UTC) + timedelta(minutes=i) for i in range(30)
    ]


def test_fxcms_tick_quantity_is_the_volume_of_its_bid_bars(tmp_path: Path) -> None:
    """FXCM's ``TickQty`` beside its bid and ask bars: read as the volume with the ``--columns``
    its refusal names (it was left out: volume 0, verdict valid)."""
    text = "DateTime,BidOpen,BidHigh,BidLow,BidClose,AskOpen,AskHigh,AskLow,AskClose,TickQty\n"
    text += "".join(
        f"01/08/2024 {h:02d}:00:00.000,1.1,1.2,1.0,1.15,1.1,1.2,1.0,1.15,{100 + h}\n"
        for h in range(10)
    )
    bid = ReadOptions(columns=("open=BidOpen", "high=BidHigh", "low=BidLow", "close=BidClose"))
    bars = read_bars(_write(tmp_path, "EURUSD_H1.csv", text), options=bid)
    assert bars["volume"].to_list() == [100.0 + h for h in range(10)]


def test_bse_indias_spelt_out_months_and_share_count(tmp_path: Path) -> None:
    """BSE India's price history: ``02-January-2018`` (was refused as unparsable) and the volume
    ``No.of Shares`` (was read past: volume 0)."""
    head = "Date,Open Price,High Price,Low Price,Close Price,WAP,No.of Shares,No. of Trades\n"
    days = (2, 3, 4, 5, 8)
    text = head + "".join(
        f"{d:02d}-January-2018,268.6,269.5,268.1,269.5,268.8,5140{d},1000\n" for d in days
    )
    bars = read_bars(_write(tmp_path, "SPY.csv", text), min_bars=1)
    assert bars["ts"].to_list() == [datetime(2018, 1, d, tzinfo=UTC) for d in days]
    assert bars["volume"].to_list() == [float(f"5140{d}") for d in days]
    assert bars["close"].to_list() == [269.5] * 5


def test_an_hour_column_beside_a_date_stored_as_midnight_or_a_datetime(tmp_path: Path) -> None:
    """A date written ``2024-01-02 00:00:00`` (pandas' ``to_csv`` of a datetime) or stored as a
    datetime in parquet, beside ``Hour``: the date and the hour (a first version took any time
    in the date for the bar's own and refused every day's bars as duplicates); hours stored as
    floats (``9.0``) too."""
    hours = range(24)
    text = "Date,Hour,Open,High,Low,Close,Volume\n" + "".join(
        f"2024-01-02 00:00:00,{h},4700.25,4701,4699.5,4700,1\n" for h in hours
    )
    assert _minutes(_write(tmp_path, "ES.csv", text), tz="UTC") == [_utc(h, 0) for h in hours]
    frame = pl.DataFrame(
        {
            "Date": [datetime(2024, 1, 2)] * 24,
            "Hour": [float(h) for h in hours],
            "Open": 4700.25, "High": 4701.0, "Low": 4699.5, "Close": 4700.0, "Volume": 1.0,
        }
    )  # fmt: skip
    frame.write_parquet(tmp_path / "NQ.parquet")
    assert _minutes(tmp_path / "NQ.parquet", tz="UTC") == [_utc(h, 0) for h in hours]


def test_a_space_aligned_table_is_refused_for_what_it_is(tmp_path: Path) -> None:
    """A ``.prn``-style table: the whole header was one column, and the refusal named
    ``--columns open=COLUMN``, which no column could answer."""
    text = (
        "Date         Time      Open      High       Low     Close    Volume\n"
        "2018-03-05  00:00   2682.00   2687.50   2681.75   2686.50      3350\n"
        "2018-03-05  00:05   2686.75   2687.50   2686.25   2686.75      1650\n"
    )
    with pytest.raises(DataError) as refused:
        read_bars(_write(tmp_path, "ES.txt", text), min_bars=1)
    assert str(refused.value).endswith(
        "ES.txt: one column, 'Date Time Open High Low Close Volume': fields separated by spaces "
        "(a fixed-width table) are not read; save it with commas, semicolons, tabs or '|' "
        "between the fields"
    )


def test_a_units_row_under_the_header_is_named_as_such(tmp_path: Path) -> None:
    """``,USD,USD,USD,USD,Shares`` under the header was "row 0: null timestamp"."""
    text = (
        "Date,Open,High,Low,Close,Volume\n,USD,USD,USD,USD,Shares\n"
        "2018-01-02,268.66,269.58,268.18,269.58,51400000\n"
        "2018-01-03,269.71,271.4,269.71,271.12,51690000\n"
    )
    with pytest.raises(DataError) as refused:
        read_bars(_write(tmp_path, "SPY.csv", text), min_bars=1)
    assert str(refused.value).endswith(
        "SPY.csv: column 'Date', row 0: no timestamp, and 'USD' where a price belongs: a line of "
        "units or notes under the header? remove that line"
    )
    blank = text.replace(",USD,USD,USD,USD,Shares", ",268.1,269.0,268.0,268.5,100")
    with pytest.raises(DataError, match=r"row 0: null timestamp$"):  # a bar without its time
        read_bars(_write(tmp_path, "SPY.csv", blank), min_bars=1)


def test_nasdaq_nordics_price_names(tmp_path: Path) -> None:
    """``Opening price;High price;Low price;Closing price`` (Nasdaq Nordic's historical prices,
    newest first, a ``sep=;`` line, decimal commas): until session 53 refused as missing 'open',
    blamed on several symbols side by side."""
    path = tmp_path / "VOLV_B-2024-01-01-2024-01-12.csv"
    path.write_text(
        "sep=;\nDate;Bid;Ask;Opening price;High price;Low price;Closing price;Average price;"
        "Total volume;Turnover;Trades;\n"
        "2024-01-12;37,29;37,31;37,32;37,36;37,29;37,30;37,33;30540000;1139142000,00;30540;\n"
        "2024-01-11;37,31;37,33;37,40;37,41;37,31;37,32;37,36;30390000;1134154800,00;30390;\n"
    )
    df = read_bars(path, min_bars=1)
    assert df["ts"].dt.strftime("%Y-%m-%d").to_list() == ["2024-01-11", "2024-01-12"]
    assert df.row(1)[2:] == (37.32, 37.36, 37.29, 37.30, 30540000.0)


@pytest.mark.parametrize(
    ("header", "spell"),
    [
        ("日期,开盘,最高,最低,收盘,成交量", "%Y年%m月%d日"),
        ("일자,시가,고가,저가,종가,거래량", "%Y년 %m월 %d일"),
    ],
)
def test_east_asian_dates_spelt_with_their_characters(
    tmp_path: Path, header: str, spell: str
) -> None:
    """``2024年01月03日`` (China, Japan), ``2024년 01월 03일`` (Korea): an unparsable timestamp
    until session 53."""
    days = [datetime(2024, 1, d) for d in (3, 4, 5)]
    rows = "".join(f"{d.strftime(spell)},182.25,182.26,182.18,182.21,30120\n" for d in days)
    path = tmp_path / "600519.csv"
    path.write_text(header + "\n" + rows, encoding="utf-8")
    df = read_bars(path, min_bars=1)
    assert df["ts"].to_list() == [d.replace(tzinfo=UTC) for d in days]


def test_a_time_column_in_digits_is_padded_by_its_widest_value(tmp_path: Path) -> None:
    """Forex Tester's ``<TIME>`` after a save in Excel: ``0, 100, 200 ... 10000, 10100``, HHMMSS
    without its zeros. Each value was padded alone, ``100`` to 01:00 beside ``10100`` (01:01:00):
    refused as an unparsable or duplicate time until session 53."""
    clocks = ["0", "100", "5900", "10000", "10100", "235900"]
    rows = "".join(f"EURUSD,20240103,{c},1.0945,1.0946,1.0944,1.0945,170\n" for c in clocks)
    path = _write(
        tmp_path,
        "EURUSD.txt",
        "<TICKER>,<DTYYYYMMDD>,<TIME>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>\n" + rows,
    )
    got = read_bars(path, min_bars=1)["ts"].dt.strftime("%H:%M:%S").to_list()
    assert got == ["00:00:00", "00:01:00", "00:59:00", "01:00:00", "01:01:00", "23:59:00"]


def test_upbits_candles(tmp_path: Path) -> None:
    """Upbit's minute candles, newest first, its market first in the name (``KRW-BTC``):
    until session 53 refused, blamed on several symbols side by side (opening, trade), and its
    ``timestamp`` (the last trade's time) would have been the bar's."""
    header = (
        "market,candle_date_time_utc,candle_date_time_kst,opening_price,high_price,low_price,"
        "trade_price,timestamp,candle_acc_trade_price,candle_acc_trade_volume,unit\n"
    )
    rows = "".join(
        f"KRW-BTC,2024-01-06T00:0{m}:00,2024-01-06T09:0{m}:00,57999000.0,58003000.0,57995000.0,"
        f"57998000.0,{1704499239123 + 60000 * m},50574256000.0,87.2,1\n"
        for m in (2, 1, 0)
    )
    path = tmp_path / "upbit_KRW-BTC_1m.csv"
    path.write_text(header + rows)
    df = read_bars(path, min_bars=1)
    assert df["symbol"].unique().to_list() == ["BTCKRW"]
    assert df["ts"].to_list() == [datetime(2024, 1, 6, 0, m, tzinfo=UTC) for m in range(3)]
    assert df.row(0)[2:] == (57999000.0, 58003000.0, 57995000.0, 57998000.0, 87.2)


def test_igs_prices_name_their_sides_and_read_with_the_flag(tmp_path: Path) -> None:
    """IG's REST prices saved flat (``openPrice.bid`` ... ``snapshotTimeUTC``, the epic as the
    name): until session 53 a bare "missing 'open'", no time column known, the symbol ``CS``."""
    header = (
        "snapshotTime,snapshotTimeUTC,openPrice.bid,openPrice.ask,openPrice.lastTraded,"
        "closePrice.bid,closePrice.ask,closePrice.lastTraded,highPrice.bid,highPrice.ask,"
        "highPrice.lastTraded,lowPrice.bid,lowPrice.ask,lowPrice.lastTraded,lastTradedVolume\n"
    )
    rows = "".join(
        f"2024/06/03 15:3{m}:00,2024-06-03T14:3{m}:00,10845.0,10845.8,,10844.6,10845.4,,"
        f"10845.1,10845.9,,10844.3,10845.1,,{170 + m}\n"
        for m in range(3)
    )
    path = tmp_path / "CS.D.EURUSD.MINI.IP_1min.csv"
    path.write_text(header + rows)
    with pytest.raises(DataError, match=r"\(bid and ask bars: --columns open=openPrice.bid,"):
        read_bars(path, min_bars=1)
    bid = ("open=openPrice.bid", "high=highPrice.bid", "low=lowPrice.bid", "close=closePrice.bid")
    df = read_bars(path, min_bars=1, options=ReadOptions(columns=bid))
    assert df["symbol"].unique().to_list() == ["EURUSD"]
    assert df["ts"][0] == datetime(2024, 6, 3, 14, 30, tzinfo=UTC)
    assert df.row(0)[2:] == (10845.0, 10845.1, 10844.3, 10844.6, 170.0)
