"""Decoder known inputs from the calendar, for windows whose next H rows are not the schedule.

A window's decoder must describe the bar times the calendar schedules after its origin
(:func:`foxhunt.data.market.calendar.project_bar_times`), not the bars that actually followed: a live
forecaster cannot know of a holiday or a data gap ahead. Almost every window of intraday data
has the scheduled times as its next H rows and reads them from the table; this module finds the
others and computes their decoder rows into a small side array.

A user's known covariate (``known_cols``) is no calendar feature: at a scheduled time it holds
the value of the row at that time or, where the bars have none (a holiday, a data hole), of the
last row before it, as the windows' own rows hold it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
import torch

from foxhunt.data.market.calendar import (
    KNOWN_FEATURES,
    infer_interval,
    known_features,
    project_bar_times,
)
from foxhunt.data.market.calendars import DEFAULT_CALENDAR


def calendar_decoder_known(
    ts: np.ndarray,
    origin: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    counts: Sequence[int],
    horizon: int,
    known_names: Sequence[str],
    scaling: tuple[list[float], list[float]] | None,
    *,
    calendars: Sequence[str] | None = None,
    table_known: np.ndarray | None = None,
) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """Decoder known inputs for windows whose next H rows are not the scheduled bar times.

    Args:
        ts: (N,) int64, each row's time in epoch microseconds (UTC).
        origin: (n_windows,) int64, each window's origin row, symbol block by symbol block.
        starts: first row of each symbol block.
        lengths: rows of each symbol block.
        counts: windows of each symbol block.
        horizon: H.
        known_names: the known features, in model order.
        scaling: ``(mean, std)`` per known feature to scale the computed rows with, or None.
        calendars: the calendar of each symbol block (None: ``globex`` for all).
        table_known: (N, V_k) the rows' known inputs as the windows read them (scaled), for
            the user's known covariates (the names that are no calendar feature); needed only
            when ``known_names`` holds one.

    Returns:
        ``(slot, known)``: per window the row of ``known`` holding its decoder inputs, or
        -1 (int32, ``(n_windows,)``); and ``(M, H, V_k)`` float32. Both None when every
        window's next H rows are the scheduled times.
    """
    H = horizon
    calendar = [i for i, name in enumerate(known_names) if name in KNOWN_FEATURES]
    user = [i for i, name in enumerate(known_names) if name not in KNOWN_FEATURES]
    if user and table_known is None:
        raise ValueError("user known covariates need the rows' known inputs (table_known)")
    wanted: list[np.ndarray] = []  # window indices, per symbol
    rows: list[np.ndarray] = []  # their decoder known inputs, (M_s * H, V_k)
    first = 0
    cals = list(calendars) if calendars is not None else [DEFAULT_CALENDAR] * len(starts)
    for start, n, count, cal in zip(starts, lengths, counts, cals, strict=True):
        if count == 0:
            continue
        block = _utc(ts[start : start + n])
        interval = infer_interval(block)
        # One scheduled step per row: row r is followed as scheduled when row r+1 is at
        # next_bar_time(row r); a window is then off-schedule only if one of rows t..t+H-1
        # is not, and only those windows need the full H-step projection.
        nxt = project_bar_times(block, 1, interval, calendar=cal)["step1"]
        nxt = nxt.dt.epoch("us").to_numpy()
        off_step = np.concatenate([[0], np.cumsum(ts[start + 1 : start + n] != nxt[:-1])])
        local = origin[first : first + count] - start  # (count,)
        off = np.flatnonzero(off_step[local + H] - off_step[local] > 0)
        if off.size:
            scheduled = project_bar_times(_utc(ts[start + local[off]]), H, interval, calendar=cal)
            sched = np.stack(
                [scheduled[c].dt.epoch("us").to_numpy() for c in scheduled.columns], axis=1
            )
            flat = _utc(sched.reshape(-1))  # (M_s * H,) window by window
            known = pl.DataFrame({"ts": flat}).select(known_features(pl.col("ts"), cal))
            part = np.empty((flat.len(), len(known_names)), dtype=np.float64)
            part[:, calendar] = known.select([known_names[i] for i in calendar]).to_numpy()
            if user:  # the row at each scheduled time, or the last one before it
                assert table_known is not None
                block_ts = ts[start : start + n]
                at = np.searchsorted(block_ts, sched.reshape(-1), side="right") - 1
                part[:, user] = table_known[start + at][:, user]
            wanted.append(first + off)
            rows.append(part)
        first += count
    if not wanted:
        return None, None
    index = np.concatenate(wanted)
    values = np.concatenate(rows)  # (M*H, V_k)
    if scaling is not None:  # the calendar's columns: the user's come scaled from the table
        mean, std = np.asarray(scaling[0])[calendar], np.asarray(scaling[1])[calendar]
        values[:, calendar] = (values[:, calendar] - mean) / std
    slot = np.full(origin.size, -1, dtype=np.int32)
    slot[index] = np.arange(index.size, dtype=np.int32)
    out = values.astype(np.float32).reshape(index.size, H, len(known_names))
    return torch.from_numpy(slot), torch.from_numpy(out)


def _utc(us: np.ndarray) -> pl.Series:
    """Epoch microseconds as a UTC datetime series."""
    return pl.Series(us).cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
