"""One bar file read and normalised (data/read/file_read.py), at the edges its mutation run left
untested: which columns of delimited text are read as numbers first and the read again all as
text when a value is no number (with the same day-first choice), the user's ``--columns`` in
both reads, a K/M/B suffix scaled in the volume only, a decimal comma in the volume and kept
columns, columns of a type that holds no numbers or no time, the pandas index column of a
parquet file, a ``--ts-format`` and ambiguous dates over ``date`` + ``time`` columns, Databento's
``instrument_id`` under ``--symbol``, what was guessed about a file, and the refusals (a missing
column, an unreadable or column-less parquet file) word for word.

Frames are built inside the tests (never at import: mutmut's forked workers hang on it).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read import scan
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.file_read import FileRead, read_file
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.validate import EMPTY_COLUMN, FILE_COLUMN, ROW_COLUMN
from foxhunt.errors import DataError

_LOGGER = "foxhunt.data.read.file_read"


def _utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _read(
    path: Path,
    *,
    index: int = 0,
    dayfirst: bool | None = None,
    keep: tuple[str, ...] = (),
    **options: object,
) -> FileRead:
    return read_file(path, index, ReadOptions(**options), dayfirst, keep)  # type: ignore[arg-type]


@pytest.fixture
def scanned_as_numbers(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The columns each scan of a CSV file was asked to read as numbers, in order."""
    calls: list[tuple[str, ...]] = []
    real = scan.scan_csv_text

    def spy(path: Path, dialect: object, numeric: tuple[str, ...] = ()) -> pl.LazyFrame:
        calls.append(tuple(numeric))
        return real(path, dialect, numeric)  # type: ignore[arg-type]

    monkeypatch.setattr(scan, "scan_csv_text", spy)
    return calls


# ------------------------------------------------------------- numbers first, else all text


def test_prices_and_volume_are_read_as_numbers_in_one_scan(
    tmp_path: Path, scanned_as_numbers: list[tuple[str, ...]]
) -> None:
    path = _write(
        tmp_path / "ES.csv",
        "Timestamp,Open,High,Low,Close,Volume,spread\n"
        "2024-01-02 09:30:00,1.5,2.0,1.0,1.75,100,0.25\n"
        "2024-01-02 09:31:00,1.75,2.5,1.5,2.25,200,0.5\n",
    )
    read = _read(path, index=7, keep=("spread",))
    # the kept column and the time stay text (read by name later); one scan, nothing re-read
    assert scanned_as_numbers == [("Open", "High", "Low", "Close", "Volume")]
    assert read.frame.schema == pl.Schema(
        {
            "ts": pl.Datetime("us", "UTC"),
            "symbol": pl.String,
            "open": pl.Float64,
            "high": pl.Float64,
            "low": pl.Float64,
            "close": pl.Float64,
            "volume": pl.Float64,
            "spread": pl.Float64,
            EMPTY_COLUMN: pl.Boolean,
            FILE_COLUMN: pl.UInt32,
            ROW_COLUMN: pl.UInt32,
        }
    )
    assert read.frame.to_dict(as_series=False) == {
        "ts": [_utc(2024, 1, 2, 9, 30), _utc(2024, 1, 2, 9, 31)],
        "symbol": ["ES", "ES"],
        "open": [1.5, 1.75],
        "high": [2.0, 2.5],
        "low": [1.0, 1.5],
        "close": [1.75, 2.25],
        "volume": [100.0, 200.0],
        "spread": [0.25, 0.5],
        EMPTY_COLUMN: [False, False],
        FILE_COLUMN: [7, 7],
        ROW_COLUMN: [0, 1],
    }
    assert read.spell == {
        "open": "Open",
        "high": "High",
        "low": "Low",
        "close": "Close",
        "volume": "Volume",
        "ts": "Timestamp",
        "spread": "spread",
    }
    assert (read.extra, read.ignored) == (("spread",), ())


def test_a_file_without_volume_reads_its_four_prices_as_numbers_and_volume_zero(
    tmp_path: Path, scanned_as_numbers: list[tuple[str, ...]], caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(
        tmp_path / "CL.csv",
        "ts,open,high,low,close\n2024-01-02T09:30:00Z,70.5,71,70,70.25\n",
    )
    with caplog.at_level(logging.WARNING, logger=_LOGGER):
        read = _read(path)
    assert scanned_as_numbers == [("open", "high", "low", "close")]
    assert read.frame["volume"].dtype == pl.Float64
    assert read.frame["volume"].to_list() == [0.0]
    assert read.frame["close"].to_list() == [70.25]
    assert "volume" not in read.spell
    assert [r.getMessage() for r in caplog.records] == [
        f"no volume column in {path}: volume features will be constant"
    ]


def test_a_value_that_is_no_number_reads_the_file_again_as_text_with_the_same_day_first(
    tmp_path: Path, scanned_as_numbers: list[tuple[str, ...]]
) -> None:
    # "1.5K" fails the read as numbers; the second read, all text, must still read 01/02 as
    # 1 February when the caller says day-first (alone, the dates would read month-first)
    path = _write(
        tmp_path / "ES.csv",
        "ts,open,high,low,close,volume\n"
        "01/02/2024 09:30,1,2,0.5,1.5K,10\n"
        "01/02/2024 09:31,1,2,0.5,1.5,2.5K\n",
    )
    read = _read(path, dayfirst=True)
    assert scanned_as_numbers == [("open", "high", "low", "close", "volume"), ()]
    assert read.frame["ts"].to_list() == [_utc(2024, 2, 1, 9, 30), _utc(2024, 2, 1, 9, 31)]
    # a K/M/B suffix is a volume's (Investing.com): a price written so is no number
    assert read.frame["close"].to_list() == [None, 1.5]
    assert read.frame["volume"].to_list() == [10.0, 2500.0]
    with pytest.raises(DataError) as refused:
        read_bars(path, dayfirst=True)
    assert str(refused.value) == (
        f"{path}: column 'close', row 0 (2024-02-01 09:30:00+00:00): not a number '1.5K'"
    )


def test_the_columns_the_user_names_are_the_ones_read_as_numbers(
    tmp_path: Path, scanned_as_numbers: list[tuple[str, ...]]
) -> None:
    path = _write(
        tmp_path / "ES.csv",
        "Time,A,B,C,D,Qty\n2024-01-02T09:30:00Z,1,3,0.5,2,40\n",
    )
    columns = ("open=A", "high=B", "low=C", "close=D", "volume=Qty")
    read = _read(path, columns=columns)
    assert scanned_as_numbers == [("A", "B", "C", "D", "Qty")]
    assert read.spell == {
        "open": "A",
        "high": "B",
        "low": "C",
        "close": "D",
        "volume": "Qty",
        "ts": "Time",
    }
    row = read.frame.select("ts", "open", "high", "low", "close", "volume").row(0)
    assert row == (_utc(2024, 1, 2, 9, 30), 1.0, 3.0, 0.5, 2.0, 40.0)


def test_a_column_the_user_names_that_the_file_lacks_is_refused_naming_the_file(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path / "ES.csv", "ts,open,high,low,close\n2024-01-02T09:30:00Z,1,2,0.5,1.5\n")
    with pytest.raises(DataError) as refused:
        _read(path, columns=("close=Last",))
    assert str(refused.value) == (
        f"{path}: --columns close=Last: no column 'Last' (columns: ts, open, high, low, close)"
    )


def test_a_file_without_a_time_column_is_refused_naming_its_columns(tmp_path: Path) -> None:
    path = _write(tmp_path / "ES.csv", "when,open,high,low,close\nx,1,2,0.5,1.5\n")
    with pytest.raises(DataError) as refused:
        _read(path)
    assert str(refused.value) == (
        f"{path}: missing column 'ts' (a timestamp column such as ts, timestamp, ts_event, "
        "datetime, or date and time; columns: when, open, high, low, close); --columns "
        "ts=COLUMN names it (or date=COLUMN,time=COLUMN)"
    )


# ------------------------------------------------------------------ values of each column


def test_a_decimal_comma_reads_in_the_volume_and_the_kept_columns(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "ES.csv",
        "ts;open;high;low;close;volume;spread\n"
        "2024-01-02 09:30;1,5;2,25;1;1,75;1234,5;0,25\n"
        "2024-01-02 09:31;1,75;2,5;1,5;2;10;0,5\n",
    )
    read = _read(path, keep=("spread",))
    frame = read.frame.select("open", "high", "low", "close", "volume", "spread")
    assert frame.rows() == [(1.5, 2.25, 1.0, 1.75, 1234.5, 0.25), (1.75, 2.5, 1.5, 2.0, 10.0, 0.5)]


def test_a_kept_column_is_read_like_a_price_without_a_suffix(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "ES.csv",
        "ts,open,high,low,close,volume,oi\n"
        "2024-01-02 09:30,1,2,0.5,1.5,10,1.5K\n"
        '2024-01-02 09:31,1,2,0.5,1.5,10,"1,234,567"\n',
    )
    read = _read(path, keep=("oi",))
    assert read.frame["oi"].to_list() == [None, 1234567.0]
    with pytest.raises(DataError) as refused:
        read_bars(path, keep=("oi",))
    assert str(refused.value) == (
        f"{path}: column 'oi', row 0 (2024-01-02 09:30:00+00:00): not a number '1.5K'"
    )


def test_a_kept_column_the_file_lacks_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "ES.csv", "ts,open,high,low,close\n2024-01-02T09:30:00Z,1,2,0.5,1.5\n")
    with pytest.raises(DataError) as refused:
        _read(path, keep=("spread",))
    assert str(refused.value) == (
        f"{path}: column 'spread' is missing; an input column must be an extra numeric column "
        "of the bars (columns: ts, open, high, low, close)"
    )


@pytest.mark.parametrize(
    ("column", "values", "keep", "message"),
    [
        ("volume", [datetime(2024, 1, 2).date()], (), "column 'volume' has type Date, not numbers"),
        ("close", [True], (), "column 'close' has type Boolean, not numbers"),
        ("flag", [True], ("flag",), "column 'flag' has type Boolean, not numbers"),
        ("ts", [True], (), "column 'ts' has type Boolean, which is not a timestamp"),
    ],
)
def test_a_parquet_column_of_a_type_without_numbers_or_times_is_refused_by_name(
    tmp_path: Path, column: str, values: list[object], keep: tuple[str, ...], message: str
) -> None:
    frame = pl.DataFrame(
        {
            "ts": [_utc(2024, 1, 2, 9, 30)],
            "open": [1.0],
            "high": [2.0],
            "low": [0.5],
            "close": [1.5],
            "volume": [10.0],
        }
    ).with_columns(pl.Series(column, values))
    path = tmp_path / "ES.parquet"
    frame.write_parquet(path)
    with pytest.raises(DataError) as refused:
        _read(path, keep=keep)
    assert str(refused.value) == f"{path}: {message}"


# ---------------------------------------------------------------------------- parquet files


def test_a_pandas_integer_index_of_a_parquet_file_is_not_its_time(tmp_path: Path) -> None:
    path = tmp_path / "ES.parquet"
    pl.DataFrame(
        {
            "__index_level_0__": [0, 1],
            "date": [datetime(2024, 1, 2, 9, 30), datetime(2024, 1, 2, 9, 31)],
            "open": [1.0, 1.5],
            "high": [2.0, 2.5],
            "low": [0.5, 1.0],
            "close": [1.5, 2.0],
            "volume": [10, 20],
        }
    ).write_parquet(path)
    read = _read(path)
    assert read.spell["ts"] == "date"
    assert read.frame["ts"].to_list() == [_utc(2024, 1, 2, 9, 30), _utc(2024, 1, 2, 9, 31)]
    assert read.frame["volume"].to_list() == [10.0, 20.0]
    assert (read.extra, read.naive) == ((), True)


def test_a_parquet_file_without_columns_is_refused_for_its_missing_open(tmp_path: Path) -> None:
    path = tmp_path / "ES.parquet"
    pl.DataFrame().write_parquet(path)
    with pytest.raises(DataError) as refused:
        _read(path)
    assert str(refused.value) == (
        f"{path}: missing column 'open' (columns: ); --columns open=COLUMN names it"
    )


def test_a_damaged_parquet_file_is_refused_with_the_readers_first_line(tmp_path: Path) -> None:
    path = tmp_path / "ES.parquet"
    path.write_bytes(b"PAR1 not a parquet file at all")
    with pytest.raises(DataError) as refused:
        _read(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: cannot read (parquet: ")
    assert "File out of specification" in message
    assert message.endswith(")")
    assert "\n" not in message


# --------------------------------------------------------------------- date + time columns


def test_date_and_time_columns_read_with_the_users_format_in_the_users_zone(
    tmp_path: Path,
) -> None:
    path = _write(
        tmp_path / "ES.csv",
        "Date,Time,Open,High,Low,Close,Volume\n"
        "02/01/2024,09:30,1,2,0.5,1.5,10\n"
        "02/01/2024,09:31,1,2,0.5,1.5,10\n",
    )
    read = _read(path, ts_format="%d/%m/%Y %H:%M", tz="America/New_York")
    # 09:30 in New York in January (EST, UTC-5) is 14:30 UTC; the format given is no guess
    assert read.frame["ts"].to_list() == [_utc(2024, 1, 2, 14, 30), _utc(2024, 1, 2, 14, 31)]
    assert read.frame["ts"].dtype == pl.Datetime("us", "UTC")
    assert read.spell["ts"] == "Date+Time"
    assert (read.naive, read.zone) == (True, "America/New_York")
    assert read.guesses == ("symbol ES from the file name; --symbol to change",)


def _ambiguous_date_and_time(tmp_path: Path) -> Path:
    return _write(
        tmp_path / "ES.csv",
        "Date,Time,Open,High,Low,Close\n01/02/2024,09:30,1,2,0.5,1.5\n01/02/2024,09:31,1,2,0.5,1.5\n",
    )


def test_ambiguous_date_and_time_columns_read_day_first_when_told(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _ambiguous_date_and_time(tmp_path)
    with caplog.at_level(logging.WARNING, logger="foxhunt.data.read.timestamps"):
        read = _read(path, dayfirst=True)
    assert read.frame["ts"].to_list() == [_utc(2024, 2, 1, 9, 30), _utc(2024, 2, 1, 9, 31)]
    assert "'Date+Time' read as %d/%m/%Y %H:%M; --ts-format to change" in read.guesses
    assert [r for r in caplog.records if r.name == "foxhunt.data.read.timestamps"] == []


def test_ambiguous_date_and_time_columns_warn_naming_the_file_and_both_columns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _ambiguous_date_and_time(tmp_path)
    with caplog.at_level(logging.WARNING, logger="foxhunt.data.read.timestamps"):
        read = _read(path)
    assert read.frame["ts"].to_list() == [_utc(2024, 1, 2, 9, 30), _utc(2024, 1, 2, 9, 31)]
    warned = [r.getMessage() for r in caplog.records if r.name == "foxhunt.data.read.timestamps"]
    assert warned == [
        f"dates in {path} 'Date'+'Time' fit both day-first and month-first "
        "(e.g. '01/02/2024 09:30') and span the same time either way: read month-first; "
        "--ts-format '%d/%m/%Y %H:%M' reads them the other way"
    ]


# ------------------------------------------------------------------------- what was guessed


def test_naive_times_of_an_unknown_vendor_are_guessed_utc_and_said_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(
        tmp_path / "ES.csv", "ts,open,high,low,close,volume\n2024-01-02 09:30,1,2,0.5,1.5,10\n"
    )
    with caplog.at_level(logging.WARNING, logger=_LOGGER):
        read = _read(path)
    assert read.guesses == (
        "symbol ES from the file name; --symbol to change",
        "naive timestamps read as UTC (no zone in the file); --tz to change",
    )
    assert (read.naive, read.zone, read.claim) == (True, "UTC", None)
    assert [r.getMessage() for r in caplog.records] == [
        f"naive timestamps in {path} taken as UTC; pass --tz ZONE if they are local"
    ]


def test_naive_times_of_a_histdata_file_are_read_on_its_clock_and_said_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(
        tmp_path / "DAT_ASCII_EURUSD_M1_2020.csv",
        "ts,open,high,low,close,volume\n2020-01-02 17:00,1.12,1.13,1.11,1.125,0\n",
    )
    with caplog.at_level(logging.WARNING, logger=_LOGGER):
        read = _read(path)
    # 17:00 EST is 22:00 UTC; the name claims one-minute bars
    assert read.frame["ts"].to_list() == [_utc(2020, 1, 2, 22, 0)]
    assert read.frame["symbol"].to_list() == ["EURUSD"]
    assert read.guesses == (
        "symbol EURUSD from histdata's file name; --symbol to change",
        "naive timestamps read as America/New_York (the clock of histdata's file name); "
        "--tz to change",
    )
    assert (read.zone, read.claim) == ("America/New_York", timedelta(minutes=1))
    assert caplog.records == []  # not UTC: nothing to warn about


def test_databento_instrument_ids_under_symbol_are_an_ignored_extra_column(
    tmp_path: Path,
) -> None:
    path = _write(
        tmp_path / "glbx.csv",
        "ts_event,instrument_id,open,high,low,close,volume\n"
        "2024-01-02T09:30:00Z,42,1,2,0.5,1.5,10\n",
    )
    read = _read(path, symbol=" ES ")
    assert read.frame["symbol"].to_list() == ["ES"]
    assert read.frame["symbol"].dtype == pl.String
    assert "symbol" not in read.spell
    assert (read.extra, read.ignored) == (("instrument_id",), ("instrument_id",))
    assert read.guesses == ()
