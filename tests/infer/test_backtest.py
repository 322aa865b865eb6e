"""``foxhunt backtest``: fold plan with embargo, fold windows, and a tiny end-to-end run."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import polars as pl
import pytest

from foxhunt.cli import main
from foxhunt.config import demo
from foxhunt.data.demo import write_demo_bars
from foxhunt.errors import InputError
from foxhunt.infer.backtest import Fold, _fold_bars, backtest, plan_folds
from foxhunt.infer.backtest_plot import backtest_figure

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def _times(n: int) -> pl.Series:
    return pl.datetime_range(START, START + dt.timedelta(minutes=n - 1), "1m", eager=True)


def test_folds_follow_the_initial_half_and_leave_an_embargo() -> None:
    times = _times(1000)
    folds = plan_folds(times, 2, embargo=20)
    assert [f.start for f in folds] == [times[500], times[750]]
    assert [f.train_end for f in folds] == [times[480], times[730]]
    assert folds[0].end == folds[1].start and folds[1].end is None


@pytest.mark.parametrize("k", [0, 600])
def test_impossible_fold_counts_are_refused(k: int) -> None:
    with pytest.raises(InputError, match=f"--folds {k}" if k else "--folds must be"):
        plan_folds(_times(1000), k, embargo=20)


def test_fold_bars_are_the_fold_plus_its_history() -> None:
    times = _times(100)
    bars = pl.DataFrame({"symbol": ["ES"] * 100, "ts": times, "close": np.arange(100.0)})
    fold = Fold(1, times[40], times[50], times[80])
    got = _fold_bars(bars, fold, history=10, need=5)
    assert got["ts"].min() == times[40] and got["ts"].max() == times[79]
    assert _fold_bars(bars, fold, history=10, need=41).is_empty()  # too short: left out


def _tiny():
    return demo().replace(
        model={
            "hidden": 8,
            "n_heads": 2,
            "lstm_layers": 1,
            "encoder_length": 16,
            "horizon": 3,
            "quantiles": (0.1, 0.5, 0.9),
            "variable_width": 4,
        },
        train={"batch_size": 64, "epochs": 1, "max_steps": 2, "warmup_steps": 1, "num_threads": 1},
        data={"stride": 4},
    )


@pytest.mark.slow
def test_backtest_end_to_end_refit_once(tmp_path) -> None:
    bars = tmp_path / "ES.parquet"
    write_demo_bars(bars, n_bars=1200, seed=1)
    cfg = _tiny()
    r = backtest(bars, cfg, folds=2, refit="once", out=tmp_path / "bt")
    folds, pooled = r["folds"], r["pooled"]
    assert r["embargo"] == 16 + 3 and len(folds) == 2
    assert {f["run"] for f in folds} == {str(tmp_path / "bt" / "fold-1" / "run")}  # once
    trained = pl.read_parquet(tmp_path / "bt" / "fold-1" / "train_bars.parquet")
    all_ts = pl.read_parquet(bars)["ts"].sort()
    first_fold = dt.datetime.fromisoformat(folds[0]["first_origin"])
    # 19 bar times (the embargo) lie between the last training bar and the first test origin
    gap = int(((all_ts > trained["ts"].max()) & (all_ts < first_fold)).sum())
    assert gap == r["embargo"]
    # fold 1's last window's outcomes end before fold 2's first origin
    last = all_ts.search_sorted(dt.datetime.fromisoformat(folds[0]["last_origin"]))
    assert all_ts[int(last) + 3] < dt.datetime.fromisoformat(folds[1]["first_origin"])
    names = {"tft", "zero", "empirical", "ewma", "garch", "tow_ewma"}
    assert set(pooled["scores"]) == names and set(pooled["comparisons"]) == names - {"tft"}
    # the schema of a single-model backtest (--ensemble 1, the default): no ensemble fields
    assert set(r) == {"bars", "preset", "refit", "embargo", "horizon", "quantiles", "units", "folds", "pooled"}  # fmt: skip
    fold_keys = {"fold", "run", "train_end", "first_origin", "last_origin", "n_windows", "scores", "comparisons"}  # fmt: skip
    assert all(set(f) == fold_keys for f in folds) and set(pooled) == {"n_windows", "scores", "comparisons"}  # fmt: skip
    assert all(set(f["scores"]) == names for f in folds)
    brief = {"n_windows", "mean_pinball", "pinball_per_horizon", "q_risk", "coverage"}
    assert all(set(s) == brief for f in folds for s in f["scores"].values())
    assert not (tmp_path / "bt" / "fold-1" / "run" / "members").exists()
    assert pooled["n_windows"] == sum(f["n_windows"] for f in folds)
    for key, s in pooled["scores"].items():
        per_fold = [f["scores"][key]["mean_pinball"] for f in folds]
        weights = [f["n_windows"] for f in folds]
        assert s["mean_pinball"] == pytest.approx(np.average(per_fold, weights=weights))
    assert json.loads((tmp_path / "bt" / "backtest.json").read_text())["refit"] == "once"
    assert (tmp_path / "bt" / "backtest.png").is_file()
    ax = backtest_figure(r).axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    np.testing.assert_allclose(
        lines["TFT"].get_ydata(), [f["scores"]["tft"]["mean_pinball"] * 1e4 for f in folds]
    )


def test_cli_refuses_too_many_folds_before_training(tmp_path, capsys) -> None:
    bars = tmp_path / "ES.parquet"
    write_demo_bars(bars, n_bars=600, seed=1)
    rc = main(
        [
            "backtest",
            "--bars",
            str(bars),
            "--preset",
            "demo",
            "--folds",
            "400",
            "--out",
            str(tmp_path / "bt"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "--folds 400" in err[0]
    assert not (tmp_path / "bt" / "fold-1").exists()
