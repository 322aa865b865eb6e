"""Markdown tables from the JSON lines of benchmarks/experiments/recipe_bench.py.

    .venv/bin/python benchmarks/experiments/recipe_table.py RESULTS.jsonl [--split test] [--ewma 0.94]

One row per (bars, variant, seed): mean pinball and 10-90 / 2-98 coverage of the served TFT
(calibrated), the TFT without calibration, the empirical-quantile baseline and the EWMA-normal
baseline (decay ``--ewma``; on the validation split choose it there, then read the test split
with the same decay), plus the TFT's pinball relative to each baseline.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results", type=Path)
    p.add_argument("--split", default="test")
    p.add_argument("--ewma", default="0.94")
    a = p.parse_args()
    rows = [json.loads(line) for line in a.results.read_text().splitlines() if line.strip()]
    print(
        "| bars | variant | seed | TFT pinball | cov 10–90 | cov 2–98 | TFT uncalibrated | "
        "empirical | EWMA-normal | TFT vs empirical | TFT vs EWMA |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r["split"] != a.split:
            continue
        s = r["scores"]
        tft, raw, emp, ew = s["tft"], s["tft_raw"], s["empirical"], s[f"ewma_{a.ewma}"]
        t = tft["mean_pinball"]
        print(
            f"| {Path(r['bars']).name} | {r['variant']} | {r['seed']} | {t:.4e} | "
            f"{tft['coverage']['10-90']:.3f} | {tft['coverage']['2-98']:.3f} | "
            f"{raw['mean_pinball']:.4e} | {emp['mean_pinball']:.4e} | {ew['mean_pinball']:.4e} | "
            f"{100 * (t / emp['mean_pinball'] - 1):+.1f} % | {100 * (t / ew['mean_pinball'] - 1):+.1f} % |"
        )


if __name__ == "__main__":
    main()
