"""``foxhunt backtest --ensemble N``: member runs per fold, the ensemble's scores recomputed by
hand from its members, member 0 alone, and the refusal of a bad N."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from foxhunt.artifacts.calibration import quantile_map
from foxhunt.artifacts.ensemble import is_ensemble_dir, member_root
from foxhunt.artifacts.rundir import load_model_dir
from foxhunt.cli import main
from foxhunt.config import demo
from foxhunt.data.features.inputs import read_run_bars
from foxhunt.data.features.table import feature_spec
from foxhunt.data.pipeline import inference_bars_needed
from foxhunt.data.scale.scaler import unscale_targets
from foxhunt.data.sources.demo import write_demo_bars
from foxhunt.infer.backtest import MEMBER0, backtest, fold_windows, plan_folds
from foxhunt.infer.backtest_plot import backtest_figure


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
            # a plain head starts at each seed's own random weights: the members differ whether
            # or not training beats the start (a monotone head starts seed-independent, at the
            # scale-only forecast, and two steps may keep it)
            "monotone_quantiles": False,
        },
        train={"batch_size": 64, "epochs": 1, "max_steps": 2, "warmup_steps": 1, "num_threads": 1},
        data={"stride": 4},
    )


def _by_hand(members, windows, levels):
    """Mean pinball of the members' averaged, sorted quantiles and of member 0 alone, with
    each member's own network forward and quantile map (not tft_quantiles)."""
    batch = windows.batch(list(range(len(windows))))
    y = unscale_targets(batch.target.double(), members[0].scaler).numpy()  # (N, H)
    each = []
    with torch.inference_mode():
        for member in members:
            z = member.model.eval()(batch).quantiles
            each.append(quantile_map(member).to_returns(z, batch.historical, batch.known).numpy())
    mean = np.sort(np.mean(each, axis=0), axis=-1)  # (N, H, Q)

    def pinball(pred: np.ndarray) -> float:
        e = y[..., None] - pred
        return float(np.maximum(levels * e, (levels - 1) * e).mean())

    return pinball(mean), pinball(each[0]), mean


@pytest.mark.slow
@pytest.mark.subprocess
def test_ensemble_of_two_trains_members_per_fold_and_scores_their_mean(tmp_path) -> None:
    path = tmp_path / "ES.parquet"
    write_demo_bars(path, n_bars=1200, seed=1)
    cfg = _tiny()
    out = tmp_path / "bt"
    r = backtest(path, cfg, folds=2, refit="every", out=out, ensemble=2)
    folds = r["folds"]
    for f in folds:  # refit every: each fold's run is an ensemble of 2 complete member runs
        run = out / f"fold-{f['fold']}" / "run"
        assert f["run"] == str(run) and is_ensemble_dir(run)
        assert sorted(p.name for p in (run / "members").iterdir()) == ["0", "1"]
        seeds = [json.loads((member_root(run, k) / "config.json").read_text()) for k in (0, 1)]
        assert [s["train"]["seed"] for s in seeds] == [cfg.train.seed, cfg.train.seed + 1]
    ens = r["ensemble"]
    assert ens["members"] == 2 and ens["member0"] == MEMBER0
    assert [t["fold"] for t in ens["trainings"]] == [1, 2]
    for t in ens["trainings"]:
        assert [m["seed"] for m in t["members"]] == [cfg.train.seed, cfg.train.seed + 1]
        assert t["peak_rss_bytes"] == max(m["peak_rss_bytes"] for m in t["members"]) > 0
        assert t["seconds"] == pytest.approx(sum(m["seconds"] for m in t["members"]))

    # the fold's windows, rebuilt as backtest reads them; the scores recomputed from the members
    spec = feature_spec(3, cfg.data)
    need, why = inference_bars_needed(spec, 16, 3, with_target=True)
    bars, _ = read_run_bars(path, cfg.data, min_bars=need, reason=why, allow_outliers=False)
    plan = plan_folds(bars["ts"].unique().sort(), 2, r["embargo"])
    levels = np.array(cfg.model.quantiles)
    for fold, f in zip(plan, folds, strict=True):
        members = [load_model_dir(member_root(f["run"], k)) for k in (0, 1)]
        windows = fold_windows(members[0], bars, fold, spec.warmup + 16 - 1, need)
        assert len(windows) == f["n_windows"]
        ens_loss, first_loss, mean = _by_hand(members, windows, levels)
        assert f["scores"]["tft"]["mean_pinball"] == pytest.approx(ens_loss, rel=1e-6)
        assert f["scores"][MEMBER0]["mean_pinball"] == pytest.approx(first_loss, rel=1e-6)
        assert ens_loss != pytest.approx(first_loss, rel=1e-9)  # the mean is not member 0
        assert f["comparisons"][MEMBER0]["tft"] == pytest.approx(ens_loss, rel=1e-6)
    pooled = r["pooled"]
    assert list(pooled["scores"])[:2] == ["tft", MEMBER0]
    assert MEMBER0 in pooled["comparisons"]
    weights = [f["n_windows"] for f in folds]
    assert pooled["scores"][MEMBER0]["mean_pinball"] == pytest.approx(
        np.average([f["scores"][MEMBER0]["mean_pinball"] for f in folds], weights=weights)
    )
    labels = {line.get_label() for line in backtest_figure(r).axes[0].get_lines()}
    assert {"TFT (ensemble of 2)", "TFT member 0 alone"} <= labels


@pytest.mark.slow
def test_ensemble_with_refit_once_trains_one_ensemble(tmp_path) -> None:
    path = tmp_path / "ES.parquet"
    write_demo_bars(path, n_bars=1200, seed=1)
    out = tmp_path / "bt"
    r = backtest(path, _tiny(), folds=2, refit="once", out=out, ensemble=2)
    assert {f["run"] for f in r["folds"]} == {str(out / "fold-1" / "run")}
    assert not (out / "fold-2").exists()
    assert [t["fold"] for t in r["ensemble"]["trainings"]] == [1]
    assert all(MEMBER0 in f["scores"] for f in r["folds"])


@pytest.mark.parametrize("n", ["0", "-2"])
def test_cli_refuses_a_bad_ensemble_size_before_training(tmp_path, capsys, n) -> None:
    bars = tmp_path / "ES.parquet"
    write_demo_bars(bars, n_bars=600, seed=1)
    out = tmp_path / "bt"
    rc = main(["backtest", "--bars", str(bars), "--preset", "demo", "--ensemble", n, "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err == [f"foxhunt: error: --ensemble must be >= 1, got {n}"]
    assert not out.exists()
