"""The checks ``read_bars`` makes around validation (:mod:`foxhunt.data.read.checks`): the
user's kept columns, future rows after each symbol's last bar, enough bars after
``--bar-minutes``, blank/``null`` rows and a volume written NaN, each named exactly.

Written against the survivors of a mutation run of ``checks.py``: most tests read small CSV
files through ``read_bars``; a few call a check directly where the reader cannot reach a case
(rows out of file order, a frame whose spellings lack the column, no ``files``)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from foxhunt.data.read.bars import LoadedBars, read_bars
from foxhunt.data.read.checks import (
    check_future_after_bars,
    check_kept,
    check_min_bars,
    kept_name,
    unknown_volume,
    without_empty_rows,
)
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError

LOGGER = "foxhunt.data.read.checks"
HEAD = "Date,Symbol,Open,High,Low,Close,Volume,Spread\n"
DAYS = (2, 3, 4, 5, 8)  # weekdays of January 2024
WHY = "a row with empty prices is a future row only after symbol"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _bar(day: int, sym: str = "ES", spread: str = "0.5", volume: str = "100") -> str:
    return f"2024-01-{day:02d},{sym},10,11,9,10.5,{volume},{spread}\n"


def _empty(day: int, sym: str = "ES", spread: str = "1") -> str:
    """A row with a time and empty prices (a future row after the symbol's last bar)."""
    return f"2024-01-{day:02d},{sym},,,,,,{spread}\n"


def _day(day: int) -> datetime:
    return datetime(2024, 1, day, tzinfo=UTC)


def _messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


# --- check_min_bars -------------------------------------------------------------------------


def _counts(*pairs: tuple[str, int]) -> pl.DataFrame:
    """Bars (only ``symbol`` and ``ts`` matter) with ``n`` rows per symbol, in the given order."""
    syms = [s for s, n in pairs for _ in range(n)]
    return pl.DataFrame({"symbol": syms, "ts": list(range(len(syms)))})


@pytest.mark.parametrize(
    ("pairs", "named"),
    [
        ((("C", 5), ("B", 2), ("A", 2)), "symbol 'A' has 2 bars"),  # tie: A before B
        ((("A", 2), ("B", 2), ("C", 5)), "symbol 'A' has 2 bars"),  # whatever the frame order
        ((("A", 4), ("Z", 1), ("M", 2)), "symbol 'Z' has 1 bars"),  # fewest before name
    ],
)
def test_min_bars_names_the_symbol_with_fewest_bars_ties_by_name(
    pairs: tuple[tuple[str, int], ...], named: str
) -> None:
    with pytest.raises(DataError) as e:
        check_min_bars(_counts(*pairs), 3, "warm-up + encoder + horizon", 5)
    assert str(e.value) == (
        f"{named} of 5 minutes after --bar-minutes 5; need at least 3 (warm-up + encoder + horizon)"
    )


def test_min_bars_exactly_enough_passes() -> None:
    bars = _counts(("A", 2), ("B", 3))
    assert check_min_bars(bars, 2, "why", 15) is bars
    assert check_min_bars(bars, 2, "why", 15, drop_short=True) is bars
    with pytest.raises(
        DataError, match=r"^symbol 'A' has 2 bars of 15 minutes .* at least 3 \(why\)$"
    ):
        check_min_bars(_counts(("A", 2), ("B", 3)), 3, "why", 15)


def test_min_bars_after_bar_minutes_through_read_bars(tmp_path: Path) -> None:
    def five_minute(sym: str, n: int) -> str:
        return "".join(f"2024-01-02 14:{5 * i:02d}:00,{sym},10,11,9,10.5,100\n" for i in range(n))

    path = _write(
        tmp_path / "bars.csv",
        "Date,Symbol,Open,High,Low,Close,Volume\n"
        + five_minute("ES", 6)
        + five_minute("NQ", 4)
        + five_minute("CL", 4),
    )
    opts = ReadOptions(bar_minutes=10)
    with pytest.raises(DataError) as e:
        read_bars(path, min_bars=3, options=opts)
    assert str(e.value) == (
        "symbol 'CL' has 2 bars of 10 minutes after --bar-minutes 10; need at least 3 "
        "(warm-up + encoder + horizon)"
    )
    got = read_bars(path, min_bars=2, options=opts)
    assert got.group_by("symbol").len().sort("symbol").rows() == [("CL", 2), ("ES", 3), ("NQ", 2)]
    # predict and evaluate leave the short ones out (after aggregation), while one has enough
    got = read_bars(path, min_bars=3, options=opts, drop_short=True)
    assert got.group_by("symbol").len().rows() == [("ES", 3)]
    with pytest.raises(DataError, match="symbol 'CL' has 2 bars of 10 minutes"):
        read_bars(path, min_bars=4, options=opts, drop_short=True)


def test_min_bars_drop_short_leaves_out_the_short_symbols_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bars = _counts(("A", 2), ("B", 3), ("C", 1), ("D", 4))
    with caplog.at_level(logging.WARNING):
        got = check_min_bars(bars, 3, "why", 15, drop_short=True)
    assert got["symbol"].to_list() == ["B"] * 3 + ["D"] * 4
    assert [r.getMessage() for r in caplog.records] == [
        "left out 2 symbols with too few bars: 'C' (1 bars), 'A' (2 bars); need at least 3 (why)"
    ]
    with pytest.raises(DataError, match=r"^symbol 'C' has 1 bars of 15 minutes"):
        check_min_bars(bars, 5, "why", 15, drop_short=True)  # none has enough: refused


def test_bar_minutes_that_the_bars_do_not_divide_are_refused_naming_the_file(
    tmp_path: Path,
) -> None:
    text = "".join(f"2024-01-02 14:{5 * i:02d}:00,ES,10,11,9,10.5,100\n" for i in range(6))
    path = _write(tmp_path / "bars.csv", "Date,Symbol,Open,High,Low,Close,Volume\n" + text)
    with pytest.raises(DataError) as e:
        read_bars(path, min_bars=1, options=ReadOptions(bar_minutes=7))
    assert str(e.value) == (
        f"{path}: symbol 'ES' has bars 0:05:00 apart; --bar-minutes 7 needs bars that divide "
        "K minutes (a multiple of the bars' interval)"
    )


# --- check_future_after_bars ----------------------------------------------------------------


def test_future_rows_after_each_symbols_last_bar_are_read(tmp_path: Path) -> None:
    # ES ends on the 5th, NQ on the 8th: ES's rows on the 8th and 9th are after ES's last bar
    text = HEAD + "".join(_bar(d) for d in DAYS[:4]) + "".join(_bar(d, "NQ") for d in DAYS)
    text += _empty(8, spread="2") + _empty(9, spread="3") + _empty(9, "NQ", spread="4")
    path = _write(tmp_path / "bars.csv", text)
    future: list[pl.DataFrame] = []
    got = read_bars(path, keep=("spread",), future=future, future_cols=("spread",))
    assert got.group_by("symbol").len().sort("symbol").rows() == [("ES", 4), ("NQ", 5)]
    assert len(future) == 1
    assert future[0].rows() == [
        (_day(8), "ES", 2.0),
        (_day(9), "ES", 3.0),
        (_day(9), "NQ", 4.0),
    ]


def test_future_rows_come_sorted_by_symbol_then_time_whatever_the_file_order(
    tmp_path: Path,
) -> None:
    text = HEAD + "".join(_bar(d) for d in DAYS[:4]) + "".join(_bar(d, "NQ") for d in DAYS)
    text += _empty(9, "NQ", spread="4") + _empty(9, spread="3") + _empty(8, spread="2")
    future: list[pl.DataFrame] = []
    read_bars(_write(tmp_path / "bars.csv", text), keep=("spread",), future=future,
              future_cols=("spread",))  # fmt: skip
    assert future[0].rows() == [
        (_day(8), "ES", 2.0),
        (_day(9), "ES", 3.0),
        (_day(9), "NQ", 4.0),
    ]


def test_empty_prices_before_the_last_bar_are_a_missing_bar(tmp_path: Path) -> None:
    rows = [_bar(d) for d in DAYS]
    rows[2:4] = [_empty(4), _empty(5)]  # rows 2 and 3: the first is named
    path = _write(tmp_path / "bars.csv", HEAD + "".join(rows))
    with pytest.raises(DataError) as e:
        read_bars(path, keep=("spread",), future=[], future_cols=("spread",))
    assert str(e.value) == (
        f"{path}: column 'Close', row 2 (2024-01-04 00:00:00+00:00): missing value ({WHY} "
        f"'ES''s last bar)"
    )


def test_empty_prices_at_the_last_bars_time_are_not_after_it(tmp_path: Path) -> None:
    text = HEAD + "".join(_bar(d) for d in DAYS) + _empty(8)
    path = _write(tmp_path / "bars.csv", text)
    with pytest.raises(DataError) as e:
        read_bars(path, keep=("spread",), future=[], future_cols=("spread",))
    assert str(e.value) == (
        f"{path}: column 'Close', row 5 (2024-01-08 00:00:00+00:00): missing value ({WHY} "
        f"'ES''s last bar)"
    )


def test_empty_prices_of_a_symbol_without_bars_are_refused(tmp_path: Path) -> None:
    text = HEAD + "".join(_bar(d) for d in DAYS) + _empty(9, "NQ") + _empty(10, "NQ")
    path = _write(tmp_path / "bars.csv", text)
    with pytest.raises(DataError) as e:
        read_bars(path, keep=("spread",), future=[], future_cols=("spread",))
    assert str(e.value) == (
        f"{path}: column 'Close', row 5 (2024-01-09 00:00:00+00:00): missing value ({WHY} "
        f"'NQ''s last bar)"
    )


def test_the_first_missing_bar_in_file_order_is_named(tmp_path: Path) -> None:
    # a.csv's missing bar is row 3, b.csv's row 1: file order first, then row
    a = [_bar(d) for d in DAYS]
    a[3] = _empty(5)
    b = [_bar(d, "NQ") for d in DAYS]
    b[1] = _empty(3, "NQ")
    _write(tmp_path / "a.csv", HEAD + "".join(a))
    _write(tmp_path / "b.csv", HEAD.replace("Close", "Last") + "".join(b))
    with pytest.raises(DataError) as e:
        read_bars(tmp_path, keep=("spread",), future=[], future_cols=("spread",))
    assert str(e.value) == (
        f"{tmp_path / 'a.csv'}: column 'Close', row 3 (2024-01-05 00:00:00+00:00): missing "
        f"value ({WHY} 'ES''s last bar)"
    )


def _loaded(frame: pl.DataFrame, spellings: tuple[dict[str, str], ...]) -> LoadedBars:
    return LoadedBars(
        frame=frame,
        files=tuple(Path(f"f{i}.csv") for i in range(len(spellings))),
        spellings=spellings,
    )


def test_future_check_sorts_the_rows_it_is_given_by_file_then_row() -> None:
    # all three before ES's last bar (the 4th), given out of file order
    rows = pl.DataFrame(
        {
            "ts": [_day(3), _day(3), _day(2)],
            "symbol": ["ES", "ES", "ES"],
            "__file": [1, 0, 0],
            "__row": [1, 5, 2],
        }
    )
    bars = pl.DataFrame({"ts": [_day(4)], "symbol": ["ES"]})
    loaded = _loaded(rows, ({"close": "Close"}, {"close": "Last"}))
    with pytest.raises(DataError) as e:
        check_future_after_bars(loaded, rows, bars)
    assert str(e.value) == (
        f"f0.csv: column 'Close', row 2 (2024-01-02 00:00:00+00:00): missing value ({WHY} "
        f"'ES''s last bar)"
    )


def test_future_check_names_close_when_the_spellings_lack_it() -> None:
    rows = pl.DataFrame({"ts": [_day(2)], "symbol": ["ES"], "__file": [0], "__row": [7]})
    bars = pl.DataFrame({"ts": [_day(4)], "symbol": ["ES"]})
    with pytest.raises(DataError) as e:
        check_future_after_bars(_loaded(rows, ({},)), rows, bars)
    assert str(e.value).startswith("f0.csv: column 'close', row 7 (2024-01-02 00:00:00+00:00): ")


# --- check_kept -----------------------------------------------------------------------------


def test_kept_column_is_read_under_the_users_name(tmp_path: Path) -> None:
    rows = [_bar(d, spread=s) for d, s in zip(DAYS, ("0.5", "0.25", "1", "2", "-3"), strict=True)]
    path = _write(tmp_path / "bars.csv", HEAD + "".join(rows))
    got = read_bars(path, keep=("spread",))
    assert got.columns[-1] == "spread"
    assert got["spread"].to_list() == [0.5, 0.25, 1.0, 2.0, -3.0]


@pytest.mark.parametrize(
    ("bad", "what"),
    [
        ("abc", "not a number 'abc'"),
        ("", "missing value"),
        ("inf", "spread is inf (must be finite)"),
        ("-inf", "spread is -inf (must be finite)"),
        ("NaN", "spread is nan (must be finite)"),
    ],
)
def test_bad_kept_value_names_file_spelling_row_and_time(
    tmp_path: Path, bad: str, what: str
) -> None:
    rows = [_bar(d) for d in DAYS]
    rows[2] = _bar(4, spread=bad)
    rows[4] = _bar(8, spread="xyz")  # a later bad value: the first is named
    path = _write(tmp_path / "bars.csv", HEAD + "".join(rows))
    with pytest.raises(DataError) as e:
        read_bars(path, keep=("spread",))
    assert str(e.value) == f"{path}: column 'Spread', row 2 (2024-01-04 00:00:00+00:00): {what}"


def test_empty_text_in_a_kept_column_is_a_missing_value(tmp_path: Path) -> None:
    path = tmp_path / "bars.parquet"
    pl.DataFrame(
        {
            "ts": ["2024-01-02", "2024-01-03", "2024-01-04"],
            "symbol": ["ES"] * 3,
            **{c: [1.0] * 3 for c in ("open", "high", "low", "close", "volume")},
            "spread": ["1", "", "2"],
        }
    ).write_parquet(path)
    with pytest.raises(DataError) as e:
        read_bars(path, keep=("spread",))
    assert (
        str(e.value) == f"{path}: column 'spread', row 1 (2024-01-03 00:00:00+00:00): missing value"
    )


def test_kept_value_of_a_future_row_is_checked(tmp_path: Path) -> None:
    text = HEAD + "".join(_bar(d) for d in DAYS) + _empty(9) + _empty(10, spread="n/a")
    path = _write(tmp_path / "bars.csv", text)
    with pytest.raises(DataError) as e:
        read_bars(path, keep=("spread",), future=[], future_cols=("spread",))
    assert str(e.value) == (
        f"{path}: column 'Spread', row 6 (2024-01-10 00:00:00+00:00): not a number 'n/a'"
    )


def test_kept_check_names_the_column_when_the_spellings_lack_it() -> None:
    # a frame that came from no readable file: the canonical name, and no raw text to show
    frame = pl.DataFrame(
        {"ts": [_day(2), _day(3)], "spread": [1.0, None], "__file": [0, 0], "__row": [0, 1]}
    )
    with pytest.raises(DataError) as e:
        check_kept(_loaded(frame, ({},)), ("spread",))
    assert (
        str(e.value) == "f0.csv: column 'spread', row 1 (2024-01-03 00:00:00+00:00): missing value"
    )


# --- without_empty_rows ---------------------------------------------------------------------


def test_empty_rows_are_dropped_with_one_warning_naming_their_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _write(tmp_path / "a.csv", HEAD + "".join(_bar(d) for d in DAYS))
    b = HEAD + "".join(_bar(d, "NQ") for d in DAYS[:3]) + ",,,,,,,\n" + _bar(5, "NQ") + ",,,,,,,\n"
    _write(tmp_path / "b.csv", b)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        got = read_bars(tmp_path)
    assert _messages(caplog) == [
        f"2 rows of {tmp_path / 'b.csv'} hold no value (blank lines, 'null' rows, a footer, the header again; "
        "first: row 3): not bars, dropped"
    ]
    assert got.group_by("symbol").len().sort("symbol").rows() == [("ES", 5), ("NQ", 4)]


def test_with_future_rows_only_timeless_empty_rows_are_dropped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # rows with a time and no value at all are future rows, a blank line is not
    text = HEAD + "".join(_bar(d) for d in DAYS) + _empty(9, spread="") + _empty(10, spread="")
    path = _write(tmp_path / "bars.csv", text + ",,,,,,,\n")
    future: list[pl.DataFrame] = []
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        got = read_bars(path, future=future)
    assert got.height == 5
    assert future[0].rows() == [(_day(9), "ES"), (_day(10), "ES")]
    assert _messages(caplog) == [
        f"1 rows of {path} hold no value (blank lines, 'null' rows, a footer, the header again; first: row 7): "
        "not bars, dropped"
    ]
    # not reading future rows: those with a time are dropped as well
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert read_bars(path).height == 5
    assert _messages(caplog) == [
        f"3 rows of {path} hold no value (blank lines, 'null' rows, a footer, the header again; first: row 5): "
        "not bars, dropped"
    ]


def test_with_future_rows_a_valued_row_without_time_is_refused(tmp_path: Path) -> None:
    rows = [_bar(d) for d in DAYS]
    rows[1] = ",ES,10,11,9,10.5,100,0.5\n"
    path = _write(tmp_path / "bars.csv", HEAD + "".join(rows))
    with pytest.raises(DataError) as e:
        read_bars(path, future=[])
    assert str(e.value) == f"{path}: column 'Date', row 1: null timestamp"


def test_without_files_the_place_given_is_named(caplog: pytest.LogCaptureFixture) -> None:
    df = pl.DataFrame(
        {
            "ts": [_day(2), None, _day(4)],
            "close": [1.0, None, 2.0],
            "__empty": [False, True, False],
            "__file": [0, 0, 0],
            "__row": [0, 1, 2],
        }
    )
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        got = without_empty_rows(df, "somewhere.csv", timed=True)
    assert_frame_equal(got, df.drop("__empty").filter(pl.col("__row") != 1))
    assert _messages(caplog) == [
        "1 rows of somewhere.csv hold no value (blank lines, 'null' rows, a footer, the header again; first: row "
        "1): not bars, dropped"
    ]


# --- unknown_volume -------------------------------------------------------------------------


def test_nan_or_empty_volume_reads_as_zero_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vols = ("100", "NaN", "200", "", "300")
    rows = [_bar(d, volume=v) for d, v in zip(DAYS, vols, strict=True)]
    path = _write(tmp_path / "bars.csv", HEAD + "".join(rows))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        got = read_bars(path)
    assert got["volume"].to_list() == [100.0, 0.0, 200.0, 0.0, 300.0]
    assert _messages(caplog) == [
        f"volume NaN or empty (not reported) in 2 rows of {path} (column 'Volume', first row 1): "
        "read as 0"
    ]


def test_unknown_volume_replaces_nan_only_on_priced_rows(
    caplog: pytest.LogCaptureFixture,
) -> None:
    nan = float("nan")
    df = pl.DataFrame(
        {
            "open": [1.0, None, nan, 1.0],
            "high": [1.0, None, nan, nan],
            "low": [1.0, None, nan, None],
            "close": [1.0, None, nan, None],
            "volume": [5.0, nan, nan, nan],
            "__row": [0, 1, 2, 3],
        }
    )
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        got = unknown_volume(df, Path("x.csv"), "Vol")
    # rows 1 and 2 hold no price: left for the caller; row 3 has an open
    assert got["volume"].to_list()[0] == 5.0 and got["volume"].to_list()[3] == 0.0
    assert got["volume"].is_nan().to_list() == [False, True, True, False]
    assert _messages(caplog) == [
        "volume NaN or empty (not reported) in 1 rows of x.csv (column 'Vol', first row 3): "
        "read as 0"
    ]


# --- kept_name ------------------------------------------------------------------------------


NAMES = ["Date", "Open", "High", "Low", "Close", "Spread", " carry "]


def test_kept_name_exact_spelling_first_then_case_and_space_insensitive() -> None:
    p = Path("bars.csv")
    assert kept_name(p, "spread", ("Spread", "spread"), NAMES) == "spread"
    assert kept_name(p, "Spread", ("spread", "Spread"), NAMES) == "Spread"
    assert kept_name(p, "SPREAD", ("carry ", " Spread "), NAMES) == " Spread "
    assert kept_name(p, "carry", (" Spread ", " CARRY"), NAMES) == " CARRY"


@pytest.mark.parametrize(("column", "used"), [("Close", "a bar field"), ("basis", "missing")])
def test_kept_name_refuses_a_bar_field_or_a_missing_column(column: str, used: str) -> None:
    with pytest.raises(DataError) as e:
        kept_name(Path("bars.csv"), column, (" carry ",), NAMES)
    assert str(e.value) == (
        f"bars.csv: column '{column}' is {used}; an input column must be an extra numeric "
        "column of the bars (columns: Date, Open, High, Low, Close, Spread,  carry )"
    )


def test_a_bar_field_spelled_otherwise_is_refused_as_a_bar_field(tmp_path: Path) -> None:
    # docs/data.md: kept columns are "matched exactly or trimmed/lower-case"; "a column that is
    # a bar field (`close`) is refused too"
    path = _write(tmp_path / "bars.csv", HEAD + "".join(_bar(d) for d in DAYS))
    with pytest.raises(DataError, match=r"column 'close' is a bar field"):
        read_bars(path, keep=("close",))
