"""One VSN without autograd at several chunk sizes: what ``model/vsn.py: INFERENCE_CHUNK_BYTES``
was chosen from (docs/benchmarks.md, "Session 17").

    PYTHONPATH=src .venv/bin/python benchmarks/experiments/vsn_chunks.py --batch 256 --steps 50 --width 16
    PYTHONPATH=src .venv/bin/python benchmarks/experiments/vsn_chunks.py --batch 256 --steps 42 --width 8 --threads 2

A fused VSN of 210 variables (``--width`` d_var; d_model 256 at width 16, else 32) on seeded
random inputs of ``--batch`` x ``--steps`` rows, run ``--rounds`` times per chunk size, sizes
interleaved; prints per size the widest per-chunk tensor (the gate's) in MiB and the median and
minimum wall ms.
"""

from __future__ import annotations

import argparse
import time

import torch

from foxhunt.model.vsn import VariableSelectionNetwork


def main() -> None:
    """Time and print."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--chunks", default="2,4,8,16,32")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    d_model = 256 if a.width == 16 else 32
    m = VariableSelectionNetwork(210, a.width, d_model, "fused", dropout=0.1, chunk=32).eval()
    x = torch.randn(a.batch, a.steps, 210)
    chunks = [int(c) for c in a.chunks.split(",")]
    times: dict[int, list[float]] = {c: [] for c in chunks}
    with torch.no_grad():
        m(x)  # warm-up
        for _ in range(a.rounds):
            for c in chunks:
                t = time.perf_counter()
                m(x, chunk=c)
                times[c].append(time.perf_counter() - t)
    for c, ts in times.items():
        ts.sort()
        mib = c * a.batch * a.steps * 2 * a.width * 4 / 2**20
        print(f"chunk {c:3d}  {mib:6.1f} MiB  median {ts[len(ts) // 2] * 1e3:8.1f} ms  "
              f"min {ts[0] * 1e3:8.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
