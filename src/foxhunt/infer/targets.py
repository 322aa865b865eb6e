"""What each forecast row is about: the target bar's time and, where known, its realised value.

A forecast made at origin ``t`` for horizon ``h`` is about the ``h``-th bar after ``t`` in the
bars, the bar the model's target is computed from (``shift(-h)`` per symbol,
:mod:`foxhunt.data.features.targets`) and ``evaluate`` scores: where the bars hold it, its time
and close. Beyond the last bar (the future) the target is the bar the instrument's calendar
schedules (:func:`foxhunt.data.market.calendar.project_bar_times`, the schedule the model's
decoder inputs describe): the next trading bars after the last one, skipping halts, weekends and
holidays, and the realised value is null. Until session 44 every row took the calendar's time
and the close at exactly that time: bars off the calendar's schedule (4-hour bars on another
grid, gold's daily break on the FX calendar, a vendor's bar on a holiday) put an h-bar forecast
beside an (h-1)-bar realised value, or none.
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
        origins: ``symbol`` and ``ts`` (UTC) of each forecast origin (``WindowDataset.origins``),
            each a bar of ``bars``.
        horizon: H.
        calendars: symbol -> calendar name (missing: ``globex``), as the model's windows used.

    Returns:
        ``len(origins) * H`` rows, window-major then horizon: ``target_ts`` (UTC) and
        ``realised_close`` (Float64, null past the last bar).
    """
    calendars = calendars or {}
    indexed = origins.select("symbol", pl.col("ts").cast(UTC_US)).with_row_index("__w")
    parts = []
    steps = np.arange(1, horizon + 1)
    for (sym,), group in indexed.group_by("symbol", maintain_order=True):
        mine = bars.filter(pl.col("symbol") == sym)
        times = mine["ts"].cast(UTC_US)
        ts = times.dt.epoch("us").to_numpy()
        close = mine["close"].cast(pl.Float64).to_numpy()
        origin = group["ts"].dt.epoch("us").to_numpy()
        cal = calendars.get(str(sym), DEFAULT_CALENDAR)
        pos = np.searchsorted(ts, origin)
        if not (pos < len(ts)).all() or not (ts[np.minimum(pos, len(ts) - 1)] == origin).all():
            raise ValueError(f"forecast origins of {sym!r} that are not bars of it")
        ahead = project_bar_times(times.tail(1), horizon, infer_interval(times), calendar=cal)
        future = np.array([ahead[c].dt.epoch("us")[0] for c in ahead.columns], np.int64)
        idx = pos[:, None] + steps[None, :]  # (W, H) the target bars' rows
        held = idx < len(ts)
        inside = np.minimum(idx, len(ts) - 1)
        target = np.where(held, ts[inside], future[np.maximum(idx - len(ts), 0)])
        realised = np.where(held, close[inside], np.nan)
        parts.append(
            pl.DataFrame(
                {
                    "__w": np.repeat(group["__w"].to_numpy(), horizon),
                    "target_ts": pl.Series(target.reshape(-1)).cast(UTC_US),
                    "realised_close": pl.Series(realised.reshape(-1)).fill_nan(None),
                }
            )
        )
    if not parts:
        return pl.DataFrame(schema={"target_ts": UTC_US, "realised_close": pl.Float64})
    return pl.concat(parts).sort("__w", maintain_order=True).select("target_ts", "realised_close")
