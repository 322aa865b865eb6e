"""Benchmark: features for 1,000,000 bars (bar: < 60 s and < 4 GB peak RSS on 2 cores).

Generates demo bars for several symbols (``--symbols``, 250,000 bars each by default), then
times ``compute_features`` alone. Peak RSS is the process high-water mark (``ru_maxrss``), so it
includes the bars themselves and the Python/polars runtime.

    .venv/bin/python benchmarks/bench_features.py            # 4 x 250,000 bars
    .venv/bin/python benchmarks/bench_features.py --bars 100000 --symbols ES
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time

import polars as pl
import psutil

from foxhunt.data.features.table import compute_features
from foxhunt.data.sources.demo import demo_bars


def _rss_gb() -> float:
    return psutil.Process().memory_info().rss / 1e9


def _peak_rss_gb() -> float:
    # Linux reports ru_maxrss in KiB.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bars", type=int, default=1_000_000, help="total bars (default 1,000,000)")
    p.add_argument(
        "--symbols", default="ES,NQ,CL,GC", help="comma-separated roots (default ES,NQ,CL,GC)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON line")
    a = p.parse_args(argv)

    symbols = [s.strip() for s in a.symbols.split(",") if s.strip()]
    per = a.bars // len(symbols)
    t0 = time.perf_counter()
    bars = pl.concat(
        [demo_bars(per, seed=i, symbol=s) for i, s in enumerate(symbols)], how="vertical"
    )
    t_gen = time.perf_counter() - t0
    rss_before = _rss_gb()

    t0 = time.perf_counter()
    feats = compute_features(bars, horizon=10)
    t_feat = time.perf_counter() - t0

    result = {
        "command": "python " + " ".join(sys.argv),
        "bars": bars.height,
        "symbols": len(symbols),
        "rows_out": feats.height,
        "columns_out": feats.width,
        "generate_s": round(t_gen, 2),
        "compute_features_s": round(t_feat, 2),
        "rss_before_features_gb": round(rss_before, 3),
        "peak_rss_gb": round(_peak_rss_gb(), 3),
        "features_frame_gb": round(feats.estimated_size() / 1e9, 3),
        "polars_threads": pl.thread_pool_size(),
        "cpus": psutil.cpu_count(),
    }
    if a.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:>24}: {v}")
        ok = t_feat < 60 and result["peak_rss_gb"] < 4.0
        print(f"{'bar (<60 s, <4 GB)':>24}: {'PASS' if ok else 'FAIL'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
