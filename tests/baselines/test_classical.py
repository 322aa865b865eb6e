"""Fitting the classical baselines: what is stored, and that only training bars (and, for the
decay, validation outcomes) are used."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

from foxhunt.baselines.classical import DECAYS, fit_classical, symbol_series, variance_path

H, LEVELS = 3, (0.1, 0.5, 0.9)


def _closes(n: int, step: dt.timedelta, seed: int, symbol: str = "ES") -> pl.DataFrame:
    g = np.random.default_rng(seed)
    r, var = np.zeros(n), 1e-6
    for t in range(n):  # GARCH(1,1): omega 2e-8, alpha 0.08, beta 0.9 (unconditional 1e-6)
        r[t] = np.sqrt(var) * g.standard_t(6) / np.sqrt(1.5)
        var = 2e-8 + 0.08 * r[t] ** 2 + 0.9 * var
    close = 100 * np.exp(np.cumsum(r))
    start = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    return pl.DataFrame(
        {
            "symbol": [symbol] * n,
            "ts": pl.datetime_range(start, start + step * (n - 1), step, eager=True),
            "close": close,
        }
    ).with_columns(pl.col("ts").dt.cast_time_unit("us"))


def _fit(closes: pl.DataFrame, n_train: int, val: range) -> dict:
    ts = closes["ts"]
    val_origins = pl.DataFrame({"symbol": ["ES"] * len(val), "ts": ts.gather(list(val))})
    return fit_classical(closes, {"ES": ts[n_train - 1]}, val_origins, LEVELS, H, {"ES": "24x7"})


@pytest.fixture(scope="module")
def hourly() -> pl.DataFrame:
    return _closes(1500, dt.timedelta(hours=1), seed=0)


@pytest.mark.slow
def test_every_model_is_stored_with_its_quantiles(hourly: pl.DataFrame) -> None:
    rec = _fit(hourly, 1000, range(1100, 1300))
    assert set(rec) == {"ewma", "garch", "tow_ewma"}
    for model, entry in rec.items():
        p = entry["per_symbol"]["ES"]
        assert entry["fallback"] == "ES" and np.asarray(p["z"]).shape == (H, len(LEVELS)), model
        assert np.all(np.diff(np.asarray(p["z"]), axis=1) >= 0)
    for model in ("ewma", "tow_ewma"):
        p = rec[model]["per_symbol"]["ES"]
        assert p["decay"] in DECAYS and p["decay_chosen_on"] == "validation"
        assert p["decay"] == min(DECAYS, key=lambda d: p["decay_loss"][f"{d:g}"])
    g = rec["garch"]["per_symbol"]["ES"]
    assert 0.02 < g["alpha"] < 0.2 and 0.75 < g["beta"] < 0.98 and g["omega"] > 0
    assert rec["tow_ewma"]["per_symbol"]["ES"]["slot_minutes"] == 60


def test_daily_bars_get_no_time_of_week_model() -> None:
    rec = _fit(_closes(800, dt.timedelta(days=1), seed=1), 500, range(550, 650))
    assert set(rec) == {"ewma", "garch"}


def test_only_training_bars_and_validation_outcomes_are_used(hourly: pl.DataFrame) -> None:
    """Changing the bars after the validation windows' outcomes changes nothing; changing the
    bars after the training targets changes at most the decay choice, never GARCH, the
    profile or the starting variance."""
    base = _fit(hourly, 1000, range(1100, 1300))
    later = hourly.with_columns(
        pl.when(pl.int_range(pl.len()) >= 1300 + H)
        .then(pl.col("close") * 1.5)
        .otherwise(pl.col("close"))
    )
    assert _fit(later, 1000, range(1100, 1300)) == base
    wild = hourly.with_columns(
        pl.when(pl.int_range(pl.len()) >= 1000 + H)  # the last training target ends at 999 + H
        .then(pl.col("close") * (1 + 0.05 * np.sin(np.arange(len(hourly)))))
        .otherwise(pl.col("close"))
    )
    changed = _fit(wild, 1000, range(1100, 1300))
    assert changed["garch"] == base["garch"]
    for key in ("profile", "initial"):
        assert (
            changed["tow_ewma"]["per_symbol"]["ES"][key]
            == (base["tow_ewma"]["per_symbol"]["ES"][key])
        )
    assert (
        changed["ewma"]["per_symbol"]["ES"]["decay_loss"]
        != (base["ewma"]["per_symbol"]["ES"]["decay_loss"])
    )  # the validation outcomes did change


def test_variance_path_is_what_the_fit_scored(hourly: pl.DataFrame) -> None:
    rec = _fit(hourly, 1000, range(1100, 1300))
    ts, close = symbol_series(hourly, "ES")
    for model, entry in rec.items():
        v = variance_path(model, entry["per_symbol"]["ES"], ts, close, H)
        assert v.shape == (len(close), H) and np.all(np.diff(v, axis=1) > 0), model


def test_spread_keeps_at_most_most_rows_evenly_with_the_last() -> None:
    from foxhunt.baselines.classical import spread

    rows = np.arange(10, 110)
    assert spread(rows, 200).tolist() == rows.tolist()
    got = spread(rows, 30)
    assert len(got) <= 30 and got[-1] == 109 and np.all(np.diff(got) == 4)
