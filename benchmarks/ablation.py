"""The ablation table in one command: on the same test windows, the TFT against everything
simpler that could stand in for it, each with a paired Diebold–Mariano test against the TFT.

    PYTHONPATH=src python benchmarks/ablation.py --model RUN --bars TEST_BARS \
        [--train-bars TRAIN_BARS] [--max-windows 100000] [--out results.json]

Rows (every forecast is nine quantiles of the cumulative log return at horizons 1..H):

* **TFT (served)**: the run's served weights with its calibration, as ``foxhunt evaluate``.
* **scale-only start**: the run's starting weights (``checkpoints/tft_start``: EWMA scale x
  season x standardised quantiles, the network's output layer at its start); with the run's
  calibration when the run serves them, uncalibrated otherwise (no calibration was fitted for
  them).
* **EWMA**, **GARCH(1,1)**, **time-of-week x EWMA**, **empirical**, **zero**: the baselines the
  run fitted on its training split (``baselines.json``; docs/evaluation.md).
* **HAR-QR**: a linear quantile regression per horizon and level (statsmodels ``QuantReg``) on
  HAR-style realised-volatility inputs, pooled over symbols: sqrt of the mean squared 1-bar
  return over the last k bars, the lags k chosen from the bar interval (:func:`rv_lags`):
  1 bar, 5, 15 minutes, 1, 4 hours and a day for intraday bars (1, 5, 15, 60, 240, 1440 on
  1-minute bars), Corsi's day, week, month and quarter (1, 5, 22, 66) for daily bars. Near
  the start of a file a lag averages the bars there are (the history available).
* **LightGBM**: gradient-boosted quantile regression (``objective="quantile"``) per horizon and
  level on the same inputs.

HAR-QR and LightGBM are fitted on ``--train-bars`` (default: the bars the run was trained on,
from its ``run.json``), at most ``--fit-rows`` windows evenly spaced over symbols and time;
their inputs at a window's origin use bars up to the origin only. The test windows are every
window of ``--bars`` with a realised future (the test split when they are the run's own bars),
at most ``--max-windows`` of them, evenly spaced: the windows ``foxhunt evaluate --model RUN
--bars TEST_BARS`` scores (``--windows``: ``new`` for later bars, ``test`` for the run's own),
read with the run's read flags (``--tz``, ``--bar-minutes`` ... as stored in ``config.json``).
Both bar sets are read as the run reads them. Data: pass the paths; the docs' numbers read
``../shared/data/real/`` (histdata 2018 1-minute bars cut into Jan–Sep and Oct–Dec; the
Quantiacs daily futures cut at 2010) and say so.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import torch

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.calibration import QuantileMap, quantile_map
from foxhunt.artifacts.data_end import read_data_end
from foxhunt.artifacts.served import served_weights
from foxhunt.baselines.empirical import load_baselines
from foxhunt.baselines.forecasts import LABELS
from foxhunt.data.features.inputs import read_run_bars
from foxhunt.data.pipeline import evaluation_data
from foxhunt.data.scale.target import TargetScale
from foxhunt.data.windows.scope import SCOPES
from foxhunt.infer.evaluate import baseline_forecasts, per_symbol, score
from foxhunt.infer.significance import compare
from foxhunt.quantize.model import load_inference_model
from foxhunt.runtime import read_json

log = logging.getLogger("ablation")

QR_MAX_ITER = 1000
"""IRLS iterations per HAR-QR fit (statsmodels' default): on 1-minute returns (about 10 % of
them exactly 0) IRLS can cycle without meeting its tolerance; the cap bounds the time of the
90 fits (the log says how many stopped there)."""

INTRADAY_SPANS = tuple(dt.timedelta(minutes=m) for m in (5, 15, 60, 240, 1440))
"""Spans of the intraday realised volatilities besides the last bar's (5 min ... one day)."""

DAILY_LAGS = (1, 5, 22, 66)
"""Corsi's HAR lags in daily bars (day, week, month), and a quarter."""


def rv_lags(interval: dt.timedelta) -> tuple[int, ...]:
    """Bars over which each realised-volatility input averages squared 1-bar returns, for
    bars ``interval`` apart: the last bar and :data:`INTRADAY_SPANS` in bars for intraday
    bars (spans shorter than a bar dropped), :data:`DAILY_LAGS` for daily or coarser bars."""
    if interval >= dt.timedelta(hours=20):  # daily bars (a session, not 24 h, apart at times)
        return DAILY_LAGS
    lags = {1} | {round(s / interval) for s in INTRADAY_SPANS if s >= interval}
    return tuple(sorted(lags))


def bar_interval(bars: pl.DataFrame) -> dt.timedelta:
    """The median gap between consecutive bars of a symbol (overnight and weekend gaps are
    few enough not to move it)."""
    gaps = bars.sort("symbol", "ts").select(pl.col("ts").diff().over("symbol").drop_nulls())
    if gaps.height == 0:
        raise ValueError("one bar per symbol: no bar interval")
    return gaps.to_series().median()  # type: ignore[return-value]


def rv_columns(lags: tuple[int, ...]) -> list[str]:
    """The realised-volatility input columns :func:`har_inputs` adds."""
    return [f"rv{k}" for k in lags]


class Subset:
    """Windows ``rows`` of a WindowDataset, with its ``origins()`` and ``horizon``."""

    def __init__(self, windows: Any, rows: np.ndarray) -> None:
        self.windows, self.rows, self.horizon = windows, rows, windows.horizon

    def __len__(self) -> int:
        return len(self.rows)

    def batch(self, indices: Any) -> Any:
        return self.windows.batch(self.rows[np.asarray(indices)])

    def origins(self) -> pl.DataFrame:
        return self.windows.origins()[self.rows]


class Fixed:
    """Quantile forecasts computed up front, served as a baseline is (``predict(a, b)``)."""

    def __init__(self, q: torch.Tensor) -> None:
        self.q = q

    def predict(self, start: int, stop: int) -> torch.Tensor:
        return self.q[start:stop]


def har_inputs(
    bars: pl.DataFrame, horizon: int, targets: bool, lags: tuple[int, ...]
) -> pl.DataFrame:
    """``symbol``, ``ts``, ``rv{k}`` for k in ``lags`` (causal realised volatilities) and, with
    ``targets``, ``y{h}`` = log(close[t+h] / close[t]) for h = 1..H (null at each symbol's
    end)."""
    lc = pl.col("close").log()
    df = bars.sort("symbol", "ts").with_columns(
        ((lc - lc.shift(1)).over("symbol").fill_null(0.0) ** 2).alias("_r2")
    )
    rv = [
        # clipped: a running mean of squares can come out a hair below 0 (float cancellation)
        pl.col("_r2").rolling_mean(k, min_samples=1).over("symbol").clip(0.0).sqrt().alias(f"rv{k}")
        for k in lags
    ]
    ys = [(lc.shift(-h).over("symbol") - lc).alias(f"y{h}") for h in range(1, horizon + 1)]
    return df.select("symbol", "ts", *rv, *(ys if targets else []))


def fit_quantile_models(
    train: pl.DataFrame,
    test_x: np.ndarray,
    levels: tuple[float, ...],
    horizon: int,
    lags: tuple[int, ...],
    threads: int = 1,
) -> dict[str, torch.Tensor]:
    """HAR-QR and LightGBM forecasts (N, H, Q) for ``test_x`` (columns :func:`rv_columns`),
    fitted on ``train`` (:func:`har_inputs` with targets)."""
    import lightgbm as lgb
    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import IterationLimitWarning

    x = train.select(rv_columns(lags)).to_numpy()
    unconverged = 0
    x1, t1 = sm.add_constant(x, has_constant="add"), sm.add_constant(test_x, has_constant="add")
    out = {name: np.empty((len(test_x), horizon, len(levels))) for name in ("har_qr", "lightgbm")}
    for h in range(1, horizon + 1):
        y = train[f"y{h}"].to_numpy()
        for j, q in enumerate(levels):
            # in units of y's std: IRLS on raw 1e-4-sized numbers can end in NaN
            sd = float(np.std(y)) or 1.0
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", IterationLimitWarning)
                res = sm.QuantReg(y / sd, x1 / np.r_[1.0, [sd] * x.shape[1]]).fit(
                    q=q, max_iter=QR_MAX_ITER
                )
            unconverged += any(issubclass(w.category, IterationLimitWarning) for w in caught)
            params = res.params / np.r_[1.0, [sd] * x.shape[1]] * sd
            if not np.all(np.isfinite(params)):
                raise FloatingPointError(f"HAR-QR h={h} q={q}: non-finite coefficients")
            out["har_qr"][:, h - 1, j] = t1 @ params
            params = {
                "objective": "quantile", "alpha": q, "learning_rate": 0.05, "num_leaves": 31,
                "min_data_in_leaf": 200, "num_threads": threads, "verbose": -1, "seed": 0,
            }  # fmt: skip
            gbm = lgb.train(params, lgb.Dataset(x, y), num_boost_round=200)
            out["lightgbm"][:, h - 1, j] = gbm.predict(test_x)
    if unconverged:
        log.warning(
            "HAR-QR: %d of %d fits stopped at %d IRLS iterations (their coefficients are "
            "the last iterate's)", unconverged, horizon * len(levels), QR_MAX_ITER,
        )  # fmt: skip
    # crossing quantiles are sorted, as the TFT's are
    return {k: torch.from_numpy(np.sort(v, axis=2)).float() for k, v in out.items()}


def start_forecasts(loaded: Any, windows: Subset, batch_size: int, served: dict) -> torch.Tensor:
    """The scale-only start's quantiles (N, H, Q): ``tft_start`` weights, calibrated only when
    they are what the run serves."""
    from foxhunt.infer.quantiles import tft_quantiles

    weights, _ = ckpt.load_weights(loaded.run.checkpoints / ckpt.START_WEIGHTS)
    loaded.model.load_state_dict(weights)
    loaded.model.eval()
    cfg = loaded.config
    qmap = quantile_map(loaded)
    if served["served"] != "start":
        qmap = QuantileMap(TargetScale.of(cfg.data, loaded.spec, loaded.scaler), None)
    parts = []
    with torch.inference_mode():
        for a in range(0, len(windows), batch_size):
            batch = windows.batch(list(range(a, min(a + batch_size, len(windows)))))
            parts.append(
                tft_quantiles(
                    loaded.model, batch, qmap, device=torch.device("cpu"),
                    precision=cfg.train.precision,
                ).float()
            )  # fmt: skip
    return torch.cat(parts)


def spread(n: int, most: int) -> np.ndarray:
    """At most ``most`` of ``range(n)``, evenly spaced."""
    return np.unique(np.linspace(0, n - 1, min(n, most)).round().astype(np.int64))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, required=True, help="trained run directory")
    p.add_argument("--bars", type=Path, required=True, help="test bars (a later period)")
    p.add_argument("--train-bars", type=Path, help="bars HAR-QR/LightGBM fit on (run's own)")
    p.add_argument("--windows", choices=SCOPES, help="as evaluate's (default: new/test)")
    p.add_argument("--max-windows", type=int, default=100_000, help="test windows scored")
    p.add_argument("--fit-rows", type=int, default=60_000, help="HAR-QR/LightGBM fit rows")
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--num-threads", type=int, default=1, help="torch and LightGBM threads")
    p.add_argument("--out", type=Path, help="write the table and numbers as JSON here")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.set_num_threads(a.num_threads)
    t0, c0 = time.perf_counter(), time.process_time()
    seconds: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def lap(name: str) -> None:  # wall and CPU seconds (the machine may be shared)
        seconds[name] = time.perf_counter() - t0 - sum(seconds.values())
        cpu[name] = time.process_time() - c0 - sum(cpu.values())
        log.info("%s: %.0f s (CPU %.0f s)", name, seconds[name], cpu[name])

    train_bars = a.train_bars or Path(read_json(a.model / "run.json", "run.json")["bars"])
    log.info("model %s; test bars %s; HAR-QR/LightGBM fitted on %s", a.model, a.bars, train_bars)
    loaded = load_inference_model(a.model, torch.device("cpu"))
    cfg, m = loaded.config, loaded.config.model
    served = served_weights(loaded.run.checkpoints, loaded.weights)
    empirical, classical = load_baselines(loaded.run.baselines, m.quantiles, m.horizon)
    all_windows, split, closes = evaluation_data(
        a.bars, cfg, loaded.spec, loaded.scaler, loaded.fingerprint, loaded.instruments,
        scope=a.windows, ends=read_data_end(loaded.run),
    )  # fmt: skip
    windows = Subset(all_windows, spread(len(all_windows), a.max_windows))
    origins = windows.origins()
    log.info("%d of %d test windows (%s)", len(windows), len(all_windows), split)
    lap("test bars, features and windows")

    fit_bars, _ = read_run_bars(
        train_bars, cfg.data, min_bars=m.horizon + 1, reason="horizon + 1",
        allow_outliers=cfg.data.allow_outliers,
    )  # fmt: skip
    interval = bar_interval(fit_bars)
    lags = rv_lags(interval)
    log.info("bars %s apart: realised volatilities over %s bars", interval, lags)
    fit = har_inputs(fit_bars.select("symbol", "ts", "close"), m.horizon, True, lags)
    del fit_bars
    fit = fit.drop_nulls()
    fit = fit[spread(fit.height, a.fit_rows)]
    test = origins.join(har_inputs(closes, m.horizon, False, lags), on=["symbol", "ts"],
                        how="left", maintain_order="left")  # fmt: skip
    test_x = test.select(rv_columns(lags)).to_numpy()
    lap("training bars and HAR inputs")
    fitted = fit_quantile_models(fit, test_x, m.quantiles, m.horizon, lags, a.num_threads)
    extra = {k: Fixed(v) for k, v in fitted.items()}
    log.info("HAR-QR and LightGBM fitted on %d windows", fit.height)
    lap("HAR-QR and LightGBM fits")

    baselines = baseline_forecasts(empirical, classical, closes, windows)  # type: ignore[arg-type]
    start = start_forecasts(load_inference_model(a.model, torch.device("cpu")), windows,
                            a.batch_size, served)  # fmt: skip
    rows = {"start": Fixed(start), **baselines, **extra}
    scores, losses, coverage = score(
        loaded,
        windows,
        rows,
        batch_size=a.batch_size,
        device=torch.device("cpu"),  # type: ignore[arg-type]
    )
    by_symbol = per_symbol(losses, coverage, origins["symbol"].to_list())
    lap("forecasts and scores")
    tft = losses["tft"].numpy()
    table = []
    labels = {"tft": "TFT (served)", "start": "scale-only start", "har_qr": "HAR-QR (linear)",
              "lightgbm": "LightGBM (quantile)", **LABELS}  # fmt: skip
    for name, s in scores.items():
        row = {"model": name, "label": labels.get(name, name), "mean_pinball": s["mean_pinball"],
               "coverage_10_90": s["coverage"].get("10-90")}  # fmt: skip
        if name != "tft":
            c = compare(tft, losses[name].numpy())["pooled"]
            verdicts = [e["comparisons"][name]["verdict"] for e in by_symbol.values()]
            row |= {"tft_vs_it": c["difference"] / c["baseline"], "p_value": c["p_value"],
                    "verdict": c["verdict"], "symbols_won": verdicts.count("win"),
                    "symbols_lost": verdicts.count("lose")}  # fmt: skip
        table.append(row)
    result = {"model": str(a.model), "bars": str(a.bars), "train_bars": str(train_bars),
              "split": split, "n_windows": len(windows), "of_windows": len(all_windows),
              "n_symbols": len(by_symbol), "fit_rows": fit.height,
              "bar_interval": str(interval), "rv_lags": list(lags), "served": served,
              "rows": table, "seconds": time.perf_counter() - t0,
              "seconds_by_stage": seconds, "cpu_seconds": time.process_time() - c0,
              "cpu_seconds_by_stage": cpu}  # fmt: skip
    print(markdown(result))
    if a.out:
        tmp = a.out.with_name(a.out.name + ".tmp")
        tmp.write_text(json.dumps(result, indent=2))
        tmp.replace(a.out)
    return result


def markdown(result: dict[str, Any]) -> str:
    """The table as docs/evaluation.md shows it."""
    n = result.get("n_symbols", "?")
    lines = [
        "| model | mean pinball (bp) | 10–90 coverage | TFT vs it | DM p | verdict (TFT) "
        f"| symbols TFT wins / loses (of {n}) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in sorted(result["rows"], key=lambda r: r["mean_pinball"]):
        cov = r["coverage_10_90"]
        cmp_ = (f"{r['tft_vs_it']:+.2%} | {r['p_value']:.3g} | {r['verdict']} | "
                f"{r['symbols_won']} / {r['symbols_lost']}"
                if "p_value" in r else "— | — | — | —")  # fmt: skip
        lines.append(
            f"| {r['label']} | {r['mean_pinball'] * 1e4:.4f} | "
            f"{'—' if cov is None else f'{cov:.1%}'} | {cmp_} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main(sys.argv[1:])
