"""The estimate against the exact tensor peak of a CPU training step, over presets and settings.

For each (preset, batch, precision, recompute, checkpointing) it builds the model, runs one
training step (forward + quantile loss + backward + AdamW) so that the optimizer state exists,
then measures the second step with :func:`foxhunt.memory.tensor_peak.tensor_peak_bytes` (the
profiler's allocation events: exact bytes, no RSS noise) and prints it beside
``estimate_memory``'s training peak less the resident state (weights, AdamW state, batch), one
line per setting. One thread. Random inputs (``random_batch``); nothing is read from disk.

    python benchmarks/tensor_peaks.py            # the table in docs/memory.md ("On CUDA",
                                                 # session 33's CPU rows)
    python benchmarks/tensor_peaks.py --only demo
"""

from __future__ import annotations

import argparse

import torch

from foxhunt.config import preset
from foxhunt.memory.estimate import estimate_memory
from foxhunt.memory.tensor_peak import tensor_peak_bytes
from foxhunt.model import TFT, quantile_loss
from foxhunt.model.batch import random_batch
from foxhunt.model.recompute import set_checkpointing, set_internal_recompute

SETTINGS = [  # preset, batch, precision, recompute, checkpointing
    ("demo", 8, "fp32", True, False),
    ("demo", 32, "fp32", True, False),
    ("demo", 256, "fp32", True, False),
    ("demo", 256, "fp32", False, False),
    ("demo", 32, "fp32", False, False),
    ("demo", 256, "bf16", False, False),
    ("tft-225", 32, "fp32", True, False),
    ("tft-225", 64, "fp32", False, False),
    ("tft-225", 64, "bf16", False, False),
    ("tft-225", 64, "bf16", True, False),
    ("tft-225", 64, "fp32", False, True),
    ("tft-225", 64, "fp32", True, True),
    ("fast", 64, "fp32", True, False),
    ("fast", 64, "fp32", False, False),
]


def measure(name: str, batch_size: int, precision: str, recompute: bool, ckpt: bool) -> str:
    cfg = preset(name).model
    torch.manual_seed(0)
    batch = random_batch(cfg, batch_size)
    model = TFT(cfg).train()
    set_internal_recompute(model, recompute)
    set_checkpointing(model, ckpt)
    q = torch.tensor(cfg.quantiles)
    opt = torch.optim.AdamW(model.parameters())

    def step() -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss = quantile_loss(model(batch).quantiles, batch.target, q)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()
    measured = tensor_peak_bytes(step)
    est = estimate_memory(
        cfg, batch_size, precision=precision, recompute=recompute, checkpointing=ckpt
    )  # type: ignore[arg-type]
    above = est.training_peak_bytes - est.parameter_bytes - est.optimizer_bytes - est.batch_bytes
    return (
        f"{name:8s} batch {batch_size:<4d} {precision} recompute {'on ' if recompute else 'off'}"
        f" checkpointing {'on ' if ckpt else 'off'}: measured {measured / 1e6:8.2f} MB,"
        f" estimate {above / 1e6:8.2f} MB ({above / measured - 1:+.1%})"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", help="one preset's settings")
    a = p.parse_args()
    torch.set_num_threads(1)
    for setting in SETTINGS:
        if a.only is None or setting[0] == a.only:
            print(measure(*setting), flush=True)


if __name__ == "__main__":
    main()
