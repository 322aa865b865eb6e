"""``foxhunt backtest`` pinned where `make mutate infer.backtest` needs it: the fold plan's
exact edges, embargo and refusals, the bars a fold reads, what each fold's training is handed
(one run or a seed ensemble), the orchestration of the folds (training replaced by a recorder,
scoring by a fake), the fold's scores and comparisons as ``_score_fold`` assembles them, and
the pooled scores over the folds (hand-built losses)."""

from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import polars as pl
import pytest
import torch

from demo_run import DemoRun
from foxhunt.errors import DataError, InputError
from foxhunt.infer import backtest as bt
from foxhunt.infer.backtest import Fold

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def _t(i: int) -> dt.datetime:
    return START + dt.timedelta(minutes=i)


def _times(n: int) -> pl.Series:
    return pl.Series("ts", [_t(i) for i in range(n)])


def test_the_module_constants() -> None:
    assert bt.INITIAL_TRAIN_FRACTION == 0.5
    assert bt.REFIT == ("every", "once")
    assert bt.OUTPUTS == ("backtest.json", "backtest.png", "fold-*")
    assert bt.MEMBER0 == "tft_member0"


def test_the_fold_plan_of_ten_times_exactly() -> None:
    times = _times(10)  # first fold at 5; edges 5, 7.5 -> 8 (rounded), 10
    assert bt.plan_folds(times, 2, embargo=2) == [
        Fold(1, _t(3), _t(5), _t(8)),
        Fold(2, _t(6), _t(8), None),
    ]
    assert bt.plan_folds(times, 1, embargo=2) == [Fold(1, _t(3), _t(5), None)]
    # the default min_fold is 1: five folds of one time each fit, six do not
    assert [f.start for f in bt.plan_folds(times, 5, embargo=4)] == [_t(i) for i in range(5, 10)]
    assert bt.plan_folds(times, 5, embargo=4)[0].train_end == _t(1)  # 5 - 4 = 1: still fits


def test_edges_and_fits() -> None:
    np.testing.assert_array_equal(bt._edges(10, 2), [5, 8, 10])
    np.testing.assert_array_equal(bt._edges(11, 3), [5, 7, 9, 11])
    assert bt._edges(10, 2).dtype.kind == "i"
    assert bt._fits(10, 5, 1) is True  # five folds of exactly 1
    assert bt._fits(10, 5, 0) is True  # min_fold below 1 counts as 1
    assert bt._fits(10, 6, 0) is False
    assert bt._fits(10, 2, 3) is False  # 3 and 2: every fold must hold 3
    assert bt._fits(10, 2, 2) is True


@pytest.mark.parametrize(
    ("folds", "embargo", "min_fold", "message"),
    [
        (0, 2, 1, "--folds must be >= 1, got 0"),
        (-1, 2, 1, "--folds must be >= 1, got -1"),
        (
            6,
            2,
            1,
            "--folds 6: 10 bar times are too few for 6 folds of 1 bar times each after an "
            "initial 50% and an embargo of 2 bars; at most --folds 5 fits",
        ),
        (
            1,
            5,
            1,  # 5 - 5 = 0 times to train on
            "--folds 1: 10 bar times are too few for 1 folds of 1 bar times each after an "
            "initial 50% and an embargo of 5 bars; no fold count fits",
        ),
        (
            2,
            1,
            3,
            "--folds 2: 10 bar times are too few for 2 folds of 3 bar times each after an "
            "initial 50% and an embargo of 1 bars; at most --folds 1 fits",
        ),
    ],
)
def test_plan_folds_refusals_word_for_word(
    folds: int, embargo: int, min_fold: int, message: str
) -> None:
    with pytest.raises(InputError) as info:
        bt.plan_folds(_times(10), folds, embargo, min_fold=min_fold)
    assert str(info.value) == message


def test_max_folds_is_the_largest_k_whose_folds_all_fit() -> None:
    for n in range(1, 41):
        for embargo in (0, 1, 3):
            for min_fold in (0, 1, 2, 3):
                if n // 2 - embargo < 1:
                    want = 0
                else:
                    sizes = {
                        k: np.diff(np.linspace(n // 2, n, k + 1).round().astype(int))
                        for k in range(1, n + 1)
                    }
                    ok = [k for k, d in sizes.items() if (d >= max(1, min_fold)).all()]
                    want = max(ok, default=0)
                assert bt.max_folds(n, embargo, min_fold) == want, (n, embargo, min_fold)
    assert bt.max_folds(10, 4) == 5 and bt.max_folds(10, 5) == 0  # min_fold defaults to 1
    assert bt.max_folds(13, 0, 2) == 3  # 7 times after the first 6: k = 3 fits at once
    assert bt.max_folds(20, 0, 3) == 3  # k = 10 // 3 = 3 fits


def test_before_is_strictly_before_and_none_keeps_all() -> None:
    bars = pl.DataFrame({"ts": [_t(i) for i in range(5)], "close": [1.0, 2, 3, 4, 5]})
    assert bt._before(bars, None) is bars
    assert bt._before(bars, _t(2))["ts"].to_list() == [_t(0), _t(1)]


def _two_symbols() -> pl.DataFrame:
    """AA: 20 bars from t0; ZZ: 11 bars from t9; ordered by time, ZZ first at equal times."""
    rows = [("AA", i) for i in range(20)] + [("ZZ", i) for i in range(9, 20)]
    rows.sort(key=lambda r: (r[1], r[0] == "AA"))
    return pl.DataFrame(
        {
            "symbol": [s for s, _ in rows],
            "ts": [_t(i) for _, i in rows],
            "close": [float(i) + (0.5 if s == "ZZ" else 0) for s, i in rows],
        }
    )


def test_fold_bars_keep_the_history_per_symbol_and_drop_short_symbols(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bars = _two_symbols()
    fold = Fold(1, _t(5), _t(10), _t(15))
    with caplog.at_level(logging.WARNING, logger=bt.__name__):
        got = bt._fold_bars(bars, fold, history=3, need=6)
    assert caplog.records == []  # every symbol kept: nothing to warn about
    want = pl.DataFrame(
        {
            "symbol": ["AA"] * 8 + ["ZZ"] * 6,
            "ts": [_t(i) for i in range(7, 15)] + [_t(i) for i in range(9, 15)],
            "close": [float(i) for i in range(7, 15)] + [i + 0.5 for i in range(9, 15)],
        }
    )
    assert got.equals(want)  # AA: 3 bars before t10, ZZ: the 1 it has; sorted by symbol
    with caplog.at_level(logging.WARNING, logger=bt.__name__):
        only_aa = bt._fold_bars(bars, fold, history=3, need=7)  # ZZ has 6: left out
    assert [r.getMessage() for r in caplog.records] == [
        "fold 1: 1 symbols have too few bars, left out"
    ]
    assert only_aa.equals(want.filter(pl.col("symbol") == "AA"))
    to_the_end = bt._fold_bars(bars, Fold(1, _t(5), _t(18), None), history=0, need=2)
    assert to_the_end["ts"].to_list() == [_t(18), _t(19)] * 2
    assert to_the_end["symbol"].to_list() == ["AA", "AA", "ZZ", "ZZ"]


@dataclass(frozen=True)
class _Member:
    index: int
    seed: int
    seconds: float


class _Trainers:
    """``run_training`` and ``train_ensemble`` replaced by recorders."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.single: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.ensembles: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.bars: list[pl.DataFrame] = []
        monkeypatch.setattr(bt, "run_training", self.run_training)
        monkeypatch.setattr(bt, "train_ensemble", self.train_ensemble)

    def run_training(self, *args: Any, **kw: Any) -> None:
        self.single.append((args, kw))
        self.bars.append(pl.read_parquet(kw["bars"]))

    def train_ensemble(self, *args: Any, **kw: Any) -> SimpleNamespace:
        self.ensembles.append((args, kw))
        self.bars.append(pl.read_parquet(kw["bars"]))
        members = (_Member(0, 7, 1.5), _Member(1, 8, 2.5))
        return SimpleNamespace(
            root=kw["out"] / "ens", members=members, seconds=4.0, peak_rss_bytes=1234
        )


def test_train_hands_one_run_the_bars_written_beside_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    trainers, cfg, progress = _Trainers(monkeypatch), object(), object()
    bars = _two_symbols()
    root = tmp_path / "a" / "fold-1"  # parents made
    assert bt._train(cfg, bars, root, progress, 1) == (root / "run", None)  # type: ignore[arg-type]
    assert trainers.ensembles == []
    ((args, kw),) = trainers.single
    assert args == (cfg,) and kw == {
        "bars": root / "train_bars.parquet",
        "out": root / "run",
        "resume": None,
        "memory_budget": None,
        "allow_precision_change": False,
        "progress": progress,
        "overwrite": True,
    }
    assert trainers.bars[0].equals(bars)


def test_train_hands_an_ensemble_its_size_and_records_its_members(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    trainers, cfg, progress = _Trainers(monkeypatch), object(), object()
    bars = _two_symbols()
    run, record = bt._train(cfg, bars, tmp_path / "fold-2", progress, 2)  # type: ignore[arg-type]
    root = tmp_path / "fold-2"
    assert trainers.single == []
    ((args, kw),) = trainers.ensembles
    assert args == (cfg, 2) and kw == {
        "bars": root / "train_bars.parquet",
        "out": root / "run",
        "resume": None,
        "progress": progress,
        "overwrite": True,
    }
    assert trainers.bars[0].equals(bars)
    assert run == root / "run" / "ens"
    bt._train(cfg, bars.head(3), root, progress, 2)  # type: ignore[arg-type]  # the fold again
    assert trainers.bars[1].equals(bars.head(3))
    assert record == {
        "run": str(root / "run" / "ens"),
        "seconds": 4.0,
        "peak_rss_bytes": 1234,
        "members": [
            {"index": 0, "seed": 7, "seconds": 1.5},
            {"index": 1, "seed": 8, "seconds": 2.5},
        ],
    }


def _tiny_cfg() -> Any:
    from foxhunt.config import demo

    return demo().replace(
        model={"encoder_length": 16, "horizon": 3, "quantiles": (0.1, 0.5, 0.9)},
    )


def _min_fold(cfg: Any) -> int:
    """need - history: the bar times one test window needs inside a fold."""
    from foxhunt.data.features.table import feature_spec
    from foxhunt.data.pipeline import inference_bars_needed

    L, H = cfg.model.encoder_length, cfg.model.horizon
    spec = feature_spec(H, cfg.data)
    need, _ = inference_bars_needed(spec, L, H, with_target=True)
    return need - (spec.warmup + L - 1)


def _bars(n: int) -> pl.DataFrame:
    """Two symbols at the same ``n`` times (so ``n`` distinct times, 2n rows)."""
    ts = [_t(i) for i in range(n)]
    return pl.DataFrame(
        {"symbol": ["AA"] * n + ["BB"] * n, "ts": ts + ts, "close": np.ones(2 * n)}
    ).sort("ts", "symbol")


class _Backtest:
    """``backtest`` with its reader, training, scoring, pooling and plot replaced."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, n: int = 600) -> None:
        self.frame = _bars(n)
        self.reads: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.trains: list[tuple[Any, ...]] = []
        self.scores: list[tuple[Any, ...]] = []
        self.pools: list[tuple[Any, ...]] = []
        self.plots: list[tuple[Any, ...]] = []
        for name in ("read_run_bars", "_train", "_score_fold", "_pool", "plot_backtest"):
            monkeypatch.setattr(bt, name, getattr(self, name.strip("_")))
        # the fake training takes any bars (since session 54 a fold whose every symbol is too
        # short for training's splits is refused before training)
        monkeypatch.setattr(bt, "training_bars_needed", lambda cfg: 1)

    def read_run_bars(self, *args: Any, **kw: Any) -> tuple[pl.DataFrame, None]:
        self.reads.append((args, kw))
        return self.frame, None

    def train(self, cfg: Any, bars: pl.DataFrame, root: Path, progress: Any, n: int) -> Any:
        self.trains.append((cfg, bars, root, progress, n))
        members = {"run": f"ens{len(self.trains)}"} if n > 1 else None
        return root / f"run{len(self.trains)}", members

    def score_fold(self, *args: Any) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
        self.scores.append(args)
        fold = args[2]
        return {"fold": fold.index}, {"tft": torch.full((1, 3), float(fold.index))}

    def pool(self, results: Any, losses: Any) -> dict[str, Any]:
        self.pools.append((results, losses))
        return {"pooled": len(results)}

    def plot_backtest(self, result: Any, path: Path) -> None:
        self.plots.append((result, path))


def test_backtest_refit_every_trains_per_fold_on_the_bars_before_its_embargo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from foxhunt.data.features.table import feature_spec
    from foxhunt.data.pipeline import inference_bars_needed

    run = _Backtest(monkeypatch)
    cfg, out, progress = _tiny_cfg(), tmp_path / "bt", object()
    result = bt.backtest(tmp_path / "ES.parquet", cfg, folds=3, refit="every", out=out, progress=progress)  # fmt: skip
    spec = feature_spec(3, cfg.data)
    need, why = inference_bars_needed(spec, 16, 3, with_target=True)
    history = spec.warmup + 16 - 1
    assert run.reads == [
        (
            (tmp_path / "ES.parquet", cfg.data),
            {"min_bars": need, "reason": why, "allow_outliers": cfg.data.allow_outliers},
        )
    ]
    # 600 distinct times (two symbols share them), embargo L + H = 19, folds of >= need - history
    plan = bt.plan_folds(_times(600), 3, 19, min_fold=need - history)
    assert len(run.trains) == 3
    for k, (fold, (c, bars, root, prog, n)) in enumerate(zip(plan, run.trains, strict=True)):
        assert c is cfg and prog is progress and n == 1 and root == out / f"fold-{k + 1}"
        assert bars.equals(run.frame.filter(pl.col("ts") < fold.train_end))
    assert [s[2] for s in run.scores] == plan
    for k, args in enumerate(run.scores):
        assert len(args) == 8
        assert args[0] == out / f"fold-{k + 1}" / f"run{k + 1}" and args[1] is run.frame
        assert args[3:] == (history, need, torch.device("cpu"), 256, False)
    ((results, losses),) = run.pools
    assert results == [{"fold": 1}, {"fold": 2}, {"fold": 3}]
    assert [float(x["tft"][0, 0]) for x in losses] == [1.0, 2.0, 3.0]
    assert result == {
        "bars": str(tmp_path / "ES.parquet"),
        "preset": "demo",
        "refit": "every",
        "embargo": 19,
        "horizon": 3,
        "quantiles": [0.1, 0.5, 0.9],
        "units": "log return",
        "folds": results,
        "pooled": {"pooled": 3},
    }
    assert json.loads((out / "backtest.json").read_text()) == result
    assert run.plots == [(result, out / "backtest.png")]
    assert run.plots[0][0] is result


def test_backtest_refit_once_trains_before_fold_one_and_scores_it_on_every_fold(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    run = _Backtest(monkeypatch)
    cfg = _tiny_cfg().replace(data={"embargo": 0})  # an embargo of 0 is kept (not L + H)
    out = tmp_path / "new" / "bt"  # made with its parents
    result = bt.backtest(tmp_path / "b", cfg, folds=2, refit="once", out=out, device="cpu", batch_size=7)  # fmt: skip
    assert result["embargo"] == 0 and result["refit"] == "once"
    plan = bt.plan_folds(_times(600), 2, 0, min_fold=_min_fold(cfg))
    ((_, bars, root, prog, n),) = run.trains
    assert root == out / "fold-1" and prog is None and n == 1
    assert bars.equals(run.frame.filter(pl.col("ts") < plan[0].train_end))
    assert plan[0].train_end == plan[0].start
    assert [s[0] for s in run.scores] == [out / "fold-1" / "run1"] * 2
    assert [s[6] for s in run.scores] == [7, 7]
    assert "ensemble" not in result


def test_backtest_of_an_ensemble_records_its_trainings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from foxhunt.artifacts.ensemble import COMBINE

    run = _Backtest(monkeypatch)
    out = tmp_path / "bt"
    result = bt.backtest(tmp_path / "b", _tiny_cfg(), folds=2, refit="every", out=out, ensemble=2)  # fmt: skip
    assert [t[4] for t in run.trains] == [2, 2]
    assert [s[7] for s in run.scores] == [True, True]  # member 0 scored too
    assert result["ensemble"] == {
        "members": 2,
        "member0": "tft_member0",
        "combine": COMBINE,
        "trainings": [{"fold": 1, "run": "ens1"}, {"fold": 2, "run": "ens2"}],
    }
    assert list(result)[-1] == "ensemble"
    assert json.loads((out / "backtest.json").read_text())["ensemble"] == result["ensemble"]


def test_backtest_asks_every_fold_to_hold_one_test_window(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    run = _Backtest(monkeypatch)
    cfg, out = _tiny_cfg(), tmp_path / "bt"
    k = 300 // _min_fold(cfg)  # 600 times, 300 after the first half
    with pytest.raises(InputError) as info:  # k + 1 folds of one time each would fit
        bt.backtest(tmp_path / "b", cfg, folds=k + 1, refit="every", out=out)
    assert str(info.value) == (
        f"--folds {k + 1}: 600 bar times are too few for {k + 1} folds of {_min_fold(cfg)} bar "
        f"times each after an initial 50% and an embargo of 19 bars; at most --folds {k} fits"
    )
    assert run.trains == [] and not out.exists()  # refused before anything is written


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"refit": "never"}, "--refit must be one of every, once, got 'never'"),
        ({"refit": "every", "ensemble": 0}, "--ensemble must be >= 1, got 0"),
    ],
)
def test_backtest_refuses_bad_arguments_before_reading(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, kwargs: dict[str, Any], message: str
) -> None:
    run = _Backtest(monkeypatch)
    with pytest.raises(InputError) as info:
        bt.backtest(tmp_path / "b", _tiny_cfg(), folds=2, out=tmp_path / "bt", **kwargs)
    assert str(info.value) == message
    assert run.reads == [] and not (tmp_path / "bt").exists()


def test_backtest_refuses_a_held_out_unless_overwrite_then_clears_only_its_outputs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    run = _Backtest(monkeypatch)
    out = tmp_path / "bt"
    (out / "fold-9").mkdir(parents=True)
    (out / "backtest.png").write_text("old")
    (out / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match=r"already holds a backtest \(backtest.png, fold-9\)"):
        bt.backtest(tmp_path / "b", _tiny_cfg(), folds=1, refit="once", out=out)
    assert run.reads == []
    bt.backtest(tmp_path / "b", _tiny_cfg(), folds=1, refit="once", out=out, overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == ["backtest.json", "notes.txt"]
    assert run.plots[0][1] == out / "backtest.png"  # the plot is the fake's: not written


class _Windows:
    def __init__(self, origins: list[dt.datetime]) -> None:
        self.ts = origins

    def origins(self) -> pl.DataFrame:
        return pl.DataFrame({"symbol": ["AA"] * len(self.ts), "ts": self.ts})

    def __len__(self) -> int:
        return len(self.ts)


def _full(mean: float) -> dict[str, Any]:
    return {
        "n_windows": 3,
        "mean_pinball": mean,
        "pinball_per_horizon": [mean, mean],
        "q_risk": {"0.5": mean},
        "coverage": {"80%": 0.8},
        "pit": "left out",
    }


class _Scoring:
    """``_score_fold``'s collaborators replaced by recorders."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        model = SimpleNamespace(quantiles=(0.1, 0.5, 0.9), horizon=2)
        self.loaded = SimpleNamespace(
            config=SimpleNamespace(model=model), run=SimpleNamespace(baselines="fitted")
        )
        self.first = SimpleNamespace(name="member 0")
        self.windows = _Windows([_t(12), _t(10), _t(11)])
        self.calls: dict[str, list[Any]] = {}
        for name in (
            "load_inference_model",
            "fold_windows",
            "load_baselines",
            "baseline_forecasts",
            "score",
            "verdicts",
        ):
            monkeypatch.setattr(bt, name, self._record(name))

    def _record(self, name: str) -> Any:
        def call(*args: Any, **kw: Any) -> Any:
            self.calls.setdefault(name, []).append((args, kw))
            return getattr(self, name)(*args, **kw)

        return call

    def load_inference_model(self, path: Path, device: Any) -> Any:
        return self.first if path.name == "0" else self.loaded

    def fold_windows(self, *args: Any) -> _Windows:
        return self.windows

    def load_baselines(self, *args: Any) -> tuple[str, str]:
        return "empirical", "classical"

    def baseline_forecasts(self, *args: Any) -> dict[str, str]:
        return {"zero": "forecast"}

    def score(self, loaded: Any, windows: Any, forecasts: Any, **kw: Any) -> Any:
        if loaded is self.first:
            return {"tft": _full(2.0)}, {"tft": torch.full((3, 2), 2.0)}, None
        scores = {"tft": _full(1.0), "zero": _full(3.0)}
        return scores, {"tft": torch.ones(3, 2), "zero": torch.full((3, 2), 3.0)}, None

    def verdicts(self, losses: dict[str, torch.Tensor]) -> dict[str, Any]:
        return {k: {"pooled": f"{k} pooled", "per_horizon": []} for k in losses if k != "tft"}


def _brief(mean: float) -> dict[str, Any]:
    full = _full(mean)
    del full["pit"]
    return full


def test_score_fold_assembles_the_fold_record_from_its_collaborators(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = _Scoring(monkeypatch)
    bars = _two_symbols().with_columns(volume=pl.lit(1.0))
    fold = Fold(4, _t(5), _t(10), _t(13))
    dev = torch.device("cpu")
    result, losses = bt._score_fold(tmp_path / "run", bars, fold, 3, 6, dev, 9)
    assert fake.calls["load_inference_model"] == [((tmp_path / "run", dev), {})]
    assert fake.calls["fold_windows"] == [((fake.loaded, bars, fold, 3, 6), {})]
    assert fake.calls["load_baselines"] == [(("fitted", (0.1, 0.5, 0.9), 2), {})]
    ((args, kw),) = fake.calls["baseline_forecasts"]
    assert args[:2] == ("empirical", "classical") and args[3] is fake.windows and kw == {}
    closes = args[2]
    assert closes.columns == ["symbol", "ts", "close"]
    assert closes.equals(bars.filter(pl.col("ts") < _t(13)).select("symbol", "ts", "close"))
    assert fake.calls["score"] == [
        ((fake.loaded, fake.windows, {"zero": "forecast"}), {"batch_size": 9, "device": dev})
    ]
    ((verdict_args, _),) = fake.calls["verdicts"]
    assert verdict_args[0] is losses and list(losses) == ["tft", "zero"]
    assert result == {
        "fold": 4,
        "run": str(tmp_path / "run"),
        "train_end": _t(5).isoformat(),
        "first_origin": _t(10).isoformat(),
        "last_origin": _t(12).isoformat(),
        "n_windows": 3,
        "scores": {"tft": _brief(1.0), "zero": _brief(3.0)},
        "comparisons": {"zero": "zero pooled"},
    }


def test_score_fold_of_an_ensemble_scores_member_zero_alone_next_to_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from foxhunt.artifacts.ensemble import member_root

    fake = _Scoring(monkeypatch)
    dev = torch.device("cpu")
    fold = Fold(1, _t(5), _t(10), None)
    result, losses = bt._score_fold(tmp_path / "run", _two_symbols(), fold, 3, 6, dev, 9, True)
    assert fake.calls["load_inference_model"] == [
        ((tmp_path / "run", dev), {}),
        ((member_root(tmp_path / "run", 0), dev), {}),
    ]
    assert fake.calls["score"][1] == (
        (fake.first, fake.windows, {}),
        {"batch_size": 9, "device": dev},
    )
    assert list(losses) == ["tft", "tft_member0", "zero"]
    assert float(losses["tft"][0, 0]) == 1.0 and float(losses["tft_member0"][0, 0]) == 2.0
    assert list(result["scores"]) == ["tft", "tft_member0", "zero"]
    assert result["scores"]["tft_member0"] == _brief(2.0)
    assert result["scores"]["tft"] == _brief(1.0)
    assert result["comparisons"] == {"tft_member0": "tft_member0 pooled", "zero": "zero pooled"}
    closes = fake.calls["baseline_forecasts"][0][0][2]
    assert closes["ts"].max() == _t(19)  # a last fold (end None) reads every bar


def test_fold_windows_reads_the_fold_bars_as_the_run_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def prepare(*args: Any, **kw: Any) -> str:
        seen.append((args, kw))
        return "windows"

    monkeypatch.setattr(bt, "prepare_inference_data", prepare)
    loaded = SimpleNamespace(
        config=SimpleNamespace(
            model=SimpleNamespace(encoder_length=4, horizon=2), data="run inputs"
        ),
        spec="spec",
        scaler="scaler",
        instruments="instruments",
    )
    bars = _two_symbols()
    fold = Fold(1, _t(5), _t(10), _t(15))
    assert bt.fold_windows(loaded, bars, fold, 3, 6) == "windows"  # type: ignore[arg-type]
    ((args, kw),) = seen
    assert args[0].equals(bt._fold_bars(bars, fold, 3, 6))
    assert args[1:] == ("spec", "scaler", 4, 2)
    assert kw == {"with_target": True, "instruments": "instruments", "inputs": "run inputs"}
    with pytest.raises(DataError) as info:
        bt.fold_windows(loaded, bars, Fold(3, _t(5), _t(10), _t(15)), 3, 9)  # type: ignore[arg-type]
    assert str(info.value) == "fold 3: no symbol has 9 bars for one window"
    assert len(seen) == 1


def test_brief_keeps_the_five_table_scores_in_order() -> None:
    assert list(bt._brief(_full(1.0))) == [
        "n_windows",
        "mean_pinball",
        "pinball_per_horizon",
        "q_risk",
        "coverage",
    ]
    assert bt._brief(_full(1.0)) == _brief(1.0)


def test_pool_joins_the_folds_losses_and_weights_coverage_by_windows() -> None:
    from foxhunt.infer.significance import compare

    g = torch.Generator().manual_seed(0)
    tft1, tft2 = torch.rand(2, 3, generator=g), torch.rand(4, 3, generator=g)
    zero1, zero2 = torch.rand(2, 3, generator=g) + 1, torch.rand(4, 3, generator=g) + 1
    losses = [
        {"tft": tft1, "zero": zero1, "only_fold1": torch.ones(2, 3)},
        {"zero": zero2, "tft": tft2},  # another order: fold 1's decides
    ]
    results = [
        {
            "n_windows": 2,
            "scores": {
                "tft": {"coverage": {"80%": 0.5, "98%": 1.0}},
                "zero": {"coverage": {"80%": 1.0, "98%": 1.0}},
            },
        },
        {
            "n_windows": 4,
            "scores": {
                "tft": {"coverage": {"80%": 0.8, "98%": 0.75, "50%": 0.1}},
                "zero": {"coverage": {"80%": 0.25, "98%": 0.5, "50%": 0.1}},
            },
        },
    ]
    pooled = bt._pool(results, losses)
    assert list(pooled) == ["n_windows", "scores", "comparisons"]
    assert pooled["n_windows"] == 6 and isinstance(pooled["n_windows"], int)
    assert list(pooled["scores"]) == ["tft", "zero"]
    tft = torch.cat([tft1, tft2]).numpy()
    zero = torch.cat([zero1, zero2]).numpy()
    for key, v in (("tft", tft), ("zero", zero)):
        s = pooled["scores"][key]
        assert list(s) == ["n_windows", "mean_pinball", "pinball_per_horizon", "coverage"]
        assert s["n_windows"] == 6 and isinstance(s["n_windows"], int)
        assert s["mean_pinball"] == pytest.approx(float(v.mean()), rel=1e-6)
        assert s["pinball_per_horizon"] == pytest.approx(v.mean(axis=0).tolist(), rel=1e-6)
        assert len(s["pinball_per_horizon"]) == 3
    # coverage: the folds' rates weighted by their windows (2 and 4), fold 1's levels
    assert pooled["scores"]["tft"]["coverage"] == pytest.approx({"80%": 0.7, "98%": 5 / 6})
    assert pooled["scores"]["zero"]["coverage"] == pytest.approx({"80%": 0.5, "98%": 2 / 3})
    assert list(pooled["comparisons"]) == ["zero"]
    want = compare(tft, zero)
    assert pooled["comparisons"]["zero"]["pooled"] == pytest.approx(want["pooled"])
    assert pooled["comparisons"]["zero"]["pooled"]["tft"] == pytest.approx(float(tft.mean()))


@pytest.mark.slow
def test_a_real_fold_of_the_demo_run_is_scored_on_its_own_windows(demo_run: DemoRun) -> None:
    from foxhunt.artifacts.rundir import load_model_dir
    from foxhunt.data.features.inputs import read_run_bars
    from foxhunt.data.pipeline import inference_bars_needed

    loaded = load_model_dir(demo_run.run)
    m = loaded.config.model
    L, H = m.encoder_length, m.horizon
    need, why = inference_bars_needed(loaded.spec, L, H, with_target=True)
    bars, _ = read_run_bars(
        demo_run.bars, loaded.config.data, min_bars=need, reason=why, allow_outliers=False
    )
    history = loaded.spec.warmup + L - 1
    plan = bt.plan_folds(bars["ts"].unique().sort(), 2, L + H, min_fold=need - history)
    fold = plan[1]  # the last fold: to the last bar
    result, losses = bt._score_fold(
        demo_run.run, bars, fold, history, need, torch.device("cpu"), 16
    )
    windows = bt.fold_windows(loaded, bars, fold, history, need)
    origins = windows.origins()["ts"]
    assert result["fold"] == 2 and result["run"] == str(demo_run.run)
    assert result["n_windows"] == len(windows) > 0
    assert result["first_origin"] == origins.min().isoformat() >= fold.start.isoformat()
    assert result["last_origin"] == origins.max().isoformat()
    assert result["train_end"] == fold.train_end.isoformat()
    assert list(result["scores"])[0] == "tft"
    assert set(result["comparisons"]) == set(result["scores"]) - {"tft"}
    assert set(losses) == set(result["scores"])
    assert all(v.shape == (len(windows), H) for v in losses.values())
    for key, s in result["scores"].items():
        assert s["n_windows"] == len(windows)
        assert s["mean_pinball"] == pytest.approx(float(losses[key].mean()), rel=1e-5)
    for key, c in result["comparisons"].items():
        assert c["baseline"] == pytest.approx(float(losses[key].mean()), rel=1e-5)
