"""Diagnostic harness for issue 26: why the TFT never beats its start.

Prepares a bars file once (cached as a pickle), then runs short training experiments in process,
measuring the loss on fixed training/validation subsamples vs the start, per-block gradient norms,
and per-horizon / per-quantile effects.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pickle
import sys
import time
from pathlib import Path

import numpy as np
import torch

from foxhunt.config import preset
from foxhunt.data.scale.target import TargetScale
from foxhunt.model.quantile import pinball, quantile_loss
from foxhunt.model.recompute import set_internal_recompute
from foxhunt.model.tft import BLOCK_NAMES, TFT
from foxhunt.train.head_init import init_monotone_head, standardised_target_quantiles
from foxhunt.train.optimizer.optim import build_optimizer
from foxhunt.train.optimizer.schedule import lr_at
from foxhunt.train.prepare import prepare
from foxhunt.train.resources.oom import MicroBatching
from foxhunt.train.step import train_step


def load(bars: Path, cfg):
    cache = Path(os.environ.get("FOXHUNT_LEARN_CACHE", "/tmp/foxhunt_learn_cache")) / (
        bars.stem + f"_{cfg.preset}.pkl"
    )
    cache.parent.mkdir(exist_ok=True)
    if cache.exists():
        try:
            with cache.open("rb") as f:
                return pickle.load(f)
        except (ModuleNotFoundError, AttributeError):  # pickled by an older layout of foxhunt
            log_stale = f"stale cache {cache} (foxhunt's modules moved): preparing again"
            print(log_stale, file=sys.stderr)
    t = time.time()
    rd = prepare(bars, cfg, choose_scale=True, baselines=False)
    print(f"prepared in {time.time() - t:.0f}s", file=sys.stderr)
    with cache.open("wb") as f:
        pickle.dump((rd.data, rd.cfg), f, protocol=5)
    return rd.data, rd.cfg


def scaled_splits(bars: Path):
    """The demo preset's train and val windows of ``bars`` with the run's target scale applied,
    the quantile levels and the head's start: ``(cfg, train, val, q, start)`` (the block every
    learn_*.py script starts with)."""
    data, cfg = load(bars, preset("demo"))
    scale = TargetScale.of(cfg.data, data.spec, data.scaler)
    train, val = (d.with_target_scale(scale) for d in (data.train, data.val))
    q = torch.tensor(cfg.model.quantiles)
    start = standardised_target_quantiles(train, cfg.model.quantiles)
    return cfg, train, val, q, start


def subsample(n: int, k: int) -> list[int]:
    return np.unique(np.linspace(0, n - 1, min(k, n)).astype(int)).tolist()


@torch.no_grad()
def eval_loss(model, ds, idx, q, bs=1024, per=False):
    model.eval()
    acc = None
    n = 0
    for a in range(0, len(idx), bs):
        b = ds.batch(idx[a : a + bs])
        out = model(b).quantiles.float()
        pl = pinball(out.float(), b.target.float(), q.float()).double()  # (B,H,Q)
        s = pl.sum(0)
        acc = s if acc is None else acc + s
        n += b.size
    model.train()
    m = acc / n
    return (float(m.mean()), m) if per else float(m.mean())


def block_grad_norms(model):
    out = {}
    for name in BLOCK_NAMES:
        mod = getattr(model, name)
        gs = [p.grad for p in mod.parameters() if p.grad is not None]
        out[name] = (
            float(torch.linalg.vector_norm(torch.stack([g.norm() for g in gs]))) if gs else 0.0
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bars", type=Path, required=True)
    ap.add_argument("--preset", default="demo")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--warmup", type=int, default=None)
    ap.add_argument("--wd", type=float, default=None)
    ap.add_argument("--dropout", type=float, default=None)
    ap.add_argument("--hidden", type=int, default=None)
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--clip", type=float, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--head", default="zero", help="zero | small (N(0, s^2) weight) ")
    ap.add_argument("--head-std", type=float, default=0.01)
    ap.add_argument("--no-static", action="store_true", help="zero the static inputs")
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--n-train-eval", type=int, default=4096)
    ap.add_argument("--n-val-eval", type=int, default=8192)
    ap.add_argument("--tag", default="")
    ap.add_argument("--origin", type=int, default=0, help="decoder_origin_inputs")
    ap.add_argument("--results", type=Path, default=Path("benchmarks/results/learn26.jsonl"))
    a = ap.parse_args()
    torch.set_num_threads(1)

    cfg0 = preset(a.preset)
    data, cfg = load(a.bars, cfg0)
    m = cfg.model
    m = dataclasses.replace(
        m,
        hidden=a.hidden or m.hidden,
        dropout=m.dropout if a.dropout is None else a.dropout,
        decoder_origin_inputs=bool(a.origin),
    )
    tc = cfg.train
    tc = dataclasses.replace(
        tc,
        lr=a.lr or tc.lr,
        warmup_steps=tc.warmup_steps if a.warmup is None else a.warmup,
        weight_decay=tc.weight_decay if a.wd is None else a.wd,
        batch_size=a.batch or tc.batch_size,
        grad_clip=tc.grad_clip if a.clip is None else a.clip,
    )
    scale = TargetScale.of(cfg.data, data.spec, data.scaler)
    train, val = (d.with_target_scale(scale) for d in (data.train, data.val))
    q = torch.tensor(m.quantiles)
    torch.manual_seed(a.seed)
    model = TFT(m)
    set_internal_recompute(model, tc.recompute)
    start_q = standardised_target_quantiles(train, m.quantiles)
    init_monotone_head(model.output, start_q)
    if a.head == "small":
        with torch.no_grad():
            model.output.weight.normal_(0.0, a.head_std)
    if a.no_static:
        orig = train.batch, val.batch

        def strip(fn):
            def f(idx):
                b = fn(idx)
                return dataclasses.replace(b, static=torch.zeros_like(b.static))

            return f

        train.batch, val.batch = strip(orig[0]), strip(orig[1])

    tr_idx = subsample(len(train), a.n_train_eval)
    va_idx = subsample(len(val), a.n_val_eval)
    rec = {
        "bars": a.bars.name,
        "n_train": len(train),
        "n_val": len(val),
        "args": vars(a) | {"bars": str(a.bars), "results": str(a.results)},
        "scale": {
            "decay": cfg.data.target_scale_decay,
            "phi": cfg.data.target_scale_reversion,
            "season": bool(cfg.data.target_scale_season),
        },
    }
    start_tr = eval_loss(model, train, tr_idx, q)
    start_va, start_per = eval_loss(model, val, va_idx, q, per=True)
    print(
        f"n_train {len(train)} n_val {len(val)} start train {start_tr:.5f} val {start_va:.5f}",
        flush=True,
    )

    opt = build_optimizer(model, lr=tc.lr, weight_decay=tc.weight_decay)
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    micro = MicroBatching(tc.batch_size, tc.batch_size)
    g = torch.Generator().manual_seed(a.seed)
    order = torch.randperm(len(train), generator=g).tolist()

    # grad norms at step 0, on one batch, without stepping
    b0 = train.batch(order[: tc.batch_size])
    out = model(b0).quantiles.float()
    loss0 = quantile_loss(out, b0.target, q)
    loss0.backward()
    g0 = block_grad_norms(model)
    model.zero_grad(set_to_none=True)
    print("step0 grad norms", {k: f"{v:.2e}" for k, v in g0.items()}, flush=True)
    rec["grad0"] = g0

    curve = []
    gnorms = []
    t0 = time.time()
    best_va, best_step = start_va, 0
    for step in range(a.steps):
        idx = order[step * tc.batch_size : (step + 1) * tc.batch_size]
        batch = train.batch(idx)
        lr = lr_at(step, peak_lr=tc.lr, warmup_steps=tc.warmup_steps, total_steps=a.steps)
        for grp in opt.param_groups:
            grp["lr"] = lr
        # capture per-block grad norms: hook via before_optimizer_step
        captured = {}

        def cap(_s, captured=captured):
            captured.update(block_grad_norms(model))

        loss, gn, _ = train_step(
            model,
            batch,
            opt,
            scaler,
            micro,
            quantiles=q,
            precision="fp32",
            grad_clip=tc.grad_clip,
            step=step,
            before_optimizer_step=cap,
        )
        if step in (0, 1, 2, 5, 10, 20, 50, 100, 200, 400, 800) or step == a.steps - 1:
            gnorms.append(
                {
                    "step": step,
                    "total": gn,
                    "w_out": float(model.output.weight.abs().max()),
                    **captured,
                }
            )
        if (step + 1) % a.eval_every == 0 or step == a.steps - 1:
            tr = eval_loss(model, train, tr_idx, q)
            va = eval_loss(model, val, va_idx, q)
            if va < best_va:
                best_va, best_step = va, step + 1
            curve.append({"step": step + 1, "train": tr, "val": va, "batch_loss": loss, "lr": lr})
            print(
                f"step {step + 1} lr {lr:.2e} batch {loss:.4f} train {tr:.5f} ({(tr / start_tr - 1) * 100:+.2f}%) "
                f"val {va:.5f} ({(va / start_va - 1) * 100:+.2f}%) gn {gn:.3f} |Wout| {float(model.output.weight.abs().max()):.3f} "
                f"{time.time() - t0:.0f}s",
                flush=True,
            )
    end_va, end_per = eval_loss(model, val, va_idx, q, per=True)
    print(
        "per horizon rel %:",
        [f"{x:+.2f}" for x in ((end_per.mean(1) / start_per.mean(1) - 1) * 100).tolist()],
    )
    print(
        "per quantile rel %:",
        [f"{x:+.2f}" for x in ((end_per.mean(0) / start_per.mean(0) - 1) * 100).tolist()],
    )
    rec.update(
        start_train=start_tr,
        start_val=start_va,
        curve=curve,
        gnorms=gnorms,
        best_val=best_va,
        best_step=best_step,
        per_h=((end_per.mean(1) / start_per.mean(1) - 1) * 100).tolist(),
        per_q=((end_per.mean(0) / start_per.mean(0) - 1) * 100).tolist(),
        seconds=time.time() - t0,
    )
    with a.results.open("a") as f:
        f.write(json.dumps(rec) + "\n")
    print("gnorms", json.dumps(gnorms[:4]))


if __name__ == "__main__":
    main()
