"""What each forecast row is about: the target bar's time and, where known, its realised value.

A forecast made at origin ``t`` for horizon ``h`` is about the ``h``-th bar the instrument's
calendar schedules after ``t`` (:func:`foxhunt.data.market.calendar.project_bar_times`, the same
schedule the model's decoder inputs describe): the next trading bars, skipping halts, weekends
and holidays, not ``t + h x interval``. The realised value is the close of the bar at exactly
that time when the bars hold one, else null (the future, or a gap in the data).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

from foxhunt.data.market.calendar import infer_interval, project_bar_times
from foxhunt.data.market.calendars import DEFAULT_CALENDAR

UTC_US = pl.Datetime("us", "UTC")


def forecast_targets(
    bars: pl.DataFrame,
    origins: pl.DataFrame,
    horizon: int,
    calendars: Mapping[str, str] | None = None,
) -> pl.DataFrame:
    """Target time and realised close of every origin x horizon, in the origins' order.

    Args:
        bars: Validated bars (``symbol``, ``ts``, ``close``), each symbol's rows in time order;
            each symbol's bar interval is inferred from them.
        origins: ``symbol`` and ``ts`` (UTC) of each forecast origin (``WindowDataset.origins``).
        horizon: H.
        calendars: symbol -> calendar name (missing: ``globex``), as the model's windows used.

    Returns:
        ``len(origins) * H`` rows, window-major then horizon: ``target_ts`` (UTC) and
        ``realised_close`` (Float64, null where the bars hold no bar at ``target_ts``).
    """
    calendars = calendars or {}
    indexed = origins.select("symbol", pl.col("ts").cast(UTC_US)).with_row_index("__w")
    parts = []
    for (sym,), group in indexed.group_by("symbol", maintain_order=True):
        sym_ts = bars.filter(pl.col("symbol") == sym)["ts"]
        cal = calendars.get(str(sym), DEFAULT_CALENDAR)
        steps = project_bar_times(group["ts"], horizon, infer_interval(sym_ts), calendar=cal)
        stacked = np.stack([steps[c].dt.epoch("us").to_numpy() for c in steps.columns], axis=1)
        parts.append(
            pl.DataFrame(
                {
                    "__w": np.repeat(group["__w"].to_numpy(), horizon),
                    "horizon": np.tile(np.arange(1, horizon + 1, dtype=np.int16), group.height),
                    "symbol": [str(sym)] * (group.height * horizon),
                    "target_ts": pl.Series(stacked.reshape(-1)).cast(UTC_US),
                }
            )
        )
    if not parts:
        return pl.DataFrame(schema={"target_ts": UTC_US, "realised_close": pl.Float64})
    closes = bars.select(
        "symbol",
        pl.col("ts").cast(UTC_US).alias("target_ts"),
        pl.col("close").cast(pl.Float64).alias("realised_close"),
    )
    return (
        pl.concat(parts)
        .join(closes, on=["symbol", "target_ts"], how="left")
        .sort(["__w", "horizon"])
        .select("target_ts", "realised_close")
    )
