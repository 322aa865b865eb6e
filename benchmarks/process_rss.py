"""Peak process RSS of a training step against the process estimate, preset x batch x allocator.

Each setting runs in a fresh ``python -m foxhunt.commands.measure`` process (2 optimizer steps,
the precision ``auto`` resolves to on this machine) and is compared with
:func:`foxhunt.memory.process.process_training_peak`::

    PYTHONPATH=src python benchmarks/process_rss.py [--presets demo tft-225] [--batches 8 32 128]

prints one JSON line per setting and a table; ``--out FILE`` also writes the records.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from foxhunt.config import preset
from foxhunt.memory.process import process_training_peak
from foxhunt.train.resources.measure import measure_in_subprocess


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--presets", nargs="+", default=["demo", "tft-225"])
    p.add_argument("--batches", nargs="+", type=int, default=[8, 32, 128])
    p.add_argument("--allocators", nargs="+", default=["glibc", "balanced", "lean"])
    p.add_argument("--num-threads", type=int, default=2)
    p.add_argument("--out", type=Path)
    a = p.parse_args()
    records = []
    for name in a.presets:
        for batch in a.batches:
            for alloc in a.allocators:
                cfg = preset(name).replace(
                    train={"batch_size": batch, "micro_batch_size": None, "cpu_allocator": alloc}
                )
                m = measure_in_subprocess(cfg, "train", num_threads=a.num_threads, timeout_s=1800)
                est = process_training_peak(cfg)
                rec = {
                    "preset": name,
                    "batch": batch,
                    "allocator": alloc,
                    "precision": m["precision"],
                    "baseline_rss": m["baseline_rss_bytes"],
                    "peak_rss": m["peak_rss_bytes"],
                    "estimate": est.total,
                    "estimate_parts": est.parts(),
                    "error": est.total / m["peak_rss_bytes"] - 1,
                }
                print(json.dumps(rec), flush=True)
                records.append(rec)
    for r in records:
        print(
            f"{r['preset']:8} b{r['batch']:<4} {r['allocator']:8} {r['precision']}  "
            f"measured {r['peak_rss'] / 2**20:7.1f} MiB  estimated {r['estimate'] / 2**20:7.1f} "
            f"MiB  {100 * r['error']:+.1f} %"
        )
    if a.out:
        a.out.write_text(json.dumps(records, indent=1))


if __name__ == "__main__":
    main()
