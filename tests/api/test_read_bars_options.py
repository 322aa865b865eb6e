"""``foxhunt.read_bars``'s keyword arguments reach the reader, each with its effect
(docs/data.md, "When the guess is wrong"): ``tz``, ``columns``, ``ts_format``, ``bar_minutes``,
``allow_outliers``, ``allow_odd_times`` and ``symbol`` (a one-symbol file's name; a frame's
missing symbol column, ignored when the frame has one), and the caller's kind comes back
(pandas for pandas, polars for polars and for a path). A frame is read from a Parquet file in
a private ``foxhunt-*`` scratch directory that is gone when the call returns."""

from __future__ import annotations

import re
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pytest

from foxhunt.api import read_bars
from foxhunt.data.read import bars as reader
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError, InputError

BAR_COLUMNS = ["ts", "symbol", "open", "high", "low", "close", "volume"]
START = datetime(2024, 1, 3, 15, 0, tzinfo=UTC)  # a Wednesday, CME equity hours
"""ES bars here: 09:00 Chicago, open whether the clock is read as UTC or New York."""


def _bars(n: int = 6, start: datetime = START, **extra: Any) -> pl.DataFrame:
    """``n`` one-minute ES bars from ``start``: close 4800 + i, high/low one point around."""
    close = [4800.0 + i for i in range(n)]
    return pl.DataFrame(
        {
            "ts": [start + timedelta(minutes=i) for i in range(n)],
            "symbol": ["ES"] * n,
            "open": close,
            "high": [c + 1 for c in close],
            "low": [c - 1 for c in close],
            "close": close,
            "volume": [10.0] * n,
            **extra,
        }
    )


def _minutes(start: datetime, n: int, step: int = 1) -> list[datetime]:
    return [start + timedelta(minutes=step * i) for i in range(n)]


def _csv(path: Path, rows: list[str], header: str = "ts,open,high,low,close,volume") -> Path:
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


# -- tz ---------------------------------------------------------------------------------------


def test_tz_reads_naive_frame_times_as_that_zones_wall_clock() -> None:
    naive = _bars(3, start=datetime(2024, 1, 3, 10, 0))  # 10:00 New York is 15:00 UTC
    got = read_bars(naive, tz="America/New_York")
    assert got["ts"].to_list() == _minutes(datetime(2024, 1, 3, 15, 0, tzinfo=UTC), 3)
    # without it the same wall-clock times are UTC
    assert read_bars(naive)["ts"].to_list() == _minutes(datetime(2024, 1, 3, 10, 0, tzinfo=UTC), 3)


def test_tz_reads_naive_csv_times_as_a_fixed_offset(tmp_path: Path) -> None:
    rows = [f"2024-01-03 10:0{i}:00,4800,4801,4799,4800,1" for i in range(3)]
    path = _csv(tmp_path / "ES.csv", rows)
    got = read_bars(path, tz="-05:00")
    assert got["ts"].to_list() == _minutes(datetime(2024, 1, 3, 15, 0, tzinfo=UTC), 3)
    assert read_bars(path)["ts"][0] == datetime(2024, 1, 3, 10, 0, tzinfo=UTC)


# -- columns ----------------------------------------------------------------------------------


def test_columns_name_a_vendors_columns() -> None:
    names = {
        "ts": "stamp",
        "open": "px_o",
        "high": "px_h",
        "low": "px_l",
        "close": "px_c",
        "volume": "qty",
    }
    vendor = _bars(3).rename(names)
    with pytest.raises(DataError) as refused:
        read_bars(vendor)
    assert str(refused.value) == (
        "DataFrame: missing column 'open' (columns: stamp, symbol, px_o, px_h, px_l, px_c, qty); "
        "columns={'open': 'COLUMN'} names it"
    )
    got = read_bars(vendor, columns=names)
    assert got.columns == BAR_COLUMNS
    assert got.equals(read_bars(_bars(3)))
    assert got["close"].to_list() == [4800.0, 4801.0, 4802.0]


def test_a_column_mapping_can_choose_between_two_closes() -> None:
    """Both ``close`` and ``last`` name the close; ``columns`` picks the other one."""
    frame = _bars(3).with_columns(last=pl.col("close") + 0.5)
    assert read_bars(frame)["close"].to_list() == [4800.0, 4801.0, 4802.0]
    got = read_bars(frame, columns={"close": "last"})
    assert got["close"].to_list() == [4800.5, 4801.5, 4802.5]


# -- ts_format --------------------------------------------------------------------------------


def test_ts_format_reads_ambiguous_dates_day_first() -> None:
    stamps = ["01/02/2024 15:00", "01/02/2024 15:01", "01/02/2024 15:02"]
    frame = _bars(3).with_columns(ts=pl.Series(stamps))
    guessed = read_bars(frame, tz="UTC")  # one date fits both: month-first
    assert guessed["ts"].to_list() == _minutes(datetime(2024, 1, 2, 15, 0, tzinfo=UTC), 3)
    got = read_bars(frame, tz="UTC", ts_format="%d/%m/%Y %H:%M")
    assert got["ts"].to_list() == _minutes(datetime(2024, 2, 1, 15, 0, tzinfo=UTC), 3)


def test_ts_format_epoch_s_reads_integers_as_seconds() -> None:
    """Eight-digit integers are dates unless ``epoch-s`` says seconds: then they are 1970, which
    the time axis refuses unless ``allow_odd_times`` keeps it."""
    frame = _bars(3).with_columns(ts=pl.Series([20240102, 20240103, 20240104]))
    days = [datetime(2024, 1, d, tzinfo=UTC) for d in (2, 3, 4)]
    assert read_bars(frame)["ts"].to_list() == days
    with pytest.raises(DataError) as refused:
        read_bars(frame, ts_format="epoch-s")
    assert str(refused.value) == (
        "DataFrame: symbol 'ES': first bar 1970-08-23 06:15:02+00:00 is before 1980: column 'ts' "
        "is misread (dates taken as epoch seconds, or the wrong epoch unit); ts_format=... "
        "(yyyymmdd, epoch-ms, '%Y%m%d %H%M%S', ...) reads it right, or allow_odd_times=True"
    )
    got = read_bars(frame, ts_format="epoch-s", allow_odd_times=True)
    first = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=20240102)
    assert got["ts"].to_list() == [first + timedelta(seconds=i) for i in range(3)]


# -- bar_minutes ------------------------------------------------------------------------------


def test_bar_minutes_aggregates_one_minute_bars() -> None:
    frame = _bars(10)
    assert read_bars(frame).height == 10
    got = read_bars(frame, bar_minutes=5)
    assert got.columns == BAR_COLUMNS
    assert got["ts"].to_list() == _minutes(START, 2, step=5)
    assert got["symbol"].to_list() == ["ES", "ES"]
    assert got["open"].to_list() == [4800.0, 4805.0]
    assert got["high"].to_list() == [4805.0, 4810.0]
    assert got["low"].to_list() == [4799.0, 4804.0]
    assert got["close"].to_list() == [4804.0, 4809.0]
    assert got["volume"].to_list() == [50.0, 50.0]


def test_bar_minutes_out_of_range_is_refused() -> None:
    with pytest.raises(DataError, match=r"^bar_minutes must be 1\.\.1440, got 1441$"):
        read_bars(_bars(3), bar_minutes=1441)


# -- allow_outliers ---------------------------------------------------------------------------


def _with_a_spike() -> pl.DataFrame:
    flat = pl.DataFrame(
        {
            "ts": _minutes(START, 12),
            "symbol": ["ES"] * 12,
            "open": [4800.0] * 12,
            "high": [4801.0] * 5 + [96000.0] + [4801.0] * 6,
            "low": [4799.0] * 12,
            "close": [4800.0] * 12,
            "volume": [10.0] * 12,
        }
    )
    return flat


def test_allow_outliers_keeps_a_bar_refused_without_it() -> None:
    frame = _with_a_spike()
    with pytest.raises(DataError) as refused:
        read_bars(frame)
    assert str(refused.value) == (
        "DataFrame: symbol 'ES', column 'high', row 5 (2024-01-03 15:05:00+00:00): high 96000 is "
        "20 times the median close 4800 of the bars around it (off by orders of magnitude); "
        "allow_outliers=True keeps it"
    )
    got = read_bars(frame, allow_outliers=True)
    assert got.height == 12
    assert got["high"].to_list() == [4801.0] * 5 + [96000.0] + [4801.0] * 6


# -- allow_odd_times --------------------------------------------------------------------------


def test_allow_odd_times_keeps_bars_the_time_axis_refuses() -> None:
    old = _bars(4, start=datetime(1975, 1, 2, 15, 0, tzinfo=UTC))
    with pytest.raises(DataError) as refused:
        read_bars(old)
    assert str(refused.value) == (
        "DataFrame: symbol 'ES': first bar 1975-01-02 15:00:00+00:00 is before 1980: column 'ts' "
        "is misread (dates taken as epoch seconds, or the wrong epoch unit); ts_format=... "
        "(yyyymmdd, epoch-ms, '%Y%m%d %H%M%S', ...) reads it right, or allow_odd_times=True"
    )
    got = read_bars(old, allow_odd_times=True)
    assert got["ts"].to_list() == _minutes(datetime(1975, 1, 2, 15, 0, tzinfo=UTC), 4)


def test_allow_odd_times_keeps_a_file_whose_name_claims_another_interval(tmp_path: Path) -> None:
    rows = [f"2024-01-03 15:0{i}:00+00:00,4800,4801,4799,4800,1" for i in range(6)]
    path = _csv(tmp_path / "ES_5min_bars.csv", rows)
    with pytest.raises(DataError, match="bars are 1min apart but the file name says 5min"):
        read_bars(str(path))
    assert read_bars(str(path), allow_odd_times=True).height == 6


# -- symbol -----------------------------------------------------------------------------------


class _PathLike:
    """An ``os.PathLike`` that is not a ``Path`` (what some file-system libraries hand out)."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def __fspath__(self) -> str:
        return str(self._path)


@pytest.mark.parametrize("as_", [str, Path, _PathLike], ids=["str", "Path", "PathLike"])
def test_symbol_names_a_one_symbol_file(tmp_path: Path, as_: type) -> None:
    rows = [f"2024-01-03 15:0{i}:00+00:00,4800,4801,4799,4800,1" for i in range(3)]
    path = _csv(tmp_path / "es.csv", rows)
    bars = as_(path)
    assert read_bars(bars)["symbol"].to_list() == ["ES"] * 3  # from the file name
    got = read_bars(bars, symbol="NQ")
    assert isinstance(got, pl.DataFrame)
    assert got["symbol"].to_list() == ["NQ"] * 3


def test_symbol_is_refused_for_a_file_with_a_symbol_column(tmp_path: Path) -> None:
    rows = [f"2024-01-03 15:0{i}:00+00:00,ES,4800,4801,4799,4800,1" for i in range(3)]
    path = _csv(tmp_path / "es.csv", rows, header="ts,symbol,open,high,low,close,volume")
    with pytest.raises(DataError) as refused:
        read_bars(path, symbol="NQ")
    assert str(refused.value) == (
        f"{path}: has a symbol column 'symbol'; symbol=... is for files without one"
    )


def test_symbol_names_a_frame_without_a_symbol_column() -> None:
    frame = _bars(3).drop("symbol")
    with pytest.raises(InputError) as refused:
        read_bars(frame)
    assert str(refused.value) == (
        "bars DataFrame: no symbol column (symbol, ticker, instrument, raw_symbol, #ric, ric, "
        "contract, instrument_id, or a Name, Code ... of tickers); pass symbol='ES'"
    )
    got = read_bars(frame, symbol="NQ")
    assert got.columns == BAR_COLUMNS
    assert got["symbol"].to_list() == ["NQ"] * 3


def test_symbol_is_refused_for_a_frame_with_a_symbol_column() -> None:
    """As ``--symbol`` on a file with a symbol column: ``symbol="NQ"`` beside a frame's ES rows
    was ignored without a word until session 45, and the forecasts were ES's."""
    with pytest.raises(InputError) as e:
        read_bars(_bars(3), symbol="NQ")
    assert str(e.value) == (
        "bars DataFrame: has a symbol column 'symbol'; symbol= is for frames without one"
    )
    assert read_bars(_bars(3).drop("symbol"), symbol="NQ")["symbol"].to_list() == ["NQ"] * 3


# -- the caller's kind ------------------------------------------------------------------------


def test_pandas_in_pandas_out_polars_in_polars_out() -> None:
    frame = _bars(4)
    from_polars = read_bars(frame)
    assert isinstance(from_polars, pl.DataFrame)
    from_pandas = read_bars(frame.to_pandas())
    assert isinstance(from_pandas, pd.DataFrame)
    assert list(from_pandas.columns) == BAR_COLUMNS
    assert str(from_pandas["ts"].dtype) == "datetime64[us, UTC]"
    assert from_pandas["close"].tolist() == [4800.0, 4801.0, 4802.0, 4803.0]
    assert pl.from_pandas(from_pandas).equals(from_polars)


def test_a_pandas_datetime_index_is_the_time_column() -> None:
    indexed = _bars(3, start=datetime(2024, 1, 3, 10, 0)).to_pandas().set_index("ts")
    got = read_bars(indexed, tz="America/New_York")
    assert isinstance(got, pd.DataFrame)
    assert list(got["ts"]) == [pd.Timestamp(t) for t in _minutes(START, 3)]
    assert list(got["symbol"]) == ["ES"] * 3


# -- how a frame travels ----------------------------------------------------------------------


def test_the_reader_gets_every_option_and_a_frame_in_a_private_scratch_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[tuple[Path, bool, ReadOptions, bool]] = []
    real = reader.read_bars

    def spy(path: Path, *, allow_outliers: bool, options: ReadOptions) -> pl.DataFrame:
        calls.append((Path(path), allow_outliers, options, Path(path).is_file()))
        return real(path, allow_outliers=allow_outliers, options=options)

    monkeypatch.setattr(reader, "read_bars", spy)
    names = {"ts": "stamp", "close": "px_c"}
    vendor = _bars(10, start=datetime(2024, 1, 3, 10, 0)).rename(names).drop("symbol")
    got = read_bars(
        vendor,
        symbol="NQ",
        tz="America/New_York",
        allow_outliers=True,
        columns=names,
        ts_format="%Y-%m-%d %H:%M:%S",
        bar_minutes=5,
        allow_odd_times=True,
    )
    path, outliers, options, existed = calls.pop()
    assert outliers is True and existed
    assert options == ReadOptions(
        tz="America/New_York",
        symbol=None,  # a frame's symbol is the frame's column, not the reader's --symbol
        columns=("ts=stamp", "close=px_c"),
        ts_format="%Y-%m-%d %H:%M:%S",
        bar_minutes=5,
        allow_odd_times=True,
    )
    assert path.name == "dataframe-0.parquet"
    assert re.fullmatch(r"foxhunt-[a-z0-9_]{8}", path.parent.name), path
    assert path.parent.parent == Path(tempfile.gettempdir())
    assert not path.parent.exists()  # removed when the call returns
    assert got["ts"].to_list() == _minutes(START, 2, step=5)

    rows = [f"2024-01-03 10:0{i}:00,4800,4801,4799,4800,1" for i in range(3)]
    file = _csv(tmp_path / "es.csv", rows)
    read_bars(str(file), symbol="NQ", tz="-05:00")
    path, outliers, options, existed = calls.pop()
    assert path == file and outliers is False and existed
    assert options == ReadOptions(tz="-05:00", symbol="NQ")
    assert file.is_file()  # the caller's file is read in place, never moved


def test_a_frames_file_claims_nothing_of_its_temporary_folder(tmp_path: Path) -> None:
    """``bars-0.parquet`` says nothing of the symbol, so its folder's name was read for one: a
    temporary folder ``foxhunt-4s_6ea6s`` claimed 4-second bars and refused 1-minute ones."""
    from foxhunt.api.frames import bars_path
    from foxhunt.data.read.vendors import guess_from_name

    work = tmp_path / "foxhunt-4s_6ea6s"
    frame = pl.DataFrame({"ts": [START], "symbol": ["ES"], "open": [1.0], "high": [1.0]})
    frame = frame.with_columns(low=pl.lit(1.0), close=pl.lit(1.0), volume=pl.lit(1.0))
    with bars_path(frame, work) as path:
        assert guess_from_name(path).interval is None


def test_a_frames_symbol_column_named_through_columns() -> None:
    """``columns={'symbol': 'Name'}`` on a frame: it was refused as having no symbol column
    (only a made-up ``symbol=`` read it); the column named is the symbol column."""
    named = _bars(3).rename({"symbol": "Security"})
    got = read_bars(named, columns={"symbol": "Security"})
    assert got["symbol"].to_list() == ["ES"] * 3
    with pytest.raises(InputError, match="no symbol column"):
        read_bars(named)
    # a Name of tickers is the symbol column unasked (Kaggle's S&P 500 data set), a Name of
    # companies is not
    assert read_bars(_bars(3).rename({"symbol": "Name"}))["symbol"].to_list() == ["ES"] * 3
    companies = _bars(3).rename({"symbol": "Name"}).with_columns(Name=pl.lit("E-mini S&P 500"))
    with pytest.raises(InputError, match="no symbol column"):
        read_bars(companies)
