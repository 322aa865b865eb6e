"""foxhunt's Python API (re-exported by :mod:`foxhunt`): read bars, fit, predict, evaluate,
save, load and stream a TFT quantile forecaster from a notebook."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from foxhunt.api.forecaster import TFTForecaster
from foxhunt.api.frames import BarsLike, as_kind, bars_path, kind_of
from foxhunt.data import bars as _bars
from foxhunt.infer.forecaster import Forecaster

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BarsLike", "Forecaster", "TFTForecaster", "read_bars"]


def read_bars(
    bars: BarsLike,
    *,
    symbol: str | None = None,
    tz: str = "UTC",
    allow_outliers: bool = False,
) -> pl.DataFrame | pd.DataFrame:
    """Read and validate bars as every command does (docs/data.md).

    Args:
        bars: A bars file (parquet, CSV in any dialect, DBN), directory or glob, or a polars
            or pandas DataFrame with bar columns in any vendor spelling (a pandas
            ``DatetimeIndex`` is the time column).
        symbol: The symbol of a DataFrame without a symbol column.
        tz: Zone of naive timestamps.
        allow_outliers: Keep implausible bars (one warning) instead of refusing them.

    Returns:
        ``ts`` (UTC), ``symbol``, ``open high low close volume``, sorted by symbol and time:
        pandas for pandas bars, else polars.

    Raises:
        DataError: Bad bars; the message names the file (or ``DataFrame``), column and row.
    """
    with tempfile.TemporaryDirectory(prefix="foxhunt-") as work:
        with bars_path(bars, Path(work), symbol) as path:
            frame = _bars.read_bars(path, tz=tz, allow_outliers=allow_outliers)
    return as_kind(frame, kind_of(bars))
