"""The classical volatility baselines: fit per symbol on the training split, then forecast.

Three models (formulas in :mod:`foxhunt.baselines.vol_paths` and docs/evaluation.md), each giving
quantiles ``sqrt(V[t, h]) * z[h, q]`` of the cumulative log return for h = 1..H:

* ``ewma``: RiskMetrics EWMA; the decay is chosen from :data:`DECAYS` by mean pinball loss on the
  validation split.
* ``garch``: GARCH(1,1), zero mean, fitted by maximum likelihood with Student-t innovations
  through ``arch`` on the symbol's latest :data:`GARCH_FIT_RETURNS` training returns, then run
  forward with those parameters fixed.
* ``tow_ewma`` (intraday bars only): a time-of-week volatility profile (slots of
  ``max(interval, 30 min)``) fitted on the training split, times an EWMA of the deseasonalised
  returns (decay chosen on validation as for ``ewma``).

Quantiles are filtered-historical for all three: ``z`` is the empirical quantile of
``y / sqrt(V)`` over the training origins, per symbol and horizon (not a normal or Student-t).
Every variance at an origin uses returns up to that origin only; every fitted number (parameters,
profile, starting variance, ``z``) comes from the training split, except the decay choice, which
uses the validation split's outcomes.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import numpy as np
import polars as pl

from foxhunt.baselines.vol_paths import (
    ewma_path,
    fit_profile,
    forward_returns,
    garch_path,
    mean_quantile_loss,
    seasonal_path,
    standardised_quantiles,
    time_of_week_slots,
)
from foxhunt.data.market.calendar import infer_interval, project_bar_times
from foxhunt.data.market.calendars import DEFAULT_CALENDAR
from foxhunt.data.scale.volatility import log_returns

log = logging.getLogger(__name__)

DECAYS = (0.8, 0.9, 0.94, 0.97, 0.985, 0.993, 0.997, 0.9985)
"""EWMA decays tried on the validation split (half-lives of about 3 to 460 bars)."""

GARCH_FIT_RETURNS = 50_000
FIT_ORIGINS = 50_000
"""Origins per symbol at most whose outcomes fit a baseline's ``z`` and score its decays (evenly
spaced, the latest included): a year of 1-minute bars has 370 k per symbol, and quantiles of
50 k standardised returns are as good as of all of them, at a fraction of the time."""
"""Most recent training returns the GARCH(1,1) likelihood is maximised on (fitting time)."""

MIN_SLOT_MINUTES = 30
"""Narrowest time-of-week slot; the slot is the bar interval when that is longer."""

MIN_SLOT_COUNT = 5
"""Training returns a slot needs for its own profile value (else 1, an average slot)."""

MODELS = ("ewma", "garch", "tow_ewma")
"""The classical baselines, in display order."""


def symbol_series(closes: pl.DataFrame, symbol: str) -> tuple[np.ndarray, np.ndarray]:
    """One symbol's bar times (epoch µs, UTC) and closes, in time order."""
    g = closes.filter(pl.col("symbol") == symbol).sort("ts")
    return g["ts"].dt.epoch("us").to_numpy(), g["close"].to_numpy().astype(np.float64)


def scheduled_slots(
    ts_us: np.ndarray, horizon: int, interval_s: float, calendar: str, slot_minutes: int
) -> np.ndarray:
    """(n, H) time-of-week slots of the H bars the calendar schedules after each bar."""
    times = pl.Series("ts", ts_us).cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
    ahead = project_bar_times(times, horizon, timedelta(seconds=interval_s), calendar=calendar)
    us = np.stack([ahead[c].dt.epoch("us").to_numpy() for c in ahead.columns], axis=1)
    return time_of_week_slots(us, slot_minutes)


def variance_path(
    model: str, params: Mapping[str, Any], ts_us: np.ndarray, close: np.ndarray, horizon: int
) -> np.ndarray:
    """(n, H) cumulative-return variance of ``model`` with its fitted ``params`` at every bar."""
    r = log_returns(close)
    if model == "ewma":
        return ewma_path(r, params["decay"], params["initial"], horizon)
    if model == "garch":
        p = params
        return garch_path(r, p["omega"], p["alpha"], p["beta"], p["initial"], horizon)
    if model == "tow_ewma":
        profile = np.asarray(params["profile"], dtype=np.float64)
        width = int(params["slot_minutes"])
        now = time_of_week_slots(ts_us, width)
        ahead = scheduled_slots(ts_us, horizon, params["interval_s"], params["calendar"], width)
        return seasonal_path(r, now, ahead, profile, params["decay"], params["initial"])
    raise ValueError(f"unknown classical baseline {model!r}")


def fit_classical(
    closes: pl.DataFrame,
    train_end: Mapping[str, Any],
    val_origins: pl.DataFrame,
    quantiles: tuple[float, ...],
    horizon: int,
    calendars: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Fit the three baselines for every symbol (the ``classical`` entry of ``baselines.json``).

    Args:
        closes: ``symbol``, ``ts``, ``close`` of the training bars (all splits).
        train_end: symbol -> time of its last training origin; bars up to it are training data.
        val_origins: ``symbol``, ``ts`` of the validation windows (the decay choice).
        quantiles: the Q levels.
        horizon: H.
        calendars: symbol -> calendar of its bar schedule (missing: ``globex``).

    Returns:
        ``{model: {"per_symbol": {symbol: params}, "fallback": symbol}}`` where params hold
        the model's fitted numbers and ``z`` (H x Q); ``tow_ewma`` only for intraday symbols.
        ``fallback`` (the symbol with the most training bars) serves symbols not seen here.
    """
    levels = np.asarray(quantiles, dtype=np.float64)
    out: dict[str, Any] = {m: {"per_symbol": {}, "fallback": None} for m in MODELS}
    most = {m: -1 for m in MODELS}
    for sym, end in train_end.items():
        ts_us, close = symbol_series(closes, sym)
        end_us = int(pl.Series([end]).dt.epoch("us")[0])
        n_train = int(np.searchsorted(ts_us, end_us, side="right"))
        val_ts = val_origins.filter(pl.col("symbol") == sym)["ts"].dt.epoch("us").to_numpy()
        val = np.searchsorted(ts_us, val_ts)
        cal = (calendars or {}).get(sym, DEFAULT_CALENDAR)
        fitted = _fit_symbol(ts_us, close, n_train, val, levels, horizon, cal)
        for model, params in fitted.items():
            out[model]["per_symbol"][sym] = params
            if n_train > most[model]:
                most[model], out[model]["fallback"] = n_train, sym
    return {m: v for m, v in out.items() if v["per_symbol"]}


def _fit_symbol(
    ts_us: np.ndarray,
    close: np.ndarray,
    n_train: int,
    val: np.ndarray,
    levels: np.ndarray,
    horizon: int,
    calendar: str,
) -> dict[str, dict[str, Any]]:
    """Every baseline's params for one symbol; bars ``[0, n_train)`` are its training data."""
    r = log_returns(close)
    y = forward_returns(close, horizon)
    train = spread(np.arange(1, n_train), FIT_ORIGINS)  # origins with a training target
    val = spread(val, FIT_ORIGINS)
    r_train = r[1:n_train]
    initial = max(float(np.mean(r_train**2)) if len(r_train) else 0.0, 1e-12)
    fitted: dict[str, dict[str, Any]] = {}
    fitted["ewma"] = _choose_decay(
        lambda d: ewma_path(r, d, initial, horizon), y, train, val, levels
    ) | {"initial": initial}
    garch = _fit_garch(r_train)
    if garch is not None:
        var = garch_path(r, garch["omega"], garch["alpha"], garch["beta"], initial, horizon)
        z = standardised_quantiles(y[train], var[train], levels)
        fitted["garch"] = garch | {"initial": initial, "z": z.tolist()}
    interval = infer_interval(pl.Series(ts_us).cast(pl.Datetime("us")))
    if interval < timedelta(days=1):
        width = max(int(interval.total_seconds() // 60), MIN_SLOT_MINUTES)
        n_slots = -(-7 * 24 * 60 // width)
        now = time_of_week_slots(ts_us, width)
        profile = fit_profile(r_train, now[1:n_train], n_slots, MIN_SLOT_COUNT)
        ahead = scheduled_slots(ts_us, horizon, interval.total_seconds(), calendar, width)
        deseason = r_train**2 / profile[now[1:n_train]]
        init_s = max(float(np.mean(deseason)) if len(deseason) else 0.0, 1e-12)
        fitted["tow_ewma"] = _choose_decay(
            lambda d: seasonal_path(r, now, ahead, profile, d, init_s), y, train, val, levels
        ) | {
            "initial": init_s,
            "interval_s": interval.total_seconds(),
            "calendar": calendar,
            "slot_minutes": width,
            "profile": profile.tolist(),
        }
    return fitted


def spread(rows: np.ndarray, most: int) -> np.ndarray:
    """At most ``most`` of ``rows``, evenly spaced, the last included (all when fewer)."""
    step = -(-len(rows) // most) if len(rows) > most else 1
    return rows[::-1][::step][::-1].copy()


def _choose_decay(
    path: Any, y: np.ndarray, train: np.ndarray, val: np.ndarray, levels: np.ndarray
) -> dict[str, Any]:
    """The decay of :data:`DECAYS` with the lowest validation pinball loss (training loss when
    the symbol has no validation window), its ``z`` and every decay's loss."""
    losses, zs = {}, {}
    for d in DECAYS:
        var = path(d)
        zs[d] = standardised_quantiles(y[train], var[train], levels)
        rows = val if len(val) else train
        pred = np.sqrt(var[rows])[..., None] * zs[d][None]
        losses[d] = mean_quantile_loss(y[rows], pred, levels)
    best = min(DECAYS, key=lambda d: losses[d])
    return {
        "decay": best,
        "z": zs[best].tolist(),
        "decay_loss": {f"{d:g}": v for d, v in losses.items()},
        "decay_chosen_on": "validation" if len(val) else "training",
    }


def _fit_garch(r_train: np.ndarray) -> dict[str, float] | None:
    """GARCH(1,1) with Student-t innovations on the latest training returns, in return units
    (fitted on returns scaled to unit variance, which the optimiser needs); None when there
    are too few returns or the fit fails (one warning)."""
    from arch import arch_model

    x = r_train[-GARCH_FIT_RETURNS:]
    sd = float(np.std(x)) if len(x) else 0.0
    if len(x) < 100 or sd <= 0:
        log.warning("GARCH(1,1) baseline skipped: %d training returns", len(x))
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = arch_model(x / sd, mean="Zero", vol="GARCH", p=1, q=1, dist="t").fit(
                disp="off", show_warning=False
            )
    except (ValueError, np.linalg.LinAlgError) as e:
        log.warning("GARCH(1,1) baseline skipped: fit failed (%s)", e)
        return None
    p = res.params
    omega, alpha, beta = float(p["omega"]), float(p["alpha[1]"]), float(p["beta[1]"])
    if not all(np.isfinite([omega, alpha, beta])):
        log.warning("GARCH(1,1) baseline skipped: non-finite parameters")
        return None
    return {"omega": omega * sd**2, "alpha": alpha, "beta": beta, "nu": float(p["nu"])}
