"""``foxhunt evaluate``: how good are the quantiles, against the baselines, and is it real?

Scores (:mod:`foxhunt.infer.scores`), all in unscaled log-return units (tables show basis
points, 1 bp = 1e-4): pinball loss, P50/P90 q-risk, interval coverage, reliability and PIT.

The model is compared with zero-return persistence, the empirical quantiles of recent training
returns (:mod:`foxhunt.baselines.empirical`) and the classical volatility models the run fitted
(EWMA, GARCH(1,1), time-of-week x EWMA; :mod:`foxhunt.baselines.forecasts`), each with a
Diebold–Mariano test on the per-window losses (:mod:`foxhunt.infer.significance`): the TFT
"wins" or "loses" only when the difference is significant at 5 %. When the bars are the very
file the model was trained on (same data fingerprint), only the test split is scored: the other
windows were used for fitting or early stopping. Other bars are scored only from the training
bars' end on (``--windows``, :mod:`foxhunt.data.windows.scope`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import torch
from rich.progress import Progress
from torch import Tensor

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.data_end import read_data_end
from foxhunt.artifacts.lock import check_unlocked, run_lock
from foxhunt.artifacts.rundir import LoadedModel, RunDir, with_read_flags, with_user_instruments
from foxhunt.artifacts.served import served_weights
from foxhunt.baselines.empirical import EmpiricalQuantiles, load_baselines
from foxhunt.baselines.forecasts import WindowForecast, classical_forecasts, simple_forecasts
from foxhunt.data.pipeline import evaluation_data
from foxhunt.data.scale.scaler import unscale_targets
from foxhunt.data.windows.by_symbol import scratch_for
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.data.windows.scope import WindowScope
from foxhunt.errors import DataError, InputError, ModelDirError
from foxhunt.infer.bar_interval import check_bar_interval
from foxhunt.infer.quantiles import plain_forward, quantile_map, tft_quantiles
from foxhunt.infer.row_forward import row_forward
from foxhunt.infer.scores import QuantileScores
from foxhunt.infer.significance import compare, compare_per_group
from foxhunt.infer.untrained import check_trained_symbols
from foxhunt.quantize.model import load_inference_model
from foxhunt.runtime import atomic_write_json, json_safe, parse_device
from foxhunt.train.reporting.report import write_report

__all__ = ["QuantileScores", "baseline_forecasts", "evaluate_model", "score", "verdicts"]

log = logging.getLogger(__name__)


def baseline_forecasts(
    empirical: EmpiricalQuantiles,
    classical: dict[str, Any],
    closes: pl.DataFrame,
    windows: WindowDataset,
) -> dict[str, WindowForecast]:
    """Every baseline's forecasts for ``windows`` (zero, empirical, then the classical ones
    the run stored), keyed as in :data:`foxhunt.baselines.forecasts.LABELS`."""
    origins = windows.origins()
    h, q = windows.horizon, len(empirical.quantiles)
    simple = simple_forecasts(empirical, origins["symbol"].to_list(), h)
    return simple | classical_forecasts(classical, closes, origins, h, q)


@torch.inference_mode()
def score(
    loaded: LoadedModel,
    windows: WindowDataset,
    baselines: Mapping[str, WindowForecast],
    *,
    batch_size: int,
    device: torch.device,
    progress: Progress | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, Tensor], dict[str, Tensor]]:
    """Score the model and every baseline on ``windows`` (streamed in batches).

    Returns:
        ``({"tft": scores, baseline: scores...}, {same keys: (N, H) per-window losses},
        {interval: (N,) the TFT's per-window coverage})`` (see
        :class:`foxhunt.infer.scores.QuantileScores`).
    """
    m = loaded.config.model
    n = len(windows)
    scores = {
        name: QuantileScores(m.quantiles, m.horizon, n, window_coverage=name == "tft")
        for name in ("tft", *baselines)
    }
    task = progress.add_task("evaluate", total=n) if progress else None
    loaded.model.eval()
    qmap = quantile_map(loaded)
    origins = torch.from_numpy(windows.origin_rows())
    for a in range(0, n, batch_size):
        b = min(a + batch_size, n)
        batch = windows.batch(list(range(a, b)))
        assert batch.target is not None
        y = unscale_targets(batch.target.double(), loaded.scaler)  # (B, H) log returns
        # each encoder row's variable selection once per batch, not once per window holding it
        forward = row_forward(windows, origins[a:b]) or plain_forward
        pred = tft_quantiles(
            loaded.model,
            batch,
            qmap,
            device=device,
            precision=loaded.config.train.precision,
            forward=forward,
        )  # (B, H, Q) sorted log returns
        scores["tft"].update(pred, y)
        for name, forecast in baselines.items():
            scores[name].update(forecast.predict(a, b), y)
        if progress is not None and task is not None:
            progress.update(task, advance=b - a)
    results = {name: s.result() for name, s in scores.items()}
    losses = {name: s.window_losses() for name, s in scores.items()}
    return results, losses, scores["tft"].window_coverage()


def per_symbol(
    losses: Mapping[str, Tensor], coverage: Mapping[str, Tensor], symbols: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Each symbol's windows on their own: the TFT's mean pinball loss and interval coverage,
    and its Diebold–Mariano comparison (pooled over horizons) with every baseline.

    Args:
        losses: ``score``'s per-window losses, ``"tft"`` and every baseline.
        coverage: ``score``'s per-window TFT coverage per interval.
        symbols: (N,) each window's symbol, in the windows' order.

    Returns:
        ``{symbol: {"n_windows", "tft", "coverage": {interval: share},
        "comparisons": {baseline: {...}}}}`` (entries as :func:`compare_per_group`'s).
    """
    groups = np.asarray(symbols)
    tft = losses["tft"].numpy()
    by_base = {
        name: compare_per_group(tft, v.numpy(), groups)
        for name, v in losses.items()
        if name != "tft"
    }
    out: dict[str, dict[str, Any]] = {}
    for sym in dict.fromkeys(groups.tolist()):
        m = groups == sym
        out[str(sym)] = {
            "n_windows": int(m.sum()),
            "tft": float(tft[m].mean()),
            "coverage": {k: float(c.numpy()[m].mean()) for k, c in coverage.items()},
            "comparisons": {name: c[str(sym)] for name, c in by_base.items()},
        }
    return out


def symbols_beaten(per_sym: Mapping[str, dict[str, Any]]) -> dict[str, int]:
    """How many symbols the TFT significantly beats each baseline on, one by one."""
    counts: dict[str, int] = {}
    for entry in per_sym.values():
        for name, c in entry["comparisons"].items():
            counts[name] = counts.get(name, 0) + (c["verdict"] == "win")
    return counts


def verdicts(losses: Mapping[str, Tensor]) -> dict[str, dict[str, Any]]:
    """The TFT against every baseline: Diebold–Mariano on the per-window losses, pooled and
    per horizon (:func:`foxhunt.infer.significance.compare`)."""
    tft = losses["tft"].numpy()
    return {name: compare(tft, v.numpy()) for name, v in losses.items() if name != "tft"}


def evaluate_model(
    model_dir: Path,
    bars: Path,
    *,
    batch_size: int,
    device: str,
    progress: Progress | None = None,
    instruments: Path | None = None,
    out: Path | None = None,
    strict: bool = False,
    allow_outliers: bool = False,
    scope: WindowScope | None = None,
    read: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Score a run directory's model on bars, against the baselines.

    The result goes to ``out`` when given (nothing is written into the run directory). Without
    it, the result is recorded in the run directory, beside earlier ones, never over them
    (``evaluation.json``, then ``evaluation-2.json``...; the report shows the latest), under
    the directory's lock: a directory another process is writing (a training run) is refused
    before scoring, with a pointer to ``--out``. A read-only directory records nothing (one
    warning).

    Args:
        model_dir: The run directory.
        bars: Bars file, directory or glob.
        batch_size: Windows per forward pass.
        device: Torch device string.
        progress: A rich progress display to advance, or None.
        instruments: the user's instrument table, for symbols the run did not store.
        out: Write the result here (JSON) instead of into the run directory.
        strict: Refuse symbols the model was not trained on (else one warning names them).
        allow_outliers: keep implausible bars (always, if the run was trained keeping them).
        scope: ``--windows``: ``new``, ``test`` or ``all`` (:mod:`foxhunt.data.windows.scope`); None:
            ``test`` for the training bars themselves, else ``new``.
        read: read flags (``DataConfig`` fields: ``tz``, ``symbol`` ...) over the run's own
            (:func:`~foxhunt.artifacts.rundir.with_read_flags`).

    Returns:
        The evaluation (JSON-able): model, bars, split, window count, scores per model,
        ``comparisons`` per baseline (:func:`foxhunt.infer.significance.compare`),
        ``tft_beats`` per baseline (a significant win), and ``untrained_symbols`` when there
        are any.

    Raises:
        ModelDirError: Missing/corrupt/mismatched run directory, or one being written by
            another process (without ``out``).
        DataError: Bad bars or too few for one window.
        InputError: Bad arguments; untrained symbols with ``strict``.
    """
    if batch_size < 1:
        raise InputError(f"--batch-size must be >= 1, got {batch_size}")
    if out is not None and not Path(out).parent.is_dir():
        raise InputError(f"--out {out}: directory {Path(out).parent} does not exist")
    if out is None:
        check_unlocked(Path(model_dir), "evaluate it alongside with --out FILE, or wait")
    dev = parse_device(device)
    loaded = with_user_instruments(load_inference_model(model_dir, dev), instruments)
    loaded = with_read_flags(loaded, read)
    m = loaded.config.model
    empirical, classical = load_baselines(loaded.run.baselines, m.quantiles, m.horizon)
    windows, split, closes = evaluation_data(
        bars,
        loaded.config,
        loaded.spec,
        loaded.scaler,
        loaded.fingerprint,
        loaded.instruments,
        allow_outliers=allow_outliers,
        scope=scope,
        ends=read_data_end(loaded.run),
        spill=scratch_for(Path(model_dir)),
        check=lambda read: check_bar_interval(loaded.run, read, bars),
    )
    if len(windows) == 0:
        raise DataError(
            f"{bars}: no window with {m.encoder_length} encoder and {m.horizon} future bars"
        )
    symbols = windows.origins()["symbol"].unique().to_list()
    untrained = check_trained_symbols(loaded, symbols, strict=strict)
    baselines = baseline_forecasts(empirical, classical, closes, windows)
    scores, losses, coverage = score(
        loaded, windows, baselines, batch_size=batch_size, device=dev, progress=progress
    )
    comparisons = verdicts(losses)
    by_symbol = per_symbol(losses, coverage, windows.origins()["symbol"].to_list())
    result: dict[str, Any] = {
        "model": str(loaded.run.root),
        "weights": loaded.weights.name,
        "bars": str(bars),
        "split": split,
        "n_windows": len(windows),
        "quantiles": list(m.quantiles),
        "horizon": m.horizon,
        "units": "log return",
        "scores": scores,
        "comparisons": comparisons,
        "tft_beats": {k: v["pooled"]["verdict"] == "win" for k, v in comparisons.items()},
        "per_symbol": by_symbol,
        "symbols_beaten": symbols_beaten(by_symbol),
    }
    training = _training(loaded.run, loaded.weights)
    if training is not None:  # the start or a trained epoch, and how training moved val loss
        result["training"] = training
    if untrained:
        result["untrained_symbols"] = untrained
    result = json_safe(result)  # undefined numbers (a loss of 0 to compare with) are null
    if out is not None:
        atomic_write_json(Path(out), result)
        log.info("evaluation written to %s", out)
    else:
        _record(loaded.run, result)
    return result


def _training(run: RunDir, weights: Path) -> dict[str, Any] | None:
    """:func:`foxhunt.artifacts.served.served_weights` for a run's own checkpoint; None for an
    ensemble or quantised directory, or a run whose sidecars do not say."""
    if weights.parent != run.checkpoints:
        return None
    try:
        meta = ckpt.load_sidecar(weights)
    except ModelDirError:
        meta = {}
    if "quantization" in meta:  # the source run's, as quantize recorded it (or none)
        served = meta.get("served")
        return dict(served) if isinstance(served, dict) else None
    try:
        return served_weights(run.checkpoints, weights)
    except ModelDirError:
        return None


def _record(run: RunDir, result: dict[str, Any]) -> None:
    """Add the evaluation to the run directory, beside earlier ones, and refresh the report.

    Best effort for a directory we cannot write (one warning); a directory another process
    took since :func:`evaluate_model` checked is refused (``ModelDirError``).
    """
    try:
        with run_lock(run.root, f"foxhunt evaluate --model {run.root}"):
            path = run.next_evaluation()
            atomic_write_json(path, result)
            write_report(run)
        log.info("evaluation recorded in %s", path)
    except OSError as e:
        log.warning("could not record the evaluation in %s: %s", run.root, e)
