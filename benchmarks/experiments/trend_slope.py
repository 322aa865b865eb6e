"""Which side of the live/batch trend difference is off: each one's slope against an exact one.

::

    .venv/bin/python benchmarks/experiments/trend_slope.py \\
        --bars ../shared/data/real/usdjpy-m1-bid-2013.csv --max-bars 20000

``obs__trend_n`` is the n-bar linear-regression slope of the log close over the n-bar
volatility. The batch pipeline takes the slope from TA-Lib's ``LINEARREG_SLOPE`` (sums of x * y
over raw log closes), the live engine from the window shifted by its newest log close
(``windows.Windows``, ``x*dlc``). Both are compared, window by window, with the slope taken in
long double from centred sums; printed is the largest ``|slope - exact| / (1e-6 + |exact|)``
per window length. ``--bars`` reads any bar file foxhunt reads (e.g. one under
``../shared/data/real/``); the first symbol is used. Backs docs/inference.md, "Equal to the
batch pipeline".
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl
import polars_talib as plta

from foxhunt.data.features.observed import TREND_WINDOWS
from foxhunt.data.read.bars import read_bars


def engine_slope(window: np.ndarray) -> float:
    """The engine's slope of one window (oldest first): x counts bars ago, y is shifted."""
    n = len(window)
    d = window - window[-1]
    ago = np.arange(n - 1, -1, -1, dtype=np.float64)
    sum_x = n * (n - 1) * 0.5
    divisor = sum_x * sum_x - n * (n * (n - 1) * (2 * n - 1) / 6.0)
    return float((n * (ago * d).sum() - sum_x * d.sum()) / divisor)


def exact_slope(window: np.ndarray) -> float:
    """The least-squares slope from centred sums in long double."""
    y = window.astype(np.longdouble)
    x = np.arange(len(window), dtype=np.longdouble)
    x, y = x - x.mean(), y - y.mean()
    return float((x * y).sum() / (x * x).sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bars", type=Path, required=True, help="a bar file")
    ap.add_argument("--max-bars", type=int, default=20000, help="first bars of the first symbol")
    args = ap.parse_args()
    bars = read_bars(args.bars)
    first = bars["symbol"][0]
    bars = bars.filter(pl.col("symbol") == first).head(args.max_bars)
    lc = np.log(bars["close"].to_numpy())
    for n in TREND_WINDOWS:
        ta = bars.select(plta.linearreg_slope(pl.col("close").log(), timeperiod=n))
        talib = ta.to_series().to_numpy()
        worst = {"TA-Lib (batch)": 0.0, "engine": 0.0}
        for i in range(n - 1, len(lc)):
            window = lc[i - n + 1 : i + 1]
            exact = exact_slope(window)
            scale = 1e-6 + abs(exact)
            worst["TA-Lib (batch)"] = max(worst["TA-Lib (batch)"], abs(talib[i] - exact) / scale)
            worst["engine"] = max(worst["engine"], abs(engine_slope(window) - exact) / scale)
        told = ", ".join(f"{k} {v:.2g}" for k, v in worst.items())
        print(f"{first} trend_{n}: {len(lc) - n + 1} windows; largest off exact: {told}")


if __name__ == "__main__":
    main()
