"""Bars of another interval than the model's are refused, with the remedy (issue 30 sweep)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from foxhunt.artifacts.rundir import RunDir
from foxhunt.data.market.calendar import bars_interval
from foxhunt.errors import DataError, InputError
from foxhunt.infer.bar_interval import check_bar_interval, describe_interval, trained_interval
from foxhunt.infer.evaluate import evaluate_model
from foxhunt.infer.predict import predict_to_file


def _frame(step: timedelta, n: int, symbol: str = "ES", start: datetime | None = None):
    t0 = start or datetime(2024, 1, 2, tzinfo=UTC)
    return pl.DataFrame({"symbol": [symbol] * n, "ts": [t0 + k * step for k in range(n)]})


def _run(tmp_path: Path, seconds: float | None) -> RunDir:
    info = {"symbols": ["ES"]} | ({"bar_interval_s": seconds} if seconds is not None else {})
    (tmp_path / "run.json").write_text(json.dumps(info))
    return RunDir(tmp_path)


def test_bars_interval_is_the_most_common_symbol_interval() -> None:
    minute, five = timedelta(minutes=1), timedelta(minutes=5)
    frame = pl.concat(
        [_frame(minute, 30, "EURUSD"), _frame(minute, 5, "GBPUSD"), _frame(five, 30, "ES")]
    )
    assert bars_interval(frame) == minute
    assert bars_interval(pl.concat([_frame(minute, 3, "A"), _frame(five, 3, "B")])) == minute
    assert bars_interval(_frame(minute, 1)) is None


def test_describe_interval() -> None:
    got = [describe_interval(timedelta(seconds=s)) for s in (30, 60, 900, 3600, 5400, 86400)]
    assert got == ["30-second", "1-minute", "15-minute", "1-hour", "90-minute", "1-day"]


def test_refusal_names_both_intervals_and_the_remedy(tmp_path: Path) -> None:
    run = _run(tmp_path, 300.0)
    assert trained_interval(run) == timedelta(minutes=5)
    check_bar_interval(run, _frame(timedelta(minutes=5), 40), "same.csv")  # no complaint
    with pytest.raises(
        InputError,
        match=r"trained on 5-minute bars; fine.csv holds 1-minute "
        r"bars: --bar-minutes 5 aggregates them to it",
    ):
        check_bar_interval(run, _frame(timedelta(minutes=1), 40), "fine.csv")
    with pytest.raises(InputError, match=r"holds 1-day bars: forecast them with a model trained"):
        check_bar_interval(run, _frame(timedelta(days=1), 40), "daily.csv")
    # a run from before the interval was recorded is not checked
    check_bar_interval(_run(tmp_path, None), _frame(timedelta(days=1), 40), "daily.csv")
    # too few bars to judge: a feed's first bars (two across a weekend say "3 days")
    check_bar_interval(run, _frame(timedelta(days=3), 2), "two.csv")
    # an illiquid series of 5-minute bars: mostly 10 minutes apart, every fourth gap 5 minutes
    t0 = datetime(2024, 1, 2, tzinfo=UTC)
    steps = [timedelta(minutes=5 if k % 4 == 0 else 10) for k in range(60)]
    times = [t0 + sum(steps[:k], timedelta(0)) for k in range(60)]
    check_bar_interval(run, pl.DataFrame({"symbol": ["ES"] * 60, "ts": times}), "thin.csv")


@pytest.mark.slow
def test_evaluate_and_predict_refuse_bars_of_another_interval(demo_run, tmp_path: Path) -> None:
    info = json.loads((demo_run.run / "run.json").read_text())
    assert info["bar_interval_s"] == 300.0  # the demo's 5-minute bars
    bars = pl.read_parquet(demo_run.bars)
    # every third bar, stamped 15 minutes apart: 15-minute bars as far as the model can tell
    coarse = bars.gather_every(3).with_columns(
        ts=pl.datetime_range(
            bars["ts"][0],
            bars["ts"][0] + timedelta(minutes=15 * (len(bars) // 3 + 1)),
            "15m",
            eager=True,
            time_zone=bars["ts"].dtype.time_zone,
        ).head(bars.gather_every(3).height)
    )
    path = tmp_path / "ES_15m.parquet"
    coarse.write_parquet(path)
    with pytest.raises(InputError, match=r"trained on 5-minute bars; .* holds 15-minute bars"):
        evaluate_model(demo_run.run, path, batch_size=256, device="cpu", scope="all")
    # inside the training years: the interval is what is wrong, not "nothing new to score"
    with pytest.raises(InputError, match=r"trained on 5-minute bars; .* holds 15-minute bars"):
        evaluate_model(demo_run.run, path, batch_size=256, device="cpu")
    with pytest.raises(InputError, match=r"holds 15-minute bars"):
        predict_to_file(demo_run.run, path, tmp_path / "f.parquet", batch_size=256, device="cpu")
    assert not (tmp_path / "f.parquet").exists()
    # the streaming Forecaster (serve, predict --follow) checks each symbol's first bars
    from foxhunt.infer.forecaster import Forecaster

    for incremental in (True, False):
        fc = Forecaster.load(demo_run.run, incremental=incremental)
        with pytest.raises(DataError, match=r"bars; the bars given for 'ES' are mostly 15 minutes"):
            fc.update(coarse.tail(300), forecast=False)
        assert fc.symbols == [] or "ES" not in fc.symbols  # nothing taken
        fc.update(bars.tail(300), forecast=False)  # its own interval: taken


def test_a_followed_feed_of_end_stamped_bars_moves_by_the_runs_interval(tmp_path: Path) -> None:
    from foxhunt.infer.bar_interval import end_stamp_shift

    assert end_stamp_shift(_run(tmp_path, 300)) == timedelta(minutes=5)
    assert end_stamp_shift(_run(tmp_path, 86400)) == timedelta(0)  # daily bars: dated
    with pytest.raises(InputError, match="records no bar interval"):
        end_stamp_shift(_run(tmp_path, None))
