"""Proxy: a 2-layer MLP on the origin inputs (as diag2), head = Linear(d, Q) started at the
scale-only forecast, trained as the loop trains (AdamW, warm-up + cosine, clip 1). Maps batch x
lr x samples x head init x dropout -> validation gain over the start, in seconds not hours."""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from learn_harness import scaled_splits, subsample  # noqa: E402
from learn_linear import feats  # noqa: E402

from foxhunt.model.quantile import monotone_quantiles, quantile_loss
from foxhunt.train.head_init import init_monotone_head
from foxhunt.train.optimizer.schedule import lr_at


class MLP(torch.nn.Module):
    def __init__(self, n_in, d, nq, p):
        super().__init__()
        self.body = torch.nn.Sequential(
            torch.nn.Linear(n_in, d),
            torch.nn.ELU(),
            torch.nn.Dropout(p),
            torch.nn.Linear(d, d),
            torch.nn.LayerNorm(d),
        )
        self.output = torch.nn.Linear(d, nq)

    def forward(self, x):
        return monotone_quantiles(self.output(self.body(x)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bars", type=Path, required=True)
    ap.add_argument("--samples", type=int, nargs="+", default=[20000, 80000])
    ap.add_argument("--batches", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--lrs", type=float, nargs="+", default=[3e-3, 1e-3])
    ap.add_argument("--heads", nargs="+", default=["zero", "small"])
    ap.add_argument("--dropouts", type=float, nargs="+", default=[0.1])
    ap.add_argument("--seeds", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(1)
    cfg, train, val, q, start = scaled_splits(a.bars)
    m = cfg.model
    cache = Path(os.environ.get("FOXHUNT_LEARN_CACHE", "/tmp/foxhunt_learn_cache")) / "feats.pt"
    if cache.exists():
        xtr, ytr, xva, yva = torch.load(cache)
    else:
        xtr, ytr = feats(train, list(range(len(train))), m.encoder_length)
        xva, yva = feats(val, subsample(len(val), 20000), m.encoder_length)
        xtr, xva = (torch.nan_to_num(x).clamp(-10, 10) for x in (xtr, xva))
        torch.save((xtr, ytr, xva, yva), cache)

    def loss(net, x, y):
        net.eval()
        with torch.no_grad():
            out = net(x)
        net.train()
        return float(quantile_loss(out.unsqueeze(1).expand(-1, y.shape[1], -1), y, q))

    for samples, bs, lr, head, p in itertools.product(
        a.samples, a.batches, a.lrs, a.heads, a.dropouts
    ):
        steps = samples // bs
        res = []
        for seed in range(a.seeds):
            torch.manual_seed(seed)
            net = MLP(xtr.shape[1], 32, len(q), p)
            init_monotone_head(net.output, start)
            s0 = loss(net, xva, yva)  # the exact scale-only start
            if head == "small":
                with torch.no_grad():
                    net.output.weight.normal_(0, 0.01)
            decay = [p_ for n, p_ in net.named_parameters() if p_.ndim >= 2]
            nodecay = [p_ for n, p_ in net.named_parameters() if p_.ndim < 2]
            opt = torch.optim.AdamW(
                [{"params": decay, "weight_decay": 0.01}, {"params": nodecay, "weight_decay": 0.0}],
                lr=lr,
            )
            order = torch.randperm(len(ytr), generator=torch.Generator().manual_seed(seed))
            for step in range(steps):
                i = order[(step * bs) % len(ytr) : (step * bs) % len(ytr) + bs]
                for grp in opt.param_groups:
                    grp["lr"] = lr_at(step, peak_lr=lr, warmup_steps=20, total_steps=steps)
                lo = quantile_loss(net(xtr[i]).unsqueeze(1).expand(-1, ytr.shape[1], -1), ytr[i], q)
                opt.zero_grad()
                lo.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
                opt.step()
            res.append((loss(net, xva, yva) / s0 - 1) * 100)
        print(
            f"samples {samples} batch {bs} lr {lr} head {head} dropout {p}: val vs start {np.round(res, 3)} %",
            flush=True,
        )


if __name__ == "__main__":
    main()
