"""A ``Name`` column is the symbol where its values are tickers (Kaggle's S&P 500 data set,
``all_stocks_5yr.csv``: refused as "two instruments interleaved; add a symbol column" though it
had one), and an ignored column where they are a company's name."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.options import ReadOptions

DAYS = ("2024-01-08", "2024-01-09", "2024-01-10", "2024-01-11", "2024-01-12")


def _write(path: Path, names: dict[str, float]) -> Path:
    rows = "".join(
        f"{d},{p},{p + 1},{p - 1},{p + 0.5},{1000 + i * 37 % 11},{name}\n"
        for name, p in names.items()
        for i, d in enumerate(DAYS)
    )
    path.write_text("date,open,high,low,close,volume,Name\n" + rows)
    return path


def test_a_name_column_of_tickers_is_the_symbol(tmp_path: Path) -> None:
    bars = read_bars(
        _write(tmp_path / "all_stocks_5yr.csv", {"AAL": 15.0, "AAPL": 185.0}), min_bars=1
    )
    assert bars.group_by("symbol").len().sort("symbol").rows() == [("AAL", 5), ("AAPL", 5)]
    assert bars.filter(symbol="AAPL")["open"].to_list() == [185.0] * 5


def test_a_name_column_of_a_companys_name_is_no_symbol(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path / "AAPL.csv", {"Apple Inc.": 185.0})
    with caplog.at_level(logging.WARNING):
        bars = read_bars(path, min_bars=1)
    assert set(bars["symbol"]) == {"AAPL"}
    assert f"ignored columns in {path}: Name" in caplog.text


def test_a_name_column_the_user_names_is_taken_as_written(tmp_path: Path) -> None:
    path = _write(tmp_path / "AAPL.csv", {"Apple Inc.": 185.0})
    bars = read_bars(path, min_bars=1, options=ReadOptions(columns=("symbol=Name",)))
    assert set(bars["symbol"]) == {"Apple Inc."}
