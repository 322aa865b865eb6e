"""foxhunt's Python API (re-exported by :mod:`foxhunt`): read bars, fit, predict, evaluate,
save, load and stream a TFT quantile forecaster from a notebook."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from foxhunt.api.forecaster import TFTForecaster
from foxhunt.api.frames import BarsLike, as_kind, bars_path, kind_of, python_words, reworded
from foxhunt.data.read import bars as _bars
from foxhunt.infer.forecaster import Forecaster

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BarsLike", "Forecaster", "TFTForecaster", "read_bars"]


def read_bars(
    bars: BarsLike,
    *,
    symbol: str | None = None,
    tz: str | None = None,
    force_tz: bool = False,
    allow_outliers: bool = False,
    columns: dict[str, str] | None = None,
    ts_format: str | None = None,
    stamps: str = "start",
    decimal: str | None = None,
    bar_minutes: int | None = None,
    allow_odd_times: bool = False,
) -> pl.DataFrame | pd.DataFrame:
    """Read and validate bars as every command does (docs/data.md).

    Args:
        bars: A bars file (parquet, CSV in any dialect, DBN), directory or glob, or a polars
            or pandas DataFrame with bar columns in any vendor spelling (a pandas
            ``DatetimeIndex`` is the time column).
        symbol: The symbol of a DataFrame or of one-symbol files without a symbol column
            (default: from the file name).
        tz: Zone of naive timestamps: an IANA name or a fixed offset (``-05:00``, ``UTC-5``);
            None: the vendor's clock where the file name says it (histdata: America/New_York), else
            UTC.
        force_tz: Read times marked UTC (``Z``, ``+00:00``, epoch counts) as wall-clock times
            in ``tz`` too: a file that marks its local clock as UTC.
        allow_outliers: Keep implausible bars (one warning) instead of refusing them.
        columns: The file's column for each bar field, ``{"ts": "DATE", "open": "OPEN"}``.
        ts_format: How timestamps are written: ``epoch-s|ms|us|ns``, ``yyyymmdd`` or strftime.
        stamps: What a bar's timestamp marks: ``"start"`` (foxhunt's convention) or ``"end"``
            (TradeStation, NinjaTrader, IQFeed: intraday bars moved one interval earlier).
        decimal: A CSV's decimal separator, ``"point"`` or ``"comma"``; None: guessed.
        bar_minutes: Aggregate to K-minute bars (docs/data.md).
        allow_odd_times: Keep bars whose time axis looks wrong (one warning each).

    Returns:
        ``ts`` (UTC), ``symbol``, ``open high low close volume``, sorted by symbol and time:
        pandas for pandas bars, else polars.

    Raises:
        DataError: Bad bars; the message names the file (or ``DataFrame``), column and row,
            and the keyword argument that would keep or read them (``allow_odd_times=True``).
    """
    from foxhunt.data.read.options import ReadOptions

    kind = kind_of(bars)
    with tempfile.TemporaryDirectory(prefix="foxhunt-") as work, reworded(python_words):
        options = ReadOptions(
            tz=tz,
            force_tz=force_tz,
            symbol=symbol if kind == "path" else None,  # a frame's symbol is added by bars_path
            columns=tuple(f"{k}={v}" for k, v in (columns or {}).items()),
            ts_format=ts_format,
            stamps=stamps,
            decimal=decimal,
            bar_minutes=bar_minutes,
            allow_odd_times=allow_odd_times,
        )
        with bars_path(bars, Path(work), symbol, columns=columns) as path:
            frame = _bars.read_bars(path, allow_outliers=allow_outliers, options=options)
    return as_kind(frame, kind)
