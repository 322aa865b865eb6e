"""Reading a file of trades into bars (``--bar-minutes``): wall time and peak RSS; ONE JSON line.

Writes a synthetic trades CSV (``timestamp,price,qty``: N prints over five days, millisecond
times, a random walk) to a temporary folder, then reads it in a fresh process with
``read_bars(..., ReadOptions(bar_minutes=K))`` and reports the seconds and the process's peak
RSS. No market data is read.

Example:
    .venv/bin/python benchmarks/prints_read.py --prints 3000000 --bar-minutes 5
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

_READ = """
import json, resource, sys, time
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.options import ReadOptions
t = time.perf_counter()
bars = read_bars(sys.argv[1], options=ReadOptions(bar_minutes=int(sys.argv[2])))
print(json.dumps({"seconds": round(time.perf_counter() - t, 2), "bars": bars.height,
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""


def write_trades(path: Path, n: int, seed: int = 0) -> None:
    """``n`` prints over five days from 2024-01-08, a random walk around 100."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(seed)
    start = np.datetime64("2024-01-08T00:00:00", "ms")
    ts = start + np.sort(rng.integers(0, 5 * 86_400_000, n)).astype("timedelta64[ms]")
    price = 100 * np.exp(np.cumsum(rng.normal(0, 1e-5, n)))
    frame = pl.DataFrame(
        {"timestamp": ts, "price": np.round(price, 2), "qty": rng.integers(1, 10, n)}
    )
    frame.write_csv(path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prints", type=int, default=3_000_000)
    p.add_argument("--bar-minutes", type=int, default=5)
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "BTCUSD_trades.csv"
        write_trades(path, a.prints)
        size = path.stat().st_size
        out = subprocess.run(
            [sys.executable, "-c", _READ, str(path), str(a.bar_minutes)],
            capture_output=True,
            text=True,
            check=True,
        )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result.update(prints=a.prints, bar_minutes=a.bar_minutes, file_mb=round(size / 2**20))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
