"""The time-of-day season of the window target scale, scored without training.

What a fresh run starts from (``train/head_init.py``) is the *scale-only* forecast
``Q_z[q] x scale[b, h]``. ``data/scale/choice.py`` now tries every (decay, reversion) with and
without a time-of-day season fitted on the training split. This script runs that choice on
``BARS`` (optionally resampled to ``--minutes``-minute bars first, OHLCV aggregated) and scores,
on the validation and the test split, the best plain scale against the best seasonal one and
against ``foxhunt evaluate``'s EWMA and time-of-week baselines (fitted as a run fits them), with
the Diebold-Mariano test of ``foxhunt evaluate``. Everything goes through the product's code
(``TargetScale``, ``choose_target_scale``, ``fit_baselines``).

    PYTHONPATH=src .venv/bin/python benchmarks/experiments/season_scale.py --bars BARS [--minutes 15]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
from pathlib import Path

import numpy as np
import polars as pl
import torch

from foxhunt.baselines.fit import fit_baselines
from foxhunt.baselines.forecasts import classical_forecasts
from foxhunt.config import preset
from foxhunt.data.pipeline import calendars_of, prepare_training_data
from foxhunt.data.read.bars import load_bars
from foxhunt.data.scale.choice import choose_target_scale
from foxhunt.data.scale.scaler import unscale_targets
from foxhunt.data.scale.target import TargetScale
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.infer.significance import compare


def resampled(bars: Path, minutes: int, out: Path) -> Path:
    """``bars`` as ``minutes``-minute OHLCV bars (a parquet in ``out``)."""
    df = load_bars(bars).frame.sort("symbol", "ts")
    agg = [pl.col("open").first(), pl.col("high").max(), pl.col("low").min(),
           pl.col("close").last()]  # fmt: skip
    if "volume" in df.columns:
        agg.append(pl.col("volume").sum())
    df = df.group_by_dynamic("ts", every=f"{minutes}m", group_by="symbol").agg(agg)
    path = out / f"{bars.stem}_{minutes}m.parquet"
    df.write_parquet(path)
    return path


def scored(ds: WindowDataset, scale: TargetScale, q_z: torch.Tensor, scaler, levels):  # noqa: ANN001, ANN201
    """Per-window pinball (N,) and coverage of the scale-only forecast on ``ds``."""
    b = ds.batch(range(len(ds)))
    y = unscale_targets(b.target.double(), scaler)  # (N, H)
    pred = scale.scale(b.historical, b.known)[:, :, None] * q_z  # (N, H, Q)
    e = y[:, :, None] - pred
    lv = torch.tensor(levels, dtype=torch.float64)
    loss = torch.maximum(lv * e, (lv - 1) * e).mean(dim=2)  # (N, H)
    inside = lambda lo, hi: float(((y >= pred[..., lo]) & (y <= pred[..., hi])).double().mean())  # noqa: E731
    return loss.numpy(), (inside(1, 7), inside(0, 8))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bars", type=Path, required=True)
    p.add_argument("--minutes", type=int, default=0, help="resample to this bar size first")
    p.add_argument("--preset", default="demo")
    p.add_argument("--results", type=Path, default=None, help="append one JSON line here")
    a = p.parse_args()
    cfg = preset(a.preset)
    levels = cfg.model.quantiles
    with tempfile.TemporaryDirectory() as tmp:
        bars = resampled(a.bars, a.minutes, Path(tmp)) if a.minutes else a.bars
        data = prepare_training_data(bars, cfg)
    choice = choose_target_scale(data.train, data.spec, data.scaler, cfg)
    assert choice is not None
    base = TargetScale.of(cfg.data, data.spec, data.scaler)
    plain_key = min(choice.losses, key=lambda k: choice.losses[k])
    candidates = {"plain": dataclasses.replace(base, decay=plain_key[0], reversion=plain_key[1])}
    if choice.season_losses:
        key = min(choice.season_losses, key=lambda k: choice.season_losses[k])
        data_cfg = cfg.data.__class__(**{**dataclasses.asdict(cfg.data),
                                         "target_scale_season": choice.season})  # fmt: skip
        seasonal = TargetScale.of(data_cfg, data.spec, data.scaler)
        candidates["season"] = dataclasses.replace(seasonal, decay=key[0], reversion=key[1])
    record = fit_baselines(
        data.train, data.val, data.closes, data.scaler, levels, calendars_of(data.instruments)
    )
    out = {"bars": a.bars.name, "minutes": a.minutes or None, "chosen_season": bool(choice.season),
           "season": list(choice.season), "splits": {}}  # fmt: skip
    for split in ("val", "test"):
        ds = getattr(data, split)
        fc = classical_forecasts(
            record["classical"], data.closes, ds.origins(), cfg.model.horizon, len(levels)
        )
        y = unscale_targets(ds.batch(range(len(ds))).target.double(), data.scaler).numpy()
        lv = np.asarray(levels)
        base_losses = {}
        for name in ("ewma", "tow_ewma"):
            if name in fc:
                e = y[:, :, None] - fc[name].predict(0, len(ds)).numpy()
                base_losses[name] = np.maximum(lv * e, (lv - 1) * e).mean(axis=2)
        rows = {}
        for name, scale in candidates.items():
            tr = data.train.batch(range(len(data.train)))
            y_tr = unscale_targets(tr.target.double(), data.scaler)
            q_z = torch.quantile((y_tr / scale.scale(tr.historical, tr.known)).reshape(-1),
                                 torch.tensor(levels, dtype=torch.float64))  # fmt: skip
            loss, cov = scored(ds, scale, q_z, data.scaler, levels)
            rows[name] = {"loss": loss, "cov": cov, "decay": scale.decay, "phi": scale.reversion}
        line = []
        split_out = {}
        for name, row in rows.items():
            vs = {k: compare(row["loss"], b)["pooled"] for k, b in base_losses.items()}
            if name == "season":
                vs["plain"] = compare(row["loss"], rows["plain"]["loss"])["pooled"]
            split_out[name] = {"pinball": float(row["loss"].mean()), "coverage": row["cov"],
                               "decay": row["decay"], "reversion": row["phi"],
                               "vs": vs}  # fmt: skip
            text = "; ".join(
                f"vs {k} {c['relative'] * 100:+.2f}% p {c['p_value']:.2g} {c['verdict']}"
                for k, c in vs.items()
            )
            line.append(
                f"{name} {row['loss'].mean() * 1e4:.4f} bp cov {row['cov'][0]:.3f}/"
                f"{row['cov'][1]:.3f} ({text})"
            )
        out["splits"][split] = split_out
        label = f"{a.bars.name}" + (f" @{a.minutes}m" if a.minutes else "")
        print(f"{label} {split} n={len(ds)} chosen={'season' if choice.season else 'plain'}: "
              + " | ".join(line), flush=True)  # fmt: skip
    if a.results:
        with open(a.results, "a") as f:
            f.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
