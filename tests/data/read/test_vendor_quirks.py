"""What vendors put around their bars: blank and `null` rows, footers, grouped digits,
magnitude suffixes, month names, 12-hour clocks, `Last`/`Price` for the close."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.errors import DataError

YAHOO = "Date,Open,High,Low,Close,Adj Close,Volume\n"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _days(n: int) -> list[str]:
    return [f"2010-01-{d:02d}" for d in range(4, 4 + n)]


def test_trailing_blank_and_separator_lines_are_not_bars(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rows = "".join(f"{d},10,11,9,10.5,10.5,100\n" for d in _days(5))
    path = _write(tmp_path, "ES=F.csv", YAHOO + rows + ",,,,,,\n \n\n")
    with caplog.at_level(logging.WARNING):
        df = read_bars(path)
    assert df.height == 5
    assert "hold no value" in caplog.text and "first: row 5" in caplog.text


def test_yahoo_null_rows_are_dropped_and_a_half_null_row_still_refused(tmp_path: Path) -> None:
    days = _days(6)
    rows = [f"{d},10,11,9,10.5,10.5,100\n" for d in days]
    rows[2] = f"{days[2]},null,null,null,null,null,null\n"
    df = read_bars(_write(tmp_path, "ES=F.csv", YAHOO + "".join(rows)))
    assert [t.day for t in df["ts"]] == [4, 5, 7, 8, 9]
    rows[2] = f"{days[2]},10,null,9,10.5,10.5,100\n"  # some prices: a broken bar, not a gap
    with pytest.raises(DataError, match=r"column 'High', row 2 .*not a number 'null'"):
        read_bars(_write(tmp_path, "NQ=F.csv", YAHOO + "".join(rows)))


def test_barchart_footer_and_last_as_the_close(tmp_path: Path) -> None:
    text = "Time,Open,High,Low,Last,Change,%Chg,Volume\n" + "".join(
        f"10/01/2018 00:{m:02d},2935.0,2936.25,2934.5,2935.75,+0.75,+0.03%,{100 + m}\n"
        for m in range(0, 25, 5)
    )
    text += '"Downloaded from Barchart.com as of 10-12-2018 05:31pm CDT"\n'
    df = read_bars(
        _write(tmp_path, "esz18_intraday-5min_historical-data-download-10-12-2018.csv", text),
        tz="America/Chicago",
    )
    assert df.height == 5
    assert df["close"].to_list() == [2935.75] * 5
    assert df["ts"][0] == datetime(2018, 10, 1, 5, tzinfo=UTC)


def test_investing_com_export_reads_as_found(tmp_path: Path) -> None:
    text = (
        '"Date","Price","Open","High","Low","Vol.","Change %"\n'
        '"Jan 05, 2015","2,011.00","2,052.50","2,054.75","2,003.50","1.92M","-1.85%"\n'
        '"Jan 02, 2015","2,048.75","2,056.00","2,067.25","2,039.25","53.64K","-0.21%"\n'
        '"Dec 31, 2014","2,053.00","2,076.25","2,078.00","2,049.00","","-1.13%"\n'
    )
    df = read_bars(_write(tmp_path, "ES.csv", text))
    assert [t.date().isoformat() for t in df["ts"]] == ["2014-12-31", "2015-01-02", "2015-01-05"]
    assert df["close"].to_list() == [2053.0, 2048.75, 2011.0]
    assert df["open"].to_list() == [2076.25, 2056.0, 2052.5]
    assert df["volume"].to_list()[1:] == [53_640.0, 1_920_000.0]


def test_grouped_digits_are_not_read_with_a_decimal_comma(tmp_path: Path) -> None:
    # ';' with decimal commas: '16800,5' is 16800.5, never 168005
    text = "date;time;open;high;low;close\n02.01.2024;09:00;16800,5;16801;16800;16800,5\n"
    df = read_bars(_write(tmp_path, "FDAX.csv", text), tz="Europe/Berlin")
    assert df["open"][0] == 16800.5


@pytest.mark.parametrize(
    ("header", "rows", "opens", "volumes"),
    [
        # a German-locale export: points group the thousands of prices with a decimal comma
        (True, ["16.750,50;16.757,50;16.750,00;16.757,00;4949", "16.757,00;16.758,50;16.752,00;16.753,50;1.442"], [16750.5, 16757.0], [4949.0, 1442.0]),
        # the prices alone show the decimal comma; the volume's point groups its thousands
        (True, ["4520,5;4521,5;4515,0;4516,5;6.340", "4516,5;4518,5;4512,5;4514,5;2.527"], [4520.5, 4516.5], [6340.0, 2527.0]),
        # without a header: the grouped numbers are numbers, so the first row is a bar
        (False, ["16.750,50;16.757,50;16.750,00;16.757,00;4949", "16.757,00;16.758,50;16.752,00;16.753,50;4442"], [16750.5, 16757.0], [4949.0, 4442.0]),
    ],
)  # fmt: skip
def test_points_grouping_thousands_beside_a_decimal_comma(
    tmp_path: Path, header: bool, rows: list[str], opens: list[float], volumes: list[float]
) -> None:
    text = ("Date;Time;Open;High;Low;Close;Volume\n" if header else "") + "".join(
        f"02.01.2024;09:0{i};{r}\n" for i, r in enumerate(rows)
    )
    df = read_bars(_write(tmp_path, "FDAX.csv", text), tz="Europe/Berlin")
    assert df["open"].to_list() == opens and df["volume"].to_list() == volumes


def test_a_grouped_price_after_the_sampled_lines_reads_with_the_decimal_comma(
    tmp_path: Path,
) -> None:
    """The dialect is judged on the first lines: ``999,50`` there, ``1.003,00`` later."""
    prices = [999.5 + 0.5 * i for i in range(100)]
    text = "Date;Time;Open;High;Low;Close;Volume\n" + "".join(
        f"02.01.2024;{9 + i // 60:02d}:{i % 60:02d};{_de(p)};{_de(p + 0.5)};{_de(p - 0.5)};{_de(p)};7\n"
        for i, p in enumerate(prices)
    )
    df = read_bars(_write(tmp_path, "FESX.csv", text), tz="Europe/Berlin")
    assert df["open"].to_list() == prices


def _de(x: float) -> str:
    """``1003.5`` -> ``1.003,50``, as a German locale writes it."""
    return f"{x:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".")


def test_a_point_that_is_no_thousands_group_keeps_the_decimal_point(tmp_path: Path) -> None:
    """``1.5`` beside ``2,5``: no single locale writes both, so the comma is no decimal
    comma, and the row with it is named."""
    text = "date;time;open;high;low;close\n02.01.2024;09:00;1.5;2,5;1;1.5\n"
    with pytest.raises(DataError, match=r"column 'high', row 0 .*not a number '2,5'"):
        read_bars(_write(tmp_path, "FDAX.csv", text), tz="Europe/Berlin")


def test_twelve_hour_clock(tmp_path: Path) -> None:
    text = "Date,Open,High,Low,Close\n" + "".join(
        f"01/02/2018 {h},1.2,1.3,1.1,1.25\n" for h in ("11:59 AM", "12:00 PM", "01:30 PM")
    )
    df = read_bars(_write(tmp_path, "EURUSD.csv", text))
    assert [(t.hour, t.minute) for t in df["ts"]] == [(11, 59), (12, 0), (13, 30)]


@pytest.mark.parametrize(
    ("name", "symbol"),
    [
        ("EUR_USD Historical Data.csv", "EURUSD"),
        ("BTC-USD.csv", "BTCUSD"),
        ("eth_usdt_1m.csv", "ETHUSDT"),
        ("ES1!.csv", "ES"),
        ("@ES#.csv", "ES"),
        ("@NQ#C.csv", "NQ"),
        ("US 500 Futures Historical Data.csv", "ES"),
        ("Gold Futures Historical Data.csv", "GC"),
        # unchanged: a leading run of letters and digits
        ("ES_FUT_small.csv", "ES"),
        ("ES_1min.csv", "ES"),
        ("CL_2018.csv", "CL"),
        ("btc-perp-2022.csv", "BTC-PERP"),
    ],
)
def test_symbols_from_vendor_file_names(name: str, symbol: str) -> None:
    from foxhunt.data.read.vendors import guess_from_name

    assert guess_from_name(Path(name)).symbol == symbol


def test_an_investing_com_name_it_cannot_map_asks_for_the_symbol(tmp_path: Path) -> None:
    text = '"Date","Price","Open","High","Low"\n"Jan 05, 2015","1","1","1","1"\n'
    with pytest.raises(DataError, match=r"says 'Lean Hogs Futures', not a symbol; pass --symbol"):
        read_bars(_write(tmp_path, "Lean Hogs Futures Historical Data.csv", text))


def test_databento_csv_without_symbols_is_a_series_per_instrument_id(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = "ts_event,rtype,publisher_id,instrument_id,open,high,low,close,volume\n" + "".join(
        f"2018-10-01T05:0{m}:00.000000000Z,33,1,{iid},{p},{p + 1},{p - 1},{p},5\n"
        for m in range(3)
        for iid, p in ((1001, 2900.0), (1002, 2930.0))
    )
    with caplog.at_level(logging.WARNING):
        df = read_bars(_write(tmp_path, "glbx-mdp3-20181001-20181012.ohlcv-1m.csv", text))
    assert sorted(df["symbol"].unique().to_list()) == ["1001", "1002"]
    assert df.filter(pl.col("symbol") == "1002")["close"].to_list() == [2930.0] * 3
    assert "each 'instrument_id' is a series" in caplog.text


def test_guess_lines_deduplicate_then_merge_symbol_lines_past_the_most() -> None:
    from foxhunt.data.read.vendors import guess_lines

    how = "Quantiacs' file name (F_ROOT); --symbol to change"
    zone = "naive timestamps read as UTC (no zone in the file); --tz to change"
    few = ((f"symbol F_AD from {how}", zone), (f"symbol F_AE from {how}", zone))
    assert guess_lines(few) == [f"symbol F_AD from {how}", zone, f"symbol F_AE from {how}"]
    assert guess_lines(few, most=3) == guess_lines(few)
    many = tuple((f"symbol F_{k:02d} from {how}", zone) for k in range(8))
    many += (("symbol ES from the file name; --symbol to change",),)
    assert guess_lines(many, most=10) == [  # 10 distinct lines: kept as they are
        f"symbol F_00 from {how}",
        zone,
        *[f"symbol F_{k:02d} from {how}" for k in range(1, 8)],
        "symbol ES from the file name; --symbol to change",
    ]
    assert guess_lines(many, most=9) == [
        zone,
        f"symbols F_00, F_01, F_02, F_03, F_04, F_05, ... (8 files) from {how}",
        "symbols ES (1 files) from the file name; --symbol to change",
    ]


@pytest.mark.parametrize(
    ("path", "symbol", "how", "tz", "minutes"),
    [
        ("DAT_ASCII_EURUSD_M1_2018.csv", "EURUSD", "histdata's file name", "America/New_York", 1),
        (
            "HISTDATA_COM_ASCII_XAUUSD_M12018.zip/data.csv",
            "XAUUSD",
            "histdata's file name",
            "America/New_York",
            1,
        ),
        ("DAT_MT_GBPUSD_T_2019.csv", "GBPUSD", "histdata's file name", "America/New_York", None),
        ("F_CL.txt", "F_CL", "Quantiacs' file name (F_ROOT)", None, None),
        ("Gold Futures Historical Data.csv", "GC", "Investing.com's file name", None, None),
        ("EUR_USD_5min.csv", "EURUSD", "the file name (a pair)", None, 5),
        ("ES1!_15min.csv", "ES", "the file name (a continuous contract)", None, 15),
        ("@NQ#C.csv", "NQ", "the file name (a continuous contract)", None, None),
        ("ES2!.csv", "ES2", "the file name", None, None),
        ("BTC-USDT-SWAP.csv", "BTC-USDT-SWAP", "the file name", None, None),
        ("btc-perp-2022.csv", "BTC-PERP", "the file name", None, None),
        ("AAPL Historical Data.csv", "AAPL", "Investing.com's file name", None, None),
        ("ES_FUT_daily.csv.gz", "ES", "the file name", None, 1440),
        ("NQ_hourly.csv", "NQ", "the file name", None, 60),
        ("CL_minute.csv", "CL", "the file name", None, 1),
        ("GC_H4.csv", "GC", "the file name", None, 240),
        ("ZN_2mins.csv", "ZN", "the file name", None, 2),
        ("ZB_0min_m0.csv", "ZB", "the file name", None, None),
        ("6E_30s.csv", "6E", "the file name", None, 0.5),
    ],
)
def test_what_a_file_name_says(path: str, symbol: str, how: str, tz: str | None, minutes) -> None:
    from datetime import timedelta

    from foxhunt.data.read.vendors import NameGuess, guess_from_name

    interval = None if minutes is None else timedelta(minutes=minutes)
    assert guess_from_name(Path(path)) == NameGuess(symbol, how, tz, interval)


def test_a_name_without_letters_or_digits_asks_for_the_symbol() -> None:
    from foxhunt.data.read.vendors import guess_from_name

    with pytest.raises(
        DataError,
        match=r"^__\.csv: no symbol column and no symbol in the file name; pass --symbol$",
    ):
        guess_from_name(Path("__.csv"))


@pytest.mark.parametrize("spell", ["%m/%d/%y", "%d.%m.%y", "%d-%b-%y"])
def test_two_digit_years_in_every_spelling(tmp_path: Path, spell: str) -> None:
    from datetime import date

    days = [date(2010, 1, 4), date(2010, 1, 5), date(2010, 1, 14)]
    text = "Date,Open,High,Low,Close\n" + "".join(f"{d.strftime(spell)},1,1,1,1\n" for d in days)
    df = read_bars(_write(tmp_path, "SPY.csv", text))
    assert [t.date() for t in df["ts"]] == days


def test_rows_without_prices_in_a_file_without_volume_or_as_nan(tmp_path: Path) -> None:
    text = "ts,open,high,low,close\n2024-01-02,1,1,1,1\n2024-01-03,null,null,null,null\n"
    assert read_bars(_write(tmp_path, "SPY.csv", text + "2024-01-04,1,1,1,1\n")).height == 2
    text = "ts,open,high,low,close,volume\n2024-01-02,1,1,1,1,5\n2024-01-03,NaN,NaN,NaN,NaN,NaN\n"
    assert read_bars(_write(tmp_path, "QQQ.csv", text + "2024-01-04,1,1,1,1,5\n")).height == 2
    with pytest.raises(DataError, match=r"IWM\.csv: no bars: all 2 rows hold no value"):
        read_bars(_write(tmp_path, "IWM.csv", "ts,open,high,low,close\nx,,,,\ny,null,,,\n"))


def test_a_ticker_investing_name_and_the_symbol_flag(tmp_path: Path) -> None:
    from foxhunt.data.read.options import ReadOptions

    text = '"Date","Price","Open","High","Low"\n"Jan 05, 2015","1","1","1","1"\n' * 1
    text += '"Jan 06, 2015","1","1","1","1"\n'
    assert read_bars(_write(tmp_path, "SPY Historical Data.csv", text))["symbol"][0] == "SPY"
    named = _write(tmp_path, "Lean Hogs Futures Historical Data.csv", text)
    got = read_bars(named, options=ReadOptions(symbol="HE"))
    assert got["symbol"].unique().to_list() == ["HE"]


def test_the_symbol_flag_names_a_databento_csv_of_one_instrument(tmp_path: Path) -> None:
    from foxhunt.data.read.options import ReadOptions

    text = "ts_event,instrument_id,open,high,low,close,volume\n" + "".join(
        f"2018-10-01T05:0{m}:00Z,1001,2900,2901,2899,2900,5\n" for m in range(3)
    )
    path = _write(tmp_path, "glbx-mdp3-esz8.ohlcv-1m.csv", text)
    assert read_bars(path, options=ReadOptions(symbol="ES"))["symbol"].unique().to_list() == ["ES"]


def test_a_lone_comma_group_is_not_taken_for_thousands(tmp_path: Path) -> None:
    text = 'ts,open,high,low,close\n2024-01-02,"110,123","110,123","110,123","110,123"\n'
    with pytest.raises(DataError, match=r"column 'open', row 0 .*not a number '110,123'"):
        read_bars(_write(tmp_path, "USDJPY.csv", text))
    # beside decimal commas that are no group of three ("110,2"), quoted: decimals (a localized
    # Investing.com export); session 42, was refused
    text = 'ts,open,high,low,close\n2024-01-02,"110,123","110,2","110,1","110,15"\n'
    row = read_bars(_write(tmp_path, "USDJPY2.csv", text)).row(0, named=True)
    assert [row[k] for k in ("open", "high", "low", "close")] == [110.123, 110.2, 110.1, 110.15]
    text = 'ts,open,high,low,close\n2024-01-02,"1,234,567","1,234,568",1234566,"1,234,567.5"\n'
    df = read_bars(_write(tmp_path, "BTCIDR.csv", text))
    assert df.row(0, named=True)["close"] == 1_234_567.5 and df["open"][0] == 1_234_567.0


@pytest.mark.parametrize(
    ("body", "line"),
    [
        # a download cut short inside a quoted field: polars failed on the timestamps
        ('2024-01-02 09:30,ES,1,2,0.5,1.5,10\n2024-01-02 09:31,"ES\n', 3),
        ('"2024-01-02 09:30",ES,1,2,0.5,1.5,10\n",1,2,0.5,1.5,10\n', 3),  # the other half
        ('2024-01-02 09:30,"ES,1,2,0.5,1.5,10\n', 2),  # alone after the header
    ],
)
def test_an_unclosed_quote_is_one_line_naming_its_line(
    tmp_path: Path, body: str, line: int
) -> None:
    """Once a polars error escaped as a traceback here; now exit 2 and the line to look at."""
    from foxhunt.data.read.csv_damage import unclosed_quote_line

    path = tmp_path / "ES.csv"
    path.write_text("ts,symbol,open,high,low,close,volume\n" + body)
    assert unclosed_quote_line(path) == line
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value) == (
        f"{path} line {line}: a quote opens and does not close on its line (no field of a bar "
        "file spans lines: was the file cut short or edited by hand?)"
    )


def test_quotes_closed_on_their_line_are_not_named(tmp_path: Path) -> None:
    """Quoted fields, one quoted field across two lines (read by polars as one row), and a
    file that is not text: no line is blamed."""
    from foxhunt.data.read.csv_damage import unclosed_quote_line
    from foxhunt.data.read.scan import unreadable

    path = tmp_path / "ES.csv"
    path.write_text('"ts","close"\n"2024-01-02 09:30","1,5"\n')
    assert unclosed_quote_line(path) is None
    assert str(unreadable(path, ValueError("bad\nmore"))) == f"{path}: cannot read (bad)"
    parquet = tmp_path / "ES.parquet"
    parquet.write_bytes(b'"')
    assert str(unreadable(parquet, ValueError("x"))) == f"{parquet}: cannot read (x)"
    assert unclosed_quote_line(tmp_path / "missing.csv") is None


@pytest.mark.parametrize(
    "stamps",
    [
        ["2024-01-02T09:30:00+0000", "2024-01-02T09:31:00+0000"],  # ISO with an offset
        ["1704187800000", "1704187860000"],  # epoch ms
        ["01/02/2024 09:30", "01/02/2024 09:31"],  # a vendor spelling
    ],
)
@pytest.mark.parametrize("junk", ["n/a", "not a time", "-"])
def test_a_first_time_of_junk_is_named_not_guessed_from(
    tmp_path: Path, stamps: list[str], junk: str
) -> None:
    """The spelling is guessed from the first time with a digit: junk in row 0 once made polars
    guess from it and fail the whole file ("cannot read (`strptime` ... no format ...)")."""
    path = tmp_path / "ES.csv"
    rows = [f"{t},1,2,0.5,1.5,10" for t in [junk, *stamps]]
    path.write_text("ts,open,high,low,close,volume\n" + "\n".join(rows) + "\n")
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value).startswith(
        f"{path}: column 'ts', row 0: unparsable timestamp '{junk}'"
    )


def test_the_header_again_inside_the_file_is_no_bar(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two exports joined with ``cat``: the second header is dropped like a blank line, named
    in the warning; a row with a price and text elsewhere is still refused."""
    header = "timestamp,open,high,low,close,volume\n"
    part = [f"2024-01-02 14:3{i}:00,4700.25,4701,4699.5,4700,{i}\n" for i in range(4)]
    text = header + "".join(part[:2]) + header + "".join(part[2:])
    with caplog.at_level(logging.WARNING):
        df = read_bars(_write(tmp_path, "ES.csv", text))
    assert df["volume"].to_list() == [0.0, 1.0, 2.0, 3.0]
    assert "1 rows of" in caplog.text and "the header again; first: row 2" in caplog.text
    half = text.replace(
        "timestamp,open,high,low,close,volume\n2024-01-02 14:32",
        "x,open,1,low,close,volume\n2024-01-02 14:32",
    )
    with pytest.raises(DataError, match="row 2"):
        read_bars(_write(tmp_path, "ES.csv", half))
