"""``data/market/intervals.py``: each symbol's interval judged on its own bars, at training and
at inference (a folder of 15-minute USDJPY and 1-hour EURUSD passed the pooled check)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from foxhunt.cli import main
from foxhunt.data.market.intervals import refuse_mixed_intervals, symbols_off_interval
from foxhunt.data.read.resample import aggregate_bars
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError
from foxhunt.infer.bar_interval import refuse_other_interval

T0 = datetime(2024, 1, 2, 14, 0, tzinfo=UTC)


def _times(symbol: str, n: int, minutes: int, skip: int = 0) -> pl.DataFrame:
    """n bars ``minutes`` apart; with ``skip``, every bar but each skip-th is ``skip`` x apart
    (an illiquid series of the same bars)."""
    step = timedelta(minutes=minutes)
    ts, t = [], T0
    for i in range(n):
        ts.append(t)
        t += step * (skip if skip and i % 9 else 1)
    return pl.DataFrame({"symbol": [symbol] * n, "ts": ts})


def test_a_symbol_of_another_interval_is_found_among_others() -> None:
    frame = pl.concat(
        [_times("EURUSD", 40, 60), _times("USDJPY", 100, 15), _times("GBPUSD", 100, 15)]
    )
    assert symbols_off_interval(frame, timedelta(minutes=15)) == [("EURUSD", timedelta(hours=1))]
    assert symbols_off_interval(frame, timedelta(hours=1)) == [
        ("USDJPY", timedelta(minutes=15)),
        ("GBPUSD", timedelta(minutes=15)),
    ]


def test_few_gaps_and_illiquid_bars_of_the_interval_pass() -> None:
    few = _times("EURUSD", 20, 60)  # 19 gaps: not judged
    illiquid = _times("ZB", 100, 1, skip=7)  # 1 gap in 9 is one minute: 11 %
    assert symbols_off_interval(pl.concat([few, illiquid]), timedelta(minutes=1)) == []
    assert symbols_off_interval(_times("EURUSD", 21, 60), timedelta(minutes=1)) == [
        ("EURUSD", timedelta(hours=1))
    ]


def test_inference_names_the_symbol_of_another_interval() -> None:
    frame = pl.concat([_times("USDJPY", 100, 15), _times("EURUSD", 40, 60)])
    with pytest.raises(DataError) as refused:
        refuse_other_interval(timedelta(minutes=15), frame, "bars/", "runs/fx")
    assert str(refused.value) == (
        "runs/fx was trained on 15-minute bars; bars/ holds 1-hour bars of EURUSD: forecast them "
        "with a model trained on such bars"
    )
    with pytest.raises(DataError, match=r"holds 1-hour bars: forecast"):  # one symbol: not named
        refuse_other_interval(timedelta(minutes=15), _times("EURUSD", 40, 60), "e.csv", "runs/fx")


def test_training_refuses_symbols_of_different_intervals() -> None:
    frame = pl.concat(
        [_times("USDJPY", 100, 15), _times("GBPUSD", 100, 15), _times("EURUSD", 40, 60)]
    )
    with pytest.raises(DataError) as refused:
        refuse_mixed_intervals(frame, timedelta(minutes=15), "bars/")
    assert str(refused.value) == (
        "bars/: symbols of different bar intervals: EURUSD holds 1-hour bars, the others mostly "
        "15-minute: --bar-minutes 60 aggregates them to one interval, or train them apart"
    )
    frame = pl.concat([frame, _times("AUDUSD", 40, 60)])
    with pytest.raises(DataError, match=r": EURUSD and 1 more holds 1-hour bars"):
        refuse_mixed_intervals(frame, timedelta(minutes=15), "bars/")
    daily = pl.concat([_times("ES", 100, 15), _times("CL", 30, 1440)])
    with pytest.raises(DataError, match=r"CL holds 1-day bars, the others mostly 15-minute: train"):
        refuse_mixed_intervals(daily, timedelta(minutes=15), "bars/")
    refuse_mixed_intervals(_times("ES", 100, 15), timedelta(minutes=15), "bars/")
    refuse_mixed_intervals(frame, None, "bars/")


@pytest.mark.slow
def test_train_stops_on_a_folder_of_two_intervals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    five = demo_bars(600, seed=1, symbol="ES")
    hourly = aggregate_bars(demo_bars(3600, seed=2, symbol="NQ"), 60)
    folder = tmp_path / "bars"
    folder.mkdir()
    five.write_parquet(folder / "ES.parquet")
    hourly.write_parquet(folder / "NQ.parquet")
    argv = ["train", "--bars", str(folder), "--preset", "demo", "--out", str(tmp_path / "run")]
    assert main(argv) == 2
    assert (
        f"{folder}: symbols of different bar intervals: NQ holds 1-hour bars, the others mostly "
        "5-minute: --bar-minutes 60 aggregates them to one interval, or train them apart"
    ) in capsys.readouterr().err
    assert not (tmp_path / "run" / "model.safetensors").exists()
    # backtest refuses them before its first fold (it did inside fold 1's training, naming
    # fold-1/train_bars.parquet, and the fold-1/ it left made the same command fail again)
    argv = ["backtest", "--bars", str(folder), "--preset", "demo", "--folds", "2"]
    assert main([*argv, "--out", str(tmp_path / "bt")]) == 2
    assert f"{folder}: symbols of different bar intervals" in capsys.readouterr().err
    assert not (tmp_path / "bt").exists()


def test_the_edges_of_the_rules() -> None:
    """Exactly one gap in ten at the interval passes; repeated times are no gaps (19 real gaps
    and 5 repeats: not judged); 90 seconds is no minute."""
    from foxhunt.data.market.intervals import describe_interval

    ts = [T0 + timedelta(hours=k) for k in range(19)] + [T0 + timedelta(hours=18, minutes=1)]
    ts += [T0 + timedelta(hours=18, minutes=2)]  # 20 gaps: 18 of 1 hour, 2 of 1 minute
    frame = pl.DataFrame({"symbol": ["ZB"] * len(ts), "ts": ts})
    assert symbols_off_interval(frame, timedelta(minutes=1)) == []
    hourly = _times("EURUSD", 20, 60)
    repeated = pl.concat([hourly, hourly.head(5)])
    assert symbols_off_interval(repeated, timedelta(minutes=15)) == []
    assert describe_interval(timedelta(seconds=90)) == "90-second"
    assert describe_interval(timedelta(hours=4)) == "4-hour"
