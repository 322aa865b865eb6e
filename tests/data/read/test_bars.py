"""read_bars: accepted layouts, validation messages, and the CLI's handling of bad input."""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from polars.testing import assert_frame_equal

from foxhunt.cli import main
from foxhunt.data.read.bars import BAR_COLUMNS, ignored_lines, read_bars, symbol_from_filename
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError


@pytest.fixture(scope="module")
def small() -> pl.DataFrame:
    """40 valid ES bars with float volume, as read_bars returns them."""
    return demo_bars(40, seed=5).with_columns(pl.col("volume").cast(pl.Float64))


def _as_text(df: pl.DataFrame) -> pl.DataFrame:
    return df.with_columns(
        pl.col("ts").dt.strftime("%Y-%m-%d %H:%M:%S"), pl.exclude("ts").cast(pl.String)
    )


def _set(df: pl.DataFrame, row: int, **values: str | None) -> pl.DataFrame:
    """Text frame with cells of ``row`` replaced."""
    idx = pl.int_range(pl.len())
    return df.with_columns(
        [
            pl.when(idx == row).then(pl.lit(v)).otherwise(pl.col(c)).alias(c)
            for c, v in values.items()
        ]
    )


def test_roundtrip_parquet_and_csv(small: pl.DataFrame, tmp_path: Path) -> None:
    small.write_parquet(tmp_path / "a.parquet")
    _as_text(small).write_csv(tmp_path / "a.csv")
    for name in ("a.parquet", "a.csv"):
        got = read_bars(tmp_path / name)
        assert got.columns == list(BAR_COLUMNS)
        assert got.schema["ts"] == pl.Datetime("us", "UTC")
        assert all(got.schema[c] == pl.Float64 for c in ("open", "high", "low", "close", "volume"))
        assert_frame_equal(got, small)


def test_column_spellings_naive_utc_and_symbol_from_name(
    small: pl.DataFrame, tmp_path: Path
) -> None:
    text = (
        _as_text(small)
        .drop("symbol")
        .rename(
            {
                "ts": "Timestamp",
                "open": "Open",
                "high": "HIGH",
                "low": "l",
                "close": "Close",
                "volume": "v",
            }
        )
    )
    path = tmp_path / "ES_FUT_small.csv"
    text.write_csv(path)
    got = read_bars(path)
    assert got["symbol"].unique().to_list() == ["ES"]
    assert_frame_equal(got, small)  # naive strings were taken as UTC


def test_symbol_from_filename() -> None:
    assert symbol_from_filename(Path("ES_FUT_small.parquet")) == "ES"
    assert symbol_from_filename(Path("/x/esh4.csv")) == "ESH4"
    assert symbol_from_filename(Path("6E-1m.csv")) == "6E"


def test_offsets_epoch_ns_and_pandas_index(small: pl.DataFrame, tmp_path: Path) -> None:
    # ISO strings with a -06:00 offset end up in UTC.
    ct = small.with_columns(
        pl.col("ts").dt.convert_time_zone("America/Chicago").dt.strftime("%Y-%m-%dT%H:%M:%S%:z")
    ).rename({"ts": "datetime"})
    ct.write_csv(tmp_path / "offset.csv")
    assert_frame_equal(read_bars(tmp_path / "offset.csv"), small)
    # Databento style: integer epoch nanoseconds in ts_event.
    ns = small.with_columns((pl.col("ts").dt.epoch("us") * 1000).alias("ts_event")).drop("ts")
    ns.write_parquet(tmp_path / "dbn.parquet")
    assert_frame_equal(read_bars(tmp_path / "dbn.parquet"), small)
    # pandas' unnamed index: parquet __index_level_0__ and a CSV header "".
    t = (
        small.drop("ts")
        .to_arrow()
        .append_column(
            "__index_level_0__", pa.array(small["ts"].dt.replace_time_zone(None).to_list())
        )
    )
    pq.write_table(t, tmp_path / "pandas.parquet")
    assert_frame_equal(read_bars(tmp_path / "pandas.parquet"), small)
    _as_text(small).rename({"ts": ""}).write_csv(tmp_path / "pandas.csv")
    assert_frame_equal(read_bars(tmp_path / "pandas.csv"), small)


def test_date_and_time_columns(small: pl.DataFrame, tmp_path: Path) -> None:
    df = small.with_columns(
        pl.col("ts").dt.strftime("%Y-%m-%d").alias("Date"),
        pl.col("ts").dt.strftime("%H:%M:%S").alias("Time"),
    ).drop("ts")
    df.write_csv(tmp_path / "dt.csv")
    assert_frame_equal(read_bars(tmp_path / "dt.csv"), small)


def test_a_date_column_follows_tz_as_text_dates_do(tmp_path: Path) -> None:
    """Daily bars dated by a parquet ``date`` column were read at midnight UTC whatever --tz
    said, while the same dates as text were local midnights: the two files disagreed."""
    days = pl.date_range(datetime(2024, 1, 2), datetime(2024, 3, 29), "1d", eager=True)
    days = days.filter(days.dt.weekday() <= 5)
    price = pl.Series([100.0 + (i % 7) for i in range(days.len())])
    df = pl.DataFrame(
        {"date": days, "open": price, "high": price + 1, "low": price - 1, "close": price + 0.5}
    )
    df.write_parquet(tmp_path / "ES.parquet")
    df.with_columns(pl.col("date").cast(pl.String)).write_csv(tmp_path / "ES.csv")
    for tz, hour in (("America/New_York", 5), (None, 0)):
        typed = read_bars(tmp_path / "ES.parquet", tz=tz)
        assert_frame_equal(typed, read_bars(tmp_path / "ES.csv", tz=tz))
        assert typed["ts"][0] == datetime(2024, 1, 2, hour, tzinfo=UTC)


def test_directory_and_glob(tmp_path: Path) -> None:
    es = demo_bars(30, seed=1, symbol="ES").drop("symbol")
    nq = demo_bars(25, seed=2, symbol="NQ").drop("symbol")
    es.write_parquet(tmp_path / "ES_5m.parquet")
    nq.write_csv(tmp_path / "NQ_5m.csv")
    (tmp_path / "notes.txt").write_text("ignored")
    got = read_bars(tmp_path)
    assert got.group_by("symbol", maintain_order=True).len().rows() == [("ES", 30), ("NQ", 25)]
    assert read_bars(str(tmp_path / "N*.csv"))["symbol"].unique().to_list() == ["NQ"]


def test_unsorted_input_is_sorted_with_warning(
    panel_bars: pl.DataFrame, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    panel_bars.sample(fraction=1.0, shuffle=True, seed=3).write_parquet(tmp_path / "x.parquet")
    with caplog.at_level(logging.WARNING, logger="foxhunt.data.read.validate"):
        got = read_bars(tmp_path / "x.parquet")
    assert "not in time order" in caplog.text
    assert_frame_equal(got, panel_bars)


def test_interleaved_symbols_sorted_without_warning(
    panel_bars: pl.DataFrame, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    panel_bars.sort("ts", "symbol").write_parquet(tmp_path / "x.parquet")
    with caplog.at_level(logging.WARNING, logger="foxhunt.data.read.validate"):
        got = read_bars(tmp_path / "x.parquet")
    assert caplog.text == ""
    assert_frame_equal(got, panel_bars)


def _bad_cases(small: pl.DataFrame) -> dict[str, tuple[pl.DataFrame | str, str]]:
    t = _as_text(small)
    ts17 = small["ts"][17]
    row17 = small.row(17, named=True)
    top = max(row17["open"], row17["close"])
    bottom = min(row17["open"], row17["close"])
    # a second bar at row 10's time with another volume (an exact repeat is read once)
    dup = pl.concat([t.head(11), _set(t.slice(10, 1), 0, volume="7"), t.slice(11)])
    return {
        "missing column": (t.drop("close"), "missing column 'close'"),
        "unparsable timestamp": (
            _set(t, 5, ts="not-a-time"),
            "column 'ts', row 5: unparsable timestamp 'not-a-time'",
        ),
        "null timestamp": (_set(t, 7, ts=None), "column 'ts', row 7: null timestamp"),
        "missing value": (_set(t, 4, open=None), "column 'open', row 4"),
        "not a number": (_set(t, 6, volume="abc"), "column 'volume', row 6"),
        "nan price": (_set(t, 9, close="NaN"), "column 'close', row 9"),
        "inf price": (_set(t, 3, high="inf"), "column 'high', row 3"),
        "non-positive price": (_set(t, 4, low="0"), "non-positive price low 0.0"),
        "high below body": (
            _set(t, 17, high=str(top - 1.0)),
            f"column 'high', row 17 ({ts17}): high {top - 1.0} < max(open, close) {top}",
        ),
        "low above body": (
            _set(t, 17, low=str(bottom + 1.0)),
            f"column 'low', row 17 ({ts17}): low {bottom + 1.0} > min(open, close) {bottom}",
        ),
        "negative volume": (_set(t, 12, volume="-5"), "column 'volume', row 12"),
        "duplicate bar": (
            dup,
            "row 11 (" + str(small["ts"][10]) + "): duplicate bar for symbol 'ES'",
        ),
        "empty file": (t.head(0), "empty file"),
        "zero-byte file": ("", "empty file"),
        "too few bars": (
            t,
            "symbol 'ES' has 40 bars; need at least 211 (warm-up 200 + horizon 10 + 1)",
        ),
    }


_CASES = [
    "missing column",
    "unparsable timestamp",
    "null timestamp",
    "missing value",
    "not a number",
    "nan price",
    "inf price",
    "non-positive price",
    "high below body",
    "low above body",
    "negative volume",
    "duplicate bar",
    "empty file",
    "zero-byte file",
    "too few bars",
]


@pytest.mark.parametrize("case", _CASES)
def test_bad_input_cli_exit_2_message_and_no_output(
    case: str, small: pl.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, message = _bad_cases(small)[case]
    bars = tmp_path / "bars.csv"
    if isinstance(data, str):
        bars.write_text(data)
    else:
        data.write_csv(bars)
    out = tmp_path / "features.parquet"
    rc = main(["features", "--bars", str(bars), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err, err
    assert str(bars) in err
    assert err.count("\n") == 1  # one line, no traceback
    assert list(tmp_path.iterdir()) == [bars]  # no output, no temp file


@pytest.mark.slow
def test_unknown_symbol_never_stops_a_run(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 12: an unknown symbol gets neutral instrument values and one warning naming it and
    the option, not an error."""
    bars = tmp_path / "bars.csv"
    # FOO1 is no ticker shape: unknown, 24/7 (FOO would be taken for a stock on the NYSE
    # calendar, where these Globex-hours bars are 85 % in closed hours: refused, issue 27).
    demo_bars(220, seed=5).with_columns(symbol=pl.lit("FOO1")).write_csv(bars)
    out = tmp_path / "features.parquet"
    with caplog.at_level("WARNING"):
        rc = main(["features", "--bars", str(bars), "--out", str(out)])
    assert rc == 0 and out.is_file()
    warnings = [r.getMessage() for r in caplog.records if "FOO1" in r.getMessage()]
    assert len(warnings) == 1 and "--instruments" in warnings[0], warnings


def test_bad_values_named_in_read_bars(small: pl.DataFrame, tmp_path: Path) -> None:
    t = _as_text(small)
    _set(t, 6, volume="abc").write_csv(tmp_path / "a.csv")
    with pytest.raises(
        DataError, match=r"a.csv: column 'volume', row 6 \(.*\): not a number 'abc'"
    ):
        read_bars(tmp_path / "a.csv")
    _set(t, 4, open=None).write_csv(tmp_path / "b.csv")
    with pytest.raises(DataError, match="column 'open', row 4 .*: missing value"):
        read_bars(tmp_path / "b.csv")
    _set(t, 9, close="NaN").write_csv(tmp_path / "c.csv")
    with pytest.raises(DataError, match="close is nan"):
        read_bars(tmp_path / "c.csv")


def test_bad_row_in_second_file_names_that_file(small: pl.DataFrame, tmp_path: Path) -> None:
    t = _as_text(small)
    t.write_csv(tmp_path / "a_ES.csv")
    _set(t.with_columns(symbol=pl.lit("NQ")), 8, volume="-1").write_csv(tmp_path / "b_NQ.csv")
    with pytest.raises(DataError, match=r"b_NQ.csv: column 'volume', row 8 .*negative volume -1.0"):
        read_bars(tmp_path)


def test_duplicate_across_files(small: pl.DataFrame, tmp_path: Path) -> None:
    small.head(20).write_parquet(tmp_path / "a.parquet")
    later = small.slice(19)
    later.with_columns(pl.col("volume").shift(-1, fill_value=3.0)).write_parquet(
        tmp_path / "b.parquet"
    )
    with pytest.raises(
        DataError, match=r"b.parquet: column 'ts', row 0 .*duplicate bar.*a.parquet row 19"
    ):
        read_bars(tmp_path)


def test_bars_repeated_exactly_across_files_are_read_once(
    small: pl.DataFrame, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Monthly downloads that overlap by a few bars: the same bars twice are read once, one
    warning naming the first repeat (they were refused as duplicates)."""
    small.head(20).write_parquet(tmp_path / "a.parquet")
    small.slice(17).write_parquet(tmp_path / "b.parquet")
    with caplog.at_level(logging.WARNING):
        bars = read_bars(tmp_path)
    assert bars.equals(read_bars(_one(small, tmp_path)))
    assert (
        f"3 bars repeat another exactly (same symbol, time and values: overlapping downloads?) "
        f"and are read once; first: {tmp_path / 'b.parquet'}: column 'ts', row 0"
    ) in caplog.text


def test_missing_path_and_min_bars(small: pl.DataFrame, tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such file"):
        read_bars(tmp_path / "nope.parquet")
    with pytest.raises(DataError, match="matches no"):
        read_bars(str(tmp_path / "*.parquet"))
    small.write_parquet(tmp_path / "a.parquet")
    assert read_bars(tmp_path / "a.parquet", min_bars=40).height == 40
    with pytest.raises(DataError, match="has 40 bars; need at least 41"):
        read_bars(tmp_path / "a.parquet", min_bars=41)


def test_timestamp_units(small: pl.DataFrame, tmp_path: Path) -> None:
    first = datetime(2024, 1, 1, 23, 0, tzinfo=UTC)
    for unit, scale in (("s", 10**-6), ("ms", 10**-3), ("us", 1)):
        df = small.with_columns(
            (pl.col("ts").dt.epoch("us").cast(pl.Float64) * scale).cast(pl.Int64).alias("time")
        ).drop("ts")
        df.write_parquet(tmp_path / f"{unit}.parquet")
        got = read_bars(tmp_path / f"{unit}.parquet")
        assert got["ts"][0] == first, unit


def test_slash_dates_and_epoch_text(small: pl.DataFrame, tmp_path: Path) -> None:
    daily = small.head(20).with_columns(
        pl.date_range(pl.date(1999, 1, 4), pl.date(1999, 1, 23), eager=True)
        .cast(pl.Datetime("us"))
        .dt.replace_time_zone("UTC")
        .alias("ts")
    )
    for fmt in ("%m/%d/%Y", "%d/%m/%Y"):  # 1/13/1999 vs 13/1/1999: the parsable one is chosen
        daily.with_columns(pl.col("ts").dt.strftime(fmt).alias("Date")).drop("ts").write_csv(
            tmp_path / "d.csv"
        )
        assert_frame_equal(read_bars(tmp_path / "d.csv"), daily, check_row_order=True)
    # Integer epoch nanoseconds stored as CSV text.
    small.with_columns((pl.col("ts").dt.epoch("us") * 1000).alias("ts_event")).drop("ts").write_csv(
        tmp_path / "e.csv"
    )
    assert_frame_equal(read_bars(tmp_path / "e.csv"), small)


@pytest.mark.parametrize(
    "second,message",
    [
        (
            "2024-01-02T10:01:00+00:00",
            "has a UTC offset while the column's other timestamps do not",
        ),
        ("2024-01-02 1x:01:00", "unparsable timestamp '2024-01-02 1x:01:00'"),
    ],
    ids=["offset-among-naive", "garbage"],
)
def test_mixed_naive_and_offset_timestamps_are_named_as_such(
    second: str, message: str, tmp_path: Path
) -> None:
    """Issue 17: a valid timestamp in a column of the other kind is not 'unparsable'."""
    path = tmp_path / "ES.csv"
    path.write_text(
        "ts,open,high,low,close,volume\n2024-01-02 10:00:00,1,1,1,1,1\n" + second + ",1,1,1,1,1\n"
    )
    with pytest.raises(DataError, match=re.escape(message)):
        read_bars(path)


def test_ignored_columns_are_one_line_per_column_set_not_one_per_file(tmp_path: Path) -> None:
    files = [tmp_path / f"F_{c}.txt" for c in "ABCDE"]
    ignored = [(" OI", " P"), ("OI", "P"), (), ("OI", "P"), ("RINFO",)]
    assert ignored_lines(files, ignored) == [
        f"ignored columns in 3 files under {tmp_path} (F_A.txt, F_B.txt, F_D.txt): OI, P",
        f"ignored columns in {files[4]}: RINFO",
    ]
    many = ignored_lines(files, [("OI",)] * 5)
    assert many == [
        f"ignored columns in 5 files under {tmp_path} (F_A.txt, F_B.txt, F_C.txt, ...): OI"
    ]
    assert ignored_lines(files, [()] * 5) == []


def _one(small: pl.DataFrame, tmp_path: Path) -> Path:
    (tmp_path / "one").mkdir()
    small.write_parquet(tmp_path / "one" / "all.parquet")
    return tmp_path / "one" / "all.parquet"


@pytest.mark.parametrize("order", [("symbol", "ts"), ("ts", "symbol")])
def test_a_pandas_multiindex_without_level_names_reads_its_time_and_symbol(
    tmp_path: Path, order: tuple[str, str]
) -> None:
    """``df.set_index(["symbol", "ts"])`` with the names dropped, saved to parquet: the level of
    datetimes is the time, the level of text the symbol (``__index_level_0__``, the symbols,
    was taken for the time: "unparsable timestamp 'ES'")."""
    import pandas as pd

    ts = pd.date_range("2024-01-02 14:30", periods=5, freq="1min", tz="UTC")
    frame = pd.DataFrame(
        {c: [4700.0 + i for i in range(5)] for c in ("open", "high", "low", "close")}
    )
    frame["volume"] = 7.0
    arrays = {"symbol": ["NQ"] * 5, "ts": ts}
    frame.index = pd.MultiIndex.from_arrays([arrays[k] for k in order], names=[None, None])
    frame.to_parquet(tmp_path / "bars.parquet")
    bars = read_bars(tmp_path / "bars.parquet", min_bars=1)
    assert bars["symbol"].to_list() == ["NQ"] * 5
    assert bars["ts"].to_list() == [t.to_pydatetime() for t in ts]
    assert bars["close"].to_list() == [4700.0 + i for i in range(5)]


def test_the_hour_daylight_saving_repeats_is_told_by_the_rows_order(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Naive Chicago times of a 24/7 market across 3 November 2024: 01:00-01:59 comes twice,
    first daylight time (06:00 UTC), then, after the clock steps back, standard time (07:00 UTC):
    read so in the file's order (refused as duplicates until session 60)."""
    start = datetime(2024, 11, 3, 0, 0)
    times = [start + timedelta(minutes=i) for i in range(120)]
    times += [start + timedelta(minutes=60 + i) for i in range(90)]
    rows = "".join(
        f"{t:%Y-%m-%d %H:%M:%S},2,2,0.5,{1 + i * 1e-4:.4f},1\n" for i, t in enumerate(times)
    )
    path = tmp_path / "BTCUSD.csv"
    path.write_text("ts,open,high,low,close,volume\n" + rows)
    with caplog.at_level(logging.INFO, logger="foxhunt.data.read.repeated_hour"):
        bars = read_bars(path, options=ReadOptions(tz="America/Chicago"))
    utc = datetime(2024, 11, 3, 5, 0, tzinfo=UTC)  # 00:00 CDT
    assert bars["ts"].to_list() == [utc + timedelta(minutes=i) for i in range(210)]
    assert bars["close"][120] == pytest.approx(1.012)  # 01:00 CST, the second pass's first
    assert [m for m in caplog.messages if "repeats in" in m] == [
        f"{path}: the hour 2024-11-03 01:00 repeats in America/Chicago when daylight saving "
        "ends, read in the file's order: 60 bars after its clock steps back are the second pass"
    ]


def test_every_autumn_a_file_holds_is_counted_in_its_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two autumns' repeated hours in one file: both read in order, and the one line per file
    names both (it named only the first until session 61)."""
    times = []
    for day in (datetime(2023, 11, 5), datetime(2024, 11, 3)):
        times += [day + timedelta(minutes=i) for i in range(120)]
        times += [day + timedelta(minutes=60 + i) for i in range(90)]
    rows = "".join(f"{t:%Y-%m-%d %H:%M:%S},2,2,0.5,1.5,1\n" for t in times)
    path = tmp_path / "BTCUSD.csv"
    path.write_text("ts,open,high,low,close,volume\n" + rows)
    with caplog.at_level(logging.INFO, logger="foxhunt.data.read.repeated_hour"):
        bars = read_bars(path, options=ReadOptions(tz="America/Chicago"))
    assert bars.height == 420 and bars["ts"].is_sorted() and bars["ts"].n_unique() == 420
    assert [m for m in caplog.messages if "repeat in" in m] == [
        f"{path}: the hours 2023-11-05 01:00, 2024-11-03 01:00 repeat in America/Chicago when "
        "daylight saving ends, read in the file's order: 120 bars after its clock steps back are "
        "the second pass"
    ]


def test_two_symbols_interleaved_each_get_their_second_pass(tmp_path: Path) -> None:
    """Two symbols' rows alternating in one file across the repeated hour: each symbol's rows
    are told apart on their own (grouped by the file alone, the two symbols' equal times read
    as no rise and the file was refused: repeated_hour's mutation survivors of session 61)."""
    start = datetime(2024, 11, 3, 0, 0)
    times = [start + timedelta(minutes=i) for i in range(120)]
    times += [start + timedelta(minutes=60 + i) for i in range(90)]
    rows = "".join(
        f"{t:%Y-%m-%d %H:%M:%S},{sym},2,2,0.5,1.5,1\n"
        for t in times
        for sym in ("BTCUSD", "ETHUSD")
    )
    path = tmp_path / "crypto.csv"
    path.write_text("ts,symbol,open,high,low,close,volume\n" + rows)
    bars = read_bars(path, options=ReadOptions(tz="America/Chicago"))
    utc = datetime(2024, 11, 3, 5, 0, tzinfo=UTC)  # 00:00 CDT
    for sym in ("BTCUSD", "ETHUSD"):
        mine = bars.filter(pl.col("symbol") == sym)
        assert mine["ts"].to_list() == [utc + timedelta(minutes=i) for i in range(210)]


@pytest.mark.parametrize("disorder", ["swapped", "repeated"])
def test_a_first_pass_alone_out_of_order_is_no_second_pass(tmp_path: Path, disorder: str) -> None:
    """The hour's first pass alone, with two rows swapped or a stretch written again (a
    collector restarted): the clock steps back, but the rows after it have no twin in a first
    pass, so none is read an hour later (the review of session 60 found them moved)."""
    start = datetime(2024, 11, 3, 0, 0)
    times = [start + timedelta(minutes=i) for i in range(120)]  # 00:00-01:59, once
    if disorder == "swapped":
        times[70], times[71] = times[71], times[70]
    else:
        times = times[:91] + times[80:91] + times[91:]  # 01:20-01:30 again
    rows = "".join(f"{t:%Y-%m-%d %H:%M:%S},2,2,0.5,1.5,1\n" for t in times)
    path = tmp_path / "BTCUSD.csv"
    path.write_text("ts,open,high,low,close,volume\n" + rows)
    bars = read_bars(path, options=ReadOptions(tz="America/New_York"))
    utc = datetime(2024, 11, 3, 4, 0, tzinfo=UTC)  # 00:00 EDT
    assert bars["ts"].to_list() == [utc + timedelta(minutes=i) for i in range(120)]


def test_a_repeated_hour_the_rows_order_cannot_tell_is_named_as_such(tmp_path: Path) -> None:
    """The two passes of 01:00-01:59 interleaved (each minute twice in a row): no step back
    tells them apart, and naive times cannot say which: refused, the message says why and how."""
    start = datetime(2024, 11, 3, 0, 0)
    times = [start + timedelta(minutes=i) for i in range(60)]
    times += [start + timedelta(minutes=60 + i // 2) for i in range(120)]
    times += [start + timedelta(minutes=120 + i) for i in range(30)]
    rows = "".join(
        f"{t:%Y-%m-%d %H:%M:%S},2,2,0.5,{1 + i * 1e-4:.4f},1\n" for i, t in enumerate(times)
    )
    path = tmp_path / "BTCUSD.csv"
    path.write_text("ts,open,high,low,close,volume\n" + rows)
    with pytest.raises(DataError) as caught:
        read_bars(path, options=ReadOptions(tz="America/Chicago"))
    assert str(caught.value).endswith(
        "(same time as " + str(path) + " row 60): 2024-11-03 01:00 happens twice in "
        "America/Chicago (the hour repeated when daylight saving ends), and naive times cannot "
        "say which; write the times in UTC or with their offset"
    )
    with pytest.raises(DataError) as plain:
        read_bars(path, options=ReadOptions(tz="-06:00"))  # a fixed offset repeats no hour
    assert str(plain.value).endswith(
        f"duplicate bar for symbol 'BTCUSD' (same time as {path} row 60)"
    )


def test_a_feature_table_is_named_as_such_not_by_its_237_columns(tmp_path: Path) -> None:
    """``foxhunt features``' output passed as bars was "missing column 'open' (columns: ts,
    symbol, obs__ret1_lag0, ..." over 4 kB."""
    names = [f"obs__f{k}" for k in range(8)] + ["known__tod_sin", "target__h1"]
    frame = pl.DataFrame({"ts": [datetime(2024, 1, 2, tzinfo=UTC)], "symbol": ["ES"]})
    frame = frame.with_columns([pl.lit(0.5).alias(n) for n in names])
    frame.write_parquet(tmp_path / "features.parquet")
    with pytest.raises(DataError) as refused:
        read_bars(tmp_path / "features.parquet")
    assert str(refused.value) == (
        f"{tmp_path / 'features.parquet'}: a feature table (12 columns such as obs__f0, obs__f1, "
        "obs__f2, obs__f3: foxhunt features' output), not bars: pass the bars it was made from, "
        "or write the features with --shards for train to read"
    )
    wide = pl.DataFrame({"ts": ["2024-01-02"]} | {f"c{k}": [1.0] for k in range(30)})
    wide.write_csv(tmp_path / "wide.csv")
    with pytest.raises(DataError, match=r"\(columns: ts, c0, .*, c18, \.\.\. \(31 in all\)\); "):
        read_bars(tmp_path / "wide.csv")
