"""hints.py where `make mutate` (session 54) found it loose: a symbol column's values of upper-
or lower-case letters only, text with a letter that is a number (``1e5``, ``1,000e3``), one
label on both rows of a duplicate (or a label beside a number), and a settlement read as the
close without a last-trade column or beside a ``Last Price``."""

from __future__ import annotations

from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.errors import DataError

_DATES_ONLY = (
    "column 'Date' gives every bar the same time of day, so the bars of one day collide; if "
    "another column holds the time, --columns date=Date,time=COLUMN reads both"
)
"""The duplicate bar's hint of a daily file whose column read past is no symbol column."""


def _two_per_day(path: Path, column: str, values: tuple[str, str]) -> Path:
    """Daily bars with two rows of other prices on each day, ``column`` holding ``values``."""
    rows = "".join(
        f"2024-01-0{d},{v},{100 + i},{101 + i},{99 + i},{100.5 + i},1000\n"
        for d in (2, 3, 4)
        for i, v in enumerate(values)
    )
    path.write_text(f"Date,{column},Open,High,Low,Close,Volume\n" + rows)
    return path


def _refusal(path: Path) -> str:
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    return str(refused.value)


@pytest.mark.parametrize(
    ("column", "values"),
    [
        ("Index", ("NYA", "IXIC")),  # Kaggle's indexProcessed.csv: upper case only
        ("coin_id", ("bitcoin", "ethereum")),  # CoinGecko's ids: lower case only
    ],
)
def test_symbols_of_one_case_are_named_as_a_symbol_column(
    tmp_path: Path, column: str, values: tuple[str, str]
) -> None:
    """Letters of either case make a label (with ``[a-za-z]`` or ``[A-ZA-Z]`` the other case's
    symbols were passed over and the refusal blamed the date)."""
    path = _two_per_day(tmp_path / "long.csv", column, values)
    assert _refusal(path) == (
        f"{path}: column 'Date', row 1 (2024-01-02 00:00:00+00:00): duplicate bar for symbol "
        f"'LONG' (same time as {path} row 0): column '{column}' holds '{values[0]}' on one and "
        f"'{values[1]}' on the other, as a symbol column would (a long table of several "
        f"symbols?); --columns symbol={column} reads each apart"
    )


@pytest.mark.parametrize(
    "values",
    [("1e5", "2e5"), ("inf", "nan"), ('"1,000e3"', '"2,000e3"')],
    ids=["exponent", "inf-nan", "grouped-exponent"],
)
def test_numbers_with_letters_are_no_symbol_column(tmp_path: Path, values: tuple[str, str]) -> None:
    """A letter in a number (an exponent, ``inf``; ``1,000e3`` once its comma between thousands
    is dropped) is no symbol: the refusal keeps its other hint."""
    path = _two_per_day(tmp_path / "notes.csv", "Notes", values)
    assert _refusal(path).endswith(
        f"duplicate bar for symbol 'NOTES' (same time as {path} row 0): {_DATES_ONLY}"
    )


@pytest.mark.parametrize(
    "values",
    [("NYSE", "NYSE"), ("NYSE", "1")],
    ids=["one-label", "label-then-number"],
)
def test_a_column_without_two_labels_that_differ_is_no_symbol_column(
    tmp_path: Path, values: tuple[str, str]
) -> None:
    """One exchange on both rows of the duplicate, or a label beside a number: no symbol
    column to name (the hint needs two labels, and two that differ)."""
    path = _two_per_day(tmp_path / "one.csv", "Exchange", values)
    assert _refusal(path).endswith(
        f"duplicate bar for symbol 'ONE' (same time as {path} row 0): {_DATES_ONLY}"
    )


def _settled(path: Path, head: str, row: str) -> Path:
    """Quandl's CHRIS layout: the deferred month's settlement above the day's high on the 4th."""
    rows = "".join(row.format(d=d, settle=4812.5 if d == 4 else 4806) for d in (2, 3, 4, 5))
    path.write_text(head + rows)
    return path


def test_a_settle_without_a_last_trade_column_asks_for_one(tmp_path: Path) -> None:
    """No ``Last`` among the columns read past: the flag names a COLUMN to choose (it raised
    StopIteration, or named ``close=None``, with the search's default or the branch gone)."""
    path = _settled(
        tmp_path / "CHRIS-CME_ES2.csv",
        "Date,Open,High,Low,Change,Settle,Volume,Previous Day Open Interest\n",
        "2024-01-0{d},4800,4809,4795,3,{settle},1000,250000\n",
    )
    assert _refusal(path) == (
        f"{path}: column 'High', row 2 (2024-01-04 00:00:00+00:00): high 4809.0 < max(open, "
        "close) 4812.5 (the close was read from 'Settle', a settlement price, which may fall "
        "outside the day's range; --columns close=COLUMN (a last trade) reads the last trade "
        "as the close)"
    )


def test_a_settle_beside_a_last_price_names_it(tmp_path: Path) -> None:
    path = _settled(
        tmp_path / "ES2.csv",
        "Date,Open,High,Low,Last Price,Change,Settle,Volume\n",
        "2024-01-0{d},4800,4809,4795,4805,3,{settle},1000\n",
    )
    assert _refusal(path).endswith(
        "(the close was read from 'Settle', a settlement price, which may fall outside the "
        "day's range; --columns 'close=Last Price' reads the last trade as the close)"
    )


def test_a_bad_date_beside_an_hour_and_a_minute_column_is_named_with_its_row(
    tmp_path: Path,
) -> None:
    """``Date+Hour+Minute`` was split once when the refusal looked up the raw value: polars'
    ColumnNotFoundError "Hour+Minute" instead of the row, until session 54."""
    path = tmp_path / "ES.csv"
    days = ("02", "03", "0x", "05")
    rows = "".join(f"2024-01-{d},9,30,1,2,0.5,1.5,10\n" for d in days)
    path.write_text("Date,Hour,Minute,Open,High,Low,Close,Volume\n" + rows)
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value).startswith(
        f"{path}: column 'Date+Hour+Minute', row 2: unparsable timestamp '2024-01-0x 9 30'"
    )
