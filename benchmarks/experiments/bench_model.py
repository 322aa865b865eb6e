"""Training-step benchmark of foxhunt's TFT: both VSN modes, checkpointing off and on.

For each setting, a fresh process (this script with ``--worker``) times forward + quantile loss +
backward + ``AdamW.step`` at TFT-225 (or the flags' sizes), fp32, 2 threads by default, warm-up
steps excluded, and reports:

- median seconds per step and samples/s, and the median process CPU seconds per step (on a
  machine shared with other work, CPU time per step is the steadier number; with one thread it
  bounds the wall time an idle core would take);
- peak RSS over the baseline taken after imports and the synthetic batch, before the model is
  built (``harness.MemoryWindow``: the same window the pytorch-forecasting comparison uses);
- saved-activation bytes of one forward + loss (``saved_tensors_hooks``, deduplicated by storage;
  parameters and the input batch excluded), in total and per top-level block;
- FLOPs of one training step (forward + backward + the recomputation in backward;
  ``torch.utils.flop_counter.FlopCounterMode``, with the oneDNN LSTM kernels counted from their
  shapes) and the achieved FLOP/s; and forward FLOPs per top-level block.

Timings on a shared 2-core machine are noisy; the memory and FLOP numbers are deterministic.

Example:
    .venv/bin/python benchmarks/experiments/bench_model.py                 # the four TFT-225 settings
    .venv/bin/python benchmarks/experiments/bench_model.py --modes fused --checkpointing off --json
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # harness.py
import harness  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; model sizes default to TFT-225."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--modes", nargs="+", choices=["fused", "faithful"], default=["fused", "faithful"]
    )
    p.add_argument("--checkpointing", nargs="+", choices=["off", "on"], default=["off", "on"])
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--n-historical", type=int, default=210)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--max-seconds", type=float, default=60.0, help="time budget per setting")
    p.add_argument(
        "--allocator",
        nargs="+",
        choices=["default", "tuned"],
        default=["default"],
        help="glibc as is, or foxhunt.memory.allocator.tune_cpu_allocator (what `foxhunt train` does)",
    )
    p.add_argument("--json", action="store_true", help="print the records as a JSON list")
    p.add_argument("--worker", nargs=3, metavar=("MODE", "CKPT", "ALLOC"), help=argparse.SUPPRESS)
    return p.parse_args(argv)


def _lstm_flop_mapping() -> dict[Any, Any]:
    """FLOP formulas for the oneDNN LSTM ops, which FlopCounterMode does not know."""
    import torch

    aten = torch.ops.aten

    def fwd(inp: Any, w0: Any, w1: Any, *args: Any, out_shape: Any = None, **kwargs: Any) -> int:
        gates, n_in = w0
        _, n_hidden = w1
        return 2 * inp[0] * inp[1] * gates * (n_in + n_hidden)

    def bwd(inp: Any, w0: Any, w1: Any, *args: Any, out_shape: Any = None, **kwargs: Any) -> int:
        gates, n_in = w0
        _, n_hidden = w1
        return 2 * 2 * inp[0] * inp[1] * gates * (n_in + n_hidden)

    return {aten.mkldnn_rnn_layer: fwd, aten.mkldnn_rnn_layer_backward: bwd}


def worker(a: argparse.Namespace) -> dict[str, Any]:
    """Measure one setting in this (fresh) process."""
    mode, ckpt, alloc = a.worker
    harness.set_thread_env(a.threads)
    if alloc == "tuned":
        from foxhunt.memory.allocator import tune_cpu_allocator

        tune_cpu_allocator()
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from foxhunt.config import TFTConfig
    from foxhunt.memory.saved_tensors import saved_activation_bytes, saved_activations_by_block
    from foxhunt.model import TFT, TFTBatch, quantile_loss, set_checkpointing

    harness.pin_torch_threads(a.threads)
    torch.manual_seed(0)
    cfg = TFTConfig(vsn_mode=mode, n_historical=a.n_historical)
    syn = harness.synthetic_batch(
        a.batch_size, cfg.n_static, cfg.n_historical, cfg.n_known, cfg.encoder_length, cfg.horizon
    )
    batch = TFTBatch(syn.static, syn.historical, syn.known, syn.target)
    quantiles = torch.tensor(cfg.quantiles)
    mem = harness.MemoryWindow()
    mem.start()  # after imports and data, before the model

    model = TFT(cfg).train()
    set_checkpointing(model, ckpt == "on")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def forward_loss() -> torch.Tensor:
        return quantile_loss(model(batch).quantiles, batch.target, quantiles)

    def step() -> None:
        forward_loss().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    cpu_times: list[float] = []

    def timed_step() -> None:  # also the process CPU time, which contention inflates less
        began = time.process_time()
        step()
        cpu_times.append(time.process_time() - began)

    times = harness.time_calls(timed_step, a.warmup, a.steps, a.max_seconds)
    cpu_times = cpu_times[a.warmup :]
    peak = mem.peak_over_baseline()
    exclude = [*model.parameters(), syn.static, syn.historical, syn.known, syn.target]
    saved = saved_activation_bytes(forward_loss, exclude=exclude)
    saved_blocks = saved_activations_by_block(model, forward_loss, exclude=exclude)
    counter = FlopCounterMode(display=False, custom_mapping=_lstm_flop_mapping())
    with counter:
        forward_loss().backward()
    opt.zero_grad(set_to_none=True)
    flops = int(counter.get_total_flops())  # forward + backward + recomputation
    # Per block: the forward alone, without autograd (no recomputation), where the counter's
    # attribution to modules is exact (in backward it is not).
    fwd_counter = FlopCounterMode(display=False, custom_mapping=_lstm_flop_mapping())
    with torch.no_grad(), fwd_counter:
        forward_loss()
    block_flops = {
        name.split(".", 1)[1]: int(sum(v.values()))
        for name, v in fwd_counter.get_flop_counts().items()
        if name.count(".") == 1
    }
    stats = harness.summarize_times(times, a.batch_size)
    return {
        "vsn_mode": mode,
        "checkpointing": ckpt == "on",
        "allocator": alloc,
        "batch_size": a.batch_size,
        "n_historical": a.n_historical,
        "params": sum(p.numel() for p in model.parameters()),
        "steps": len(times),
        **stats,
        "median_cpu_s": statistics.median(cpu_times),
        "peak_rss_over_baseline_bytes": peak,
        "saved_activation_bytes": saved,
        "saved_by_block": saved_blocks,
        "flops_per_step": flops,
        "forward_flops": int(fwd_counter.get_total_flops()),
        "forward_flops_by_block": block_flops,
        "flops_per_s": flops / stats["median_s"],
        **harness.environment(),
    }


def _table(records: list[dict[str, Any]], command: str) -> None:
    from rich.console import Console
    from rich.table import Table

    mib = 2**20
    t = Table(title="foxhunt TFT training step (fp32; timings noisy on a shared machine)")
    cols = ("vsn", "ckpt", "malloc", "s/step", "CPU s/step", "samples/s", "GFLOP/step")
    for col in (*cols, "GFLOP/s", "saved MiB", "peak RSS MiB"):
        t.add_column(col, justify="right")
    for r in records:
        t.add_row(
            r["vsn_mode"],
            "on" if r["checkpointing"] else "off",
            r["allocator"],
            f"{r['median_s']:.3f}",
            f"{r['median_cpu_s']:.3f}",
            f"{r['samples_per_s']:.1f}",
            f"{r['flops_per_step'] / 1e9:.1f}",
            f"{r['flops_per_s'] / 1e9:.1f}",
            f"{r['saved_activation_bytes'] / mib:.1f}",
            f"{r['peak_rss_over_baseline_bytes'] / mib:.0f}",
        )
    con = Console(width=150)
    con.print(t)
    for r in records:
        if r["allocator"] != "default":
            continue  # same model, same FLOPs and saved bytes
        blocks = Table(title=f"per block: vsn={r['vsn_mode']}, ckpt={r['checkpointing']}")
        for col in ("block", "forward GFLOP", "saved MiB"):
            blocks.add_column(col, justify="right")
        for name, saved in r["saved_by_block"].items():
            blocks.add_row(
                name,
                f"{r['forward_flops_by_block'].get(name, 0) / 1e9:.2f}",
                f"{saved / mib:.1f}",
            )
        con.print(blocks)
    con.print(f"command: {command}")


def main(argv: list[str] | None = None) -> int:
    """Run every requested setting in its own process; print a table (or JSON)."""
    a = parse_args(argv)
    if a.worker:
        harness.emit(worker(a))
        return 0
    records = []
    passthrough = [
        f"--{k}={getattr(a, k.replace('-', '_'))}"
        for k in ("batch-size", "n-historical", "threads", "warmup", "steps", "max-seconds")
    ]
    settings = [(m, c, al) for m in a.modes for c in a.checkpointing for al in a.allocator]
    for setting in settings:
        began = time.perf_counter()
        cmd = [sys.executable, os.path.abspath(__file__), *passthrough, "--worker", *setting]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.stderr.write(done.stderr)
            return done.returncode
        records.append(json.loads(done.stdout.strip().splitlines()[-1]))
        sys.stderr.write(f"{'/'.join(setting)}: {time.perf_counter() - began:.0f} s\n")
    command = shlex.join([os.path.relpath(sys.executable), *sys.argv])
    if a.json:
        sys.stdout.write(json.dumps({"command": command, "records": records}, indent=2) + "\n")
    else:
        _table(records, command)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
