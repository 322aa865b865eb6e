"""The bar interval a model was trained on, and a refusal of bars of another interval.

A model's horizon is counted in bars and its features (returns at lags, the time-of-day season,
the volatility scale) in the bars it was trained on: 5-minute bars through a 1-minute model give
forecasts 50 minutes ahead labelled "h = 10" and inputs on another scale, with nothing in the
numbers to say so. Training records the bars' interval in ``run.json`` (``bar_interval_s``:
the most common of the symbols' own modal gaps); ``evaluate`` and ``predict`` refuse bars of
another interval (exit 2), naming ``--bar-minutes`` when it can turn them into the trained
interval. The streaming ``Forecaster`` (``serve``, ``predict --follow``) judges each update's
bars with the bars held before them (:mod:`foxhunt.infer.stream_checks`). A run that records
none (trained before session 25) is not checked.
"""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from foxhunt import runtime
from foxhunt.artifacts.rundir import RunDir
from foxhunt.data.market.intervals import (
    MIN_GAPS,
    TRAINED_SHARE,
    aggregating_minutes,
    describe_interval,
    symbols_off_interval,
)
from foxhunt.data.read.time_axis import DAILY
from foxhunt.errors import DataError, InputError

__all__ = [
    "MIN_GAPS",
    "TRAINED_SHARE",
    "check_bar_interval",
    "describe_interval",
    "refuse_other_interval",
    "trained_interval",
]


def trained_interval(run: RunDir) -> timedelta | None:
    """``run.json``'s ``bar_interval_s``; None when the run records none."""
    if not run.run_info.is_file():
        return None
    info = runtime.read_json(run.run_info, "run.json")
    seconds = info.get("bar_interval_s") if isinstance(info, dict) else None
    return timedelta(seconds=float(seconds)) if isinstance(seconds, int | float) else None


def end_stamp_shift(run: RunDir) -> timedelta:
    """How far a followed feed's rows move for a run that reads bars stamped at their end
    (``--stamps end``): the run's bar interval (a row alone gives none); none for daily bars.

    Raises:
        InputError: the run records no bar interval (``run.json`` from before it did).
    """
    interval = trained_interval(run)
    if interval is None:
        raise InputError(
            f"{run.root}: the run reads bars stamped at their end (--stamps end) but records no "
            "bar interval (run.json bar_interval_s) to move the feed's rows by: train it again"
        )
    return interval if interval < DAILY else timedelta(0)


def check_bar_interval(run: RunDir, frame: pl.DataFrame, bars: object) -> None:
    """Refuse bars whose interval is not the one ``run`` was trained on.

    Raises:
        DataError: the intervals differ (one line: both intervals and the remedy).
    """
    refuse_other_interval(trained_interval(run), frame, bars, run.root)


def refuse_other_interval(
    trained: timedelta | None, frame: pl.DataFrame, bars: object, model: object
) -> None:
    """:func:`check_bar_interval` with the trained interval already read; nothing when it is
    unknown. Each symbol is judged on its own bars: pooled, a folder of 15-minute USDJPY and
    1-hour EURUSD passed a 15-minute model, and EURUSD was forecast an hour a step."""
    if trained is None:
        return
    off = symbols_off_interval(frame, trained)
    if not off:
        return
    sym, got = off[0]
    k = aggregating_minutes(got, trained)
    hint = (
        f": --bar-minutes {k} aggregates them to it"
        if k
        else ": forecast them with a model trained on such bars"
    )
    whose = f" of {sym}" if frame["symbol"].n_unique() > 1 else ""
    raise DataError(
        f"{model} was trained on {describe_interval(trained)} bars; {bars} holds "
        f"{describe_interval(got)} bars{whose}{hint}"
    )
