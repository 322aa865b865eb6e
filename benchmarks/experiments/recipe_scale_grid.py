"""Target-scale candidates against the classical baselines, without training.

The *scale-only* forecast of a candidate target scale is what a TFT with that scale predicts at
its start (``train/head_init.py``): ``Q_z[q] x scale[b, h]``, ``Q_z`` the empirical quantiles
of the standardised training targets pooled over horizons. Candidates (all from the window's
encoder returns only, as :class:`foxhunt.data.scale.target.TargetScale` computes them):

* ``ewma d``: EWMA variance ``s`` of the encoder's one-bar returns (decay d) x h;
* ``mr d phi``: mean reversion to the training variance ``v`` (GARCH-like term structure):
  ``V_h = sum_{k=1..h} v + phi^(k-1) (s - v)``.

Each is scored (mean pinball, log-return units) on the training windows (what a run may choose
by) and on the validation windows, next to ``foxhunt evaluate``'s EWMA and GARCH baselines
(fitted as a run fits them: ``baselines/fit.py``) on the same validation windows.

``--split test`` (read once, for the final report) scores only three candidates on the test
split: ``old`` (decay 0.94, no reversion: the start before this recipe), ``fixed`` (0.94, 0.9)
and ``chosen`` (what ``data/scale/choice.py`` picks on the training split), each against every
baseline with the Diebold–Mariano test ``foxhunt evaluate`` uses.

    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/experiments/recipe_scale_grid.py --bars BARS
    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/experiments/recipe_scale_grid.py --bars BARS --split test
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from foxhunt.baselines.empirical import EmpiricalQuantiles
from foxhunt.baselines.fit import fit_baselines
from foxhunt.baselines.forecasts import classical_forecasts, simple_forecasts
from foxhunt.config import preset
from foxhunt.data.pipeline import calendars_of, prepare_training_data
from foxhunt.data.scale.choice import choose_target_scale
from foxhunt.data.scale.scaler import unscale_targets
from foxhunt.data.scale.target import RETURN_FEATURE
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.infer.significance import compare
from foxhunt.model.quantile import pinball

DECAYS = (0.8, 0.9, 0.94, 0.97, 0.985, 0.995)
PHIS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.97, 0.99)


def returns_and_targets(ds: WindowDataset, scaler) -> tuple[np.ndarray, np.ndarray]:
    """(N, T) one-bar encoder returns and (N, H) log-return targets."""
    b = ds.batch(range(len(ds)))
    col = scaler.columns.index(RETURN_FEATURE)
    idx = ds.spec.historical.index(RETURN_FEATURE)
    r = b.historical[:, :, idx].double().numpy() * scaler.std[col] + scaler.mean[col]
    y = unscale_targets(b.target.double(), scaler).numpy()
    return r, y


def ewma(r: np.ndarray, d: float) -> np.ndarray:
    w = d ** np.arange(r.shape[1] - 1, -1, -1, dtype=np.float64)
    return np.maximum((r**2 * w).sum(1) / w.sum(), 1e-12)


def term(s: np.ndarray, v: float, phi: float, horizon: int) -> np.ndarray:
    """(N, H) cumulative variance with mean reversion phi towards v (phi=1: s x h)."""
    k = np.arange(horizon)
    per_step = v + (phi**k)[None, :] * (s[:, None] - v)
    return np.cumsum(per_step, axis=1)


def mean_loss(y: np.ndarray, pred: np.ndarray, levels: np.ndarray) -> float:
    return float(window_losses(y, pred, levels).mean())


def window_losses(y: np.ndarray, pred: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """(N, H) pinball loss (foxhunt.model.quantile.pinball) averaged over the quantile levels."""
    loss = pinball(torch.from_numpy(pred), torch.from_numpy(y), torch.from_numpy(levels))
    return loss.numpy().mean(axis=-1)


def test_split(a: argparse.Namespace, cfg, data, levels: np.ndarray) -> None:  # noqa: ANN001
    """The old, fixed and chosen starts against every baseline on the test split, with DM."""
    horizon = cfg.model.horizon
    r_tr, y_tr = returns_and_targets(data.train, data.scaler)
    r_te, y_te = returns_and_targets(data.test, data.scaler)
    col = data.scaler.columns.index(RETURN_FEATURE)
    v = data.scaler.std[col] ** 2 + data.scaler.mean[col] ** 2
    floor = 0.1 * np.asarray(data.scaler.target_std)
    choice = choose_target_scale(data.train, data.spec, data.scaler, cfg)
    assert choice is not None
    candidates = {"old": (0.94, 1.0), "fixed": (0.94, 0.9),
                  "chosen": (choice.decay, choice.reversion)}  # fmt: skip
    record = fit_baselines(
        data.train, data.val, data.closes, data.scaler, cfg.model.quantiles,
        calendars_of(data.instruments),
    )  # fmt: skip
    origins = data.test.origins()
    emp = EmpiricalQuantiles.from_dict(json.loads(json.dumps(record)))
    fc = simple_forecasts(emp, origins["symbol"].to_list(), horizon)
    fc |= classical_forecasts(record["classical"], data.closes, origins, horizon, len(levels))
    base = {k: window_losses(y_te, f.predict(0, len(data.test)).numpy(), levels)
            for k, f in fc.items() if k != "zero"}  # fmt: skip
    out = {"bars": str(a.bars), "split": "test", "n_windows": len(data.test), "rows": {}}
    for name, (d, phi) in candidates.items():
        sc_tr = np.maximum(np.sqrt(term(ewma(r_tr, d), v, phi, horizon)), floor)
        sc_te = np.maximum(np.sqrt(term(ewma(r_te, d), v, phi, horizon)), floor)
        pred = sc_te[..., None] * np.quantile((y_tr / sc_tr).ravel(), levels)
        loss = window_losses(y_te, pred, levels)
        cov = (coverage(y_te, pred, 1, 7), coverage(y_te, pred, 0, 8))
        row = {"decay": d, "reversion": phi, "pinball": float(loss.mean()), "coverage": cov,
               "vs": {k: compare(loss, b)["pooled"] for k, b in base.items()}}  # fmt: skip
        out["rows"][name] = row
        vs = "; ".join(
            f"{k} {c['baseline'] * 1e4:.4f} {c['relative'] * 100:+.2f}% p {c['p_value']:.2g}"
            f" {c['verdict']}"
            for k, c in row["vs"].items()
        )
        print(
            f"{a.bars.name} test {name:>6} (d {d:g}, phi {phi:g}): {row['pinball'] * 1e4:.4f} bp "
            f"cov {cov[0]:.3f}/{cov[1]:.3f} | {vs}"
        )
    if a.results:
        with open(a.results, "a") as f:
            f.write(json.dumps(out) + "\n")


def coverage(y: np.ndarray, pred: np.ndarray, lo: int, hi: int) -> float:
    return float(((pred[..., lo] <= y) & (y <= pred[..., hi])).mean())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bars", type=Path, required=True)
    p.add_argument("--preset", default="demo")
    p.add_argument("--split", choices=("val", "test"), default="val")
    p.add_argument("--results", type=Path, default=None, help="append one JSON line here")
    a = p.parse_args()
    cfg = preset(a.preset)
    data = prepare_training_data(a.bars, cfg)
    levels = np.asarray(cfg.model.quantiles)
    if a.split == "test":
        test_split(a, cfg, data, levels)
        return
    horizon = cfg.model.horizon
    r_tr, y_tr = returns_and_targets(data.train, data.scaler)
    r_va, y_va = returns_and_targets(data.val, data.scaler)
    col = data.scaler.columns.index(RETURN_FEATURE)
    v = data.scaler.std[col] ** 2 + data.scaler.mean[col] ** 2  # training mean r^2
    floor = 0.1 * np.asarray(data.scaler.target_std)
    rows = {}
    for d in DECAYS:
        s_tr, s_va = ewma(r_tr, d), ewma(r_va, d)
        for phi in (1.0, *PHIS):
            sc_tr = np.maximum(np.sqrt(term(s_tr, v, phi, horizon)), floor)
            sc_va = np.maximum(np.sqrt(term(s_va, v, phi, horizon)), floor)
            qz = np.quantile((y_tr / sc_tr).ravel(), levels)
            pred_tr = sc_tr[..., None] * qz
            pred_va = sc_va[..., None] * qz
            rows[f"d{d:g}_phi{phi:g}"] = {
                "train": mean_loss(y_tr, pred_tr, levels),
                "val": mean_loss(y_va, pred_va, levels),
                "val_cov": [coverage(y_va, pred_va, 1, 7), coverage(y_va, pred_va, 0, 8)],
            }
    record = fit_baselines(
        data.train, data.val, data.closes, data.scaler, cfg.model.quantiles,
        calendars_of(data.instruments),
    )  # fmt: skip
    fc = classical_forecasts(
        record["classical"], data.closes, data.val.origins(), horizon, len(levels)
    )
    for name, f in fc.items():
        pred = f.predict(0, len(data.val)).numpy()
        rows[f"baseline_{name}"] = {
            "val": mean_loss(y_va, pred, levels),
            "val_cov": [coverage(y_va, pred, 1, 7), coverage(y_va, pred, 0, 8)],
        }
    best_train = min((k for k in rows if "train" in rows[k]), key=lambda k: rows[k]["train"])
    best_val = min((k for k in rows if "train" in rows[k]), key=lambda k: rows[k]["val"])
    for k, row in rows.items():
        tag = (" <- best train" if k == best_train else "") + (
            " <- best val" if k == best_val else ""
        )
        tr = f"train {row['train'] * 1e4:.5f}" if "train" in row else " " * 14
        print(
            f"{a.bars.name} {k:>18} {tr} val {row['val'] * 1e4:.5f} bp "
            f"cov {row['val_cov'][0]:.3f} {row['val_cov'][1]:.3f}{tag}"
        )
    if a.results:
        with open(a.results, "a") as f:
            f.write(json.dumps({"bars": str(a.bars), "preset": a.preset, "rows": rows}) + "\n")


if __name__ == "__main__":
    main()
