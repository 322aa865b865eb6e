"""``data/read/wide.py`` by itself: which headers are wide tables or pandas' column levels."""

from __future__ import annotations

from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.wide import column_levels, not_bars_hint, ticker_prefix, wide_symbols
from foxhunt.errors import DataError


def test_wide_symbols_take_the_word_beside_the_price_word_either_side() -> None:
    assert wide_symbols(["ts", "ES_open", "ES_close", "NQ_open", "NQ_close"]) == ["ES", "NQ"]
    assert wide_symbols(["ts", "open_ES", "close_ES", "open_NQ", "close_NQ"]) == ["ES", "NQ"]
    assert wide_symbols(["Date", "ES Close", "NQ Close"]) == ["ES", "NQ"]


def test_one_symbols_columns_are_no_wide_table() -> None:
    """``ES_open ... ES_close`` is one symbol's bars with a prefix: nothing to refuse."""
    assert wide_symbols(["ts", "ES_open", "ES_high", "ES_low", "ES_close"]) == []
    assert wide_symbols(["ts", "open", "high", "low", "close"]) == []


def _levels(
    tickers: list[str], fields: tuple[str, ...] = ("Open", "High", "Low", "Close")
) -> list[str]:
    return ["('Date', '')", *(f"('{f}', '{t}')" for t in tickers for f in fields)]


def test_one_tickers_levels_read_by_the_first_level_with_the_ticker_as_symbol() -> None:
    renamed, symbol = column_levels(Path("a.parquet"), _levels(["AAPL"]))  # type: ignore[misc]
    assert symbol == "AAPL"  # the index column's empty second level is no ticker
    assert renamed == {"('Date', '')": "Date"} | {
        f"('{f}', 'AAPL')": f for f in ("Open", "High", "Low", "Close")
    }
    got = column_levels(
        Path("a.parquet"), ["('Open', '')", "('High', '')", "('Low', '')", "('Close', '')"]
    )
    assert got is not None and got[1] is None  # levels without a ticker: no symbol


def test_four_level_names_are_needed() -> None:
    three = ["('Open', 'AAPL')", "('High', 'AAPL')", "('Close', 'AAPL')"]
    assert column_levels(Path("a.parquet"), three) is None
    assert column_levels(Path("a.parquet"), [*three, "('Low', 'AAPL')"]) is not None


def test_several_tickers_are_refused_naming_four_of_them() -> None:
    with pytest.raises(DataError) as refused:
        column_levels(Path("a.parquet"), _levels(["A", "B", "C", "D", "E"]))
    assert str(refused.value) == (
        "a.parquet: columns of several tickers side by side (A, B, C, D): one table with a "
        "symbol column reads them (pandas: df.stack(level=1).reset_index())"
    )


@pytest.mark.parametrize(
    ("names", "hint"),
    [
        (
            ["time", "ask_o", "ask_h", "ask_l", "ask_c"],
            " (ask bars: --columns open=ask_o,high=ask_h,low=ask_l,close=ask_c reads the ask side)",
        ),
        (["time", "bid", "bid_size"], ""),  # one side alone says nothing
        (["time", "price", "volume"], ""),  # a price without a trade size
        (["time", "qty", "volume"], ""),  # a size without a price
        (
            ["ts", "A_close", "B_close", "C_close", "D_close", "E_close"],
            "; the columns look like several symbols side by side (A, B, C, D): write one file "
            "per symbol, or one table with a symbol column",
        ),
    ],
    ids=["ask-only", "one-side", "no-size", "no-price",
         "five-symbols"],
)  # fmt: skip
def test_what_a_table_without_bar_prices_looks_like_instead(names: list[str], hint: str) -> None:
    assert not_bars_hint(names) == hint


_QUANTMOD = (
    '"Index","AAPL.Open","AAPL.High","AAPL.Low","AAPL.Close","AAPL.Volume","AAPL.Adjusted"\n'
    "2024-01-03,184.22,185.88,183.43,184.25,58414500,183.73\n"
    "2024-01-04,182.15,183.09,180.88,181.91,71983600,181.40\n"
    "2024-01-05,181.99,182.76,180.17,181.18,62303300,180.67\n"
)


def test_a_quantmod_series_reads_its_fields_and_its_ticker(tmp_path: Path) -> None:
    """R's ``write.zoo`` of ``getSymbols("AAPL")``: the time in ``Index``, each field named
    after the ticker (until session 53 refused: missing column 'open')."""
    path = tmp_path / "prices.csv"
    path.write_text(_QUANTMOD)
    df = read_bars(path)
    assert df["symbol"].to_list() == ["AAPL"] * 3
    assert df["ts"].dt.strftime("%Y-%m-%d").to_list() == ["2024-01-03", "2024-01-04", "2024-01-05"]
    assert df.row(0)[2:] == (184.22, 185.88, 183.43, 184.25, 58414500.0)


def test_ticker_prefix_needs_one_ticker_over_all_four_prices() -> None:
    names = ["Index", "GSPC.Open", "GSPC.High", "GSPC.Low", "GSPC.Close", "GSPC.Volume"]
    renamed, ticker = ticker_prefix(names)  # type: ignore[misc]
    assert ticker == "GSPC"
    assert renamed == {n: n.split(".")[1] for n in names[1:]}
    assert ticker_prefix(["Date", "^N225.Open", "^N225.High", "^N225.Low", "^N225.Close"]) == (
        {f"^N225.{f}": f for f in ("Open", "High", "Low", "Close")},
        "N225",
    )
    assert ticker_prefix(["Index", "AAPL.Open", "AAPL.High", "AAPL.Low"]) is None  # no close
    two = ["Date", "AAPL.Open", "AAPL.High", "AAPL.Low", "AAPL.Close", "MSFT.Open", "MSFT.Close"]
    assert ticker_prefix(two) is None  # a wide table: refused elsewhere
    for word in ("price", "px", "bid", "mid"):  # CoinAPI's price_open, Bloomberg's px_open
        assert ticker_prefix([f"{word}_{f}" for f in ("open", "high", "low", "close")]) is None
    # a bare price name beside them: the bars are the bare ones
    assert ticker_prefix(["Date", "Open", "ES.Open", "ES.High", "ES.Low", "ES.Close"]) is None


def test_an_index_of_row_numbers_is_no_time(tmp_path: Path) -> None:
    path = tmp_path / "AAPL.csv"
    path.write_text("index,Open,High,Low,Close\n0,1,2,0.5,1.5\n1,1,2,0.5,1.5\n2,1,2,0.5,1.5\n")
    with pytest.raises(DataError, match="missing column 'ts'"):
        read_bars(path)


def test_a_first_line_of_data_is_named_but_pandas_numbered_names_are_not() -> None:
    hint = not_bars_hint(["2024-01-03 10:30:00.291", "4780.25", "3"])
    assert hint.startswith("; its first line looks like data (4780.25, 3), not names")
    assert not_bars_hint(["0", "1", "2", "3", "4", "5"]) == ""  # a frame of lists' names


@pytest.mark.parametrize("bare", ["Open", "High", "Low", "Close"])
def test_any_bare_price_name_keeps_the_prefixed_names_unread(bare: str) -> None:
    names = ["Date", "ES.Open", "ES.High", "ES.Low", "ES.Close", bare.upper()]
    assert ticker_prefix(names) is None


def test_the_first_lines_hint_shows_two_of_its_numbers() -> None:
    hint = not_bars_hint(["1704535200", "42500.50000", "0.38000000"])
    assert hint.startswith("; its first line looks like data (1704535200, 42500.50000), not")


def test_a_ticker_that_starts_with_x_keeps_its_letters() -> None:
    names = ["Index", "XOM.Open", "XOM.High", "XOM.Low", "XOM.Close"]
    assert ticker_prefix(names)[1] == "XOM"  # type: ignore[index]
