"""What one write of the live state costs (``foxhunt serve --save-every``, docs/inference.md):
a forecaster of a model directory is fed N demo symbols of 300 bars each, then saved 5 times;
prints the state file's size and the fastest write.

    .venv/bin/python benchmarks/experiments/state_save.py --model RUN [--symbols 20]

RUN: any model directory whose symbols take the demo's futures roots (``make demo``'s run, or
the tests' demo-style run).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import polars as pl

from foxhunt.data.sources.demo import demo_bars
from foxhunt.infer.forecaster import Forecaster

ROOTS = "ES NQ YM RTY CL GC SI HG ZN ZB ZF ZT 6E 6J 6B 6A NG HO RB ZC".split()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", type=Path, required=True)
    p.add_argument("--symbols", type=int, default=20, help=f"at most {len(ROOTS)}")
    a = p.parse_args()
    symbols = ROOTS[: a.symbols]
    fc = Forecaster.load(a.model, symbols=symbols)
    bars = pl.concat([demo_bars(300, seed=i, symbol=s) for i, s in enumerate(symbols)])
    fc.update(bars.sort("ts", "symbol"), forecast=False)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.npz"
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            fc.save(path)
            times.append(time.perf_counter() - t0)
        size = path.stat().st_size
    print(
        f"{len(symbols)} symbols: {size / 1e6:.2f} MB, fastest of 5 writes {min(times) * 1e3:.1f} ms"
    )


if __name__ == "__main__":
    main()
