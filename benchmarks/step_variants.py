"""Time one training step of a preset under allocator x precision x internal recompute.

Each variant runs in a fresh process (the allocator is process-wide): ``--warmup`` steps, then
``--steps`` timed steps of :func:`foxhunt.train.step.train_step` on one random batch. Reports
wall and CPU seconds per step (CPU time is less disturbed by a busy machine than wall time)::

    PYTHONPATH=src python benchmarks/step_variants.py --preset demo --batch-size 64

``--one ALLOC PRECISION RECOMPUTE`` runs one variant in this process (what the parent calls).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time


def one(preset_name: str, batch: int, alloc: str, precision: str, recompute: bool, steps: int,
        warmup: int, threads: int | None) -> dict[str, object]:  # fmt: skip
    import torch

    from foxhunt.config import preset
    from foxhunt.memory.allocator import apply_cpu_allocator
    from foxhunt.memory.counters import peak_rss_bytes
    from foxhunt.model import TFT
    from foxhunt.model.batch import random_batch
    from foxhunt.model.recompute import set_internal_recompute
    from foxhunt.train.optimizer.optim import build_optimizer
    from foxhunt.train.resources.oom import MicroBatching
    from foxhunt.train.step import train_step

    if threads:
        torch.set_num_threads(threads)
    cfg = preset(preset_name).replace(
        train={"batch_size": batch, "cpu_allocator": alloc, "precision": precision}
    )
    apply_cpu_allocator(cfg)
    torch.manual_seed(0)
    model = TFT(cfg.model).train()
    set_internal_recompute(model, recompute)
    opt = build_optimizer(model, lr=1e-3, weight_decay=1e-2)
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    b = random_batch(cfg.model, batch, seed=0)
    q = torch.tensor(cfg.model.quantiles)
    micro = MicroBatching(batch, batch)
    wall, cpu = [], []
    for i in range(warmup + steps):
        t0, c0 = time.perf_counter(), time.process_time()
        train_step(model, b, opt, scaler, micro, quantiles=q, precision=precision,  # type: ignore[arg-type]
                   grad_clip=1.0, step=i)  # fmt: skip
        if i >= warmup:
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    wall.sort()
    cpu.sort()
    return {
        "preset": preset_name, "batch": batch, "allocator": alloc, "precision": precision,
        "recompute": recompute, "wall_s_median": wall[len(wall) // 2],
        "cpu_s_median": cpu[len(cpu) // 2], "threads": torch.get_num_threads(),
        "peak_rss_mib": peak_rss_bytes() / 2**20,
    }  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--preset", default="demo")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--num-threads", type=int)
    p.add_argument("--allocators", nargs="+", default=["glibc", "lean"])
    p.add_argument("--precisions", nargs="+", default=["fp32", "bf16"])
    p.add_argument("--recompute", nargs="+", default=["on", "off"])
    p.add_argument("--one", nargs=3, metavar=("ALLOC", "PRECISION", "RECOMPUTE"))
    a = p.parse_args()
    if a.one:
        alloc, precision, rec = a.one
        print(json.dumps(one(a.preset, a.batch_size, alloc, precision, rec == "on", a.steps,
                             a.warmup, a.num_threads)))  # fmt: skip
        return
    for alloc in a.allocators:
        for precision in a.precisions:
            for rec in a.recompute:
                cmd = [sys.executable, __file__, "--preset", a.preset, "--batch-size",
                       str(a.batch_size), "--steps", str(a.steps), "--warmup", str(a.warmup),
                       "--one", alloc, precision, rec]  # fmt: skip
                if a.num_threads:
                    cmd += ["--num-threads", str(a.num_threads)]
                out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                print(out.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
