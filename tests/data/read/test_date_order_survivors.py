"""date_order.py where `make mutate` (session 53, its first run) found it loose: the monthly
against daily refusal read the other way and at its smallest, and a year-first column holding a
row that is no date."""

from __future__ import annotations

from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.errors import DataError


def _write(path: Path, dates: list[str]) -> Path:
    rows = "".join(f"{d},1274.75,1329.75,1259.75,1308.25,42\n" for d in dates)
    path.write_text("Date,open,high,low,close,volume\n" + rows)
    return path


def test_monthly_bars_day_first_against_days_month_first_are_refused(tmp_path: Path) -> None:
    """``1/1/2012`` ... ``1/9/2012``: one day of each month day-first, nine days of January
    month-first (the mirror of test_vendor_exports' case)."""
    path = _write(tmp_path / "BTCUSD.csv", [f"1/{m}/2012" for m in range(1, 10)])
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value) == (
        f"{path} 'Date': its 9 dates read as days of one month (month-first) or as one day in "
        "each of 9 months in a row (day-first): daily or monthly bars, the dates cannot tell; "
        "--ts-format '%d/%m/%Y' or '%m/%d/%Y' says which"
    )


def test_three_such_dates_are_enough_to_refuse(tmp_path: Path) -> None:
    path = _write(tmp_path / "BTCUSD.csv", [f"{m}/1/2012" for m in (1, 2, 3)])
    with pytest.raises(DataError, match=r"its 3 dates read as days of one month \(day-first\)"):
        read_bars(path, min_bars=1)


def test_a_year_first_column_with_a_row_that_is_no_date_names_the_row(tmp_path: Path) -> None:
    """The spans are taken over the values that read (a footer's text is named by its row
    afterwards, not a failed read of the whole column)."""
    dates = [f"24/01/{d:02d}" for d in range(3, 17)]
    path = _write(tmp_path / "BTCKRW.csv", [*dates[:5], "n/a", *dates[5:]])
    with pytest.raises(DataError, match=r"column 'Date', row 5: unparsable timestamp 'n/a'"):
        read_bars(path, min_bars=1)
