"""Which windows ``evaluate`` scores: ``--windows new|test|all``.

* ``new`` (the default for bars other than the training file): only windows whose forecast
  origin is at or after the training bars' end for their symbol, so every target is a bar the
  model never saw. Symbols the run was not trained on have no such end: all their windows count.
* ``test``: the test split of the training bars themselves (the default for that very file).
* ``all``: every window, training windows included (one warning counts them).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping
from typing import Literal

import numpy as np
import polars as pl

from foxhunt.data.windows.dataset import WindowDataset

__all__ = ["SCOPES", "WindowScope", "before_end", "end_text"]

log = logging.getLogger(__name__)

WindowScope = Literal["new", "test", "all"]
SCOPES: tuple[WindowScope, ...] = ("new", "test", "all")


def before_end(windows: WindowDataset, ends: Mapping[str, dt.datetime]) -> np.ndarray:
    """One boolean per window: its origin is before its symbol's training end (so some of
    its targets, or all, are bars the model was trained or validated on); for a symbol the
    run did not train on, before the last training end of all: the model never saw its bars,
    but it learned those years from the others (a run of futures to 2009 scored on another
    future's 1990-2014 was not out of time)."""
    origins = windows.origins()
    end = pl.DataFrame(
        {
            "symbol": pl.Series(list(ends), dtype=pl.String),
            "end": pl.Series(list(ends.values())).cast(pl.Datetime("us", "UTC")),
        }
    )
    last = max(ends.values()) if ends else None
    joined = origins.join(end, on="symbol", how="left", maintain_order="left")
    end_of = pl.col("end").fill_null(pl.lit(last).cast(pl.Datetime("us", "UTC")))
    inside = joined.select((pl.col("ts") < end_of).fill_null(False))
    return inside.to_series().to_numpy().astype(bool)


def end_text(ends: Mapping[str, dt.datetime]) -> str:
    """``2024-03-01 21:59 UTC`` for one end (or one shared by every symbol), else the range."""
    times = sorted(set(ends.values()))
    fmt = "%Y-%m-%d %H:%M UTC"
    if len(times) == 1:
        return times[0].strftime(fmt)
    return f"{times[0].strftime(fmt)} to {times[-1].strftime(fmt)}, per symbol"
