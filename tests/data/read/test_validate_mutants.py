"""Validation of bars as read (:mod:`foxhunt.data.read.validate`), each problem named exactly:
file, column as spelled there, row, time and the offending value or raw text.

Written against the survivors of a mutation run of ``validate.py``: most tests read small CSV
files through ``read_bars``; a few call ``validate_bars`` or ``check_values`` directly where the
reader cannot reach a case (its defaults, a frame from no file, an empty-string symbol, a frame
whose spellings lack a column)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from foxhunt.data.read.bars import LoadedBars, load_bars, read_bars, validate_bars
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.validate import check_values
from foxhunt.errors import DataError

LOGGER = "foxhunt.data.read.validate"
HEAD = "ts,symbol,open,high,low,close,volume\n"
ADVICE = "(--ts-format names its spelling, e.g. '%d/%m/%Y %H:%M' or epoch-ms)"
BACK_ADJUSTED = (
    " (a back-adjusted continuous future can reach zero or below, and a market can trade "
    "there, as WTI crude did on 20 April 2020; a log return cannot: read the stretch where "
    "prices are positive)"
)


def _ts(minute: int) -> str:
    """Bar time text: 2024-01-02 15:MM UTC (a Tuesday, CME open), with offset."""
    return f"2024-01-02 {15 + minute // 60:02d}:{minute % 60:02d}:00+00:00"


def _when(minute: int) -> datetime:
    return datetime(2024, 1, 2, 15 + minute // 60, minute % 60, tzinfo=UTC)


def _rows(n: int, symbol: str = "ES", price: float = 4800.0) -> list[str]:
    """``n`` flat one-minute bars as CSV lines (without header)."""
    return [f"{_ts(i)},{symbol},{price},{price + 1},{price - 1},{price},10" for i in range(n)]


def _write(path: Path, lines: list[str], head: str = HEAD) -> Path:
    path.write_text(head + "".join(line + "\n" for line in lines))
    return path


def _raises(path: Path, message: str, **kw: object) -> None:
    with pytest.raises(DataError) as e:
        read_bars(path, **kw)  # type: ignore[arg-type]
    assert str(e.value) == message


# -- good input ---------------------------------------------------------------------------


def test_good_file_returns_the_exact_frame_sorted_without_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two symbols interleaved in time (sorted per symbol): sorted by (symbol, ts), no warning;
    prices under 1 and a zero volume are valid bars."""
    lines = [
        f"{_ts(0)},NQ,0.5,0.75,0.25,0.5,0",
        f"{_ts(0)},ES,4800,4801,4799,4800.5,10",
        f"{_ts(1)},NQ,0.5,0.75,0.25,0.5,3",
        f"{_ts(1)},ES,4800.5,4802,4800,4801,0",
    ]
    path = _write(tmp_path / "bars.csv", lines)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        got = read_bars(path)
    assert caplog.text == ""
    want = pl.DataFrame(
        {
            "ts": [_when(0), _when(1), _when(0), _when(1)],
            "symbol": ["ES", "ES", "NQ", "NQ"],
            "open": [4800.0, 4800.5, 0.5, 0.5],
            "high": [4801.0, 4802.0, 0.75, 0.75],
            "low": [4799.0, 4800.0, 0.25, 0.25],
            "close": [4800.5, 4801.0, 0.5, 0.5],
            "volume": [10.0, 0.0, 0.0, 3.0],
        },
        schema_overrides={"ts": pl.Datetime("us", "UTC")},
    )
    assert_frame_equal(got, want)


def test_unsorted_file_is_sorted_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lines = _rows(4)
    path = _write(tmp_path / "ES.csv", [lines[2], lines[0], lines[3], lines[1]])
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        got = read_bars(path)
    assert [r.getMessage() for r in caplog.records if r.name == LOGGER] == [
        "bars were not in time order; sorted by (symbol, ts)"
    ]
    assert got["ts"].to_list() == [_when(i) for i in range(4)]


def test_kept_columns_follow_the_bar_columns(tmp_path: Path) -> None:
    lines = [f"{_ts(i)},ES,4800,4801,4799,4800,10,{0.25 * (i + 1)}" for i in range(3)]
    path = _write(tmp_path / "ES.csv", lines, HEAD.replace("\n", ",spread\n"))
    got = read_bars(path, keep=("spread",))
    assert got.columns == ["ts", "symbol", "open", "high", "low", "close", "volume", "spread"]
    assert got["spread"].to_list() == [0.25, 0.5, 0.75]


def test_contract_comes_right_after_the_bar_columns_then_kept_ones() -> None:
    """``validate_bars`` returns BAR_COLUMNS, then ``contract``, then the kept columns, whatever
    the order of the frame it is given."""
    frame = pl.DataFrame(
        {
            "ts": [_when(0), _when(1)],
            "symbol": ["ES", "ES"],
            "open": [4800.0, 4800.0],
            "high": [4801.0, 4801.0],
            "low": [4799.0, 4799.0],
            "close": [4800.0, 4800.0],
            "volume": [1.0, 1.0],
            "spread": [0.25, 0.5],
            "contract": ["ESH4", "ESH4"],
            "__file": [0, 0],
            "__row": [0, 1],
        }
    )
    got = validate_bars(LoadedBars(frame, (Path("memory"),), ({},)))
    assert got.columns == [
        "ts",
        "symbol",
        "open",
        "high",
        "low",
        "close",
        "volume",
        "contract",
        "spread",
    ]


# -- timestamps ---------------------------------------------------------------------------


def test_null_timestamp_empty_or_quoted_empty(tmp_path: Path) -> None:
    lines = _rows(4)
    path = _write(tmp_path / "a.csv", [*lines[:2], "," + lines[2].split(",", 1)[1], lines[3]])
    _raises(path, f"{path}: column 'ts', row 2: null timestamp")
    path = _write(tmp_path / "b.csv", [*lines[:3], '""' + "," + lines[3].split(",", 1)[1]])
    _raises(path, f"{path}: column 'ts', row 3: null timestamp")


def test_unparsable_timestamp_names_its_text_and_the_flag(tmp_path: Path) -> None:
    lines = _rows(4)
    lines[3] = "not-a-time," + lines[3].split(",", 1)[1]
    path = _write(tmp_path / "a.csv", lines)
    _raises(path, f"{path}: column 'ts', row 3: unparsable timestamp 'not-a-time' {ADVICE}")


def test_offset_among_naive_timestamps_has_one(tmp_path: Path) -> None:
    """A ``Z`` timestamp in a naive column is valid, of the other kind (issue 17)."""
    body = ",4800,4801,4799,4800,10"
    path = _write(
        tmp_path / "ES.csv",
        [f"2024-01-02 15:00:00{body}", f"2024-01-02T15:01:00Z{body}", f"2024-01-02 15:02:00{body}"],
        HEAD.replace("symbol,", ""),
    )
    _raises(
        path,
        f"{path}: column 'ts', row 1: timestamp '2024-01-02T15:01:00Z' has a UTC offset while "
        "the column's other timestamps do not: write them all one way",
    )


def test_naive_among_offset_timestamps_lacks_one(tmp_path: Path) -> None:
    lines = _rows(4)
    lines[2] = "2024-01-02 15:02:00," + lines[2].split(",", 1)[1]
    path = _write(tmp_path / "a.csv", lines)
    _raises(
        path,
        f"{path}: column 'ts', row 2: timestamp '2024-01-02 15:02:00' lacks a UTC offset while "
        "the column's other timestamps have one: write them all one way",
    )


def test_date_and_time_columns_unparsable_names_both_texts(tmp_path: Path) -> None:
    """The raw text of a combined ``Date+Time`` timestamp is both cells of that row."""
    path = _write(
        tmp_path / "ES.csv",
        [
            "2024-01-02,15:00,4800,4801,4799,4800",
            "2024-01-02,15:01,4800,4801,4799,4800",
            "2024-01-02,15:02,4800,4801,4799,4800",
            "2024-01-02,1x:03,4800,4801,4799,4800",
            "2024-01-02,15:04,4800,4801,4799,4800",
        ],
        "Date,Time,Open,High,Low,Close\n",
    )
    _raises(
        path, f"{path}: column 'Date+Time', row 3: unparsable timestamp '2024-01-02 1x:03' {ADVICE}"
    )


def test_column_names_holding_a_plus_are_read_back_whole(tmp_path: Path) -> None:
    """A timestamp column named ``Time (UTC+0)`` is one column, not a date+time pair, and a
    time column so named is split from its date at the first ``+`` only."""
    rows = ["15:00", "15:01", "1x:02"]
    one = _write(
        tmp_path / "ES.csv",
        [f"2024-01-02 {t},4800,4801,4799,4800" for t in rows],
        "Time (UTC+0),Open,High,Low,Close\n",
    )
    _raises(
        one,
        f"{one}: column 'Time (UTC+0)', row 2: unparsable timestamp '2024-01-02 1x:02' {ADVICE}",
        options=ReadOptions(columns=("ts=Time (UTC+0)",)),
    )
    two = _write(
        tmp_path / "NQ.csv",
        [f"2024-01-02,{t},4800,4801,4799,4800" for t in rows],
        "Date,Time (UTC+0),Open,High,Low,Close\n",
    )
    _raises(
        two,
        f"{two}: column 'Date+Time (UTC+0)', row 2: unparsable timestamp '2024-01-02 1x:02' "
        f"{ADVICE}",
        options=ReadOptions(columns=("date=Date", "time=Time (UTC+0)")),
    )


# -- symbol and values --------------------------------------------------------------------


def test_missing_symbol_names_the_column_as_spelled(tmp_path: Path) -> None:
    lines = _rows(5)
    lines[3] = lines[3].replace(",ES,", ",,")
    path = _write(tmp_path / "bars.csv", lines, "Time,Symbol,Open,High,Low,Close,Volume\n")
    _raises(path, f"{path}: column 'Symbol', row 3 ({_when(3)}): missing symbol")


def test_empty_or_quoted_empty_value_is_missing_blank_is_not_a_number(tmp_path: Path) -> None:
    lines = _rows(4)
    lines[1] = lines[1].replace(",4801.0,", ",,")
    path = _write(tmp_path / "a.csv", lines)
    _raises(path, f"{path}: column 'high', row 1 ({_when(1)}): missing value")
    lines = _rows(4)
    lines[2] = lines[2].replace(",4801.0,", ',"",')
    path = _write(tmp_path / "b.csv", lines)
    _raises(path, f"{path}: column 'high', row 2 ({_when(2)}): missing value")
    lines = _rows(4)
    lines[2] = lines[2].replace(",4801.0,", ", ,")
    path = _write(tmp_path / "c.csv", lines)
    _raises(path, f"{path}: column 'high', row 2 ({_when(2)}): not a number ' '")


def test_non_positive_price_in_a_file_gives_the_back_adjusted_advice(tmp_path: Path) -> None:
    lines = _rows(4)
    lines[2] = f"{_ts(2)},ES,4800,4801,-1.5,4800,10"
    path = _write(tmp_path / "a.csv", lines)
    _raises(
        path,
        f"{path}: column 'low', row 2 ({_when(2)}): non-positive price low -1.5{BACK_ADJUSTED}",
    )


def test_prices_under_one_are_prices_the_negative_volume_is_named(tmp_path: Path) -> None:
    """AUDUSD at 0.68: the first problem is the negative volume of row 3, not the price."""
    lines = [f"{_ts(i)},AUDUSD,0.68,0.69,0.67,0.68,5" for i in range(5)]
    lines[3] = f"{_ts(3)},AUDUSD,0.68,0.69,0.67,0.68,-2"
    path = _write(tmp_path / "a.csv", lines)
    _raises(path, f"{path}: column 'volume', row 3 ({_when(3)}): negative volume -2.0")


def test_zero_volume_is_a_volume_the_high_below_the_body_is_named(tmp_path: Path) -> None:
    lines = _rows(5)
    lines[1] = f"{_ts(1)},ES,4800,4801,4799,4800,0"
    lines[3] = f"{_ts(3)},ES,4800,4800.25,4799,4802.5,10"  # 9 ticks: not a rounding slip
    path = _write(tmp_path / "a.csv", lines, "Time,Symbol,Open,HIGH,Low,Close,Volume\n")
    _raises(
        path, f"{path}: column 'HIGH', row 3 ({_when(3)}): high 4800.25 < max(open, close) 4802.5"
    )


def test_high_below_close_above_open(tmp_path: Path) -> None:
    """The body's top is the close when it closes up: a high under it is refused."""
    lines = _rows(4)
    lines[2] = f"{_ts(2)},ES,4790,4795,4789,4800,10"  # 5 points: not a rounding slip
    path = _write(tmp_path / "a.csv", lines)
    _raises(
        path, f"{path}: column 'high', row 2 ({_when(2)}): high 4795.0 < max(open, close) 4800.0"
    )


def test_low_above_open_below_close(tmp_path: Path) -> None:
    """The body's bottom is the open when it closes up: a low over it is refused."""
    lines = _rows(4)
    lines[1] = f"{_ts(1)},ES,4790,4805,4795,4800,10"
    path = _write(tmp_path / "a.csv", lines, "ts,symbol,open,high,Low,close,volume\n")
    _raises(path, f"{path}: column 'Low', row 1 ({_when(1)}): low 4795.0 > min(open, close) 4790.0")


# -- duplicates, order, min_bars ------------------------------------------------------------


def test_duplicate_in_a_sorted_file_is_no_unsorted_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lines = _rows(4)
    again = lines[1].removesuffix(",10") + ",11"  # another volume: an exact repeat is read once
    path = _write(tmp_path / "a.csv", [lines[0], lines[1], again, lines[2], lines[3]])
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        _raises(
            path,
            f"{path}: column 'ts', row 2 ({_when(1)}): duplicate bar for symbol 'ES' "
            f"(same time as {path} row 1)",
        )
    assert [r for r in caplog.records if r.name == LOGGER] == []


def test_duplicate_in_an_unsorted_file_names_the_later_row(tmp_path: Path) -> None:
    """Sorting keeps the two bars of a duplicate in file order: the later one is named, the
    earlier is the first (30 bars: polars sorts them unstably unless told to keep order)."""
    order = [3, 10, 19, 17, 5, 0, 7, 10, 25, 14, 21, 26, 22, 2, 20, 4]
    order += [28, 6, 18, 11, 23, 9, 29, 15, 16, 8, 1, 13, 24, 12, 27]
    lines = _rows(30)
    rows = [lines[i] for i in order]
    rows[7] = rows[7].removesuffix(",10") + ",11"  # the second bar at 10 differs in volume
    path = _write(tmp_path / "a.csv", rows)
    _raises(
        path,
        f"{path}: column 'ts', row 7 ({_when(10)}): duplicate bar for symbol 'ES' "
        f"(same time as {path} row 1)",
    )


def test_min_bars_names_the_symbol_with_fewest_bars_and_its_file(tmp_path: Path) -> None:
    _write(tmp_path / "a.csv", [*_rows(4, "NQ"), *_rows(3, "ES")])
    b = _write(tmp_path / "b.csv", _rows(2, "YM"))
    _raises(
        tmp_path,
        f"{b}: symbol 'YM' has 2 bars; need at least 3 (warm-up 1 + horizon 2)",
        min_bars=3,
        min_bars_reason="warm-up 1 + horizon 2",
    )


def test_drop_short_leaves_out_symbols_of_too_few_bars_naming_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``predict`` and ``evaluate`` forecast the symbols that have enough bars; the others are
    named in one warning (the first five, then a count); none with enough is still refused."""
    syms = ["AA", "BB", "CC", "DD", "EE", "FF"]
    _write(tmp_path / "a.csv", [*_rows(5, "NQ")] + [r for s in syms for r in _rows(2, s)])
    with caplog.at_level(logging.WARNING):
        got = read_bars(tmp_path, min_bars=5, min_bars_reason="why", drop_short=True)
    assert got["symbol"].unique().to_list() == ["NQ"] and got.height == 5
    assert [r.getMessage() for r in caplog.records] == [
        "left out 6 symbols with too few bars: 'AA' (2 bars), 'BB' (2 bars), 'CC' (2 bars), "
        "'DD' (2 bars), 'EE' (2 bars) and 1 more; need at least 5 (why)"
    ]
    _raises(
        tmp_path,
        f"{tmp_path / 'a.csv'}: symbol 'AA' has 2 bars; need at least 6 (why)",
        min_bars=6,
        min_bars_reason="why",
        drop_short=True,
    )


def test_min_bars_tie_names_the_first_symbol_by_name(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.csv", [*_rows(3, "NQ"), *_rows(3, "ES"), *_rows(4, "YM")])
    _raises(
        tmp_path,
        f"{a}: symbol 'ES' has 3 bars; need at least 4 (why)",
        min_bars=4,
        min_bars_reason="why",
    )


def test_validate_bars_defaults_reason_and_refuses_outliers(tmp_path: Path) -> None:
    path = _write(tmp_path / "ES.csv", _rows(3))
    with pytest.raises(DataError) as e:
        validate_bars(load_bars(path), min_bars=4)
    assert str(e.value) == (
        f"{path}: symbol 'ES' has 3 bars; need at least 4 (warm-up + encoder + horizon)"
    )
    lines = _rows(30)
    lines[20] = f"{_ts(20)},ES,4800,96000,4799,4800,10"
    path = _write(tmp_path / "NQ.csv", lines)
    with pytest.raises(DataError) as e:
        validate_bars(load_bars(path))
    assert str(e.value) == (
        f"{path}: symbol 'ES', column 'high', row 20 ({_when(20)}): high 96000 is 20 times the "
        "median close 4800 of the bars around it (off by orders of magnitude); "
        "--allow-outliers keeps it"
    )


# -- plausibility -------------------------------------------------------------------------


def test_outlier_names_its_column_as_spelled(tmp_path: Path) -> None:
    lines = _rows(30)
    lines[20] = f"{_ts(20)},ES,4800,96000,4799,4800,10"
    path = _write(tmp_path / "a.csv", lines, "Time,Symbol,Open,High,Low,Close,Volume\n")
    _raises(
        path,
        f"{path}: symbol 'ES', column 'High', row 20 ({_when(20)}): high 96000 is 20 times "
        "the median close 4800 of the bars around it (off by orders of magnitude); "
        "--allow-outliers keeps it",
    )


def test_kept_outliers_one_warning_per_file_in_file_order(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With ``allow_outliers`` the bars stay, with one warning per file, in file order: the
    count, and the first outlier ("first: " when there are several)."""
    spike = "high 96000 is 20 times the median close 4800 of the bars around it"
    symbols = ("NQ", "ES", "YM", "RTY")
    for k, symbol in enumerate(symbols):
        lines = _rows(12, symbol)
        lines[k + 2] = f"{_ts(k + 2)},{symbol},4800,96000,4799,4800,10"
        if k == 0:
            lines[9] = f"{_ts(9)},{symbol},4800,4801,480,4800,10"
        _write(tmp_path / f"{'abcd'[k]}.csv", lines)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        got = read_bars(tmp_path, allow_outliers=True)
    assert got.height == 48
    assert got.filter(pl.col("high") == 96000)["symbol"].sort().to_list() == sorted(symbols)
    want = [
        f"kept 2 outlier bars in {tmp_path / 'a.csv'} (first: symbol 'NQ', row 2, {_when(2)}: "
        f"{spike} (off by orders of magnitude))"
    ]
    want += [
        f"kept 1 outlier bar in {tmp_path / f'{name}.csv'} (symbol '{symbol}', row {k}, "
        f"{_when(k)}: {spike} (off by orders of magnitude))"
        for k, (name, symbol) in enumerate(zip("bcd", symbols[1:], strict=True), start=3)
    ]
    assert [r.getMessage() for r in caplog.records if r.name == LOGGER] == want


# -- frames from no file: check_values and hand-built LoadedBars ---------------------------

WHERE = "Forecaster.update"


def _frame(n: int = 3) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "ts": [_when(i) for i in range(n)],
            "symbol": ["ES"] * n,
            "open": [4800.0] * n,
            "high": [4801.0] * n,
            "low": [4799.0] * n,
            "close": [4800.0] * n,
            "volume": [10.0] * n,
        },
        schema_overrides={"ts": pl.Datetime("us", "UTC")},
    )


def _set(df: pl.DataFrame, row: int, col: str, value: object) -> pl.DataFrame:
    idx = pl.int_range(pl.len())
    lit = pl.lit(value, dtype=df.schema[col])
    return df.with_columns(pl.when(idx == row).then(lit).otherwise(pl.col(col)).alias(col))


@pytest.mark.parametrize(
    "col,value,message",
    [
        ("ts", None, "column 'ts', row 1: null timestamp"),
        ("symbol", "", "column 'symbol', row 1 (T1): missing symbol"),
        ("symbol", None, "column 'symbol', row 1 (T1): missing symbol"),
        ("close", None, "column 'close', row 1 (T1): missing value"),
        ("close", float("nan"), "column 'close', row 1 (T1): close is nan (must be finite)"),
        ("high", float("inf"), "column 'high', row 1 (T1): high is inf (must be finite)"),
        ("low", 0.0, "column 'low', row 1 (T1): non-positive price low 0.0"),
        ("volume", -1.0, "column 'volume', row 1 (T1): negative volume -1.0"),
    ],
)
def test_check_values_names_where_column_row_and_time(
    col: str, value: object, message: str
) -> None:
    df = _set(_frame(), 1, col, value)
    with pytest.raises(DataError) as e:
        check_values(df, WHERE)
    assert str(e.value) == f"{WHERE}: " + message.replace("T1", str(_when(1)))


def test_check_values_passes_good_bars_and_refuses_a_bar_of_nans() -> None:
    assert check_values(_frame(), WHERE) is None
    nan = float("nan")
    df = _frame(1).with_columns(
        pl.lit(nan).alias(c) for c in ("open", "high", "low", "close", "volume")
    )
    with pytest.raises(DataError) as e:
        check_values(df, WHERE)
    assert (
        str(e.value) == f"{WHERE}: column 'open', row 0 ({_when(0)}): open is nan (must be finite)"
    )


def test_spellings_without_the_column_name_it_canonically() -> None:
    """Spellings lack a column a file does not have (``volume``, a ``symbol`` from the file
    name): the message then uses the canonical name."""
    frame = _set(_frame(), 2, "volume", -3.0).with_columns(
        pl.lit(0).alias("__file"), pl.int_range(pl.len()).alias("__row")
    )
    loaded = LoadedBars(frame, (Path("memory"),), ({"ts": "Time"},))
    with pytest.raises(DataError) as e:
        validate_bars(loaded)
    assert str(e.value) == f"memory: column 'volume', row 2 ({_when(2)}): negative volume -3.0"


def test_outlier_in_a_column_without_spelling_is_named_by_that_column() -> None:
    """An outlier's message names the column that breaks the rule, as ``where`` does for the
    value checks: its spelling, else its canonical name (never another column)."""
    frame = _set(_frame(30), 20, "high", 96000.0).with_columns(
        pl.lit(0).alias("__file"), pl.int_range(pl.len()).alias("__row")
    )
    with pytest.raises(DataError) as e:
        validate_bars(LoadedBars(frame, (Path("memory"),), ({},)))
    assert str(e.value) == (
        f"memory: symbol 'ES', column 'high', row 20 ({_when(20)}): high 96000 is 20 times the "
        "median close 4800 of the bars around it (off by orders of magnitude); "
        "--allow-outliers keeps it"
    )


def test_a_symbol_left_out_is_not_judged_by_its_inputs_or_future_rows(tmp_path: Path) -> None:
    """A short symbol left out (``drop_short``) with a missing input value and future rows:
    its rows stopped the read after the warning that it was left out ("missing value", "a row
    with empty prices is a future row only after ..."); now only the kept symbols' are read."""
    lines = []
    for sym, n in (("AAA", 12), ("BBB", 3)):
        for i in range(n + 2):
            future = i >= n
            price = "" if future else "4800"
            hol = "" if (sym == "BBB" and i == 0) else str(i % 2)
            lines.append(
                f"{_ts(i)},{sym},{price},{price},{price},{price},{'' if future else 10},{hol}"
            )
    path = _write(tmp_path / "a.csv", lines, head=HEAD.rstrip("\n") + ",hol\n")
    future: list[pl.DataFrame] = []
    bars = read_bars(
        path,
        min_bars=10,
        keep=("hol",),
        future=future,
        future_cols=("hol",),
        drop_short=True,
        options=ReadOptions(allow_odd_times=True),
    )
    assert bars["symbol"].unique().to_list() == ["AAA"] and bars.height == 12
    assert future[0]["symbol"].to_list() == ["AAA", "AAA"]


def test_a_kept_symbols_bad_future_row_is_still_named_by_its_row(tmp_path: Path) -> None:
    """With ``drop_short`` the future rows kept their symbols' rows but lost the file and row
    they came from: a missing input in one failed with ``KeyError '__file'``."""
    lines = [f"{_ts(i)},AAA,4800,4800,4800,4800,10,1" for i in range(12)]
    lines += [f"{_ts(12)},AAA,,,,,,", f"{_ts(0)},BBB,4800,4800,4800,4800,10,1"]
    path = _write(tmp_path / "a.csv", lines, head=HEAD.rstrip("\n") + ",hol\n")
    with pytest.raises(DataError, match=r"column 'hol', row 12 .*missing value"):
        read_bars(
            path,
            min_bars=10,
            keep=("hol",),
            future=[],
            future_cols=("hol",),
            drop_short=True,
            options=ReadOptions(allow_odd_times=True),
        )


def test_a_total_and_an_average_line_under_the_bars_are_named_as_such(tmp_path: Path) -> None:
    """A spreadsheet's summary rows under the bars: once "unparsable timestamp 'Average'
    (--ts-format names its spelling ...)", advice that reads nothing (session 57). A word with
    bars after it keeps the timestamp line."""
    rows = "".join(f"2024-01-0{d},100,101,99,100.5,10\n" for d in range(2, 6))
    path = tmp_path / "SPY.csv"
    path.write_text(
        f"Date,Open,High,Low,Close,Volume\n{rows}Total,,,,,40\nAverage,100,101,99,100.5,10\n"
    )
    _raises(
        path,
        f"{path}: column 'Date', row 5: 'Average' where a timestamp belongs, and no time in the "
        "rows after it: a total, average or note line under the bars? remove it",
    )
    path.write_text(f"Date,Open,High,Low,Close,Volume\n{rows}Average,100,101,99,100.5,10\n{rows}")
    _raises(path, f"{path}: column 'Date', row 4: unparsable timestamp 'Average' {ADVICE}")
