"""The classical baselines' fitted record recomputed by hand from the formulas of
``vol_paths`` (each number, each key), and the GARCH fit against ``arch`` called directly."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import numpy as np
import pytest

from foxhunt.baselines import classical
from foxhunt.baselines.vol_paths import (
    ewma_path,
    fit_profile,
    forward_returns,
    garch_path,
    mean_quantile_loss,
    standardised_quantiles,
    time_of_week_slots,
)
from foxhunt.data.scale.volatility import log_returns

sys.path.insert(0, str(Path(__file__).parent))
from test_classical import LEVELS, H, _closes, _fit  # noqa: E402

N_TRAIN, VAL = 1000, range(1100, 1300)


@pytest.fixture
def hourly_fit():
    """Fitted in each test (1-2 s), not once per module: mutmut attributes a module fixture's
    calls to the first test only, and runs only that test against a mutant of them."""
    closes = _closes(1500, dt.timedelta(hours=1), seed=0)
    rec = _fit(closes, N_TRAIN, VAL)
    close = closes["close"].to_numpy()
    ts_us = closes["ts"].dt.epoch("us").to_numpy()
    return rec, close, ts_us


def _train_rows() -> np.ndarray:
    return np.arange(1, N_TRAIN)


def test_ewma_record_recomputed(hourly_fit) -> None:
    rec, close, _ = hourly_fit
    p = rec["ewma"]["per_symbol"]["ES"]
    r, y, levels = log_returns(close), forward_returns(close, H), np.asarray(LEVELS)
    initial = float(np.mean(r[1:N_TRAIN] ** 2))
    assert p["initial"] == initial
    train, val = _train_rows(), np.arange(VAL.start, VAL.stop)
    losses = {}
    for d in classical.DECAYS:
        var = ewma_path(r, d, initial, H)
        z = standardised_quantiles(y[train], var[train], levels)
        losses[d] = mean_quantile_loss(y[val], np.sqrt(var[val])[..., None] * z[None], levels)
        if d == p["decay"]:
            assert p["z"] == z.tolist()
    assert p["decay_loss"] == {f"{d:g}": v for d, v in losses.items()}
    assert p["decay"] == min(losses, key=losses.get) and p["decay_chosen_on"] == "validation"


def test_garch_record_recomputed(hourly_fit) -> None:
    rec, close, _ = hourly_fit
    p = rec["garch"]["per_symbol"]["ES"]
    r, y, levels = log_returns(close), forward_returns(close, H), np.asarray(LEVELS)
    fit = classical._fit_garch(r[1:N_TRAIN])
    assert {k: p[k] for k in ("omega", "alpha", "beta", "nu")} == fit
    assert p["initial"] == float(np.mean(r[1:N_TRAIN] ** 2))
    var = garch_path(r, fit["omega"], fit["alpha"], fit["beta"], p["initial"], H)
    train = _train_rows()
    assert p["z"] == standardised_quantiles(y[train], var[train], levels).tolist()


def test_time_of_week_record_recomputed(hourly_fit) -> None:
    rec, close, ts_us = hourly_fit
    p = rec["tow_ewma"]["per_symbol"]["ES"]
    assert (p["slot_minutes"], p["interval_s"], p["calendar"]) == (60, 3600.0, "24x7")
    r = log_returns(close)
    now = time_of_week_slots(ts_us, 60)
    profile = fit_profile(r[1:N_TRAIN], now[1:N_TRAIN], 7 * 24, classical.MIN_SLOT_COUNT)
    assert len(p["profile"]) == 168 and p["profile"] == profile.tolist()
    assert p["initial"] == float(np.mean(r[1:N_TRAIN] ** 2 / profile[now[1:N_TRAIN]]))
    assert p["decay"] in classical.DECAYS and p["decay_chosen_on"] == "validation"


def test_five_minute_bars_get_the_narrowest_slot() -> None:
    closes = _closes(600, dt.timedelta(minutes=5), seed=2)
    p = _fit(closes, 400, range(420, 500))["tow_ewma"]["per_symbol"]["ES"]
    assert p["slot_minutes"] == classical.MIN_SLOT_MINUTES == 30
    assert len(p["profile"]) == 7 * 24 * 2


def test_choose_decay_by_hand_and_on_training_without_validation() -> None:
    g = np.random.default_rng(4)
    v = np.exp(2 * np.sin(np.arange(3000) / 50))[:, None].repeat(2, axis=1)
    y = np.sqrt(v) * g.normal(0, 1, (3000, 2))
    levels = np.array([0.1, 0.5, 0.9])
    train, val = np.arange(0, 2000), np.arange(2000, 3000)

    def path(d: float) -> np.ndarray:  # only 0.97 has the variance's true shape
        return v ** (1 - 5 * abs(d - 0.97))

    got = classical._choose_decay(path, y, train, val, levels)
    assert got["decay"] == 0.97 and got["decay_chosen_on"] == "validation"
    z = standardised_quantiles(y[train], path(0.97)[train], levels)
    assert got["z"] == z.tolist()
    pred = (
        np.sqrt(path(0.9)[val])[..., None]
        * standardised_quantiles(y[train], path(0.9)[train], levels)[None]
    )
    assert got["decay_loss"]["0.9"] == mean_quantile_loss(y[val], pred, levels)
    alone = classical._choose_decay(path, y, train, np.arange(0), levels)
    assert alone["decay_chosen_on"] == "training"
    pred = (
        np.sqrt(path(0.9)[train])[..., None]
        * standardised_quantiles(y[train], path(0.9)[train], levels)[None]
    )
    assert alone["decay_loss"]["0.9"] == mean_quantile_loss(y[train], pred, levels)


def test_fit_garch_is_arch_on_unit_variance_returns_scaled_back() -> None:
    from arch import arch_model

    x = np.diff(np.log(_closes(700, dt.timedelta(hours=1), seed=5)["close"].to_numpy()))
    sd = float(np.std(x))
    res = arch_model(x / sd, mean="Zero", vol="GARCH", p=1, q=1, dist="t").fit(disp="off")
    expected = {
        "omega": float(res.params["omega"]) * sd**2,
        "alpha": float(res.params["alpha[1]"]),
        "beta": float(res.params["beta[1]"]),
        "nu": float(res.params["nu"]),
    }
    assert classical._fit_garch(x) == pytest.approx(expected, rel=1e-12)


def test_fit_garch_needs_a_hundred_returns_that_move() -> None:
    x = np.diff(np.log(_closes(300, dt.timedelta(hours=1), seed=6)["close"].to_numpy()))
    assert classical._fit_garch(x[:99]) is None
    assert classical._fit_garch(x[:100]) is not None
    assert classical._fit_garch(np.zeros(200)) is None


def test_fallback_is_the_first_symbol_with_the_most_training_bars() -> None:
    import polars as pl

    es = _closes(400, dt.timedelta(days=1), seed=7, symbol="ES")
    nq = _closes(400, dt.timedelta(days=1), seed=8, symbol="NQ")
    closes = pl.concat([es, nq])
    end = es["ts"][299]
    val = pl.DataFrame({"symbol": ["ES", "NQ"], "ts": [es["ts"][320], nq["ts"][320]]})
    rec = classical.fit_classical(closes, {"ES": end, "NQ": end}, val, LEVELS, H)
    assert set(rec) == {"ewma", "garch"}
    for model in rec.values():
        assert model["fallback"] == "ES" and set(model["per_symbol"]) == {"ES", "NQ"}
    more = classical.fit_classical(closes, {"ES": es["ts"][250], "NQ": end}, val, LEVELS, H)
    assert more["ewma"]["fallback"] == "NQ"
