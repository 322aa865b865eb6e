"""infer/bar_frame.py edges that `make mutate` found untested: a pandas class reported from a
submodule (older pandas), a frame indexed by ``(symbol, ts)``, a named plain index left out,
the refusal of a pandas frame polars cannot hold (its first line, after the caller's name), and
canonical bars handed back as they are."""

from __future__ import annotations

from typing import Any

import pandas as pd
import polars as pl
import pytest

from foxhunt.errors import DataError
from foxhunt.infer.bar_frame import canonical_bars, is_pandas, polars_bars

TS = pd.Timestamp("2024-01-02 15:00", tz="UTC")


def _instance(module: str, name: str) -> Any:
    return type(name, (), {"__module__": module})()


def test_a_dataframe_reported_from_a_pandas_submodule_is_pandas() -> None:
    assert is_pandas(_instance("pandas.core.frame", "DataFrame"))
    assert is_pandas(_instance("pandas", "DataFrame"))


def test_a_dataframe_from_another_package_or_another_pandas_class_is_not_pandas() -> None:
    assert not is_pandas(_instance("pandas_like.core.frame", "DataFrame"))
    assert not is_pandas(_instance("pandas.core.series", "Series"))


def test_a_frame_indexed_by_symbol_and_ts_gets_both_levels_as_columns() -> None:
    index = pd.MultiIndex.from_tuples([("ES", TS), ("NQ", TS)], names=["symbol", "ts"])
    got = polars_bars(pd.DataFrame({"close": [1.0, 2.0]}, index=index), "here")
    assert got.columns == ["symbol", "ts", "close"]
    assert got["symbol"].to_list() == ["ES", "NQ"]
    assert got["close"].to_list() == [1.0, 2.0]


def test_a_multi_index_with_an_unnamed_level_is_left_out() -> None:
    index = pd.MultiIndex.from_tuples([("ES", TS), ("NQ", TS)], names=[None, "ts"])
    got = polars_bars(pd.DataFrame({"close": [1.0, 2.0]}, index=index), "here")
    assert got.columns == ["close"]


def test_a_named_plain_index_is_not_made_a_column() -> None:
    pdf = pd.DataFrame({"close": [1.0, 2.0]}, index=pd.Index([5, 6], name="row"))
    assert polars_bars(pdf, "here").columns == ["close"]


def test_a_pandas_frame_polars_cannot_hold_is_refused_naming_the_caller() -> None:
    pdf = pd.DataFrame([[1.0, 2.0]], columns=["close", "close"])
    with pytest.raises(
        DataError,
        match=r"^here: cannot read the pandas bars \(Pandas dataframe contains non-unique ",
    ):
        polars_bars(pdf, "here")


def test_the_refusal_quotes_only_the_first_line_of_the_conversion_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(_: Any) -> pl.DataFrame:
        raise TypeError("column 'close' is odd\nHint: a second line")

    monkeypatch.setattr(pl, "from_pandas", refuse)
    with pytest.raises(DataError) as excinfo:
        polars_bars(pd.DataFrame({"close": [1.0]}), "stream")
    assert str(excinfo.value) == "stream: cannot read the pandas bars (column 'close' is odd)"
    assert isinstance(excinfo.value.__cause__, TypeError)


def test_bars_already_canonical_are_handed_back_without_a_rename() -> None:
    bars = pl.DataFrame({"ts": [1], "symbol": ["ES"], "close": [1.0], "volume": [3]})
    assert canonical_bars(bars) is bars
