"""Bars as a notebook holds them: the kind of what was passed, a frame's missing symbol column
(refused word for word, or added as a string column named ``symbol``), and the frame's name in
the messages of a pandas frame polars cannot hold."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from foxhunt.api.frames import kind_of, to_polars
from foxhunt.errors import DataError, InputError


def _bars(**extra: object) -> pl.DataFrame:
    ts = [dt.datetime(2024, 1, 2, 15, 5 * i, tzinfo=dt.UTC) for i in range(3)]
    return pl.DataFrame({"ts": ts, "close": [1.0, 2.0, 3.0], **extra})


def test_the_kind_of_what_was_passed() -> None:
    pd = pytest.importorskip("pandas")
    assert kind_of("bars.csv") == kind_of(Path("bars.csv")) == "path"
    assert kind_of(_bars()) == "polars"
    assert kind_of(_bars().to_pandas()) == "pandas"
    with pytest.raises(InputError) as refused:
        kind_of({"close": [1.0]})
    assert str(refused.value) == "bars: expected a path, a polars or a pandas DataFrame, got dict"
    assert pd is not None


def test_a_frame_without_a_symbol_column_gets_the_one_given_or_is_refused() -> None:
    got = to_polars(_bars(), symbol="ES")
    assert got.columns == ["ts", "close", "symbol"]
    assert got.schema["symbol"] == pl.String and got["symbol"].to_list() == ["ES"] * 3
    with pytest.raises(InputError) as refused:
        to_polars(_bars())
    assert str(refused.value) == (
        "bars DataFrame: no symbol column (symbol, ticker, instrument, raw_symbol, instrument_id); "
        "pass symbol='ES'"
    )
    kept = to_polars(_bars(ticker=["NQ"] * 3), symbol="ES")  # has one: `symbol` is ignored
    assert kept.columns == ["ts", "close", "ticker"]


def test_a_pandas_frame_polars_cannot_hold_is_named_as_the_dataframe() -> None:
    pd = pytest.importorskip("pandas")
    odd = pd.DataFrame({"close": [1.0, 2.0], "obj": [object(), object()]})
    with pytest.raises(DataError, match=r"^bars DataFrame: cannot read the pandas bars \("):
        to_polars(odd, symbol="ES")
