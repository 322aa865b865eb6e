from __future__ import annotations

import pandas as pd
import polars as pl
import pytest

from foxhunt.errors import DataError
from foxhunt.infer.bar_frame import canonical_bars, polars_bars


def test_pandas_with_a_datetime_index_and_vendor_names_becomes_canonical_polars() -> None:
    idx = pd.DatetimeIndex(["2024-01-02 15:00", "2024-01-02 15:05"], tz="UTC", name="Timestamp")
    pdf = pd.DataFrame(
        {
            "Ticker": ["ES", "ES"],
            "Open": [1.0, 2.0],
            "High": [2.0, 3.0],
            "Low": [0.5, 1.5],
            "Close": [1.5, 2.5],
            "Vol": [10, 20],
            "spread": [0.1, 0.1],
        },
        index=idx,
    )
    got = canonical_bars(polars_bars(pdf, "here"))
    assert got.columns == ["ts", "symbol", "open", "high", "low", "close", "volume", "spread"]
    assert got["ts"].dtype.time_zone == "UTC" and got["close"].to_list() == [1.5, 2.5]
    unnamed = polars_bars(pdf.rename_axis(None), "here")
    assert unnamed.columns[0] == "ts"


def test_other_objects_are_refused_naming_the_caller() -> None:
    with pytest.raises(
        DataError, match="^here: bars must be a polars or pandas DataFrame, got dict"
    ):
        polars_bars({"ts": []}, "here")


def test_missing_columns_stay_missing() -> None:
    got = canonical_bars(pl.DataFrame({"timestamp": [1], "close": [1.0]}))
    assert got.columns == ["ts", "close"]


def test_a_pandas_time_index_kept_as_a_column_too_and_a_period_index() -> None:
    """``set_index("timestamp", drop=False)`` (the time twice) failed deep in pandas ("cannot
    insert timestamp, already exists"); two different times are refused in one line; a daily
    ``PeriodIndex`` was dropped without a word (then "missing column 'ts'")."""
    pd = pytest.importorskip("pandas")
    ts = pd.date_range("2024-01-02", periods=3, freq="h", tz="UTC")
    df = pd.DataFrame({"timestamp": ts, "close": [1.0, 2.0, 3.0]})
    both = polars_bars(df.set_index("timestamp", drop=False), "bars")
    assert both.columns == ["timestamp", "close"] and both["close"].to_list() == [1.0, 2.0, 3.0]
    other = df.rename(columns={"timestamp": "ts"}).set_axis(ts - pd.Timedelta(days=1))
    with pytest.raises(DataError) as e:
        polars_bars(other, "bars")
    assert str(e.value) == (
        "bars: the index and the column 'ts' are two different times; keep one "
        "(reset_index(drop=True), or drop the column)"
    )
    daily = pd.DataFrame({"close": [1.0, 2.0]}, index=pd.period_range("2024-01-02", periods=2))
    got = polars_bars(daily, "bars")
    assert got.columns == ["ts", "close"]
    assert got["ts"].dt.strftime("%Y-%m-%d").to_list() == ["2024-01-02", "2024-01-03"]
