"""Accuracy: foxhunt's default TFT vs pytorch-forecasting's TFT on the same windows.

Controlled comparison — only the network differs:

- **data**: both processes call ``foxhunt.data.pipeline.prepare_training_data`` on the same bars
  with the same config, so features, scaling, train/val/test splits (with embargo) and windows
  are identical (the data fingerprint and window counts are recorded and checked);
- **sizes**: the ``demo`` preset (``foxhunt.config.demo()``: d=32, 4 heads, 1 LSTM layer,
  encoder 32, horizon 10, 9 quantiles, variable width 8 = pytorch-forecasting's
  ``hidden_continuous_size``, dropout 0.1) for both;
- **recipe**: one loop (:func:`train_model`) for both, built from foxhunt's own training pieces:
  AdamW with decay on >= 2-D weights (``build_optimizer``), warm-up + cosine learning rate
  (``lr_at``), the same shuffled order per epoch (``epoch_order``), gradient clipping, quantile
  loss on scaled targets, validation after every epoch, early stopping with the preset's
  patience, and the best validation epoch's weights kept. The same number of epochs for both.
  pytorch-forecasting's own Lightning ``Trainer`` and dataloaders are not used: its
  ``TemporalFusionTransformer`` module is fed the windows as its ``x`` dict (see
  ``pf_step.pf_inputs``) through a thin adapter;
- **scores** (test split, unscaled log returns): ``foxhunt.infer.evaluate.QuantileScores`` —
  mean pinball loss, P50/P90 q-risk (pinball normalised by sum |y|, TFT paper §7), coverage of
  [q0.1, q0.9] (nominal 0.80) — plus the two baselines of ``foxhunt evaluate``: zero-return
  persistence and the empirical quantiles of recent training returns.

Datasets: ``demo`` (``foxhunt data demo --bars 20000 --seed 0``: synthetic ES-like 5-minute
bars) and ``real`` (S&P 500 and NASDAQ Composite daily bars 1999-2018 shipped in the ``arch``
wheel; see ``foxhunt.data.sources.index_daily``).

Worker commands (each a fresh process; ``run_all.py`` drives them):

    .venv/bin/python benchmarks/accuracy.py bars --dataset demo --out DIR/demo.parquet
    .venv-bench/bin/python benchmarks/accuracy.py bars --dataset real --out DIR/real.parquet
    .venv/bin/python benchmarks/accuracy.py train --model foxhunt --bars DIR/demo.parquet
    .venv-bench/bin/python benchmarks/accuracy.py train --model pf --bars DIR/demo.parquet
    .venv/bin/python benchmarks/accuracy.py train --model foxhunt-recipe --bars DIR/demo.parquet

``foxhunt-recipe`` is not a network comparison: it is what ``foxhunt train --preset demo``
serves (the preset's own epochs, window target scale with its season, kept start, conformal
calibration), scored on the same test windows, so the table says where a user of each stands.
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from runner import BENCH_DIR, BENCH_PYTHON, MAIN_PYTHON, Job  # noqa: E402

DATASETS = ("demo", "real")
DEMO_BARS = 20000
#: Epochs per dataset, the same for both models (the demo preset's 3 on 20k 5-minute bars;
#: the daily series are ~10k bars, so more passes for a comparable number of steps).
EPOCHS = {"demo": 3, "real": 8}

log = logging.getLogger("accuracy")


# --- orchestration (imported by run_all.py; no torch here) -------------------------------------


def jobs(
    datasets: list[str],
    work: Path,
    quick: bool = False,
    with_pf: bool = True,
    seeds: tuple[int, ...] = (0,),
) -> list[Job]:
    """Bars jobs, then per dataset and seed: foxhunt, then pytorch-forecasting (fresh processes)."""
    out: list[Job] = []
    script = BENCH_DIR / "accuracy.py"
    for ds in datasets:
        bars = work / f"{ds}.parquet"
        python = BENCH_PYTHON if ds == "real" else MAIN_PYTHON
        n_bars = ["--n-bars", "3000"] if quick else []
        out.append(
            Job(
                f"accuracy-bars-{ds}",
                python,
                script,
                ("bars", "--dataset", ds, "--out", str(bars), *n_bars),
                {"section": "accuracy", "dataset": ds, "model": "bars"},
                600,
            )
        )
        epochs = "1" if quick else str(EPOCHS[ds])
        for seed in seeds:
            common = ("--bars", str(bars), "--dataset", ds, "--epochs", epochs, "--seed", str(seed))
            if quick:
                common += ("--max-steps", "5")
            models = (
                ("foxhunt", MAIN_PYTHON),
                ("pf", BENCH_PYTHON),
                ("foxhunt-recipe", MAIN_PYTHON),
            )
            for model, py in models:
                if model == "pf" and not with_pf:
                    continue
                out.append(
                    Job(
                        f"accuracy-{ds}-{model}-s{seed}",
                        py,
                        script,
                        ("train", "--model", model, *common),
                        {"section": "accuracy", "dataset": ds, "model": model, "seed": seed},
                        3600,
                    )
                )
    return out


def rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Table rows: one per (dataset, model) with test scores (seed-averaged), then baselines."""
    import statistics

    out: list[dict[str, Any]] = []
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        if r.get("section") != "accuracy" or r.get("model") == "bars":
            continue
        groups.setdefault((r["dataset"], r["model"]), []).append(r)
    names = {
        "foxhunt": "foxhunt (default)",
        "pf": "pytorch-forecasting TFT",
        "foxhunt-recipe": "foxhunt train --preset demo (served recipe)",
    }
    for (ds, model), runs in groups.items():
        ok = [r for r in runs if "error" not in r]
        if not ok:
            out.append({"dataset": ds, "model": names[model], "error": runs[0]["error"]})
            continue
        keys = ("pinball", "p50_risk", "p90_risk", "coverage_10_90")
        test = {k: statistics.mean(r["test"][k] for r in ok) for k in keys}
        if len(ok) > 1:
            test["pinball_sd"] = statistics.stdev(r["test"]["pinball"] for r in ok)
        out.append(
            {
                "dataset": ds,
                "model": names[model],
                "params": ok[0]["params"],
                "epochs": ok[0]["epochs"],
                "best_epoch": ok[0]["best_epoch"],
                "train_s": statistics.mean(r["train_s"] for r in ok),
                "seeds": [r["seed"] for r in ok],
                "fingerprint": ok[0]["fingerprint"],
                "windows": ok[0]["windows"],
                "test": test,
            }
        )
        if model == "foxhunt":
            for name, scores in ok[0].get("baselines", {}).items():
                out.append({"dataset": ds, "model": f"baseline: {name}", "test": scores})
    order = {"foxhunt (default)": 0, "pytorch-forecasting TFT": 1, names["foxhunt-recipe"]: 2}
    out.sort(key=lambda r: (r["dataset"], order.get(r["model"], 3), r["model"]))
    return out


# --- workers ------------------------------------------------------------------------------------


def write_bars(dataset: str, out: Path, n_bars: int) -> dict[str, Any]:
    """Write the dataset's bars file; return its provenance."""
    out.parent.mkdir(parents=True, exist_ok=True)
    if dataset == "demo":
        from foxhunt.data.sources.demo import write_demo_bars

        write_demo_bars(out, n_bars=n_bars, seed=0, symbol="ES", start="2024-01-02")
        return {"source": f"foxhunt data demo --bars {n_bars} --seed 0", "path": str(out)}
    from foxhunt.data.read.files import write_table
    from foxhunt.data.sources.index_daily import index_daily_bars, provenance

    bars = index_daily_bars()
    write_table(bars, out)
    counts = {str(s): int(n) for s, n in bars.group_by("symbol").len().iter_rows()}
    first, last = str(bars["ts"].min()), str(bars["ts"].max())
    return {**provenance(), "bars": counts, "first": first, "last": last, "path": str(out)}


def pf_adapter(cfg_model: Any, seed: int):  # -> torch.nn.Module
    """pytorch-forecasting's TFT at foxhunt's sizes, callable as ``model(TFTBatch) -> TFTOutput``."""
    import torch
    from torch import nn

    from foxhunt.model.batch import TFTOutput
    from pf_step import PFSizes, build_model, pf_inputs

    sizes = PFSizes(
        n_static=cfg_model.n_static,
        n_historical=cfg_model.n_historical,
        n_known=cfg_model.n_known,
        hidden=cfg_model.hidden,
        heads=cfg_model.n_heads,
        lstm_layers=cfg_model.lstm_layers,
        encoder_length=cfg_model.encoder_length,
        horizon=cfg_model.horizon,
        hidden_continuous_size=cfg_model.variable_width,
        dropout=cfg_model.dropout,
        quantiles=tuple(cfg_model.quantiles),
    )

    class PFAdapter(nn.Module):
        """Wraps the pytorch-forecasting module; variable weights other than static are not
        mapped back (zeros): the loop and the scores only read ``quantiles``."""

        def __init__(self) -> None:
            super().__init__()
            self.pf = build_model(sizes, seed=seed)
            self.x_reals = list(self.pf.hparams.x_reals)

        def forward(self, batch: Any, return_attention: bool = False) -> TFTOutput:
            out = self.pf(pf_inputs(batch, self.x_reals, sizes))
            b = batch.static.shape[0]
            return TFTOutput(
                quantiles=out["prediction"],  # (B, H, Q)
                static_weights=out["static_variables"].reshape(b, -1),
                historical_weights=torch.zeros(b, sizes.encoder_length, sizes.n_historical),
                known_weights=torch.zeros(b, sizes.encoder_length + sizes.horizon, sizes.n_known),
            )

    return PFAdapter()


def train_model(model: Any, prepared: Any, cfg: Any) -> dict[str, Any]:
    """The one recipe both models get (see the module docstring); keeps the best val epoch.

    Returns:
        ``epochs`` run, ``best_epoch``, ``steps``, ``history`` (train/val loss per epoch),
        ``train_s``.
    """
    import torch

    from foxhunt.model.quantile import quantile_loss
    from foxhunt.runtime import autocast
    from foxhunt.train.loop import epoch_order
    from foxhunt.train.optimizer.optim import build_optimizer
    from foxhunt.train.optimizer.schedule import lr_at
    from foxhunt.train.step import validate

    tc = cfg.train
    train, val = prepared.train, prepared.val
    quantiles = torch.tensor(cfg.model.quantiles, dtype=torch.float32)
    opt = build_optimizer(model, lr=tc.lr, weight_decay=tc.weight_decay)
    steps_per_epoch = math.ceil(len(train) / tc.batch_size)
    total = int(min(tc.epochs * steps_per_epoch, tc.max_steps or math.inf))
    best, best_state, best_epoch, bad, step = math.inf, None, 0, 0, 0
    history = []
    t0 = time.perf_counter()
    epoch = 0
    for epoch in range(1, tc.epochs + 1):
        model.train()
        order = epoch_order(len(train), seed=tc.seed, epoch=epoch)
        loss_sum, seen = 0.0, 0
        for start in range(0, len(order), tc.batch_size):
            if step >= total:
                break
            batch = train.batch(order[start : start + tc.batch_size])
            for group in opt.param_groups:
                group["lr"] = lr_at(
                    step, peak_lr=tc.lr, warmup_steps=tc.warmup_steps, total_steps=total
                )
            with autocast(torch.device("cpu"), tc.precision):
                loss = quantile_loss(model(batch).quantiles, batch.target, quantiles)
            loss.backward()
            if tc.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), tc.grad_clip)
            opt.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            loss_sum += float(loss) * batch.size
            seen += batch.size
        val_loss = validate(
            model,
            val,
            batch_size=tc.validation_batch_size,
            quantiles=quantiles,
            precision=tc.precision,
        )
        history.append(
            {"epoch": epoch, "train_loss": loss_sum / max(seen, 1), "val_loss": val_loss}
        )
        log.info(
            "epoch %d: train %.4f val %.4f (%d steps, %.0f s)",
            epoch,
            history[-1]["train_loss"],
            val_loss,
            step,
            time.perf_counter() - t0,
        )
        if val_loss < best:
            best, best_epoch, bad = val_loss, epoch, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            bad += 1
            if bad >= tc.patience:
                break
        if step >= total:
            break
    if best_state is not None:
        model.load_state_dict(best_state)
    return {
        "epochs": epoch,
        "best_epoch": best_epoch,
        "steps": step,
        "history": history,
        "train_s": time.perf_counter() - t0,
    }


def _scores(result: dict[str, Any]) -> dict[str, float]:
    return {
        "pinball": result["mean_pinball"],
        "p50_risk": result["q_risk"]["P50"],
        "p90_risk": result["q_risk"]["P90"],
        "coverage_10_90": result["coverage"]["10-90"],
        "n_windows": result["n_windows"],
    }


def score_test(model: Any, prepared: Any, cfg: Any, batch_size: int = 512) -> dict[str, float]:
    """Test-split scores of ``model`` in unscaled log returns (quantiles sorted per forecast)."""
    import torch

    from foxhunt.data.scale.scaler import unscale_targets
    from foxhunt.infer.evaluate import QuantileScores

    test = prepared.test
    scores = QuantileScores(cfg.model.quantiles, cfg.model.horizon)
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(test), batch_size):
            batch = test.batch(list(range(start, min(start + batch_size, len(test)))))
            pred = model(batch).quantiles.float().sort(dim=-1).values  # (B, H, Q)
            scores.update(
                unscale_targets(pred, prepared.scaler, horizon_axis=1),
                unscale_targets(batch.target, prepared.scaler, horizon_axis=1),
            )
    return _scores(scores.result())


def score_baselines(prepared: Any, cfg: Any) -> dict[str, dict[str, float]]:
    """The two baselines of ``foxhunt evaluate`` on the test split: zero-return persistence and
    the empirical quantiles of recent training returns (built exactly as ``foxhunt train``
    builds ``baselines.json``)."""
    import torch

    from foxhunt.baselines.empirical import EmpiricalQuantiles, zero_forecast
    from foxhunt.baselines.fit import recent_return_quantiles
    from foxhunt.data.scale.scaler import unscale_targets
    from foxhunt.infer.evaluate import QuantileScores

    q, h = tuple(cfg.model.quantiles), cfg.model.horizon
    test = prepared.test
    empirical = EmpiricalQuantiles.from_dict(
        recent_return_quantiles(prepared.train, prepared.scaler, q)
    )
    target = unscale_targets(
        test.target[torch.as_tensor(test.origin_rows())].double(), prepared.scaler
    )  # (N, H)
    out = {}
    for name, pred in (
        ("zero-return persistence", zero_forecast(len(test), h, len(q))),
        ("empirical quantiles", empirical.predict(test.origins()["symbol"].to_list())),
    ):
        s = QuantileScores(q, h)
        s.update(pred, target)
        out[name] = _scores(s.result())
    return out


def run_recipe(a: argparse.Namespace) -> dict[str, Any]:
    """``foxhunt train --preset demo --seed S`` as a user runs it (its own epochs, target scale,
    kept start, calibration), scored on the same test windows as the networks above through
    the served quantile map (``tft_quantiles``: what ``foxhunt evaluate`` scores)."""
    import tempfile
    import time

    import torch

    from foxhunt.artifacts.calibration import quantile_map
    from foxhunt.artifacts.rundir import load_model_dir
    from foxhunt.config import preset
    from foxhunt.data.pipeline import prepare_training_data
    from foxhunt.data.scale.scaler import unscale_targets
    from foxhunt.infer.evaluate import QuantileScores
    from foxhunt.infer.quantiles import tft_quantiles
    from foxhunt.train.run import run_training

    torch.set_num_threads(a.threads)
    cfg = preset("demo").replace(train={"seed": a.seed})
    if a.max_steps:  # --quick
        cfg = cfg.replace(train={"max_steps": a.max_steps})
    prepared = prepare_training_data(a.bars, cfg)  # the windows every model is scored on
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        trained = run_training(cfg, a.bars, Path(tmp) / "run", None, None, False)
        train_s = time.perf_counter() - t0
        loaded = load_model_dir(trained.root)
        qmap, test = quantile_map(loaded), prepared.test
        scores = QuantileScores(cfg.model.quantiles, cfg.model.horizon)
        loaded.model.eval()
        for start in range(0, len(test), 512):
            batch = test.batch(list(range(start, min(start + 512, len(test)))))
            pred = tft_quantiles(loaded.model, batch, qmap, device=torch.device("cpu"))
            scores.update(pred, unscale_targets(batch.target.double(), prepared.scaler))
        served = loaded.config
    return {
        "dataset": a.dataset,
        "model": "foxhunt-recipe",
        "seed": a.seed,
        "params": sum(p.numel() for p in loaded.model.parameters()),
        "fingerprint": prepared.fingerprint,
        "windows": {"train": len(prepared.train), "val": len(prepared.val), "test": len(test)},
        "config": served.to_dict(),
        "epochs": served.train.epochs,
        "best_epoch": trained.best_epoch,
        "train_s": train_s,
        "test": _scores(scores.result()),
    }


def run_train(a: argparse.Namespace) -> dict[str, Any]:
    """Prepare data, build the model, train with the shared recipe, score test (+ baselines)."""
    import torch

    from foxhunt.config import preset
    from foxhunt.data.pipeline import prepare_training_data

    if a.model == "foxhunt-recipe":
        return run_recipe(a)
    torch.set_num_threads(a.threads)
    cfg = preset("demo")
    train_over: dict[str, Any] = {"epochs": a.epochs, "seed": a.seed, "precision": a.precision}
    if a.max_steps:
        train_over["max_steps"] = a.max_steps
    model_over: dict[str, Any] = {}
    for item in a.model_set or ():
        key, _, value = item.partition("=")
        current = getattr(cfg.model, key)
        model_over[key] = type(current)(value) if not isinstance(current, str) else value
    cfg = (
        cfg.replace(train=train_over, model=model_over)
        if model_over
        else cfg.replace(train=train_over)
    )
    prepared = prepare_training_data(a.bars, cfg)
    torch.manual_seed(a.seed)
    if a.model == "foxhunt":
        from foxhunt.model.tft import TFT

        model = TFT(cfg.model)
    else:
        model = pf_adapter(cfg.model, a.seed)
    n_params = sum(p.numel() for p in model.parameters())
    fit = train_model(model, prepared, cfg)
    record: dict[str, Any] = {
        "dataset": a.dataset,
        "model": a.model,
        "seed": a.seed,
        "params": n_params,
        "fingerprint": prepared.fingerprint,
        "windows": {
            "train": len(prepared.train),
            "val": len(prepared.val),
            "test": len(prepared.test),
        },
        "config": cfg.to_dict(),
        **fit,
        "test": score_test(model, prepared, cfg),
    }
    if a.model == "foxhunt":
        record["baselines"] = score_baselines(prepared, cfg)
    return record


def main(argv: list[str] | None = None) -> int:
    """Worker entry point: ``bars`` or ``train``; prints one JSON line."""
    p = argparse.ArgumentParser(description="accuracy worker (see module docstring)")
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bars")
    b.add_argument("--dataset", choices=DATASETS, required=True)
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--n-bars", type=int, default=DEMO_BARS)
    t = sub.add_parser("train")
    t.add_argument("--model", choices=["foxhunt", "pf", "foxhunt-recipe"], required=True)
    t.add_argument("--bars", type=Path, required=True)
    t.add_argument("--dataset", default="custom")
    t.add_argument("--epochs", type=int, default=3)
    t.add_argument("--max-steps", type=int)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--threads", type=int, default=2)
    t.add_argument(
        "--precision",
        choices=["fp32", "bf16"],
        default="fp32",
        help="training precision (bf16: CPU autocast, as foxhunt train --precision bf16)",
    )
    t.add_argument(
        "--model-set",
        action="append",
        metavar="FIELD=VALUE",
        help="override a demo-preset model field for both networks (experiments), e.g. "
        "dropout=0.2 or vsn_mode=faithful",
    )
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    if a.cmd == "bars":
        record = write_bars(a.dataset, a.out, a.n_bars)
    else:
        import warnings

        warnings.filterwarnings("ignore")
        record = run_train(a)
    print(json.dumps(record, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
