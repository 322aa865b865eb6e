"""A user's known covariate in windows whose next H rows are not the schedule: the decoder
holds the row's value at each scheduled time, or the last row's before it where the bars have
none (it crashed with ColumnNotFoundError: the calendar's rows have no user column)."""

from __future__ import annotations

import numpy as np
import polars as pl
from tests.data.features.test_calendar_decoder_audit import (
    BARS,
    CAL,
    ORIGIN,
    SCHEDULE,
    H,
    L,
    _known,
    bars_table,
)

from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.market.calendar import KNOWN_FEATURES
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.windows.dataset import WindowDataset

EVENT = "known__user_event"


def _dataset(scaler: ScalerParams | None = None) -> tuple[WindowDataset, FeatureSpec]:
    spec = FeatureSpec(
        historical=("obs__x",),
        known=(*KNOWN_FEATURES, EVENT),
        static=("static__x",),
        targets=tuple(f"target__h{i}" for i in range(1, H + 1)),
        warmup=0,
    )
    events = pl.Series(EVENT, np.arange(len(BARS), dtype=np.float64) * 10.0)  # row r: 10 r
    frame = bars_table(spec, events)
    return WindowDataset(frame, spec, L, H, calendars={"AAPL": CAL}, scaler=scaler), spec


def _expected_events() -> list[float]:
    """Friday's last bar is a row; Tuesday's first three bars are the hole: the last row before
    them is Friday's last bar."""
    friday_last = BARS.index(SCHEDULE[0])
    return [10.0 * friday_last] * H


def test_off_schedule_windows_read_the_users_covariate_from_the_rows() -> None:
    ds, _ = _dataset()
    assert ds.calendar_windows == H
    i = int(np.flatnonzero(ds.origin_rows() == BARS.index(ORIGIN))[0])
    known = ds.batch([i]).known[0, L:].numpy()
    np.testing.assert_allclose(known[:, :-1], _known(SCHEDULE, CAL), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(known[:, -1], _expected_events())
    # a window after the hole reads its own next rows, as scheduled
    j = int(np.flatnonzero(ds.origin_rows() == BARS.index(ORIGIN) + 4)[0])
    first = BARS.index(ORIGIN) + 5
    np.testing.assert_array_equal(
        ds.batch([j]).known[0, L:, -1].numpy(), 10.0 * np.arange(first, first + H)
    )


def test_the_users_covariate_is_scaled_once() -> None:
    """The table's rows are scaled when the arrays are filled; the calendar's computed rows are
    scaled here; the user's column, taken from the table, is not scaled again."""
    columns = ["obs__x", *KNOWN_FEATURES, EVENT, "static__x"]
    mean = [0.0] * len(columns)
    std = [1.0] * len(columns)
    mean[columns.index(EVENT)], std[columns.index(EVENT)] = 5.0, 2.0
    mean[1], std[1] = 0.5, 4.0  # the first calendar column
    scaler = ScalerParams(columns=columns, mean=mean, std=std, target_std=[1.0] * H)
    ds, _ = _dataset(scaler)
    i = int(np.flatnonzero(ds.origin_rows() == BARS.index(ORIGIN))[0])
    known = ds.batch([i]).known[0, L:].numpy()
    np.testing.assert_allclose(known[:, -1], (np.array(_expected_events()) - 5.0) / 2.0)
    np.testing.assert_allclose(
        known[:, 0], (_known(SCHEDULE, CAL)[:, 0] - 0.5) / 4.0, rtol=1e-6, atol=1e-6
    )
