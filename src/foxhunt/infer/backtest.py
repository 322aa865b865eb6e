"""``foxhunt backtest``: rolling-origin evaluation of the TFT and every baseline.

The bars' distinct times are cut into an initial training stretch (the first
:data:`INITIAL_TRAIN_FRACTION`) and ``K`` consecutive test folds after it. For fold ``k``:

* **train**: every bar before the fold's first time, less an embargo of ``E`` bar times
  (the run config's ``embargo``, default encoder + horizon), so no training target reaches into
  the fold; the run splits it as ``foxhunt train`` does (train / validation for early stopping
  and the EWMA decays / a test part left unused), and the baselines are fitted on its training
  split. ``--refit every`` trains a model (and fits the baselines) per fold on this expanding
  window; ``--refit once`` trains one on fold 1's and scores it on every fold.
* **test**: every window whose origin lies in the fold and whose H outcomes are inside it. The
  encoder reads the bars just before the fold (inputs, not targets); the classical baselines
  filter every bar up to each origin.

Per fold and pooled over the folds: the scores of :mod:`foxhunt.infer.scores` and the
Diebold–Mariano comparison of :mod:`foxhunt.infer.significance` (pooled: on the concatenated
per-window losses of all folds).

``--ensemble N`` (N >= 2): each training is a seed ensemble of N members, trained by
:func:`foxhunt.train.ensemble.train_ensemble` exactly as ``foxhunt train --ensemble N`` does
(member k with seed ``seed + k``, in ``fold-K/run/members/k``), and scored as the served
ensemble is (its members' calibrated quantiles averaged, :func:`foxhunt.infer.quantiles.
tft_quantiles`) under the key ``tft``. Member 0 alone is scored too, under :data:`MEMBER0`, so
the comparison ``tft`` vs ``tft_member0`` shows what the ensemble buys; the members' training
time and peak RSS go in the result's ``ensemble`` record. N = 1 is a single run per training
and the result has neither.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import torch

from foxhunt.artifacts.ensemble import COMBINE, member_root
from foxhunt.artifacts.outputs import clear_outputs, refuse_held_outputs
from foxhunt.artifacts.rundir import LoadedModel
from foxhunt.baselines.empirical import load_baselines
from foxhunt.config import RunConfig
from foxhunt.data.features.inputs import read_run_bars
from foxhunt.data.features.table import feature_spec
from foxhunt.data.market.calendar import bars_interval
from foxhunt.data.market.intervals import refuse_mixed_intervals
from foxhunt.data.pipeline import (
    inference_bars_needed,
    prepare_inference_data,
    training_bars_needed,
)
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.errors import DataError, InputError
from foxhunt.infer.backtest_plot import plot_backtest
from foxhunt.infer.evaluate import baseline_forecasts, score, verdicts
from foxhunt.infer.significance import compare
from foxhunt.quantize.model import load_inference_model
from foxhunt.runtime import atomic_write_json, json_safe, parse_device
from foxhunt.train.ensemble import train_ensemble
from foxhunt.train.run import run_training

log = logging.getLogger(__name__)

INITIAL_TRAIN_FRACTION = 0.5
"""Share of the bar times before the first fold (the first training window)."""

REFIT = ("every", "once")

OUTPUTS = ("backtest.json", "backtest.png", "fold-*")
"""What a backtest writes in its ``out`` (refused there without ``overwrite``, cleared with it)."""

MEMBER0 = "tft_member0"
"""Key of member 0's scores (alone) in a ``--ensemble N`` backtest; ``tft`` is the ensemble."""


@dataclass(frozen=True)
class Fold:
    """One test fold: train on bars before ``train_end``; test origins in [``start``, ``end``)."""

    index: int
    train_end: datetime
    start: datetime
    end: datetime | None  # None: to the last bar


def plan_folds(times: pl.Series, folds: int, embargo: int, min_fold: int = 1) -> list[Fold]:
    """Cut sorted distinct bar times into the folds (see the module docstring); each fold
    holds at least ``min_fold`` bar times (what one test window needs in it).

    Raises:
        InputError: ``folds`` < 1, or too few times for the folds and the embargo (naming the
            largest K that fits, when one does).
    """
    if folds < 1:
        raise InputError(f"--folds must be >= 1, got {folds}")
    n = len(times)
    first = int(n * INITIAL_TRAIN_FRACTION)
    if first - embargo < 1 or not _fits(n, folds, min_fold):
        fits = max_folds(n, embargo, min_fold)
        hint = f"at most --folds {fits} fits" if fits else "no fold count fits"
        raise InputError(
            f"--folds {folds}: {n} bar times are too few for {folds} folds of {min_fold} bar "
            f"times each after an initial {INITIAL_TRAIN_FRACTION:.0%} and an embargo of "
            f"{embargo} bars; {hint}"
        )
    edges = _edges(n, folds)
    return [
        Fold(
            index=k + 1,
            train_end=times[int(a) - embargo],
            start=times[int(a)],
            end=times[int(b)] if b < n else None,
        )
        for k, (a, b) in enumerate(zip(edges[:-1], edges[1:], strict=True))
    ]


def max_folds(n: int, embargo: int, min_fold: int = 1) -> int:
    """The largest K that :func:`plan_folds` accepts for ``n`` bar times (0: none)."""
    if int(n * INITIAL_TRAIN_FRACTION) - embargo < 1:
        return 0
    k = (n - int(n * INITIAL_TRAIN_FRACTION)) // max(1, min_fold)  # no more folds than this
    while k >= 1 and not _fits(n, k, min_fold):
        k -= 1
    return k


def _edges(n: int, folds: int) -> np.ndarray:
    return np.linspace(int(n * INITIAL_TRAIN_FRACTION), n, folds + 1).round().astype(int)


def _fits(n: int, folds: int, min_fold: int) -> bool:
    return bool(np.all(np.diff(_edges(n, folds)) >= max(1, min_fold)))


def _before(bars: pl.DataFrame, t: datetime | None) -> pl.DataFrame:
    return bars if t is None else bars.filter(pl.col("ts") < t)


def _fold_bars(bars: pl.DataFrame, fold: Fold, history: int, need: int) -> pl.DataFrame:
    """Each symbol's bars of the fold plus the ``history`` bars before it (warm-up and encoder);
    a symbol with fewer than ``need`` such bars is left out."""
    ranked = bars.with_columns(pl.int_range(pl.len()).over("symbol").alias("_row"))
    first = ranked.filter(pl.col("ts") >= fold.start).group_by("symbol").agg(pl.col("_row").min())
    out = _before(ranked.join(first, on="symbol", suffix="_first"), fold.end).filter(
        pl.col("_row") >= pl.col("_row_first") - history
    )
    counts = out.group_by("symbol").len()
    keep = counts.filter(pl.col("len") >= need)["symbol"].to_list()
    if len(keep) < counts.height:
        log.warning(
            "fold %d: %d symbols have too few bars, left out", fold.index, counts.height - len(keep)
        )
    return out.filter(pl.col("symbol").is_in(keep)).drop("_row", "_row_first").sort("symbol", "ts")


def _trainable(bars: pl.DataFrame, need: int, fold: Fold) -> pl.DataFrame:
    """The fold's training bars without the symbols too short for training's splits (a
    symbol listed late), with one warning.

    Raises:
        DataError: no symbol has enough (until session 54 training refused, naming feature
            rows and no fold).
    """
    counts = bars.group_by("symbol").len().sort("symbol")
    short = counts.filter(pl.col("len") < need)["symbol"].to_list()
    if not short:
        return bars
    if len(short) == counts.height:
        most = counts.sort("len", descending=True).row(0)
        raise DataError(
            f"backtest: fold {fold.index} trains on the first {INITIAL_TRAIN_FRACTION:.0%} of the "
            f"bar times (before {fold.train_end}), and no symbol has the {need} bars training's "
            f"splits need there (most: {most[0]!r}, {most[1]}): a backtest needs about "
            f"{round(need / INITIAL_TRAIN_FRACTION)} bars of a symbol; more bars, or a shorter "
            "--encoder-length or --horizon"
        )
    log.warning(
        "fold %d: %d symbol%s with fewer than %d bars before %s left out of its training (%s)",
        fold.index,
        len(short),
        "" if len(short) == 1 else "s",
        need,
        fold.train_end,
        ", ".join(short[:5]) + (", ..." if len(short) > 5 else ""),
    )
    return bars.filter(~pl.col("symbol").is_in(short))


def _train(
    cfg: RunConfig, bars: pl.DataFrame, root: Path, progress: Any, ensemble: int
) -> tuple[Path, dict[str, Any] | None]:
    """Train on ``bars`` (written beside the run) with the config's own splits: one run, or a
    seed ensemble of ``ensemble`` members. Returns the run dir and, for an ensemble, its
    members' record (seeds, seconds, peak RSS)."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / "train_bars.parquet"
    bars.write_parquet(path)
    if ensemble > 1:
        done = train_ensemble(
            cfg, ensemble, bars=path, out=root / "run", resume=None, progress=progress,
            overwrite=True,
        )  # fmt: skip
        return done.root, {
            "run": str(done.root),
            "seconds": done.seconds,
            "peak_rss_bytes": done.peak_rss_bytes,
            "members": [asdict(m) for m in done.members],
        }
    run_training(
        cfg,
        bars=path,
        out=root / "run",
        resume=None,
        memory_budget=None,
        allow_precision_change=False,
        progress=progress,
        overwrite=True,
    )
    return root / "run", None


def backtest(
    bars_path: Path,
    cfg: RunConfig,
    *,
    folds: int,
    refit: str,
    out: Path,
    device: str = "cpu",
    batch_size: int = 256,
    progress: Callable[..., Any] | None = None,
    ensemble: int = 1,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Rolling-origin evaluation (module docstring); writes ``out/backtest.json``, the fold
    runs under ``out/fold-K/`` and returns the result.

    Args:
        bars_path: bars file, directory or glob.
        cfg: the run config each fold trains with (a preset, possibly with overrides).
        folds: K.
        refit: ``every`` (a model per fold) or ``once`` (one model, trained before fold 1).
        out: directory for the fold runs, ``backtest.json`` and ``backtest.png``.
        device: torch device for scoring (training follows ``cfg.train.device``).
        batch_size: windows per forward pass when scoring.
        progress: progress factory handed to training (None: log lines).
        ensemble: members per training (1: a single run; N >= 2: a seed ensemble, scored as
            ``tft``, with member 0 alone as :data:`MEMBER0`).
        overwrite: replace a backtest already in ``out`` (its ``backtest.json``,
            ``backtest.png`` and ``fold-K/`` are deleted once the folds are planned); without
            it such an ``out`` is refused before the bars are read.

    Raises:
        InputError: bad arguments, ``out`` holds a backtest and ``overwrite`` is not given, or
            bars too short for the folds.
    """
    if refit not in REFIT:
        raise InputError(f"--refit must be one of {', '.join(REFIT)}, got {refit!r}")
    if ensemble < 1:
        raise InputError(f"--ensemble must be >= 1, got {ensemble}")
    refuse_held_outputs(out, OUTPUTS, "backtest", overwrite)
    m = cfg.model
    L, H = m.encoder_length, m.horizon
    spec = feature_spec(H, cfg.data)
    need, why = inference_bars_needed(spec, L, H, with_target=True)
    bars, _ = read_run_bars(  # the run's extra input columns kept
        bars_path, cfg.data, min_bars=need, reason=why, allow_outliers=cfg.data.allow_outliers
    )
    closes = bars.select("symbol", "ts")  # refused here, not inside fold 1's training
    refuse_mixed_intervals(closes, bars_interval(closes), bars_path)
    embargo = cfg.data.embargo if cfg.data.embargo is not None else L + H
    history = spec.warmup + L - 1  # bars before a fold its windows read (warm-up, encoder)
    # a fold holds at least one test window: what _fold_bars keeps a symbol for, less history
    plan = plan_folds(bars["ts"].unique().sort(), folds, embargo, min_fold=need - history)
    clear_outputs(out, OUTPUTS)
    out.mkdir(parents=True, exist_ok=True)
    dev = parse_device(device)
    results, losses, trained = [], [], []
    run_dir: Path | None = None
    for fold in plan:
        if run_dir is None or refit == "every":
            log.info("fold %d: training on bars before %s", fold.index, fold.train_end)
            seen = _trainable(_before(bars, fold.train_end), training_bars_needed(cfg), fold)
            run_dir, members = _train(cfg, seen, out / f"fold-{fold.index}", progress, ensemble)
            if members is not None:
                trained.append({"fold": fold.index, **members})
        fold_result, fold_losses = _score_fold(
            run_dir, bars, fold, history, need, dev, batch_size, ensemble > 1
        )
        results.append(fold_result)
        losses.append(fold_losses)
    result = {
        "bars": str(bars_path),
        "preset": cfg.preset,
        "refit": refit,
        "embargo": embargo,
        "horizon": H,
        "quantiles": list(m.quantiles),
        "units": "log return",
        "folds": results,
        "pooled": _pool(results, losses),
    }
    if ensemble > 1:
        result["ensemble"] = {
            "members": ensemble,
            "member0": MEMBER0,
            "combine": COMBINE,
            "trainings": trained,
        }
    result = json_safe(result)  # undefined numbers (a loss of 0 to compare with) are null
    atomic_write_json(out / "backtest.json", result)
    plot_backtest(result, out / "backtest.png")
    return result


def _score_fold(
    run_dir: Path,
    bars: pl.DataFrame,
    fold: Fold,
    history: int,
    need: int,
    device: torch.device,
    batch_size: int,
    member0: bool = False,
) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """Score the run's model (a single run or an ensemble) and baselines on the fold's windows;
    with ``member0``, the ensemble's member 0 alone as well (:data:`MEMBER0`)."""
    loaded = load_inference_model(run_dir, device)
    m = loaded.config.model
    windows = fold_windows(loaded, bars, fold, history, need)
    empirical, classical = load_baselines(loaded.run.baselines, m.quantiles, m.horizon)
    closes = _before(bars, fold.end).select("symbol", "ts", "close")
    forecasts = baseline_forecasts(empirical, classical, closes, windows)
    scores, losses, _ = score(loaded, windows, forecasts, batch_size=batch_size, device=device)
    if member0:  # same windows: the members share the ensemble's features and scaler
        first = load_inference_model(member_root(run_dir, 0), device)
        alone, alone_losses, _ = score(first, windows, {}, batch_size=batch_size, device=device)
        scores = {"tft": scores.pop("tft"), MEMBER0: alone["tft"], **scores}
        losses = {"tft": losses.pop("tft"), MEMBER0: alone_losses["tft"], **losses}
    origins = windows.origins()["ts"]
    return {
        "fold": fold.index,
        "run": str(run_dir),
        "train_end": fold.train_end.isoformat(),
        "first_origin": origins.min().isoformat(),  # type: ignore[union-attr]
        "last_origin": origins.max().isoformat(),  # type: ignore[union-attr]
        "n_windows": len(windows),
        "scores": {k: _brief(v) for k, v in scores.items()},
        "comparisons": {k: v["pooled"] for k, v in verdicts(losses).items()},
    }, losses


def fold_windows(
    loaded: LoadedModel, bars: pl.DataFrame, fold: Fold, history: int, need: int
) -> WindowDataset:
    """The fold's test windows (origins in the fold, outcomes inside it) as ``loaded`` reads
    them.

    Raises:
        DataError: no symbol has enough bars in the fold for one window.
    """
    m = loaded.config.model
    frame = _fold_bars(bars, fold, history, need)
    if frame.is_empty():
        raise DataError(f"fold {fold.index}: no symbol has {need} bars for one window")
    return prepare_inference_data(
        frame,
        loaded.spec,
        loaded.scaler,
        m.encoder_length,
        m.horizon,
        with_target=True,
        instruments=loaded.instruments,
        inputs=loaded.config.data,  # the run's feature set, covariates and target
    )


def _brief(s: dict[str, Any]) -> dict[str, Any]:
    keys = ("n_windows", "mean_pinball", "pinball_per_horizon", "q_risk", "coverage")
    return {k: s[k] for k in keys}


def _pool(results: list[dict[str, Any]], losses: list[dict[str, torch.Tensor]]) -> dict[str, Any]:
    """Scores over all folds' windows together, and the Diebold–Mariano test on them."""
    names = list(losses[0])
    joined = {
        k: torch.cat([f[k] for f in losses]).numpy() for k in names if all(k in f for f in losses)
    }
    n = [r["n_windows"] for r in results]
    scores = {}
    for k, v in joined.items():
        cover = {
            c: float(np.average([r["scores"][k]["coverage"][c] for r in results], weights=n))
            for c in results[0]["scores"][k]["coverage"]
        }
        scores[k] = {
            "n_windows": int(v.shape[0]),
            "mean_pinball": float(v.mean()),
            "pinball_per_horizon": v.mean(axis=0).tolist(),
            "coverage": cover,
        }
    tft = joined["tft"]
    comparisons = {k: compare(tft, v) for k, v in joined.items() if k != "tft"}
    return {"n_windows": int(sum(n)), "scores": scores, "comparisons": comparisons}
