"""Bar files as vendors write them: dialects, spellings, date+time columns, zones, contracts."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.bars import load_bars, read_bars
from foxhunt.data.read.csv_dialect import CsvDialect, sniff_csv
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError

T0 = datetime(2024, 1, 2, 14, 30, tzinfo=UTC)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _minutes(df: pl.DataFrame) -> list[int]:
    return [int((t - T0).total_seconds() // 60) for t in df["ts"]]


def test_cme_raw_semicolon_file_with_contract_name(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The vendor file from issue 12: ';', timestamp_utc, an extra text column, ESZ4 name."""
    text = "timestamp_utc;open;high;low;close;volume;symbol_text_extra\n" + "".join(
        f"2024-01-02 14:{30 + 5 * i}:00;4700.25;4701.00;4699.75;4700.50;{100 + i};ESZ4 Globex\n"
        for i in range(5)
    )
    p = _write(tmp_path, "ESZ4.GLBX_5min_bars_20241001_20241031.csv", text)
    with caplog.at_level(logging.WARNING):
        df = read_bars(p)
    assert df.columns == ["ts", "symbol", "open", "high", "low", "close", "volume", "contract"]
    assert df["symbol"].unique().to_list() == ["ES"]
    assert df["contract"].unique().to_list() == ["ESZ4"]
    assert _minutes(df) == [0, 5, 10, 15, 20]  # 5-minute bars, as the name says
    assert df["volume"].to_list() == [100.0, 101.0, 102.0, 103.0, 104.0]
    assert f"ignored columns in {p}: symbol_text_extra" in caplog.text
    assert f"naive timestamps in {p} taken as UTC; pass --tz ZONE" in caplog.text


def test_decimal_comma_semicolon(tmp_path: Path) -> None:
    text = "Date Time;Open;High;Low;Close;Volume\n" + "".join(
        f"2024-01-02 14:3{i}:00;1234,5;1235,25;1233,0;1234,75;7\n" for i in range(4)
    )
    p = _write(tmp_path, "FDAX.csv", text)
    assert sniff_csv(p) == CsvDialect(";", True, True, None)
    df = read_bars(p)
    assert df["high"].to_list() == [1235.25] * 4
    assert _minutes(df) == [0, 1, 2, 3]


@pytest.mark.parametrize("sep", [",", "\t", "|"])
def test_delimiters(tmp_path: Path, sep: str) -> None:
    rows = [["timestamp", "open", "high", "low", "close", "volume"]] + [
        [f"2024-01-02T14:3{i}:00Z", "10.5", "11", "10", "10.75", "3"] for i in range(3)
    ]
    p = _write(tmp_path, "CL.csv", "".join(sep.join(r) + "\n" for r in rows))
    assert sniff_csv(p).delimiter == sep
    assert _minutes(read_bars(p)) == [0, 1, 2]


def test_tradestation_date_time(tmp_path: Path) -> None:
    text = '"Date","Time","Open","High","Low","Close","Up","Down"\n' + "".join(
        f"01/02/2024,14:3{i},4700.25,4701,4699.5,4700,10,12\n" for i in range(3)
    )
    p = _write(tmp_path, "ES.csv", text)
    loaded = load_bars(p)
    assert loaded.extra == (("Up", "Down"),)
    assert loaded.spellings[0]["ts"] == "Date+Time"
    assert loaded.spellings[0]["volume"] == "Up+Down"
    bars = read_bars(p)
    assert _minutes(bars) == [0, 1, 2]
    assert bars["volume"].to_list() == [22.0, 22.0, 22.0]  # up volume + down volume


@pytest.mark.parametrize(
    "names", [("Up", "Down"), ("UpVol", "DownVol"), ("Up Volume", "Down Volume")]
)
def test_up_and_down_volume_sum_to_the_volume(
    tmp_path: Path, names: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    up, down = names
    text = f"Date,Time,Open,High,Low,Close,{up},{down}\n" + "".join(
        f"01/02/2024,14:3{i},4700.25,4701,4699.5,4700,{i},{10 * i}\n" for i in range(3)
    )
    p = _write(tmp_path, "ES.csv", text)
    with caplog.at_level(logging.WARNING):
        bars = read_bars(p)
    assert bars["volume"].to_list() == [0.0, 11.0, 22.0]
    assert "no volume column" not in caplog.text and "ignored columns" not in caplog.text
    given = read_bars(p, options=ReadOptions(columns=(f"volume={down}",)))
    assert given["volume"].to_list() == [0.0, 10.0, 20.0]


def test_up_and_down_beside_a_volume_column_are_not_added(tmp_path: Path) -> None:
    text = "Date,Time,Open,High,Low,Close,Volume,Up,Down\n" + "".join(
        f"01/02/2024,14:3{i},4700.25,4701,4699.5,4700,5,1,2\n" for i in range(3)
    )
    assert read_bars(_write(tmp_path, "ES.csv", text))["volume"].to_list() == [5.0] * 3


def test_up_and_down_volume_empty_in_both_reads_0_and_text_in_one_is_named(
    tmp_path: Path,
) -> None:
    rows = ["1,2", ",", "3,4"]
    text = "Date,Time,Open,High,Low,Close,Up,Down\n" + "".join(
        f"01/02/2024,14:3{i},4700.25,4701,4699.5,4700,{r}\n" for i, r in enumerate(rows)
    )
    assert read_bars(_write(tmp_path, "ES.csv", text))["volume"].to_list() == [3.0, 0.0, 7.0]
    bad = text.replace("3,4", "3,x")
    with pytest.raises(DataError, match=r"ES.csv: column 'Up\+Down', row 2"):
        read_bars(_write(tmp_path, "ES.csv", bad))


def test_metatrader_export(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    text = "<DATE>\t<TIME>\t<OPEN>\t<HIGH>\t<LOW>\t<CLOSE>\t<TICKVOL>\t<VOL>\t<SPREAD>\n" + "".join(
        f"2024.01.02\t14:3{i}:00\t1.10410\t1.10420\t1.10400\t1.10415\t55\t0\t2\n" for i in range(3)
    )
    p = _write(tmp_path, "EURUSD.csv", text)
    with caplog.at_level(logging.WARNING):
        df = read_bars(p, tz="Europe/London")  # London is UTC in January
    assert _minutes(df) == [0, 1, 2]
    # the real volume is 0 on every bar (an FX broker has none): the tick volume is read instead
    assert df["volume"].to_list() == [55.0, 55.0, 55.0]
    assert "'<VOL>' is 0 on every bar: the tick volume '<TICKVOL>' read as the volume" in (
        caplog.text
    )
    assert "ignored columns" in caplog.text and "<SPREAD>" in caplog.text
    assert "<TICKVOL>," not in caplog.text
    assert "taken as UTC" not in caplog.text


def test_metatrader_real_volume_is_preferred_where_it_is_there(tmp_path: Path) -> None:
    """A future's MetaTrader 5 export holds the exchange's volume: kept over the ticks; and
    ``--columns volume=<VOL>`` keeps an all-zero one."""
    head = "<DATE>\t<TIME>\t<OPEN>\t<HIGH>\t<LOW>\t<CLOSE>\t<TICKVOL>\t<VOL>\t<SPREAD>\n"
    rows = "".join(
        f"2024.01.02\t14:3{i}:00\t4700.25\t4701\t4699.5\t4700\t55\t{v}\t2\n"
        for i, v in enumerate((0, 7, 0))
    )
    df = read_bars(_write(tmp_path, "ES.csv", head + rows))
    assert df["volume"].to_list() == [0.0, 7.0, 0.0]
    zeros = head + rows.replace("\t7\t", "\t0\t")
    given = ReadOptions(columns=("volume=<VOL>",))
    kept = read_bars(_write(tmp_path, "ES2.csv", zeros), options=given)
    assert kept["volume"].to_list() == [0.0, 0.0, 0.0]
    assert read_bars(tmp_path / "ES2.csv")["volume"].to_list() == [55.0, 55.0, 55.0]


def test_kibot_headerless(tmp_path: Path) -> None:
    text = "".join(f"01/02/2024,09:3{i},4700.25,4701,4699.5,4700,{10 + i}\n" for i in range(3))
    p = _write(tmp_path, "ES.txt.csv", text)
    d = sniff_csv(p)
    assert not d.has_header and d.names[:2] == ("date", "time")
    df = read_bars(p, tz="America/New_York")  # Kibot writes Eastern time
    assert _minutes(df) == [0, 1, 2]
    assert df["volume"].to_list() == [10.0, 11.0, 12.0]


def test_ninjatrader_headerless_semicolon(tmp_path: Path) -> None:
    text = "".join(f"20240102 0830{i:02d};4700.25;4701;4699.5;4700;{i + 1}\n" for i in range(3))
    p = _write(tmp_path, "ES 03-24.Last.csv", text)
    df = read_bars(p, tz="America/Chicago")
    assert [t.second for t in df["ts"]] == [0, 1, 2]
    assert df["ts"][0] == T0


def test_ninjatrader_8_ticks_of_the_second_after_a_space(tmp_path: Path) -> None:
    """NinjaTrader 8 writes ``20240102 083000 0000000``: the second's 100-ns ticks after a
    space (was an unparsable timestamp)."""
    text = "".join(
        f"20240102 0830{i:02d} {5_000_000 * (i % 2):07d};4700.25;4701;4699.5;4700;{i + 1}\n"
        for i in range(3)
    )
    df = read_bars(_write(tmp_path, "ES 03-24.Last.txt", text), tz="America/Chicago")
    assert df["ts"].to_list() == [T0, T0 + timedelta(seconds=1.5), T0 + timedelta(seconds=2)]


def test_dukascopy_gmt_time_day_first(tmp_path: Path) -> None:
    text = "Gmt time,Open,High,Low,Close,Volume\n" + "".join(
        f"02.01.2024 14:3{i}:00.000,1.1,1.2,1.0,1.1,12.5\n" for i in range(3)
    )
    df = read_bars(_write(tmp_path, "EURUSD_Candlestick_1_M.csv", text))
    assert _minutes(df) == [0, 1, 2]  # 2 January: dotted dates are day-first
    assert read_bars(_write(tmp_path, "E2.csv", text), dayfirst=False)["ts"][0].month == 2


def test_day_first_decided_by_data(tmp_path: Path) -> None:
    text = "date,time,open,high,low,close\n02/01/2024,14:30,1,1,1,1\n13/01/2024,14:30,1,1,1,1\n"
    df = read_bars(_write(tmp_path, "X.csv", text))
    assert [t.day for t in df["ts"]] == [2, 13]


def test_binance_open_time_epoch_ms_and_extras(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ms = int(T0.timestamp() * 1000)
    text = "open_time,open,high,low,close,volume,close_time,quote_volume,trades\n" + "".join(
        f"{ms + 60_000 * i},42000.1,42010,41990,42005.5,1.25,{ms + 60_000 * i + 59_999},5.2e4,9\n"
        for i in range(3)
    )
    p = _write(tmp_path, "BTCUSDT-1m-2024-01.csv", text)
    with caplog.at_level(logging.WARNING):
        loaded = load_bars(p)
    assert loaded.extra == (("close_time", "quote_volume", "trades"),)
    assert loaded.naive == (False,)
    assert "naive" not in caplog.text
    assert _minutes(validated := read_bars(p)) == [0, 1, 2]
    assert validated["volume"][0] == 1.25


@pytest.mark.parametrize("unit,scale", [("s", 1), ("ms", 10**3), ("us", 10**6), ("ns", 10**9)])
def test_epoch_units_in_text(tmp_path: Path, unit: str, scale: int) -> None:
    s = int(T0.timestamp())
    text = "time,open,high,low,close\n" + "".join(
        f"{(s + 60 * i) * scale},1,1,1,1\n" for i in range(3)
    )
    assert _minutes(read_bars(_write(tmp_path, f"{unit}.csv", text))) == [0, 1, 2]


def test_tz_shifts_naive_times_and_checks_zone(tmp_path: Path) -> None:
    text = "timestamp,open,high,low,close,volume\n2024-01-02 08:30:00,1,1,1,1,1\n"
    p = _write(tmp_path, "ES.csv", text)
    assert read_bars(p, tz="America/Chicago")["ts"][0] == T0
    with pytest.raises(DataError, match="unknown time zone 'Mars/Base'"):
        read_bars(p, tz="Mars/Base")


def test_zoned_text_ignores_tz(tmp_path: Path) -> None:
    text = "timestamp,open,high,low,close\n2024-01-02 09:30:00-05:00,1,1,1,1\n"
    assert read_bars(_write(tmp_path, "ES.csv", text), tz="Asia/Tokyo")["ts"][0] == T0


def test_bad_value_in_dialect_file_names_file_column_row(tmp_path: Path) -> None:
    text = "timestamp_utc;open;high;low;close;volume\n" + "".join(
        f"2024-01-02 14:3{i}:00;1,5;2,0;1,0;{'x' if i == 2 else '1,5'};1\n" for i in range(4)
    )
    p = _write(tmp_path, "ES.csv", text)
    with pytest.raises(DataError) as e:
        read_bars(p)
    msg = str(e.value)
    assert "\n" not in msg
    assert f"{p}: column 'close', row 2" in msg and "not a number 'x'" in msg


def test_bad_time_in_date_time_file_names_both_columns(tmp_path: Path) -> None:
    text = "Date,Time,Open,High,Low,Close\n01/02/2024,14:30,1,1,1,1\n01/02/2024,25:99,1,1,1,1\n"
    p = _write(tmp_path, "ES.csv", text)
    with pytest.raises(DataError, match=r"column 'Date\+Time', row 1: unparsable timestamp"):
        read_bars(p)


def test_contract_codes_from_file_names(tmp_path: Path) -> None:
    text = "ts,open,high,low,close,volume\n2024-01-02T14:30:00Z,1,1,1,1,1\n"
    for name, symbol, contract in [
        ("6EH4.csv", "6E", "6EH4"),
        ("ESZ24_1m.csv", "ES", "ESZ24"),
        ("ES_FUT.csv", "ES", None),
        ("SPY.csv", "SPY", None),  # an alias of ES for features, never renamed
        ("GOOG.csv", "GOOG", None),
    ]:
        df = read_bars(_write(tmp_path, name, text))
        assert df["symbol"][0] == symbol, name
        assert (df["contract"][0] if "contract" in df.columns else None) == contract, name


def test_symbol_column_kept_as_written(tmp_path: Path) -> None:
    text = "ts,symbol,open,high,low,close\n2024-01-02T14:30:00Z,CLZ4,1,1,1,1\n"
    df = read_bars(_write(tmp_path, "panel.csv", text))
    assert df["symbol"].to_list() == ["CLZ4"] and "contract" not in df.columns


def test_contract_file_beside_plain_file(tmp_path: Path) -> None:
    text = "ts,open,high,low,close\n2024-01-02T14:30:00Z,1,1,1,1\n"
    _write(tmp_path, "ESH4.csv", text)
    _write(tmp_path, "NQ.csv", text)
    df = read_bars(tmp_path)
    assert df.select("symbol", "contract").rows() == [("ES", "ESH4"), ("NQ", None)]


def test_a_headerless_file_in_another_order_is_refused_naming_the_order_read(
    tmp_path: Path,
) -> None:
    """Low, open, close, high (no vendor's order: IQFeed's high, low, open, close is read,
    :mod:`foxhunt.data.read.price_order`): read as open, high, low, close, the first bar fails
    the high/low check, and the message says the order read and how to change it."""
    text = "".join(
        f"2024-01-02 14:3{i}:00,4769.50,4770.00,4772.00,4772.25,{i + 10},1519501\n"
        for i in range(3)
    )
    p = _write(tmp_path, "ES.csv", text)
    with pytest.raises(DataError) as e:
        read_bars(p)
    assert str(e.value).endswith(
        "high 4770.0 < max(open, close) 4772.25 (the file has no header: its columns were read "
        "as timestamp, open, high, low, close, volume, column_7; if the file's order differs, "
        "--columns names each field's column by these names, e.g. --columns open=high,high=open)"
    )
    given = ("low=open", "open=high", "close=low", "high=close")
    fixed = read_bars(p, options=ReadOptions(columns=given))
    assert fixed.row(0, named=True)["open"] == 4770.0 and fixed["high"][0] == 4772.25


def test_a_file_with_a_header_gets_no_order_hint(tmp_path: Path) -> None:
    text = "ts,open,high,low,close\n2024-01-02 14:30:00,4772.25,4769.5,4770,4772\n"
    with pytest.raises(DataError, match=r"max\(open, close\) 4772.25$"):
        read_bars(_write(tmp_path, "ES.csv", text))


def test_dukascopys_gmt_time_names_its_zone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``Gmt time`` says UTC: read so without the "taken as UTC; pass --tz" warning (the guess
    said "no zone in the file")."""
    text = "Gmt time,Open,High,Low,Close,Volume\n" + "".join(
        f"02.01.2024 14:3{i}:00.000,1.1,1.2,1.0,1.1,12.5\n" for i in range(3)
    )
    with caplog.at_level(logging.WARNING):
        loaded = load_bars(_write(tmp_path, "EURUSD_Candlestick_1_M.csv", text))
    assert not [m for m in caplog.messages if "taken as UTC" in m]
    assert any("the header 'Gmt time'" in g for g in loaded.guesses[0])
    assert loaded.frame["ts"][0] == datetime(2024, 1, 2, 14, 30, tzinfo=UTC)


def test_histdata_ticks_read_as_quotes_by_their_file_name(tmp_path: Path) -> None:
    """histdata's ``DAT_ASCII_EURUSD_T_202401.csv``: no header, ``time,bid,ask,volume``, the
    time ``20240103 103000291`` (milliseconds after the seconds), New York's clock. Until
    session 53 its first row was taken for a header: missing column 'open'."""
    rows = [
        ("103000291", "1.094500", "1.094620"),
        ("103009064", "1.094490", "1.094610"),
        ("103100120", "1.094700", "1.094900"),
    ]
    text = "".join(f"20240103 {t},{bid},{ask},0\n" for t, bid, ask in rows)
    p = _write(tmp_path, "DAT_ASCII_EURUSD_T_202401.csv", text)
    d = sniff_csv(p)
    assert not d.has_header and d.names == ("timestamp", "bid", "ask", "volume")
    df = read_bars(p, options=ReadOptions(bar_minutes=1))
    assert df["symbol"].to_list() == ["EURUSD", "EURUSD"]
    assert df["ts"].to_list() == [
        datetime(2024, 1, 3, 15, 30, tzinfo=UTC),
        datetime(2024, 1, 3, 15, 31, tzinfo=UTC),
    ]
    assert df.row(0)[2:] == pytest.approx((1.09456, 1.09456, 1.09455, 1.09455, 2.0))
    assert df.row(1)[2:] == pytest.approx((1.0948, 1.0948, 1.0948, 1.0948, 1.0))


@pytest.mark.parametrize(
    ("name", "text"),
    [  # TrueFX (pair, time, bid, ask)
        ("EURUSD-2024-01.csv", "EUR/USD,20240103 10:30:00.291,1.09450,1.09462\n" * 3),
    ],
)
def test_a_headerless_file_too_narrow_for_bars_is_refused_asking_for_a_header(
    tmp_path: Path, name: str, text: str
) -> None:
    p = _write(tmp_path, name, text)
    with pytest.raises(
        DataError,
        match=r"no header, and \d fields a row .*too few for bars.*"
        r"need a header line naming their columns",
    ):
        read_bars(p, options=ReadOptions(bar_minutes=1))


def test_a_headerless_file_of_three_fields_is_refused_saying_its_first_line_is_data(
    tmp_path: Path,
) -> None:
    text = "2024-01-03 10:30:00.291,4780.25,3\n2024-01-03 10:30:01.004,4780.5,1\n"
    p = _write(tmp_path, "ES_ticks.csv", text)
    with pytest.raises(DataError) as e:
        read_bars(p)
    assert str(e.value).endswith(
        "missing column 'open' (columns: 2024-01-03 10:30:00.291, 4780.25, 3); --columns "
        "open=COLUMN names it; its first line looks like data (4780.25, 3), not names: a file "
        "without a header needs one naming its columns (such as time,price,size), and "
        "--bar-minutes K builds K-minute bars from ticks"
    )


@pytest.mark.parametrize("sep", [";", "\t"])
def test_a_short_file_with_a_note_as_its_last_line_reads(tmp_path: Path, sep: str) -> None:
    """Eight bars and ``Source: ...`` below them: the note was one line in nine, too many for
    the dialect's 90 % of lines of one width, and the file was read with commas (missing
    'open', or "a fixed-width table" for tabs) until session 53."""
    days = ("03", "04", "05", "08", "09", "10", "11", "12")
    rows = "".join(
        sep.join((f"2024-01-{d}", "182.2", "182.3", "182.1", "182.25", "3000")) + "\n" for d in days
    )
    p = _write(
        tmp_path,
        "IBM.csv",
        sep.join(("Date", "Open", "High", "Low", "Close", "Volume"))
        + "\n"
        + rows
        + "Source: Beispiel AG\n",
    )
    assert sniff_csv(p).delimiter == sep
    df = read_bars(p, min_bars=1)
    assert df.height == 8 and df["close"].to_list() == [182.25] * 8


def test_moex_iss_history_with_its_cursor_block_reads(tmp_path: Path) -> None:
    """MOEX ISS's ``history.csv``: a ``history`` title, the table, then a ``history.cursor``
    block of three lines. In a short page those lines were too many for the dialect's 90 %, and
    the file was read with commas, its title as the header (missing 'open', columns: history),
    until session 54. Its ``OPEN;LOW;HIGH`` order is read by name."""
    days = ("09", "10", "11", "12", "15", "16", "17", "18")
    head = "BOARDID;TRADEDATE;SECID;NUMTRADES;OPEN;LOW;HIGH;CLOSE;VOLUME\n"
    rows = "".join(
        f"TQBR;2024-01-{d};SBER;11200;271.5;271.43;271.51;271.46;1120000\n" for d in days
    )
    cursor = "\nhistory.cursor\n\nINDEX;TOTAL;PAGESIZE\n0;8;100\n"
    p = _write(tmp_path, "SBER_history.csv", "history\n\n" + head + rows + cursor)
    assert sniff_csv(p).delimiter == ";"
    df = read_bars(p, min_bars=1)
    assert df.height == 8
    assert (df["high"].to_list(), df["low"].to_list()) == ([271.51] * 8, [271.43] * 8)


def test_five_lines_of_another_width_below_a_short_table_are_not_a_footer(tmp_path: Path) -> None:
    """The footer allowance ends at four lines: nine bars over five short lines stay ragged."""
    days = ("03", "04", "05", "08", "09", "10", "11", "12", "15")
    head = "Date;Open;High;Low;Close;Volume\n"
    rows = "".join(f"2024-01-{d};182.2;182.3;182.1;182.25;3000\n" for d in days)
    p = _write(tmp_path, "IBM.csv", head + rows + "a;b\n" * 5)
    assert sniff_csv(p).delimiter == ","
    q = _write(tmp_path, "IBM2.csv", head + rows + "a;b\n" * 4)
    assert sniff_csv(q).delimiter == ";"


@pytest.mark.parametrize("sep", [",", ";"])
def test_fields_quoted_after_a_space_read(tmp_path: Path, sep: str) -> None:
    """``"Date", "Open", ...``: polars kept ``' "182.25"'`` as written, refused as not a
    number, until session 54."""
    names = ("Date", "Open", "High", "Low", "Close", "Volume")
    bars = [(f"2024-01-0{d}", "182.25", "182.26", "182.18", "182.21", "30120000") for d in (3, 4)]
    text = "".join(f"{sep} ".join(f'"{c}"' for c in row) + "\n" for row in (names, *bars))
    p = _write(tmp_path, "IBM.csv", text)
    dialect = sniff_csv(p)
    assert dialect.spaced_quotes and "a space before each quoted field" in dialect.describe()
    df = read_bars(p, min_bars=1)
    assert df["high"].to_list() == [182.26, 182.26] and df["volume"].to_list() == [3.012e7] * 2


def test_a_quoted_name_after_a_space_in_few_lines_is_not_spaced_quotes(tmp_path: Path) -> None:
    """One line in two or fewer with ``, "`` is a field's own text, not the dialect."""
    rows = "".join(f"2024-01-0{d},182.25,182.26,182.18,182.21,3\n" for d in (3, 4, 5))
    p = _write(tmp_path, "IBM.csv", 'Date,Open,High,Low,Close,Volume, "Note"\n' + rows)
    assert not sniff_csv(p).spaced_quotes


def test_commas_in_two_places_say_a_single_comma_parts_thousands(tmp_path: Path) -> None:
    """Yahoo Japan's table: ``"3,429"`` beside volumes ``"25,312,400"`` was refused as a decimal
    comma or thousands until session 54 (``--decimal point`` read it)."""
    rows = "".join(
        f'2024-01-{d},"3,429","3,466","3,317","3,343","25,312,400"\n' for d in ("04", "05", "09")
    )
    p = _write(tmp_path, "7203.T.csv", "Date,Open,High,Low,Close,Volume\n" + rows)
    assert sniff_csv(p).comma_groups
    df = read_bars(p, min_bars=1)
    assert df["open"].to_list() == [3429.0] * 3 and df["volume"].to_list() == [25312400.0] * 3
    one = _write(
        tmp_path,
        "7203.T.csv",
        "Date,Open,High,Low,Close,Volume\n" + rows.replace('"25,312,400"', '"312,400"'),
    )
    assert not sniff_csv(one).comma_groups  # one group everywhere: the refusal asks


def test_a_headerless_end_of_day_file_with_the_ticker_first(tmp_path: Path) -> None:
    """asxhistoricaldata's and MetaStock's ``BHP,20240102,o,h,l,c,v``: the ticker was read as
    the time and refused ("unparsable timestamp 'BHP'") until session 54."""
    rows = "".join(
        f"{t},202401{d},45.15,45.41,43.44,43.69,98216\n"
        for d in ("02", "03")
        for t in ("BHP", "CBA")
    )
    p = _write(tmp_path, "20240102.txt", rows)
    assert sniff_csv(p).names == ("symbol", "timestamp", "open", "high", "low", "close", "volume")
    df = read_bars(p, min_bars=1)
    assert df.group_by("symbol").len().sort("symbol").rows() == [("BHP", 2), ("CBA", 2)]
    intraday = "".join(
        f"BHP,20240102,{c},45.15,45.41,43.44,43.69,98216\n" for c in ("1000", "1005")
    )
    timed = _write(tmp_path, "BHP.txt", intraday)  # a clock in digits after the date
    assert sniff_csv(timed).names[:4] == ("symbol", "date", "time", "open")


def test_coinbase_advanced_trades_start_column_is_the_bars_time(tmp_path: Path) -> None:
    """Coinbase Advanced Trade's candles (``start,low,high,open,close,volume``, newest first):
    refused as "missing column 'ts'" until session 57."""
    first = 1641168000  # 2022-01-03 00:00 UTC
    rows = "".join(
        f"{first + 60 * i},{46000 + i},{46010 + i},{46005 + i},{46003 + i},1.5\n"
        for i in reversed(range(30))
    )
    bars = read_bars(
        _write(tmp_path, "BTC-USD_ONE_MINUTE.csv", "start,low,high,open,close,volume\n" + rows),
        min_bars=1,
    )
    assert bars["ts"][0] == datetime(2022, 1, 3, tzinfo=UTC) and bars.height == 30
    assert (bars["open"][0], bars["low"][0]) == (46005.0, 46000.0)
