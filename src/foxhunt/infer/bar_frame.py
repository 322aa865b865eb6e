"""Bars handed over in memory (polars or pandas), as the streaming ``Forecaster`` and the
Python API take them: one conversion to polars and one renaming to the canonical columns, with
the vendor spellings a bars file may use (:mod:`foxhunt.data.read.columns`)."""

from __future__ import annotations

from typing import Any

import polars as pl

from foxhunt.data.read.columns import map_columns
from foxhunt.errors import DataError


def is_pandas(bars: Any) -> bool:
    """Whether ``bars`` is a pandas DataFrame (checked without importing pandas)."""
    return type(bars).__module__.split(".")[0] == "pandas" and type(bars).__name__ == "DataFrame"


def polars_bars(bars: Any, where: str) -> pl.DataFrame:
    """``bars`` as polars: a pandas frame is converted, its ``DatetimeIndex`` (if any) becoming
    a column (named as the index, or ``ts``), and the levels of a ``MultiIndex`` (a frame
    indexed by ``(symbol, ts)``) columns too.

    Raises:
        DataError: not a polars or pandas DataFrame, or a pandas column polars cannot hold;
            the message starts with ``where``.
    """
    if is_pandas(bars):
        import pandas as pd

        if isinstance(bars.index, pd.PeriodIndex):  # daily bars by period: each its start
            bars = bars.set_axis(bars.index.to_timestamp(), axis=0)
        if isinstance(bars.index, pd.DatetimeIndex):
            name = bars.index.name or "ts"
            if name in bars.columns:  # set_index("ts", drop=False): the column is the time
                if not (pd.Series(bars.index, index=bars.index) == bars[name]).all():
                    raise DataError(
                        f"{where}: the index and the column '{name}' are two different times; "
                        "keep one (reset_index(drop=True), or drop the column)"
                    )
                bars = bars.reset_index(drop=True)
            else:
                bars = bars.rename_axis(name).reset_index()
        elif isinstance(bars.index, pd.MultiIndex) and all(bars.index.names):
            bars = bars.reset_index()
        try:
            return pl.from_pandas(bars)
        except Exception as e:  # pyarrow and polars raise several kinds for odd columns
            raise DataError(
                f"{where}: cannot read the pandas bars ({str(e).splitlines()[0]})"
            ) from e
    if not isinstance(bars, pl.DataFrame):
        raise DataError(
            f"{where}: bars must be a polars or pandas DataFrame, got {type(bars).__name__}"
        )
    return bars


def canonical_bars(bars: pl.DataFrame) -> pl.DataFrame:
    """Rename the time, symbol, price and volume columns to ``ts symbol open high low close
    volume`` (``timestamp``, ``Datetime``, ``Open``, ``vol``... as :func:`map_columns` reads
    them). Other columns are kept; a missing one stays missing (the caller names it: a stream
    without volume is refused rather than fed zeros the model never saw)."""
    cols = map_columns(bars.columns)
    names = {cols.ts: "ts", cols.symbol: "symbol", cols.volume: "volume"}
    names |= {spelled: canon for canon, spelled in cols.prices.items()}
    renames = {k: v for k, v in names.items() if k is not None and k != v}
    return bars.rename(renames) if renames else bars  # (a rename is a query: skip a no-op)
