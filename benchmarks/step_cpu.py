"""A training step as ``foxhunt train`` runs it, in CPU seconds against the CPU-time GEMM peak.

For a busy machine: wall time there measures the other processes, CPU time with one thread
(no OpenMP spin-waiting) tracks the work. One fresh process builds the preset's network with
``foxhunt train``'s defaults (allocator applied, huge pages on, recompute off, foxhunt's AdamW,
gradient clipping, precision as given), times ``--steps`` steps after ``--warmup`` in CPU
seconds (``time.process_time``: user + system, so page faults count), counts one step's FLOPs
(``torch.utils.flop_counter`` plus the oneDNN LSTM kernels, as ``foxhunt_step.py``) and times a
square fp32 ``torch.mm`` (sizes 1024 and 2048) the same way: ``gflops_per_cpu_s`` over
``gemm_peak_gflops_per_cpu_s`` is the share of the GEMM peak the step reaches. Prints ONE JSON
line; ``--profile`` adds a ``torch.profiler`` table (self CPU time per op, 3 steps) on stderr.

Synthetic inputs (``harness.synthetic_batch``); no data file is read.

    PYTHONPATH=src .venv/bin/python benchmarks/step_cpu.py --preset tft-225 --batch-size 32
    PYTHONPATH=src .venv/bin/python benchmarks/step_cpu.py --preset demo --batch-size 64 --profile

``--bytes-written`` adds ``bytes_written_per_step``: the bytes every op of one step writes
(:func:`bytes_written`; deterministic, so it compares two versions of the code where the
machine's noise hides their times), and ``large_block_bytes_per_step``: the bytes of the
step's tensors of 4 MiB and more (:func:`large_block_bytes`), the blocks the ``balanced``
allocator maps afresh, each page faulted in and zeroed by the kernel (an in-place op writes
as many bytes as a new tensor, but into pages already there).

``--historical-vsn`` adds ``historical_vsn_cpu_s_min``: the historical variable selection
network's forward and backward alone (the same model's block, random ``(B, encoder, V)`` inputs
and static context, gradients dropped after each call), the part of the step with the least
GEMM work per byte.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")  # as the foxhunt CLI does (memory/allocator.py)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def cpu_seconds(fn, warmup: int, steps: int) -> list[float]:  # noqa: ANN001
    """CPU seconds of each of ``steps`` calls after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(steps):
        t0 = time.process_time()
        fn()
        out.append(time.process_time() - t0)
    return out


_ALLOCATING = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"})


def bytes_written(fn) -> int:  # noqa: ANN001
    """Bytes the ops run by ``fn()`` write: every tensor an op returns (in-place results too),
    except views, which write nothing, and fresh allocations, which are written by the op
    that fills them. A count over the dispatcher, so the same on every machine."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class Census(TorchDispatchMode):
        total = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            out = func(*args, **(kwargs or {}))
            returns = func._schema.returns
            alias = returns[0].alias_info if returns else None
            if (alias is not None and not alias.is_write) or (
                func.overloadpacket.__name__ in _ALLOCATING
            ):
                return out
            for t in tree_flatten(out)[0]:
                if isinstance(t, torch.Tensor):
                    Census.total += t.numel() * t.element_size()
            return out

    with Census():
        fn()
    return Census.total


def large_block_bytes(fn, floor: int = 4 * 2**20) -> int:  # noqa: ANN001
    """Bytes of the CPU tensors of at least ``floor`` bytes that ``fn()`` allocates (the
    profiler's allocation events: the same on every machine)."""
    from torch.profiler import ProfilerActivity, profile

    from foxhunt.memory.tensor_peak import allocation_events

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    return sum(size for _, size in allocation_events(prof) if size >= floor)


def main(argv: list[str] | None = None) -> int:
    """Measure and print one JSON line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", default="tft-225")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--profile", action="store_true", help="torch.profiler table on stderr")
    p.add_argument(
        "--bytes-written",
        action="store_true",
        help="also count the bytes one step's ops write (deterministic)",
    )
    p.add_argument(
        "--historical-vsn",
        action="store_true",
        help="also time the historical VSN's forward and backward alone",
    )
    a = p.parse_args(argv)
    harness.set_thread_env(a.threads)
    import torch

    from foxhunt.config import preset
    from foxhunt.memory.allocator import apply_cpu_allocator
    from foxhunt.model.batch import TFTBatch
    from foxhunt.model.quantile import quantile_loss
    from foxhunt.model.recompute import set_internal_recompute
    from foxhunt.model.tft import TFT
    from foxhunt.train.optimizer.optim import build_optimizer
    from foxhunt_step import lstm_flop_mapping

    harness.pin_torch_threads(a.threads)
    cfg = preset(a.preset)
    cfg = cfg.replace(train={"batch_size": a.batch_size, "precision": a.precision})
    apply_cpu_allocator(cfg)
    torch.manual_seed(0)
    m = cfg.model
    syn = harness.synthetic_batch(
        a.batch_size, m.n_static, m.n_historical, m.n_known, m.encoder_length, m.horizon, 0
    )
    batch = TFTBatch(
        static=syn.static, historical=syn.historical, known=syn.known, target=syn.target
    )
    q = torch.tensor(m.quantiles)
    model = TFT(m).train()
    set_internal_recompute(model, cfg.train.recompute)
    opt = build_optimizer(model, lr=cfg.train.lr, weight_decay=cfg.train.weight_decay)
    params = [t for g in opt.param_groups for t in g["params"]]
    autocast = torch.autocast("cpu", torch.bfloat16, enabled=a.precision == "bf16")

    def forward_backward() -> None:
        with autocast:
            out = model(batch)
        quantile_loss(out.quantiles.float(), batch.target, q).backward()

    def step() -> None:
        forward_backward()
        torch.nn.utils.clip_grad_norm_(params, cfg.train.grad_clip)
        opt.step()
        opt.zero_grad(set_to_none=True)

    times = cpu_seconds(step, a.warmup, a.steps)
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False, custom_mapping=lstm_flop_mapping())
    with counter:
        forward_backward()
    opt.zero_grad(set_to_none=True)
    flops = int(counter.get_total_flops())
    peak = 0.0
    for n in (1024, 2048):
        x, y = torch.randn(n, n), torch.randn(n, n)
        peak = max(peak, 2 * n**3 / min(cpu_seconds(lambda x=x, y=y: torch.mm(x, y), 1, 5)))
    best = min(times)
    record = {
        "preset": a.preset,
        "batch_size": a.batch_size,
        "precision": a.precision,
        "threads": a.threads,
        "cpu_allocator": cfg.train.cpu_allocator,
        "cpu_s_per_step_min": best,
        "cpu_s_per_step_median": sorted(times)[len(times) // 2],
        "flops_per_step": flops,
        "gflops_per_cpu_s": flops / best / 1e9,
        "gemm_peak_gflops_per_cpu_s": peak / 1e9,
        "share_of_gemm_peak": flops / best / peak,
        "load_average": os.getloadavg(),
        **harness.environment(),
    }
    if a.bytes_written:
        record["bytes_written_per_step"] = bytes_written(step)
        record["large_block_bytes_per_step"] = large_block_bytes(step)
    if a.historical_vsn:
        x = torch.randn(a.batch_size, m.encoder_length, m.n_historical)
        context = torch.randn(a.batch_size, m.hidden)

        def vsn_step() -> None:
            with autocast:
                out, weights = model.historical_vsn(x, context)
            (out.float().sum() + weights.float().sum()).backward()
            opt.zero_grad(set_to_none=True)

        record["historical_vsn_cpu_s_min"] = min(cpu_seconds(vsn_step, a.warmup, a.steps))
    harness.emit(record)
    if a.profile:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            for _ in range(3):
                step()
        table = prof.key_averages(group_by_input_shape=True).table(
            sort_by="self_cpu_time_total", row_limit=40, max_name_column_width=36
        )
        print(table, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
