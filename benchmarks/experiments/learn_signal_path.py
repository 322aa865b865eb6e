"""Where do the observed inputs vanish on their way to the head? (issue 26, docs/recipe.md)

One batch of training windows and the same batch with each window's observed (historical)
inputs swapped for another window's; per block of the freshly initialised TFT (or of a
checkpoint): the output's variance across windows and the share of it the swap changes.

    PYTHONPATH=src .venv/bin/python benchmarks/experiments/learn_signal_path.py --bars BARS [--origin 1]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from learn_harness import scaled_splits, subsample  # noqa: E402

from foxhunt.artifacts import checkpoints as ckpt  # noqa: E402
from foxhunt.model.tft import BLOCK_NAMES, TFT  # noqa: E402
from foxhunt.train.head_init import (  # noqa: E402
    init_monotone_head,
)


def _first(o: object) -> torch.Tensor:
    while isinstance(o, tuple | list):
        o = o[0]
    assert isinstance(o, torch.Tensor)
    return o.detach().float()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bars", type=Path, required=True)
    ap.add_argument("--origin", type=int, default=0, help="decoder_origin_inputs (0/1)")
    ap.add_argument("--weights", type=Path, default=None, help="a checkpoint instead of init")
    a = ap.parse_args()
    torch.set_num_threads(1)
    cfg, train, _, _, start = scaled_splits(a.bars)
    m = dataclasses.replace(cfg.model, decoder_origin_inputs=bool(a.origin))
    torch.manual_seed(0)
    model = TFT(m)
    init_monotone_head(model.output, start)
    if a.weights:
        model.load_state_dict(ckpt.load_weights(a.weights)[0])
    model.eval()
    batch = train.batch(subsample(len(train), 512))
    outs: dict[str, object] = {}
    for n in BLOCK_NAMES:
        getattr(model, n).register_forward_hook(lambda _m, _i, o, n=n: outs.__setitem__(n, o))
    with torch.no_grad():
        model(batch)
        base = {k: _first(v) for k, v in outs.items()}
        model(dataclasses.replace(batch, historical=batch.historical.roll(1, dims=0)))
        swapped = {k: _first(v) for k, v in outs.items()}
    for n in BLOCK_NAMES:
        if n in ("known_vsn", "static_vsn", "static_encoders", "output"):
            continue
        x, y = base[n], swapped[n]
        var = x.var(0).mean()
        change = (x - y).pow(2).mean() / 2
        print(f"{n:22s} var across windows {var:.3g}  observed share {change / var * 100:.3g} %")


if __name__ == "__main__":
    main()
