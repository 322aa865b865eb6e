"""Column mapping: the names vendors spell, the user's ``--columns`` (both its parser and its
date + time form), a pandas index column, and every refusal word for word."""

from __future__ import annotations

import pytest

from foxhunt.data.read.columns import ColumnMap, canonical_name, map_columns, parse_columns
from foxhunt.errors import DataError

OHLC = {"open": "Open", "high": "High", "low": "Low", "close": "Close"}


@pytest.mark.parametrize(
    ("name", "canonical"),
    [(" <DATE> ", "date"), ("< Time >", "time"), ("<DATE", "<date"), ("DATE>", "date>")],
)
def test_canonical_names_drop_only_a_pair_of_angle_brackets(name: str, canonical: str) -> None:
    assert canonical_name(name) == canonical


def test_date_and_time_given_by_the_user() -> None:
    names = ["Day", "Clock", "Open", "High", "Low", "Close", "Vol", "Ticker", "Note", "ts"]
    got = map_columns(names, given=parse_columns(["date=Day", "time=Clock"]))
    # the user's date + time win over a ts column; the rest is found by its aliases
    assert got == ColumnMap(
        ts=None,
        date="Day",
        time="Clock",
        prices=OHLC,
        volume="Vol",
        symbol="Ticker",
        extra=("Note", "ts"),
    )


def test_the_users_symbol_volume_and_price_columns_win_over_the_aliases() -> None:
    names = ["ts", "Open", "High", "Low", "Close", "Mid", "Volume", "Size", "Symbol", "Root"]
    given = parse_columns(["symbol=root", "volume=SIZE", "close=Mid"])
    got = map_columns(names, given=given)
    assert got == ColumnMap(
        ts="ts",
        date=None,
        time=None,
        prices={**OHLC, "close": "Mid"},
        volume="Size",
        symbol="Root",
        extra=("Close", "Volume", "Symbol"),
    )


def test_an_exact_spelling_is_preferred_to_a_case_insensitive_one() -> None:
    names = ["ts", "open", "high", "low", "Price", "price"]
    assert map_columns(names, given={"close": "price"}).prices["close"] == "price"
    assert map_columns(names, given={"close": "PRICE"}).prices["close"] == "Price"


def test_a_column_the_user_named_that_is_not_there_is_refused() -> None:
    with pytest.raises(DataError) as refused:
        map_columns(["ts", "a", "b"], given={"close": "Last"})
    assert (
        str(refused.value) == "the file: --columns close=Last: no column 'Last' (columns: ts, a, b)"
    )
    with pytest.raises(DataError) as refused:
        map_columns(["ts"], given={"ts": "x"}, where="bars.csv")
    assert str(refused.value) == "bars.csv: --columns ts=x: no column 'x' (columns: ts)"


def test_a_leading_unnamed_column_is_the_time_unless_it_holds_integers() -> None:
    names = ["", "open", "high", "low", "close"]
    assert map_columns(names).ts == ""
    as_index = map_columns(names, index_is_integer=True)
    assert as_index.ts is None and as_index.extra == ()  # a RangeIndex is not data either
    with_date = map_columns(["Unnamed: 0", "date", "time", "close"], index_is_integer=True)
    assert (with_date.ts, with_date.date, with_date.time) == (None, "date", "time")


def test_parse_columns_reads_field_equals_column() -> None:
    assert parse_columns([" TS = <DATE> ", "open=a=b"]) == {"ts": "<DATE>", "open": "a=b"}
    assert parse_columns(["date=D", "time=T"]) == {"date": "D", "time": "T"}


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (["ts"], "--columns entry 'ts' is not FIELD=COLUMN"),
        (["ts="], "--columns entry 'ts=' is not FIELD=COLUMN"),
        (
            ["price=Last"],
            "--columns field 'price' is not one of ts, date, time, open, high, low, close, "
            "volume, symbol",
        ),
        (["ts=a", "TS=b"], "--columns names 'ts' twice"),
        (["date=D"], "--columns takes ts=COLUMN, or date=COLUMN and time=COLUMN together"),
        (["time=T"], "--columns takes ts=COLUMN, or date=COLUMN and time=COLUMN together"),
        (
            ["ts=X", "date=D", "time=T"],
            "--columns takes ts=COLUMN, or date=COLUMN and time=COLUMN together",
        ),
    ],
)
def test_parse_columns_refusals(entries: list[str], message: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_columns(entries)
    assert str(refused.value) == message
