"""Does ``torch.compile`` pay on CPU? Eager vs compiled training step, compile time included.

Each variant runs in a fresh process: the preset's model at ``--batch-size`` with foxhunt's
defaults (precision ``--precision``, recompute off, glibc's allocator), one random batch,
``--threads`` threads. ``compiled`` wraps a forward in ``torch.compile`` (inductor, static
shapes): the model's (``--scope model``) or only the historical VSN's (``--scope
historical-vsn``, where the per-variable elementwise work is); the backward is compiled by
AOTAutograd with it. Reported: seconds for the first two steps (the compilation), the median
and minimum of the next ``--steps`` steps in wall and in CPU seconds (``time.process_time``: on
a busy machine, with one thread, the work), and the break-even step count (compile time / wall
time saved per step)::

    .venv/bin/python benchmarks/experiments/compile_step.py --preset demo --batch-size 64
    .venv/bin/python benchmarks/experiments/compile_step.py --preset tft-225 --batch-size 32 \
        --precision fp32 --threads 1 --scope historical-vsn

Results: ``benchmarks/results/compile_<preset>_b<batch>[_<precision>_t<threads>_<scope>].json``
(the suffix where an option differs from its default).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results"


def one(  # noqa: PLR0913
    preset_name: str,
    batch: int,
    variant: str,
    steps: int,
    precision_arg: str,
    threads: int,
    scope: str,
) -> dict[str, object]:
    import torch

    from foxhunt.config import preset
    from foxhunt.model import TFT
    from foxhunt.model.batch import random_batch
    from foxhunt.runtime import resolve_precision
    from foxhunt.train.optimizer.optim import build_optimizer
    from foxhunt.train.resources.oom import MicroBatching
    from foxhunt.train.step import train_step

    torch.set_num_threads(threads)
    cfg = preset(preset_name)
    precision = resolve_precision(precision_arg, torch.device("cpu"))
    torch.manual_seed(0)
    model = TFT(cfg.model).train()
    if variant == "compiled":
        target = model if scope == "model" else model.historical_vsn
        target.forward = torch.compile(target.forward, dynamic=False)  # type: ignore[method-assign]
    opt = build_optimizer(model, lr=1e-3, weight_decay=1e-2)
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    b = random_batch(cfg.model, batch, seed=0)
    q = torch.tensor(cfg.model.quantiles)
    micro = MicroBatching(batch, batch)

    def step(i: int) -> None:
        train_step(model, b, opt, scaler, micro, quantiles=q, precision=precision,  # type: ignore[arg-type]
                   grad_clip=1.0, step=i)  # fmt: skip

    t0 = time.perf_counter()
    step(0)
    step(1)
    first = time.perf_counter() - t0
    times, cpu = [], []
    for i in range(steps):
        t, c = time.perf_counter(), time.process_time()
        step(i + 2)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    times.sort()
    cpu.sort()
    return {"variant": variant, "precision": precision, "threads": threads, "scope": scope,
            "first_two_steps_s": first, "median_step_s": times[len(times) // 2],
            "min_step_s": times[0], "median_step_cpu_s": cpu[len(cpu) // 2],
            "min_step_cpu_s": cpu[0]}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", default="demo")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--precision", choices=["auto", "fp32", "bf16"], default="auto")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--scope", choices=["model", "historical-vsn"], default="model")
    p.add_argument("--one", choices=["eager", "compiled"])
    a = p.parse_args()
    if a.one:
        row = one(a.preset, a.batch_size, a.one, a.steps, a.precision, a.threads, a.scope)
        print(json.dumps(row))
        return
    rows = {}
    for variant in ("eager", "compiled"):
        out = subprocess.run(
            [sys.executable, __file__, "--preset", a.preset, "--batch-size", str(a.batch_size),
             "--steps", str(a.steps), "--precision", a.precision, "--threads", str(a.threads),
             "--scope", a.scope, "--one", variant],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        rows[variant] = json.loads(out.stdout.strip().splitlines()[-1])
        print(json.dumps(rows[variant]), flush=True)
    eager, comp = rows["eager"], rows["compiled"]
    saved = float(eager["median_step_s"]) - float(comp["median_step_s"])  # type: ignore[arg-type]
    extra = float(comp["first_two_steps_s"]) - float(eager["first_two_steps_s"])  # type: ignore[arg-type]
    summary = {
        "command": "benchmarks/experiments/compile_step.py " + " ".join(sys.argv[1:]),
        "preset": a.preset, "batch": a.batch_size, **{k: rows[k] for k in rows},
        "saved_per_step_s": saved, "compile_s": extra,
        "break_even_steps": extra / saved if saved > 0 else None,
    }  # fmt: skip
    suffix = ""
    if (a.precision, a.threads, a.scope) != ("auto", 2, "model"):
        suffix = f"_{a.precision}_t{a.threads}_{a.scope}"
    RESULTS.mkdir(exist_ok=True)
    name = f"compile_{a.preset}_b{a.batch_size}{suffix}.json"
    (RESULTS / name).write_text(json.dumps(summary, indent=2))
    print(
        json.dumps({k: summary[k] for k in ("saved_per_step_s", "compile_s", "break_even_steps")})
    )


if __name__ == "__main__":
    main()
