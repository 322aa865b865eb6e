"""This machine's practical fp32 (and bf16) GEMM peak with the benchmark's threads; ONE JSON line.

The reference for "how close to the limit" foxhunt's matmul FLOP/s is: the best throughput of a
plain square ``torch.mm`` over a few sizes, median of several calls each, in a fresh process
with the same thread pinning as the step scripts.

Example:
    .venv/bin/python benchmarks/gemm_peak.py --sizes 256 512
    .venv/bin/python benchmarks/gemm_peak.py --dtypes fp32   # AVX2-only CPU: no bf16 timing
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Time square GEMMs and print one JSON line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 2048])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument(
        "--dtypes",
        nargs="+",
        choices=["fp32", "bf16"],
        default=["fp32", "bf16"],
        help="fp32 only on a CPU without bf16, where bf16 GEMMs are emulated (minutes at 2048)",
    )
    a = p.parse_args(argv)
    harness.set_thread_env(a.threads)
    import torch

    harness.pin_torch_threads(a.threads)
    out: dict[str, object] = {"sizes": a.sizes}
    for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        if name not in a.dtypes:
            continue
        per_size = {}
        for n in a.sizes:
            x = torch.randn(n, n).to(dtype)
            y = torch.randn(n, n).to(dtype)
            times = harness.time_calls(lambda x=x, y=y: torch.mm(x, y), 2, a.steps, 5.0)
            per_size[str(n)] = 2 * n**3 / harness.summarize_times(times, 1)["median_s"]
        out[f"{name}_flops_per_s_by_size"] = per_size
        out[f"{name}_peak_flops_per_s"] = max(per_size.values())
    out.update(harness.environment())
    harness.emit(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
