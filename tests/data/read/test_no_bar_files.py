"""Beside bar files, a table with no price column at all (yfinance's ``AAPL_dividends.csv`` and
``AAPL_splits.csv``, a list of symbols) is passed over with one warning naming it: it refused
the whole folder as missing 'open'. Alone, or where no file holds bars, it is refused."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.errors import DataError


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "AAPL"
    folder.mkdir()
    rows = "".join(f"2024-01-{d:02d},185,186,184,185.5,{1000 + d * 7 % 11}\n" for d in range(8, 13))
    (folder / "AAPL.csv").write_text("Date,Open,High,Low,Close,Volume\n" + rows)
    (folder / "AAPL_dividends.csv").write_text("Date,Dividends\n2023-11-10,0.24\n2024-02-09,0.24\n")
    return folder


def test_a_dividends_table_beside_the_bars_is_passed_over_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = _folder(tmp_path)
    with caplog.at_level(logging.WARNING):
        bars = read_bars(folder, min_bars=1)
    assert bars.height == 5 and set(bars["symbol"]) == {"AAPL"}
    assert (
        f"not read, no bars: {folder / 'AAPL_dividends.csv'}: missing column 'open' (columns: "
        "Date, Dividends)" in caplog.text
    )


def test_a_table_without_prices_alone_or_among_its_kind_is_refused(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    with pytest.raises(DataError, match=r"AAPL_dividends.csv: missing column 'open'"):
        read_bars(folder / "AAPL_dividends.csv", min_bars=1)
    (folder / "AAPL.csv").unlink()
    (folder / "AAPL_splits.csv").write_text("Date,Stock Splits\n2020-08-31,4.0\n")
    with pytest.raises(DataError, match=r"AAPL_dividends.csv: missing column 'open'"):
        read_bars(folder, min_bars=1)


def test_a_bar_file_with_one_price_missing_still_refuses_the_folder(tmp_path: Path) -> None:
    """A file of bars whose high is not named is no other table: its refusal stands."""
    folder = _folder(tmp_path)
    (folder / "MSFT.csv").write_text("Date,Open,Hi,Low,Close\n2024-01-08,370,371,369,370.5\n")
    with pytest.raises(DataError, match=r"MSFT.csv: missing column 'high'"):
        read_bars(folder, min_bars=1)
