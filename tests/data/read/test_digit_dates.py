"""TradeStation EasyLanguage's dates and clocks as numbers (digit_dates.py, session 54):
``Print(Date, Time, ...)`` writes ``1240103.00,1705.00,...``, the years since 1900 then MMDD."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.digit_dates import cyymmdd_days, digit_clock
from foxhunt.errors import DataError

_BARS = ("4780.25,4780.50,4778.50,4779.25,1120", "4779.25,4782.00,4778.25,4781.00,1667")


def _times(path: Path) -> list[datetime]:
    return read_bars(path, min_bars=1)["ts"].to_list()


def test_easylanguage_print_without_header_reads_dates_and_clocks(tmp_path: Path) -> None:
    """The sweep's ES_el_print.txt: read as epoch seconds of January 1970 and refused before."""
    path = tmp_path / "ES_el_print.txt"
    rows = [f"1240103.00,{c}.00,{b}.00" for c, b in zip(("1705", "1710"), _BARS, strict=True)]
    path.write_text("\n".join(rows) + "\n")
    assert _times(path) == [
        datetime(2024, 1, 3, 17, 5, tzinfo=UTC),
        datetime(2024, 1, 3, 17, 10, tzinfo=UTC),
    ]


def test_easylanguage_dates_with_a_header_and_integer_clocks(tmp_path: Path) -> None:
    """Read as the year 1240 and refused before."""
    path = tmp_path / "ES.csv"
    rows = [f"1240103,{c},{b}" for c, b in zip(("930", "935"), _BARS, strict=True)]
    path.write_text("Date,Time,Open,High,Low,Close,Volume\n" + "\n".join(rows) + "\n")
    assert _times(path) == [
        datetime(2024, 1, 3, 9, 30, tzinfo=UTC),
        datetime(2024, 1, 3, 9, 35, tzinfo=UTC),
    ]


@pytest.mark.parametrize("suffix", ["", ".00"])
def test_daily_easylanguage_dates_across_2000(tmp_path: Path, suffix: str) -> None:
    """Six digits up to 1999, seven from 2000: one column, as ``Print(Date, ...)`` writes it."""
    path = tmp_path / "ES.csv"
    days = ("991230", "991231", "1000103")
    rows = [f"{d}{suffix},{b}" for d, b in zip(days, (*_BARS, _BARS[0]), strict=True)]
    path.write_text("Date,Open,High,Low,Close,Volume\n" + "\n".join(rows) + "\n")
    assert [t.date().isoformat() for t in _times(path)] == [
        "1999-12-30",
        "1999-12-31",
        "2000-01-03",
    ]


def test_easylanguage_dates_from_the_1990s_read_past_the_first_rows_into_2000(
    tmp_path: Path,
) -> None:
    """Years of six-digit dates before the first seven-digit one (CSI's and EasyLanguage's
    ``950705`` ... ``1000103``): the column is CYYMMDD, not MetaStock's YYMMDD that refused
    ``1000103`` as unparsable, naming a --ts-format that cannot spell it."""
    path = tmp_path / "CL.csv"
    weekdays = pl.date_range(datetime(1995, 7, 3), datetime(1999, 12, 31), eager=True)
    days = [d.strftime("%y%m%d") for d in weekdays if d.weekday() < 5] + ["1000103"]
    assert len(days) > 200  # past the rows that decide by themselves
    rows = [f"{d},{_BARS[0]}" for d in days]
    path.write_text("Date,Open,High,Low,Close,Volume\n" + "\n".join(rows) + "\n")
    got = [t.date().isoformat() for t in _times(path)]
    assert (got[0], got[-2], got[-1]) == ("1995-07-03", "1999-12-31", "2000-01-03")
    assert len(got) == len(days)


def test_six_digit_dates_alone_stay_yymmdd(tmp_path: Path) -> None:
    """MetaStock's ``240103`` is 2024, not EasyLanguage's 1924."""
    path = tmp_path / "ES.csv"
    rows = [f"{d},{b}" for d, b in zip(("240103", "240104"), _BARS, strict=True)]
    path.write_text("Date,Open,High,Low,Close,Volume\n" + "\n".join(rows) + "\n")
    assert [t.date().isoformat() for t in _times(path)] == ["2024-01-03", "2024-01-04"]


def _days(values: list[str]) -> list[str] | None:
    lf = pl.LazyFrame({"d": values})
    days = cyymmdd_days(lf, pl.col("d"))
    return None if days is None else lf.select(days).collect().to_series().to_list()


def test_cyymmdd_needs_every_date_to_fit_and_one_of_seven_digits() -> None:
    assert _days(["1240103", "991231.0"]) == ["20240103", "19991231"]
    assert _days(["991230", "991231"]) is None  # six digits alone: YYMMDD
    assert _days(["991230", "991231", "000103"]) is None  # MetaStock's 2000: YYMMDD
    assert _days(["1240103", "1241303"]) is None  # month 13
    assert _days(["1240103", "2240103"]) is None  # a century digit of 2 is no such date
    assert _days(["1240103", "1240132"]) is None  # day 32


def _clocks(values: list[str]) -> list[str]:
    lf = pl.LazyFrame({"t": values})
    return lf.select(digit_clock(lf, pl.col("t"))).collect().to_series().to_list()


def test_digit_clocks_lose_printed_decimals_only_beside_three_digits() -> None:
    assert _clocks(["1705.00", "5.00"]) == ["1705", "0005"]
    assert _clocks(["10.00", "11.00"]) == ["10.00", "11.00"]  # a dotted clock may be 10:00
    assert _clocks(["930", "10000"]) == ["000930", "010000"]  # seconds where one has five
    assert _clocks(["930", "1705.50"]) == ["0930", "1705.50"]  # not whole: left as written


def test_printed_decimals_go_only_where_every_first_clock_has_them() -> None:
    """``make mutate`` (session 54): ``1705.50`` beside ``1705.00`` is no printed clock, and one
    row is enough to tell one."""
    assert _clocks(["1705.00", "1705.50"]) == ["1705.00", "1705.50"]
    assert _clocks(["1705.00"]) == ["1705"]


def _easylanguage(path: Path, days: list[str], clocks: list[str]) -> Path:
    rows = [f"{d},{c},{_BARS[0]}" for d, c in zip(days, clocks, strict=True)]
    path.write_text("Date,Time,Open,High,Low,Close,Volume\n" + "\n".join(rows) + "\n")
    return path


def _minutes(count: int) -> list[str]:
    """Clocks HHMM of ``count`` one-minute bars from 09:00."""
    return [f"{9 + m // 60}{m % 60:02d}" for m in range(count)]


def test_the_first_200_rows_decide_and_a_later_row_is_named(tmp_path: Path) -> None:
    """Seven-digit dates over the first 200 rows, then one that is no date: read as CYYMMDD, and
    that row named (not the cast of the whole column failing, nor the first 200 rows' spelling
    judged on all rows)."""
    clocks = _minutes(240)
    for last in ("12401x3", "20240104"):  # no date; a date of another shape
        path = _easylanguage(tmp_path / "ES.csv", ["1240103"] * 239 + [last], clocks)
        with pytest.raises(DataError, match=r"'Date\+Time', row 239: unparsable timestamp"):
            read_bars(path, min_bars=1)


def test_clocks_printed_with_decimals_in_the_first_200_rows_decide(tmp_path: Path) -> None:
    """A later clock without them (``1300``) reads too."""
    clocks = [f"{c}.00" for c in _minutes(239)] + ["1300"]
    path = _easylanguage(tmp_path / "ES.csv", ["1240103"] * 240, clocks)
    times = _times(path)
    assert (times[1], times[-1]) == (
        datetime(2024, 1, 3, 9, 1, tzinfo=UTC),
        datetime(2024, 1, 3, 13, 0, tzinfo=UTC),
    )
