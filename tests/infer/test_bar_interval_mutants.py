"""infer/bar_interval.py edges that `make mutate` found untested: the gap count and the trained
share at their thresholds, bars not in time order, a daily model's hint, ratios that are not a
whole number of the bars, the run directory named in the refusal, a run.json that is not a
record."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from foxhunt.artifacts.rundir import RunDir
from foxhunt.errors import DataError
from foxhunt.infer.bar_interval import (
    MIN_GAPS,
    TRAINED_SHARE,
    check_bar_interval,
    refuse_other_interval,
    trained_interval,
)

MINUTE = timedelta(minutes=1)
T0 = datetime(2024, 1, 2, tzinfo=UTC)


def _bars(steps: list[timedelta], symbol: str = "ES") -> pl.DataFrame:
    times = [T0]
    for s in steps:
        times.append(times[-1] + s)
    return pl.DataFrame({"symbol": [symbol] * len(times), "ts": times})


def test_a_symbol_is_judged_from_exactly_min_gaps_gaps() -> None:
    assert MIN_GAPS == 20
    five = 5 * MINUTE
    with pytest.raises(DataError, match="holds 5-minute bars"):
        refuse_other_interval(MINUTE, _bars([five] * MIN_GAPS), "b.csv", "run")
    refuse_other_interval(MINUTE, _bars([five] * (MIN_GAPS - 1)), "b.csv", "run")  # too few


def test_one_gap_in_ten_at_the_trained_step_is_enough() -> None:
    assert TRAINED_SHARE == 0.1
    five = 5 * MINUTE
    refuse_other_interval(MINUTE, _bars([MINUTE] * 2 + [five] * 18), "b.csv", "run")  # 10 %
    with pytest.raises(DataError, match="holds 5-minute bars"):
        refuse_other_interval(MINUTE, _bars([MINUTE] * 1 + [five] * 19), "b.csv", "run")  # 5 %


def test_bars_out_of_time_order_are_judged_all_the_same() -> None:
    frame = pl.concat([_bars([5 * MINUTE] * 30, "ES"), _bars([5 * MINUTE] * 30, "NQ")])
    shuffled = frame.reverse()  # each symbol's bars last-first, the symbols swapped
    with pytest.raises(DataError, match="holds 5-minute bars"):
        refuse_other_interval(MINUTE, shuffled, "b.csv", "run")


def test_a_daily_model_is_not_offered_bar_minutes() -> None:
    hourly = _bars([timedelta(hours=1)] * 30)
    with pytest.raises(DataError, match=r"1-hour bars: forecast them with a model trained"):
        refuse_other_interval(timedelta(days=1), hourly, "b.csv", "run")


def test_bar_minutes_only_for_a_whole_multiple_of_the_bars() -> None:
    with pytest.raises(DataError, match=r"1-minute bars: --bar-minutes 2 aggregates them to it"):
        refuse_other_interval(2 * MINUTE, _bars([MINUTE] * 30), "b.csv", "run")
    with pytest.raises(DataError, match=r"2-minute bars: forecast them with a model trained"):
        refuse_other_interval(5 * MINUTE, _bars([2 * MINUTE] * 30), "b.csv", "run")


def test_the_refusal_names_the_run_directory(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"bar_interval_s": 60}))
    with pytest.raises(DataError, match=rf"^{tmp_path} was trained on 1-minute bars; b.csv"):
        check_bar_interval(RunDir(tmp_path), _bars([5 * MINUTE] * 30), "b.csv")


def test_a_run_json_that_is_not_a_record_records_no_interval(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps([60]))
    assert trained_interval(RunDir(tmp_path)) is None
