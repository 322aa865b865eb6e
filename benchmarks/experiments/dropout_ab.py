"""ByteDropout vs torch.nn.Dropout vs no dropout, in one process, step by step.

The three variants alternate on the same model and batch (swapping the GLU dropout modules
between steps), so load drift hits them alike; CPU seconds per training step, 1 thread::

    .venv/bin/python benchmarks/experiments/dropout_ab.py --preset demo --batch-size 64

prints min and median per variant (results: ``benchmarks/results/dropout_<preset>.json``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from torch import nn

from foxhunt.config import preset
from foxhunt.model import TFT
from foxhunt.model.batch import random_batch
from foxhunt.model.dropout import ByteDropout
from foxhunt.runtime import resolve_precision
from foxhunt.train.optimizer.optim import build_optimizer
from foxhunt.train.resources.oom import MicroBatching
from foxhunt.train.step import train_step

RESULTS = Path(__file__).resolve().parents[1] / "results"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", default="demo")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--rounds", type=int, default=10)
    a = p.parse_args()
    torch.set_num_threads(1)
    cfg = preset(a.preset)
    precision = resolve_precision(cfg.train.precision, torch.device("cpu"))
    torch.manual_seed(0)
    model = TFT(cfg.model).train()
    slots = [(m, n) for m in model.modules() for n, c in m.named_children()
             if isinstance(c, ByteDropout)]  # fmt: skip
    p_drop = cfg.model.dropout
    make = {"byte": lambda: ByteDropout(p_drop), "torch": lambda: nn.Dropout(p_drop),
            "none": nn.Identity}  # fmt: skip
    opt = build_optimizer(model, lr=1e-3, weight_decay=1e-2)
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    batch = random_batch(cfg.model, a.batch_size, seed=0)
    q = torch.tensor(cfg.model.quantiles)
    micro = MicroBatching(a.batch_size, a.batch_size)
    times: dict[str, list[float]] = {k: [] for k in make}
    for i in range(a.rounds * len(make)):
        variant = list(make)[i % len(make)]
        for m, n in slots:
            setattr(m, n, make[variant]())
        for timed in (False, True):  # one untimed step after each swap
            t = time.process_time()
            train_step(model, batch, opt, scaler, micro, quantiles=q, precision=precision,  # type: ignore[arg-type]
                       grad_clip=1.0, step=i)  # fmt: skip
            if timed:
                times[variant].append(time.process_time() - t)
    out = {
        v: {"min_cpu_s": min(ts), "median_cpu_s": sorted(ts)[len(ts) // 2]}
        for v, ts in times.items()
    }
    out["command"] = (
        f"benchmarks/experiments/dropout_ab.py --preset {a.preset} --batch-size {a.batch_size}"  # type: ignore[assignment]
    )
    out["precision"] = precision  # type: ignore[assignment]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"dropout_{a.preset}.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
