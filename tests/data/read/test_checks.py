"""Rows :mod:`foxhunt.data.read.checks` takes out before validation: settlement-only rows."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.inspection import inspect_report
from foxhunt.errors import DataError

_ROWS = [
    "2013-01-09,93.10,93.50,92.80,93.12,640210",
    "2013-01-10,93.19,94.70,93.08,93.82,732744",
    "2013-01-11,0,0,0,93.99,0",  # CSI's back month: a settlement, no trade
    "2013-01-14,94.23,94.73,93.40,94.59,580792",
    "2013-01-15,,,,94.20,",  # Quandl CHRIS: Settle without Open, High, Low
    "2013-01-16,94.30,94.90,93.90,94.11,512000",
]


def _file(path: Path, rows: list[str]) -> Path:
    path.write_text("Date,Open,High,Low,Settle,Volume\n" + "\n".join(rows) + "\n")
    return path


def test_settlement_only_rows_are_dropped_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """They were refused as a non-positive price, with the back-adjusted future's advice."""
    path = _file(tmp_path / "CLZ14.csv", _ROWS)
    with caplog.at_level(logging.WARNING):
        bars = read_bars(path, min_bars=1)
    assert bars["close"].to_list() == [93.12, 93.82, 94.59, 94.11]
    said = [r.getMessage() for r in caplog.records if "settlement-only" in r.getMessage()]
    assert said == [
        f"2 rows of {path} are settlement-only rows: a close, and open, high and low all written "
        "0 or empty (no trade that day or bar; first: row 2, 2013-01-11 00:00:00+00:00): not "
        "bars, dropped"
    ]
    assert inspect_report(path)["verdict"] == "valid"


@pytest.mark.parametrize(
    ("row", "error"),
    [
        ("2013-01-11,0,94.0,0,93.99,0", r"row 2 .*non-positive price open 0.0"),  # some zero
        ("2013-01-11,0,0,0,0,0", r"row 2 .*non-positive price open 0.0"),  # no close either
        ("2013-01-11,,94.0,,93.99,", r"column 'Open', row 2 .*missing value"),  # some empty
    ],
)
def test_a_row_with_part_of_a_trade_is_still_refused(tmp_path: Path, row: str, error: str) -> None:
    path = _file(tmp_path / "CLZ14.csv", [*_ROWS[:2], row, *_ROWS[3:]])
    with pytest.raises(DataError, match=error):
        read_bars(path, min_bars=1)


def test_a_file_of_settlements_alone_holds_no_bars(tmp_path: Path) -> None:
    path = _file(tmp_path / "CLZ14.csv", ["2013-01-11,0,0,0,93.99,0", "2013-01-14,0,0,0,94.2,0"])
    with pytest.raises(DataError, match=r"CLZ14.csv: no bars: all 2 rows are settlement-only"):
        read_bars(path, min_bars=1)


def test_a_contract_column_that_rolls_within_a_symbol_is_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A panel with ``symbol`` and ``contract``: the contract was only listed as ignored, and
    the roll's price gap read as a return without a word."""
    path = tmp_path / "cme.csv"
    path.write_text(
        "ts,symbol,contract,open,high,low,close,volume\n"
        "2018-03-07 20:00,ES,ESH18,2720,2723,2719,2722.5,10\n"
        "2018-03-07 21:00,ES,ESH18,2722.5,2724,2721,2722.5,10\n"
        "2018-03-07 23:00,ES,ESM18,2728.75,2730,2727,2729,10\n"
        "2018-03-07 20:00,NQ,NQH18,6900,6910,6890,6905,10\n"
    )
    with caplog.at_level(logging.WARNING):
        read_bars(path, min_bars=1, allow_outliers=True)
    said = [m for m in caplog.messages if "changes within a symbol" in m]
    assert said == [
        f"{path}: column 'contract' changes within a symbol 1 times (first: ES, ESM18 at row 2): "
        "the bars of several contracts are read as one series, a roll's price gap as a return; "
        "back-adjust the prices first, or --columns symbol=contract reads each contract apart"
    ]
