"""A ``Name`` column is the symbol where its values are tickers (Kaggle's S&P 500 data set,
``all_stocks_5yr.csv``: refused as "two instruments interleaved; add a symbol column" though it
had one), and an ignored column where they are a company's name."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError

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


def _long(path: Path, column: str, symbols: tuple[str, ...], extra: str = "") -> Path:
    rows = "".join(
        f"{s},{d},{100 + k},{101 + k},{99 + k},{100.5 + k},{1000 + i * 37 % 11}{extra}\n"
        for k, s in enumerate(symbols)
        for i, d in enumerate(DAYS)
    )
    head = f"{column},Date,Open,High,Low,Close,Volume" + (",Name" if extra else "")
    path.write_text(head + "\n" + rows)
    return path


@pytest.mark.parametrize(
    ("column", "symbols"),
    [
        ("Code", ("AAPL", "MSFT")),  # EODHD's bulk download
        ("ts_code", ("600519.SH", "000001.SZ")),  # Tushare
        ("product_id", ("BTC-USD", "ETH-USD")),  # Coinbase
        ("pair", ("BTC/USDT", "ETH/USDT")),
        ("Stock", ("AAPL", "MSFT")),
        ("Asset", ("SPY", "IVV")),
        ("permno", ("14593", "10107")),  # CRSP
        ("Ticker Symbol", ("AAPL", "MSFT")),
        ("SecurityID", ("AAPL", "MSFT")),
    ],
)
def test_other_names_of_a_symbol_column_holding_tickers(
    tmp_path: Path, column: str, symbols: tuple[str, ...]
) -> None:
    """Each was read past: one series of the file's name, refused as duplicates or, where
    each symbol held its own days, read as one series without a word."""
    bars = read_bars(_long(tmp_path / "long.csv", column, symbols), min_bars=1)
    assert sorted(set(bars["symbol"])) == sorted(symbols)
    assert bars.height == 10


def test_a_code_of_tickers_wins_over_a_name_of_companies(tmp_path: Path) -> None:
    path = _long(tmp_path / "eod.csv", "Code", ("AAPL", "MSFT"), extra=",Some Company Inc.")
    assert sorted(set(read_bars(path, min_bars=1)["symbol"])) == ["AAPL", "MSFT"]


def test_a_symbol_column_of_other_values_is_named_at_the_first_duplicate(tmp_path: Path) -> None:
    """A ``Stock`` of companies' names (no ticker as the rule sees one; Baostock's lower-case
    ``code`` was such a column until session 53): the duplicate bar's refusal names the column
    and the flag (it said the date gives every bar one time of day)."""
    path = _long(tmp_path / "k.csv", "Stock", ("Apple Inc.", "Microsoft Corp."))
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value).endswith(
        "column 'Stock' holds 'Apple Inc.' on one and 'Microsoft Corp.' on the other, as a "
        "symbol column would (a long table of several symbols?); --columns symbol=Stock reads "
        "each apart"
    )
    bars = read_bars(path, min_bars=1, options=ReadOptions(columns=("symbol=Stock",)))
    assert sorted(set(bars["symbol"])) == ["Apple Inc.", "Microsoft Corp."]


@pytest.mark.parametrize("codes", [("sh.600519", "sz.000001"), ("sh600519", "sz000001")])
def test_baostocks_and_akshares_lower_case_codes_are_the_symbol(
    tmp_path: Path, codes: tuple[str, str]
) -> None:
    """Baostock's ``code`` (``sh.600519``) and akshare's (``sh600519``): until session 53 no
    ticker (lower case), so two stocks of one day were refused as duplicate bars."""
    rows = "".join(
        f"2024-01-0{d},{c},183.37,187.16,183.29,186.19,183.37,1033432\n"
        for d in (3, 4, 5)
        for c in codes
    )
    path = tmp_path / "baostock_k.csv"
    path.write_text("date,code,open,high,low,close,preclose,volume\n" + rows)
    df = read_bars(path, min_bars=1)
    assert df.group_by("symbol").len().sort("symbol").rows() == [(codes[0], 3), (codes[1], 3)]


def test_kdbs_sym_column_is_the_symbol(tmp_path: Path) -> None:
    """kdb+'s ``sym`` (and Polygon's stream's): until session 53 an ignored column, the symbol
    the file name's (``KDB``), and two contracts refused as duplicate bars."""
    rows = "".join(
        f"2024.01.03,14:3{m}:00.000,{sym},4770.25,4770.5,4768.5,4769.25,1120\n"
        for m in range(3)
        for sym in ("ESH4", "NQH4")
    )
    path = tmp_path / "kdb_bars.csv"
    path.write_text("date,time,sym,open,high,low,close,volume\n" + rows)
    df = read_bars(path, min_bars=1)
    assert df.group_by("symbol").len().sort("symbol").rows() == [("ESH4", 3), ("NQH4", 3)]
