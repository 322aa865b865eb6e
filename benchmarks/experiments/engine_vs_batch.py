"""How far the live feature engine is from the batch pipeline on real bars, feature by feature.

::

    .venv/bin/python benchmarks/experiments/engine_vs_batch.py
    .venv/bin/python benchmarks/experiments/engine_vs_batch.py --kernel compiled --top 8
    .venv/bin/python benchmarks/experiments/engine_vs_batch.py \\
        --bars ../shared/data/real/usdjpy-m1-bid-2013.csv --max-bars 20000

Without ``--bars`` it reads the test fixture ``tests/infer/incremental/real_bars.parquet``
(2,500 BTC perpetual and 2,500 GBP/USD 1-minute bars, cut from ``../shared/data/real/``);
``--bars`` reads any bar file foxhunt reads (e.g. one under ``../shared/data/real/``). Each
symbol is stepped one bar at a time through ``IncrementalFeatures`` and compared with
``compute_features`` on every row the batch keeps. Printed per symbol: the rows compared and
the features with the largest relative difference ``|batch - engine| / (1e-6 + |batch|)``
(the volatility percentile ranks are left out: they move by a tie step, docs/inference.md).
Backs docs/inference.md, "Equal to the batch pipeline".
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl

from foxhunt.data.features.observed import RANK_SPECS, WARMUP
from foxhunt.data.features.table import compute_features
from foxhunt.data.market.bars_market import resolve_bars
from foxhunt.data.market.calendar import trading_date
from foxhunt.data.read.bars import read_bars
from foxhunt.infer.incremental.engine import IncrementalFeatures, feature_names

FIXTURE = Path(__file__).resolve().parents[2] / "tests/infer/incremental/real_bars.parquet"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bars", type=Path, help="a bar file (default: the test fixture)")
    ap.add_argument("--max-bars", type=int, default=5000, help="first bars of each symbol")
    ap.add_argument("--kernel", choices=("numpy", "compiled"), default="numpy")
    ap.add_argument("--top", type=int, default=5, help="features listed per symbol")
    args = ap.parse_args()
    bars = pl.read_parquet(FIXTURE) if args.bars is None else read_bars(args.bars)
    bars = bars.group_by("symbol", maintain_order=True).head(args.max_bars)
    reference = compute_features(bars, 10, with_targets=False, instruments={})
    names = feature_names()
    ranks = {f"obs__{k}_{w}_pctile_{n}" for k, w, n in RANK_SPECS}
    instruments = resolve_bars(bars, {})
    for (symbol,), part in bars.group_by("symbol", maintain_order=True):
        sym = str(symbol)
        day = trading_date(pl.col("ts"), instruments[sym].calendar).cast(pl.Int32)
        session = part.select(day).to_series().to_numpy()
        values = part.select("open", "high", "low", "close", "volume").to_numpy()
        engine = IncrementalFeatures(compiled=args.kernel == "compiled")
        slots = engine.slot_of([sym])
        rows = np.stack(
            [
                engine.step(slots, values[i : i + 1], session[i : i + 1])[0]
                for i in range(len(values))
            ]
        )
        batch = reference.filter(pl.col("symbol") == sym).select(names).to_numpy()
        mine = rows[len(rows) - len(batch) :] if len(batch) else rows[:0]
        assert len(rows) - len(batch) >= WARMUP
        rel = np.abs(batch - mine) / (1e-6 + np.abs(batch))
        worst = sorted(
            ((float(np.nanmax(rel[:, j])), n) for j, n in enumerate(names) if n not in ranks),
            reverse=True,
        )[: args.top]
        listed = ", ".join(f"{n} {r:.2g}" for r, n in worst)
        print(f"{sym}: {len(batch)} rows ({args.kernel}); largest relative differences: {listed}")


if __name__ == "__main__":
    main()
