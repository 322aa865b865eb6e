"""Per-symbol quantile offsets on top of a pooled TFT: does the per-symbol part of GARCH's
forecast (its filtered-historical quantiles, per symbol and horizon) carry over?

A pooled TFT's standardised quantiles are the same function for every symbol. GARCH(1,1)'s
are each symbol's own empirical quantiles of its standardised training returns, per horizon:
a per-symbol location and tail. This script fits, for each symbol ``s``, horizon and level,
the conformal offset of the served (calibrated) TFT on that symbol's *training* windows
(:func:`foxhunt.train.calibration.calibrate.conformal_offsets`) and serves
``sort((z + m x offset_s) x scale)``; the share ``m`` is chosen on the run's validation
windows (which the offsets never saw), then scored, with ``m`` fixed, on the training bars' own
test split and on later bars (``--later``), against GARCH(1,1) as served (Diebold-Mariano,
:func:`foxhunt.infer.significance.compare`) and against the TFT as served.

It changes nothing a run serves; it is the experiment behind docs/recipe.md "Per-symbol
offsets".

    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/experiments/symbol_offsets.py \\
        --run RUN --bars TRAINING_BARS --later LATER_BARS

docs/recipe.md ran it on ``../shared/data/real/``'s Quantiacs daily futures cut at
2010-01-01.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from foxhunt.artifacts.data_end import read_data_end
from foxhunt.baselines.empirical import load_baselines
from foxhunt.data.pipeline import evaluation_data, prepare_training_data
from foxhunt.data.scale.scaler import unscale_targets
from foxhunt.infer.evaluate import baseline_forecasts
from foxhunt.infer.quantiles import quantile_map, tft_quantiles
from foxhunt.infer.significance import compare, compare_per_group
from foxhunt.model.quantile import pinball
from foxhunt.quantize.model import load_inference_model
from foxhunt.train.calibration.calibrate import (
    conformal_offsets,
    standardised_predictions,
    window_scales,
)

CPU = torch.device("cpu")
BATCH = 2048
SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)
MIN_WINDOWS = 200
"""A symbol with fewer training windows keeps offset 0."""


class Scored:
    """One window set: served standardised quantiles, targets, scales, symbols, GARCH."""

    def __init__(self, loaded: Any, windows: Any, closes: Any, garch_too: bool) -> None:
        qmap = quantile_map(loaded)
        w = windows.with_target_scale(qmap.scale)
        z, self.zy = standardised_predictions(loaded.model, w, batch_size=BATCH, device=CPU)
        self.z = qmap.calibration.apply(z) if qmap.calibration is not None else z
        self.scale = window_scales(w, BATCH)
        self.symbols = np.asarray(w.origins()["symbol"].to_list())
        self.levels = torch.tensor(loaded.config.model.quantiles, dtype=torch.float64)
        self.garch: Tensor | None = None
        self.y: Tensor | None = None
        if garch_too:
            m = loaded.config.model
            empirical, classical = load_baselines(loaded.run.baselines, m.quantiles, m.horizon)
            g = baseline_forecasts(empirical, classical, closes, windows)["garch"]
            self.garch = torch.cat(
                [g.predict(a, min(a + BATCH, len(windows))).double()
                 for a in range(0, len(windows), BATCH)]
            )  # fmt: skip
            self.y = torch.cat(
                [unscale_targets(windows.batch(range(a, min(a + BATCH, len(windows)))).target
                                 .double(), loaded.scaler)
                 for a in range(0, len(windows), BATCH)]
            )  # fmt: skip
            check = tft_quantiles(loaded.model, windows.batch(range(min(64, len(windows)))),
                                  qmap, device=CPU)  # fmt: skip
            torch.testing.assert_close(self.served(None, 0.0)[: len(check)], check)

    def served(self, offsets: dict[str, Tensor] | None, m: float) -> Tensor:
        """(N, H, Q) log-return quantiles with a share ``m`` of the per-symbol offsets."""
        z = self.z.clone()
        if offsets is not None and m:
            for s, off in offsets.items():
                rows = np.flatnonzero(self.symbols == s)
                z[rows] += m * off[None]
        return torch.sort(z * self.scale[..., None], dim=-1).values

    def loss(self, q: Tensor) -> Tensor:
        """(N, H) mean pinball over levels, in log returns."""
        y = self.y if self.y is not None else self.zy * self.scale
        return pinball(q, y, self.levels).mean(-1)


def fit_offsets(train: Scored, kind: str) -> dict[str, Tensor]:
    """Per symbol (H, Q): ``full`` every level's own offset; ``shift`` the median level's
    offset at every level (a per-symbol location, the shape left as the TFT's)."""
    levels = tuple(float(x) for x in train.levels)
    centre = int(torch.argmin((train.levels - 0.5).abs()))
    out = {}
    for s in np.unique(train.symbols):
        rows = np.flatnonzero(train.symbols == s)
        if len(rows) >= MIN_WINDOWS:
            off = conformal_offsets(train.z[rows], train.zy[rows], levels)
            out[str(s)] = off if kind == "full" else off[:, centre : centre + 1].expand_as(off)
    return out


def report(name: str, part: Scored, offsets: dict[str, Tensor], m: float) -> dict[str, Any]:
    tft = part.loss(part.served(None, 0.0))
    new = part.loss(part.served(offsets, m))
    row: dict[str, Any] = {"split": name, "windows": len(tft), "share": m,
                           "tft_bp": float(tft.mean()) * 1e4, "offsets_bp": float(new.mean()) * 1e4}  # fmt: skip
    c = compare(new.numpy(), tft.numpy())
    row["offsets_vs_tft"] = c["pooled"]["relative"]
    row["offsets_vs_tft_p"] = c["pooled"]["p_value"]
    if part.garch is not None:
        g = part.loss(part.garch)
        row["garch_bp"] = float(g.mean()) * 1e4
        for label, loss in (("tft", tft), ("offsets", new)):
            c = compare(loss.numpy(), g.numpy())
            row[f"{label}_vs_garch"] = c["pooled"]["relative"]
            row[f"{label}_vs_garch_p"] = c["pooled"]["p_value"]
            per = compare_per_group(loss.numpy(), g.numpy(), part.symbols)
            row[f"{label}_symbols_won_lost"] = (
                sum(1 for v in per.values() if v["p_value"] < 0.05 and v["relative"] < 0),
                sum(1 for v in per.values() if v["p_value"] < 0.05 and v["relative"] > 0),
            )
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", type=Path, required=True, help="run directory")
    p.add_argument("--bars", type=Path, required=True, help="the run's training bars")
    p.add_argument("--later", type=Path, help="later bars (scored as foxhunt evaluate does)")
    p.add_argument("--out", type=Path, help="append the result as one JSON line here")
    args = p.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    loaded = load_inference_model(args.run, CPU)
    loaded.model.eval()
    data = prepare_training_data(args.bars, loaded.config)
    results = []
    with torch.inference_mode():
        train = Scored(loaded, data.train, data.closes, False)
        val = Scored(loaded, data.val, data.closes, False)
        test = Scored(loaded, data.test, data.closes, True)
        later = None
        if args.later is not None:
            windows, _, closes = evaluation_data(
                args.later, loaded.config, loaded.spec, loaded.scaler, loaded.fingerprint,
                loaded.instruments, ends=read_data_end(loaded.run),
            )  # fmt: skip
            later = Scored(loaded, windows, closes, True)
        for kind in ("full", "shift"):
            offsets = fit_offsets(train, kind)
            grid = {m: float(val.loss(val.served(offsets, m)).mean()) * 1e4 for m in SHARES}
            m = min(SHARES, key=lambda k: (grid[k], k))
            rows = [report("val", val, offsets, m), report("test", test, offsets, m)]
            if later is not None:
                rows.append(report("later", later, offsets, m))
            print(f"{kind}: {len(offsets)} symbols with offsets; validation pinball (bp) by "
                  "share: " + ", ".join(f"{k}: {v:.4f}" for k, v in grid.items())
                  + f"; chosen {m}")  # fmt: skip
            for r in rows:
                print(json.dumps(r))
            results.append({"kind": kind, "grid": grid, "rows": rows})
    if args.out is not None:
        with args.out.open("a") as f:
            f.write(json.dumps({"run": str(args.run), "results": results}) + "\n")


if __name__ == "__main__":
    main()
