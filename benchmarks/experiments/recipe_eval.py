"""Train the demo recipe (old or new target scale) and score it as ``foxhunt evaluate`` does.

One command = one run: ``--variant old`` is the target scale before the mean-reversion recipe
(window scale, decay 0.94, no reversion, no search); ``--variant new`` is the preset as it now
stands (window scale with ``target_scale_search``: decay and reversion chosen on the training
split by :func:`foxhunt.data.scale.choice.resolve_target_scale`, which this script calls
before :func:`foxhunt.train.run.run_training`). The run is scored on the pipeline's
validation split (tuning; its calibration is in-sample there, so read ``tft_raw`` too) or test
split (the final report) against every baseline the run fitted, with the Diebold–Mariano
verdicts of :func:`foxhunt.infer.evaluate.verdicts`. One JSON line per run goes to
``--results``.

    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/experiments/recipe_eval.py --bars BARS \\
        --variant new --seed 0 --split val --results benchmarks/results/recipe5.jsonl
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl
import torch

from foxhunt.baselines.empirical import load_baselines
from foxhunt.config import preset
from foxhunt.data.pipeline import prepare_training_data
from foxhunt.data.scale.choice import resolve_target_scale
from foxhunt.data.scale.scaler import unscale_targets
from foxhunt.infer.evaluate import baseline_forecasts, score, verdicts
from foxhunt.infer.quantiles import QuantileMap, quantile_map, tft_quantiles
from foxhunt.infer.scores import QuantileScores
from foxhunt.quantize.model import load_inference_model
from foxhunt.train.run import run_training

CPU = torch.device("cpu")
OLD = {"target_scale_decay": 0.94, "target_scale_reversion": 1.0, "target_scale_search": False}


def tail_bars(bars: Path, n: int | None, tmp: Path) -> Path:
    """``bars`` itself, or its last ``n`` rows written to a parquet file in ``tmp``."""
    if n is None:
        return bars
    frame = pl.read_parquet(bars) if bars.suffix == ".parquet" else pl.read_csv(bars)
    out = tmp / f"{bars.stem}-last{n}.parquet"
    frame.tail(n).write_parquet(out)
    return out


@torch.inference_mode()
def raw_scores(loaded: Any, windows: Any) -> dict[str, Any]:
    """The network's quantiles without calibration.json (the calibration's own effect)."""
    m = loaded.config.model
    raw = QuantileMap(quantile_map(loaded).scale, None)
    s = QuantileScores(m.quantiles, m.horizon)
    for a in range(0, len(windows), 1024):
        batch = windows.batch(list(range(a, min(a + 1024, len(windows)))))
        y = unscale_targets(batch.target.double(), loaded.scaler)
        s.update(tft_quantiles(loaded.model, batch, raw, device=CPU), y)
    return s.result()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bars", type=Path, required=True)
    p.add_argument("--tail", type=int, default=None, help="use the last N bars only")
    p.add_argument("--variant", choices=("old", "new"), default="new")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--split", choices=("val", "test", "both"), default="val")
    p.add_argument("--max-steps", type=int, default=None, help="cap the optimizer steps")
    p.add_argument("--results", type=Path, required=True, help="JSON lines appended here")
    a = p.parse_args()
    logging.basicConfig(level=logging.WARNING)
    tmp = Path(tempfile.mkdtemp(prefix="recipe5-"))
    bars = tail_bars(a.bars, a.tail, tmp)
    cfg = preset("demo").replace(train={"seed": a.seed, "max_steps": a.max_steps})
    if a.variant == "old":
        cfg = cfg.replace(data=OLD)
    data = prepare_training_data(bars, cfg)
    cfg = resolve_target_scale(cfg, data.train, data.spec, data.scaler)
    started = time.perf_counter()
    trained = run_training(
        cfg, bars=bars, out=tmp / "run", resume=None, memory_budget=None,
        allow_precision_change=False, overwrite=True,
    )  # fmt: skip
    train_s = time.perf_counter() - started
    loaded = load_inference_model(tmp / "run", CPU)
    m = loaded.config.model
    empirical, classical = load_baselines(loaded.run.baselines, m.quantiles, m.horizon)
    for split in ("val", "test") if a.split == "both" else (a.split,):
        windows = data.val if split == "val" else data.test
        baselines = baseline_forecasts(empirical, classical, data.closes, windows)
        scores, losses = score(loaded, windows, baselines, batch_size=1024, device=CPU)
        comp = verdicts(losses)
        record = {
            "bars": str(a.bars), "tail": a.tail, "variant": a.variant, "seed": a.seed,
            "split": split, "n_windows": len(windows), "train_seconds": round(train_s, 1),
            "best_epoch": trained.best_epoch,
            "decay": cfg.data.target_scale_decay, "reversion": cfg.data.target_scale_reversion,
            "pinball": {k: v["mean_pinball"] for k, v in scores.items()},
            "coverage": scores["tft"]["coverage"],
            "max_steps": a.max_steps,
            "tft_raw": raw_scores(loaded, windows)["mean_pinball"],
            "verdicts": {k: v["pooled"] for k, v in comp.items()},
        }  # fmt: skip
        a.results.parent.mkdir(parents=True, exist_ok=True)
        with open(a.results, "a") as f:
            f.write(json.dumps(record) + "\n")
        cov = record["coverage"]
        print(
            f"{a.bars.name} {a.variant} seed {a.seed} {split}: decay {record['decay']} "
            f"reversion {record['reversion']} best epoch {trained.best_epoch} "
            f"TFT {scores['tft']['mean_pinball'] * 1e4:.4f} bp (raw {record['tft_raw'] * 1e4:.4f})"
            f" cov {cov['10-90']:.3f}/{cov['2-98']:.3f}"
        )
        for k, v in record["verdicts"].items():
            print(
                f"  vs {k:>9}: {v['baseline'] * 1e4:.4f} bp  {v['relative'] * 100:+.2f} %  "
                f"p {v['p_value']:.3g}  {v['verdict']}"
            )
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
