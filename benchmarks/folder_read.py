"""Reading a folder of small vendor files: milliseconds per file; ONE JSON line.

Writes N one-day CSV files of one-minute bars (``Date,Time,Open,High,Low,Close,Volume``,
month-first dates as TradeStation and NinjaTrader export them, a random walk; one symbol per
file) to a temporary folder, then reads each with ``read_bars`` in this process, after one
read to warm the imports and the calendar, and reports the median and fastest milliseconds per
file. Reading a file is mostly fixed cost (the time format among ~300 candidates, the calendar
fit, the checks), not rows. No market data is read.

Example:
    .venv/bin/python benchmarks/folder_read.py --files 40 --rows 390
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import tempfile
import time
from datetime import date
from pathlib import Path


def write_day(path: Path, rows: int, day: int, seed: int, grouped: bool = False) -> None:
    """``rows`` one-minute bars from 09:30 New York (14:30 UTC) of January ``day``, 2024; with
    ``grouped`` the prices quoted with a comma between the thousands (``"4,800.25"``), as
    Excel and MarketWatch write them: read as text, then as numbers."""
    import numpy as np

    rng = np.random.default_rng(seed)
    close = 4800 + np.cumsum(rng.normal(0, 1, rows))
    lines = ["Date,Time,Open,High,Low,Close,Volume"]
    for i, c in enumerate(close):
        minute = 14 * 60 + 30 + i
        prices = (c, c + 1, c - 1, c + 0.25)
        written = (f'"{p:,.2f}"' if grouped else f"{p:.2f}" for p in prices)
        lines.append(
            f"01/{day:02d}/2024,{minute // 60:02d}:{minute % 60:02d},{','.join(written)},"
            f"{int(rng.integers(1, 500))}"
        )
    path.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--files", type=int, default=40)
    p.add_argument("--rows", type=int, default=390, help="bars per file (default: one session)")
    p.add_argument("--grouped", action="store_true", help='prices written "4,800.25" (text)')
    a = p.parse_args(argv)
    from foxhunt.data.read.bars import read_bars

    logging.disable(logging.WARNING)  # the naive-time warning, once per file
    seconds = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / f"S{i:03d}.csv" for i in range(a.files + 1)]
        weekdays = [d for d in range(2, 32) if date(2024, 1, d).weekday() < 5]
        for i, path in enumerate(paths):
            write_day(path, a.rows, weekdays[i % len(weekdays)], i, a.grouped)
        read_bars(paths[0])
        for path in paths[1:]:
            start = time.perf_counter()
            read_bars(path)
            seconds.append(time.perf_counter() - start)
    print(
        json.dumps(
            {
                "files": a.files,
                "rows": a.rows,
                "grouped": a.grouped,
                "median_ms": round(1000 * statistics.median(seconds), 1),
                "min_ms": round(1000 * min(seconds), 1),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
