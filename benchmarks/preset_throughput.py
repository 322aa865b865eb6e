"""Training samples and inference windows per CPU-second of each preset (one thread).

What decides how much a ``--max-minutes`` budget buys: a fresh network per preset, a synthetic
batch of the preset's batch size (``harness.synthetic_batch``; no data file is read), 3 timed
optimizer steps (forward, pinball loss, backward, AdamW) and 3 timed inference forwards after
one warm-up each, in CPU seconds (``time.process_time``), the best of the three. Prints one
JSON line per preset.

    PYTHONPATH=src .venv/bin/python benchmarks/preset_throughput.py [--presets demo tft-225 fast]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")  # as the foxhunt CLI does
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def best_cpu_seconds(fn: Callable[[], object], warmup: int = 1, rounds: int = 3) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(rounds):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--presets", nargs="+", default=["demo", "tft-225", "fast"])
    a = p.parse_args()
    import torch
    from foxhunt.train.optim import build_optimizer

    from foxhunt.config import preset
    from foxhunt.model.batch import TFTBatch
    from foxhunt.model.quantile import quantile_loss
    from foxhunt.model.tft import TFT

    harness.pin_torch_threads(1)
    for name in a.presets:
        cfg = preset(name)
        m, bs = cfg.model, cfg.train.batch_size
        torch.manual_seed(0)
        syn = harness.synthetic_batch(
            bs, m.n_static, m.n_historical, m.n_known, m.encoder_length, m.horizon, 0
        )
        batch = TFTBatch(
            static=syn.static, historical=syn.historical, known=syn.known, target=syn.target
        )
        q = torch.tensor(m.quantiles)
        model = TFT(m).train()
        opt = build_optimizer(model, lr=cfg.train.lr, weight_decay=cfg.train.weight_decay)

        def step(
            model: TFT = model,
            opt: torch.optim.Optimizer = opt,
            batch: TFTBatch = batch,
            q: torch.Tensor = q,
        ) -> None:
            quantile_loss(model(batch).quantiles.float(), batch.target, q).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

        train_s = best_cpu_seconds(step)
        model.eval()
        with torch.inference_mode():
            infer_s = best_cpu_seconds(lambda model=model, batch=batch: model(batch))
        harness.emit(
            {
                "preset": name,
                "batch_size": bs,
                "parameters": sum(t.numel() for t in model.parameters()),
                "train_samples_per_cpu_s": round(bs / train_s, 1),
                "infer_windows_per_cpu_s": round(bs / infer_s, 1),
                **harness.environment(),
            }
        )


if __name__ == "__main__":
    main()
