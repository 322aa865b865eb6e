"""Naive bar times in a live stream: read in the forecaster's ``tz``, else as UTC with one
warning per process (a notebook's New York times were read as UTC without a word)."""

from __future__ import annotations

import logging

import numpy as np
import polars as pl
import pytest

from demo_run import DemoRun
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError
from foxhunt.infer import bar_input
from foxhunt.infer.forecaster import Forecaster

pytestmark = pytest.mark.slow  # the shared trained demo run (built once, for the slow tier)


def test_naive_times_are_read_in_the_streams_zone_or_as_utc_with_a_warning(
    demo_run: DemoRun, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    bars = demo_bars(240, seed=11, symbol="ES")
    local = bars.with_columns(pl.col("ts").dt.convert_time_zone("America/New_York"))
    naive = local.with_columns(pl.col("ts").dt.replace_time_zone(None))
    aware = Forecaster.load(demo_run.run).update(bars)
    in_zone = Forecaster.load(demo_run.run, tz="America/New_York").update(naive)
    assert in_zone["origin_ts"].to_list() == aware["origin_ts"].to_list()
    np.testing.assert_array_equal(in_zone["return_q0.5"].to_numpy(), aware["return_q0.5"])
    monkeypatch.setattr(bar_input, "_NAIVE_SAID", [])
    with caplog.at_level(logging.WARNING):
        as_utc = Forecaster.load(demo_run.run).update(naive)
        Forecaster.load(demo_run.run).update(naive.head(5))
    said = [r.getMessage() for r in caplog.records if "naive times" in r.getMessage()]
    assert said == [
        "Forecaster.update: naive times taken as UTC; send times with their zone (or, from "
        "Python, name the feed's clock: Forecaster.load(..., tz=ZONE), "
        "TFTForecaster.stream(tz=ZONE))"
    ]
    assert as_utc["origin_ts"][0] != aware["origin_ts"][0]  # hours off: what the warning is for
    with pytest.raises(DataError, match="Mars/Olympus"):
        Forecaster.load(demo_run.run, tz="Mars/Olympus")
