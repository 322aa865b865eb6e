"""Where a run's loss to GARCH(1,1) comes from: the forecast's location (median) or its shape.

Each window's forecast is split into a location, the median (the level 0.5), and a shape, the
quantiles minus the median. The script scores recombinations of the TFT's and GARCH's parts on
the same windows, against GARCH as served (Diebold-Mariano, HAC variance,
:func:`foxhunt.infer.significance.compare`):

* ``tft``: the TFT as served;
* ``tft shape + garch median``, ``garch shape + tft median``: the parts swapped;
* ``tft shape, median x k`` (k = 0, 0.5): the TFT with its median scaled towards a zero return;
* ``garch shape, median 0``, and the TFT against GARCH when both medians are set to zero
  (``shape only``: which one's spread is better).

It chooses nothing; it is the diagnosis behind docs/recipe.md "Daily futures: the location".
``--split new`` scores the windows ``foxhunt evaluate`` scores on later bars (``--bars``);
``--split test`` the training bars' own test split (``--bars`` = the training bars, scored
as ``foxhunt evaluate --windows test``). ``--split val`` cross-fits, on the run's validation
windows, the share ``k`` of the median served together with the calibration's shrinkage
``lambda`` (what a validation-chosen location would pick; :mod:`foxhunt.train.calibration.choice`).

    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/experiments/location.py \\
        --run RUN --bars LATER_BARS --split new
    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/experiments/location.py \\
        --run RUN --bars TRAINING_BARS --split test
    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/experiments/location.py \\
        --run RUN --bars TRAINING_BARS --split val

Reads whatever bars it is given (docs/recipe.md used ``../shared/data/real/``'s Quantiacs
daily futures, cut at 2010-01-01).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from foxhunt.artifacts.data_end import read_data_end
from foxhunt.baselines.empirical import load_baselines
from foxhunt.data.pipeline import evaluation_data, prepare_training_data
from foxhunt.data.scale.scaler import unscale_targets
from foxhunt.infer.evaluate import baseline_forecasts
from foxhunt.infer.quantiles import quantile_map, tft_quantiles
from foxhunt.infer.significance import compare
from foxhunt.model.quantile import pinball
from foxhunt.quantize.model import load_inference_model
from foxhunt.train.calibration.calibrate import (
    conformal_offsets,
    standardised_predictions,
    window_scales,
)
from foxhunt.train.calibration.choice import SHRINKAGES, crossfit_blocks, mean_quantile_loss

CPU = torch.device("cpu")
BATCH = 2048
SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""Shares ``k`` of the TFT's median served (``--split val``)."""


def _centre(levels: tuple[float, ...]) -> int:
    return min(range(len(levels)), key=lambda i: abs(levels[i] - 0.5))


@torch.inference_mode()
def forecasts(
    run: Path, bars: Path, split: str
) -> tuple[Tensor, Tensor, Tensor, tuple[float, ...]]:
    """The TFT's and GARCH's (N, H, Q) log-return quantiles and the (N, H) targets."""
    loaded = load_inference_model(run, CPU)
    m = loaded.config.model
    empirical, classical = load_baselines(loaded.run.baselines, m.quantiles, m.horizon)
    if split == "new":
        windows, _, closes = evaluation_data(
            bars, loaded.config, loaded.spec, loaded.scaler, loaded.fingerprint,
            loaded.instruments, ends=read_data_end(loaded.run),
        )  # fmt: skip
    else:
        data = prepare_training_data(bars, loaded.config)
        windows, closes = data.test, data.closes
    garch = baseline_forecasts(empirical, classical, closes, windows)["garch"]
    qmap = quantile_map(loaded)
    loaded.model.eval()
    tft, ys, gs = [], [], []
    for a in range(0, len(windows), BATCH):
        b = min(a + BATCH, len(windows))
        batch = windows.batch(range(a, b))
        assert batch.target is not None
        ys.append(unscale_targets(batch.target.double(), loaded.scaler))
        tft.append(tft_quantiles(loaded.model, batch, qmap, device=CPU))
        gs.append(garch.predict(a, b).double())
    return torch.cat(tft), torch.cat(gs), torch.cat(ys), m.quantiles


def decompose(tft: Tensor, garch: Tensor, y: Tensor, levels: tuple[float, ...]) -> list[dict]:
    """Every recombination's mean pinball and its comparison with GARCH as served."""
    c = _centre(levels)
    q = torch.tensor(levels, dtype=torch.float64)
    t_mid, g_mid = tft[..., c : c + 1], garch[..., c : c + 1]
    rows = {
        "garch": garch,
        "tft": tft,
        "tft shape + garch median": tft - t_mid + g_mid,
        "garch shape + tft median": garch - g_mid + t_mid,
        "tft shape, median x 0.5": tft - 0.5 * t_mid,
        "tft shape, median x 0": tft - t_mid,
        "garch shape, median 0": garch - g_mid,
    }
    loss = {k: pinball(v, y, q).mean(-1) for k, v in rows.items()}  # (N, H) per window
    out = []
    for k, v in rows.items():
        cmp = compare(loss[k].numpy(), loss["garch"].numpy())["pooled"]
        below = float((y < v[..., c]).double().mean())
        out.append({"row": k, "pinball": float(loss[k].mean()), "vs_garch": cmp["relative"],
                    "p_value": cmp["p_value"], "below_median": below})  # fmt: skip
    shape = compare(loss["tft shape, median x 0"].numpy(), loss["garch shape, median 0"].numpy())
    p = shape["pooled"]
    out.append({"row": "shape only: tft vs garch, both medians 0", "pinball": None,
                "vs_garch": p["relative"], "p_value": p["p_value"], "below_median": None})  # fmt: skip
    return out


@torch.inference_mode()
def validation_grid(run: Path, bars: Path) -> dict[str, Any]:
    """Cross-fitted pinball of (share k of the median, calibration shrinkage lambda) on the
    run's validation windows, as the calibration choice scores its candidates."""
    loaded = load_inference_model(run, CPU)
    data = prepare_training_data(bars, loaded.config)
    val = data.val.with_target_scale(quantile_map(loaded).scale)
    z, zy = standardised_predictions(loaded.model, val, batch_size=BATCH, device=CPU)
    scale = window_scales(val, BATCH)
    levels = loaded.config.model.quantiles
    c = _centre(levels)
    blocks = crossfit_blocks(val.origins()["symbol"].to_list(), embargo=zy.shape[1])
    everything = torch.cat(blocks)
    grid: dict[str, list[float]] = {}
    for k in SHARES:
        zk = z - (1 - k) * z[..., c : c + 1]
        total = torch.zeros(len(SHRINKAGES), dtype=torch.float64)
        for held in blocks:
            rest = everything[~torch.isin(everything, held)]
            off = conformal_offsets(zk[rest], zy[rest], levels)
            for j, lam in enumerate(SHRINKAGES):
                total[j] += mean_quantile_loss(
                    zk[held] + lam * off[None], zy[held], scale[held], levels
                ) * len(held)
        grid[str(k)] = [float(x) for x in total / len(everything)]
    return {"windows": len(val), "shrinkages": list(SHRINKAGES), "pinball_by_share": grid}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", type=Path, required=True, help="run directory")
    p.add_argument("--bars", type=Path, required=True, help="bars file or folder")
    p.add_argument("--split", choices=("new", "test", "val"), default="new")
    p.add_argument("--out", type=Path, help="append the result as one JSON line here")
    args = p.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    result: dict[str, Any] = {"run": str(args.run), "bars": str(args.bars), "split": args.split}
    if args.split == "val":
        result |= validation_grid(args.run, args.bars)
        print(f"{result['windows']} validation windows; cross-fitted pinball (bp)")
        print("share k \\ lambda " + " ".join(f"{lam:>9}" for lam in SHRINKAGES))
        for k, row in result["pinball_by_share"].items():
            print(f"{k:>16} " + " ".join(f"{x * 1e4:9.4f}" for x in row))
    else:
        tft, garch, y, levels = forecasts(args.run, args.bars, args.split)
        result["windows"] = len(y)
        result["rows"] = decompose(tft, garch, y, levels)
        print(f"{len(y)} windows ({args.split}); mean pinball (bp), against GARCH(1,1) as served")
        for r in result["rows"]:
            pin = "" if r["pinball"] is None else f"{r['pinball'] * 1e4:9.4f}"
            below = "" if r["below_median"] is None else f"{r['below_median']:.3f}"
            print(f"{r['row']:42} {pin:>9} {r['vs_garch'] * 100:+7.3f} %  p {r['p_value']:.2g}"
                  f"  {below}")  # fmt: skip
    if args.out is not None:
        with args.out.open("a") as f:
            f.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
