"""``foxhunt evaluate``: how good are the quantiles, against two baselines?

Scores, all in unscaled log-return units (tables show basis points, 1 bp = 1e-4):

* **pinball loss** per quantile and horizon (mean over windows), and its mean over both;
* **q-risk** as in the TFT paper (Lim et al. 2021, §7): ``R_q = 2 Σ QL_q(y, ŷ_q) / Σ |y|``
  summed over windows and horizons, for P50 and P90 — the pinball loss normalised by the
  size of the returns (zero-return persistence has P50 risk exactly 1);
* **interval coverage**: the share of outcomes inside [q0.1, q0.9] (nominal 80 %) and
  [q0.02, q0.98] (nominal 96 %), when the model predicts those levels.

The model is compared with zero-return persistence and the empirical quantiles of recent
training returns (:mod:`foxhunt.infer.baselines`). When the bars are the very file the model
was trained on (same data fingerprint), only the test split is scored: the other windows were
used for fitting or early stopping.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from rich.progress import Progress
from torch import Tensor

from foxhunt.artifacts.lock import check_unlocked, run_lock
from foxhunt.artifacts.rundir import LoadedModel, RunDir, with_user_instruments
from foxhunt.data.pipeline import evaluation_windows
from foxhunt.data.scaling import unscale_targets
from foxhunt.data.windows import WindowDataset
from foxhunt.errors import DataError, InputError
from foxhunt.infer.baselines import EmpiricalQuantiles, load_empirical, zero_forecast
from foxhunt.infer.quantiles import quantile_map, tft_quantiles
from foxhunt.infer.untrained import check_trained_symbols
from foxhunt.model.quantile import pinball_per_quantile_horizon
from foxhunt.quantize.model import load_inference_model
from foxhunt.runtime import atomic_write_json, parse_device
from foxhunt.train.report import write_report

log = logging.getLogger(__name__)

INTERVALS: dict[str, tuple[float, float]] = {"10-90": (0.1, 0.9), "2-98": (0.02, 0.98)}
"""Central intervals whose coverage is reported: name -> (lower, upper) quantile level."""

RISK_LEVELS: dict[str, float] = {"P50": 0.5, "P90": 0.9}
"""Quantile levels whose normalised q-risk is reported."""


def _level_index(quantiles: Sequence[float], level: float) -> int | None:
    return next((i for i, q in enumerate(quantiles) if abs(q - level) < 1e-9), None)


class QuantileScores:
    """Streaming scores of quantile forecasts: feed batches, read :meth:`result`.

    Args:
        quantiles: The Q levels, increasing.
        horizon: H.
    """

    def __init__(self, quantiles: Sequence[float], horizon: int) -> None:
        self.quantiles = tuple(float(q) for q in quantiles)
        self.levels = torch.tensor(self.quantiles, dtype=torch.float32)
        self.pinball_sum = torch.zeros(horizon, len(self.quantiles), dtype=torch.float64)
        self.abs_sum = torch.zeros(horizon, dtype=torch.float64)
        self.n = 0
        self.intervals = {
            name: (lo, hi)
            for name, (a, b) in INTERVALS.items()
            if (lo := _level_index(self.quantiles, a)) is not None
            and (hi := _level_index(self.quantiles, b)) is not None
        }
        self.covered = {name: torch.zeros(horizon, dtype=torch.float64) for name in self.intervals}

    def update(self, pred: Tensor, target: Tensor) -> None:
        """Add a batch.

        Args:
            pred: (B, H, Q) quantiles in return units, sorted along Q.
            target: (B, H) realised log returns.
        """
        b = target.shape[0]
        if b == 0:
            return
        pred, target = pred.double().cpu(), target.double().cpu()
        self.pinball_sum += pinball_per_quantile_horizon(pred, target, self.levels).double() * b
        self.abs_sum += target.abs().sum(dim=0)
        for name, (lo, hi) in self.intervals.items():
            inside = (target >= pred[..., lo]) & (target <= pred[..., hi])  # (B, H)
            self.covered[name] += inside.double().sum(dim=0)
        self.n += b

    def result(self) -> dict[str, Any]:
        """Scores so far (JSON-able).

        Returns:
            ``n_windows``, ``mean_pinball``, ``pinball`` [H][Q], ``pinball_per_horizon`` [H],
            ``pinball_per_quantile`` {level: value}, ``q_risk`` {P50, P90},
            ``coverage`` {interval: share}, ``coverage_per_horizon`` {interval: [H]}.
        """
        n = max(self.n, 1)
        pinball = self.pinball_sum / n  # (H, Q)
        total_abs = float(self.abs_sum.sum())
        q_risk = {}
        for name, level in RISK_LEVELS.items():
            i = _level_index(self.quantiles, level)
            if i is not None:
                q_risk[name] = (
                    2 * float(self.pinball_sum[:, i].sum()) / total_abs
                    if total_abs > 0
                    else math.nan
                )
        return {
            "n_windows": self.n,
            "mean_pinball": float(pinball.mean()),
            "pinball": pinball.tolist(),
            "pinball_per_horizon": pinball.mean(dim=1).tolist(),
            "pinball_per_quantile": {
                f"{q:g}": float(v) for q, v in zip(self.quantiles, pinball.mean(dim=0), strict=True)
            },
            "q_risk": q_risk,
            "coverage": {
                name: float(c.sum()) / (n * c.shape[0]) for name, c in self.covered.items()
            },
            "coverage_per_horizon": {name: (c / n).tolist() for name, c in self.covered.items()},
        }


# --- the command -----------------------------------------------------------------------------


@torch.inference_mode()
def score(
    loaded: LoadedModel,
    windows: WindowDataset,
    baseline: EmpiricalQuantiles,
    *,
    batch_size: int,
    device: torch.device,
    progress: Progress | None = None,
) -> dict[str, dict[str, Any]]:
    """Score the model and both baselines on ``windows`` (streamed in batches).

    Returns:
        ``{"tft": scores, "empirical": scores, "zero": scores}`` (see :meth:`QuantileScores.result`).
    """
    m = loaded.config.model
    scores = {name: QuantileScores(m.quantiles, m.horizon) for name in ("tft", "empirical", "zero")}
    symbols = windows.origins()["symbol"].to_list()
    n = len(windows)
    task = progress.add_task("evaluate", total=n) if progress else None
    loaded.model.eval()
    qmap = quantile_map(loaded)
    for a in range(0, n, batch_size):
        b = min(a + batch_size, n)
        batch = windows.batch(list(range(a, b)))
        assert batch.target is not None
        y = unscale_targets(batch.target.double(), loaded.scaler)  # (B, H) log returns
        pred = tft_quantiles(
            loaded.model, batch, qmap, device=device, precision=loaded.config.train.precision
        )  # (B, H, Q) sorted log returns
        scores["tft"].update(pred, y)
        scores["empirical"].update(baseline.predict(symbols[a:b]), y)
        scores["zero"].update(zero_forecast(b - a, m.horizon, m.n_quantiles).double(), y)
        if progress is not None and task is not None:
            progress.update(task, advance=b - a)
    return {name: s.result() for name, s in scores.items()}


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

    Returns:
        The evaluation (JSON-able): model, bars, split, window count, scores per model,
        ``tft_beats`` per baseline, and ``untrained_symbols`` when there are any.

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
    m = loaded.config.model
    baseline = load_empirical(loaded.run.baselines, m.quantiles, m.horizon)
    windows, split = evaluation_windows(
        bars,
        loaded.config,
        loaded.spec,
        loaded.scaler,
        loaded.fingerprint,
        loaded.instruments,
        allow_outliers=allow_outliers,
    )
    if len(windows) == 0:
        raise DataError(
            f"{bars}: no window with {m.encoder_length} encoder and {m.horizon} future bars"
        )
    symbols = windows.origins()["symbol"].unique().to_list()
    untrained = check_trained_symbols(loaded, symbols, strict=strict)
    scores = score(loaded, windows, baseline, batch_size=batch_size, device=dev, progress=progress)
    tft = scores["tft"]["mean_pinball"]
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
        "tft_beats": {name: tft < scores[name]["mean_pinball"] for name in ("empirical", "zero")},
    }
    if untrained:
        result["untrained_symbols"] = untrained
    if out is not None:
        atomic_write_json(Path(out), result)
        log.info("evaluation written to %s", out)
    else:
        _record(loaded.run, result)
    return result


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
