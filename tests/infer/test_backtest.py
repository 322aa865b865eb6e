"""``foxhunt backtest``: fold plan with embargo, fold windows, and a tiny end-to-end run."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import polars as pl
import pytest

from foxhunt.cli import main
from foxhunt.config import demo
from foxhunt.data.features.table import feature_spec
from foxhunt.data.sources.demo import write_demo_bars
from foxhunt.errors import DataError, InputError
from foxhunt.infer.backtest import Fold, _fold_bars, backtest, max_folds, plan_folds
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


def test_too_many_folds_name_the_largest_k_that_fits() -> None:
    times = _times(1000)  # 500 times after the initial half: 100 folds of 5
    with pytest.raises(
        InputError, match=r"--folds 101: .* folds of 5 bar times .*at most --folds 100 fits"
    ):
        plan_folds(times, 101, embargo=20, min_fold=5)
    folds = plan_folds(times, 100, embargo=20, min_fold=5)
    assert len(folds) == 100 and max_folds(1000, 20, 5) == 100
    with pytest.raises(InputError, match="no fold count fits"):
        plan_folds(_times(30), 1, embargo=20)


def test_every_fold_of_the_largest_k_holds_a_test_window() -> None:
    # the fold size backtest asks plan_folds for is what _fold_bars keeps a symbol for
    from foxhunt.data.pipeline import inference_bars_needed

    cfg = demo()
    L, H = cfg.model.encoder_length, cfg.model.horizon
    spec = feature_spec(H, cfg.data)
    need, _ = inference_bars_needed(spec, L, H, with_target=True)
    history = spec.warmup + L - 1
    n = 3000
    bars = pl.DataFrame({"symbol": "ES", "ts": _times(n), "close": np.ones(n)})
    k = max_folds(n, L + H, need - history)
    assert k == (n - n // 2) // (2 * H + 1)
    for fold in plan_folds(bars["ts"], k, L + H, min_fold=need - history):
        assert _fold_bars(bars, fold, history, need).height >= need
    with pytest.raises(InputError, match=f"at most --folds {k} fits"):
        plan_folds(bars["ts"], k + 1, L + H, min_fold=need - history)


def _backtest_argv(tmp_path, *extra: str) -> list[str]:
    bars = tmp_path / "ES.parquet"
    if not bars.exists():
        write_demo_bars(bars, n_bars=600, seed=1)
    argv = ["backtest", "--bars", str(bars), "--preset", "demo", "--out", str(tmp_path / "bt")]
    return [*argv, *extra]


def test_cli_refusal_of_too_many_folds_names_a_k_that_fits(tmp_path, capsys) -> None:
    H = demo().model.horizon
    assert main(_backtest_argv(tmp_path, "--folds", "1000")) == 2
    err = capsys.readouterr().err.strip()
    k = 300 // (2 * H + 1)  # 600 bar times, 300 after the initial half, 2H + 1 per fold
    assert "\n" not in err and f"at most --folds {k} fits" in err
    assert not (tmp_path / "bt").exists()  # nothing trained, nothing written


def test_cli_refuses_an_out_holding_a_backtest_without_overwrite(tmp_path, capsys) -> None:
    out = tmp_path / "bt"
    (out / "fold-1").mkdir(parents=True)
    (out / "backtest.json").write_text("{}")
    (out / "notes.txt").write_text("mine")
    assert main(_backtest_argv(tmp_path, "--folds", "2")) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert f"{out} already holds a backtest (backtest.json, fold-1)" in err and "--overwrite" in err
    # with --overwrite, a refusal at planning (too many folds) still deletes nothing
    assert main(_backtest_argv(tmp_path, "--folds", "1000", "--overwrite")) == 2
    assert (out / "backtest.json").exists() and (out / "fold-1").is_dir()


def test_overwrite_clears_only_the_backtest_outputs(tmp_path) -> None:
    from foxhunt.artifacts.outputs import clear_outputs
    from foxhunt.infer.backtest import OUTPUTS

    out = tmp_path / "bt"
    (out / "fold-7" / "run").mkdir(parents=True)
    for name in ("backtest.json", "backtest.png", "notes.txt"):
        (out / name).write_text("x")
    clear_outputs(out, OUTPUTS)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


@pytest.mark.slow
def test_a_symbol_too_short_for_a_folds_training_is_left_out_of_it(tmp_path, caplog) -> None:
    """One symbol listed late (its bars start after 500 of 1,200) refused the whole backtest in
    fold 1's training; it is left out of that training, with a warning, and scored later."""
    import logging

    from foxhunt.data.pipeline import training_bars_needed
    from foxhunt.data.sources.demo import demo_bars
    from foxhunt.infer.backtest import _trainable

    es = demo_bars(1200, seed=1)
    nq = demo_bars(1200, seed=2).with_columns(pl.lit("NQ").alias("symbol")).tail(700)
    path = tmp_path / "panel.parquet"
    pl.concat([es, nq]).write_parquet(path)
    cfg = _tiny()
    fold = Fold(1, START, START, None)
    assert _trainable(pl.concat([es, nq]), 701, fold)["symbol"].unique().to_list() == ["ES"]
    # none has enough: refused naming the fold and what a backtest needs (until session 54
    # training refused, naming feature rows and no fold)
    with pytest.raises(DataError) as refused:
        _trainable(nq, 701, fold)
    assert str(refused.value) == (
        f"backtest: fold 1 trains on the first 50% of the bar times (before {START}), and no "
        "symbol has the 701 bars training's splits need there (most: 'NQ', 700): a backtest "
        "needs about 1402 bars of a symbol; more bars, or a shorter --encoder-length or --horizon"
    )
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        r = backtest(path, cfg, folds=2, refit="once", out=tmp_path / "bt")
    trained = pl.read_parquet(tmp_path / "bt" / "fold-1" / "train_bars.parquet")
    assert trained["symbol"].unique().to_list() == ["ES"]
    need = training_bars_needed(cfg)
    assert any(f"fewer than {need} bars" in m and "(NQ)" in m for m in caplog.messages)
    assert len(r["folds"]) == 2
