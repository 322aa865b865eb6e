"""TFT training steps on a CUDA device: samples/s and the allocator's peak against the estimate.

For each (precision, batch size), in a fresh process of its own (so that CUDA's libraries
allocate their buffers inside the measurement, as in a real run), it builds a TFT-225
(``tft_225().model``, or ``--preset``), trains ``--warmup`` + ``--steps`` steps of forward + quantile loss + backward +
AdamW on random inputs (``foxhunt.model.batch.random_batch``, moved to the device once), and
prints one JSON line:

- ``samples_per_s``: batch / median step time, each step timed between two
  ``torch.cuda.synchronize()`` calls;
- ``peak_bytes``: ``torch.cuda.max_memory_allocated`` minus the bytes allocated before the model
  was built (the batch is already there; no matrix product has run yet, so the cuBLAS
  workspaces are inside), i.e. what ``estimate_memory(..., device="cuda")`` calls the training
  peak less the batch; ``estimate_bytes`` is that estimate and ``estimate_error`` =
  estimate / measured - 1;
- ``reserved_bytes``: ``torch.cuda.max_memory_reserved`` (what ``nvidia-smi`` sees, plus the
  CUDA context).

bf16 and fp16 run forward and loss under ``torch.autocast("cuda", ...)``, fp16 with a
``GradScaler`` as ``foxhunt train`` does; fp32 leaves TF32 off (PyTorch's default for matmuls).
``--recompute on off`` measures both settings of ``TrainConfig.recompute`` (VSN streaming and
LSTM recomputation; ``off`` is what the budget planner picks where memory is plentiful),
``--checkpointing off on`` both settings of activation checkpointing; every combination of
precision, batch size, recompute and checkpointing is one fresh process. ``--jobs N`` runs N
of them at once on the GPU: each process's allocator peak is its own, so the memory columns
hold, but the step times are then shared-GPU times (``"jobs"`` in the record says so).
Without CUDA it exits 2 with one line.

Run (needs a GPU; docs/benchmarks.md "On a GPU"):
    python benchmarks/cuda_step.py --batch-sizes 32 256 1024 --precisions fp32 bf16
    python benchmarks/cuda_step.py --precisions fp32 bf16 fp16 --recompute on off \
        --checkpointing off on --jobs 4     # the estimate's error in every setting
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", default="tft-225", help="a foxhunt preset (tft-225)")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[32, 256, 1024])
    p.add_argument("--precisions", nargs="+", choices=["fp32", "bf16", "fp16"],
                   default=["fp32", "bf16"])  # fmt: skip
    p.add_argument("--recompute", nargs="+", choices=["on", "off"], default=["on"])
    p.add_argument("--checkpointing", nargs="+", choices=["off", "on"], default=["off"])
    p.add_argument("--jobs", type=int, default=1, help="settings measured at once (memory only)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--device", default="cuda")
    # PRECISION,BATCH,RECOMPUTE,CHECKPOINTING: this process measures one setting
    p.add_argument("--one", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def measure(
    cfg, batch_size: int, precision: str, recompute: bool, checkpointing: bool,
    a: argparse.Namespace,
) -> dict:  # fmt: skip
    """One setting on a clean allocator: throughput and peak over a fresh model."""
    import torch

    from foxhunt.memory.estimate import estimate_memory
    from foxhunt.model import TFT, quantile_loss
    from foxhunt.model.batch import random_batch
    from foxhunt.model.recompute import set_checkpointing, set_internal_recompute

    dev = torch.device(a.device)
    torch.manual_seed(0)
    batch = random_batch(cfg, batch_size).to(dev)
    torch.cuda.synchronize(dev)
    torch.cuda.reset_peak_memory_stats(dev)
    base = torch.cuda.memory_allocated(dev)
    model = TFT(cfg).to(dev).train()
    set_internal_recompute(model, recompute)
    set_checkpointing(model, checkpointing)
    opt = torch.optim.AdamW(model.parameters())
    q = torch.tensor(cfg.quantiles, device=dev)
    half = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    autocast = torch.autocast("cuda", dtype=half or torch.float32, enabled=half is not None)
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")

    def step() -> None:
        with autocast:
            loss = quantile_loss(model(batch).quantiles, batch.target, q)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    times = []
    for i in range(a.warmup + a.steps):
        torch.cuda.synchronize(dev)
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize(dev)
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    measured = torch.cuda.max_memory_allocated(dev) - base
    est = estimate_memory(cfg, batch_size, precision=precision, device="cuda",
                          recompute=recompute, checkpointing=checkpointing)  # fmt: skip
    estimate = est.training_peak_bytes - est.batch_bytes
    record = {
        "preset": a.preset,
        "device": torch.cuda.get_device_name(dev),
        "torch": torch.__version__,
        "precision": precision,
        "batch_size": batch_size,
        "recompute": recompute,
        "checkpointing": checkpointing,
        "jobs": a.jobs,
        "median_step_ms": round(1e3 * statistics.median(times), 3),
        "min_step_ms": round(1e3 * min(times), 3),
        "samples_per_s": round(batch_size / statistics.median(times), 1),
        "peak_bytes": measured,
        "estimate_bytes": estimate,
        "estimate_error": round(estimate / measured - 1, 4),
        "reserved_bytes": torch.cuda.max_memory_reserved(dev),
    }
    return record


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("cuda_step.py: no CUDA device here (torch.cuda.is_available() is False)")
        return 2
    from foxhunt.config import preset

    if a.one:
        precision, b, rc, ck = a.one.split(",")
        record = measure(preset(a.preset).model, int(b), precision, rc == "on", ck == "on", a)
        print(json.dumps(record), flush=True)
        return 0
    settings = [
        f"{precision},{b},{rc},{ck}"
        for precision in a.precisions
        for rc in a.recompute
        for ck in a.checkpointing
        for b in a.batch_sizes
    ]
    failed = 0
    running: list[subprocess.Popen] = []
    for one in settings:
        cmd = [sys.executable, __file__, "--one", one, "--preset", a.preset, "--warmup",
               str(a.warmup), "--steps", str(a.steps), "--device", a.device, "--jobs", str(a.jobs)]  # fmt: skip
        running.append(subprocess.Popen(cmd))
        while len(running) >= max(1, a.jobs):
            failed += running.pop(0).wait() != 0
    failed += sum(p.wait() != 0 for p in running)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
