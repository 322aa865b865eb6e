"""Cheap diagnostics without the TFT forward.

(a) Noise floor: the head's bias starts at the optimal constant (the scale-only start). Train only
    the bias (weights 0, so the output is that constant) with AdamW at batch B, the preset's
    schedule: every movement is noise. How much loss does that cost vs the start?
(b) Signal ceiling: a linear quantile model on the origin's inputs (last encoder bar's 210
    observed + the first decoder bar's known + static), monotone head started at the same bias,
    full-batch training on training windows; its validation gain over the start is roughly what a
    network can find beyond the scale.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from learn_harness import scaled_splits, subsample  # noqa: E402

from foxhunt.model.quantile import monotone_quantiles, quantile_loss, quantile_loss_table
from foxhunt.train.head_init import init_monotone_head
from foxhunt.train.optimizer.schedule import lr_at


def feats(ds, idx, t_enc):
    xs, ys = [], []
    for a in range(0, len(idx), 2048):
        b = ds.batch(idx[a : a + 2048])
        x = torch.cat([b.historical[:, -1], b.known[:, t_enc], b.static], dim=1)
        xs.append(x)
        ys.append(b.target)
    return torch.cat(xs).float(), torch.cat(ys).float()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bars", type=Path, required=True)
    ap.add_argument("--n-train", type=int, default=60000)
    a = ap.parse_args()
    torch.set_num_threads(1)
    cfg, train, val, q, start = scaled_splits(a.bars)
    m = cfg.model
    xtr, ytr = feats(train, subsample(len(train), a.n_train), m.encoder_length)
    xva, yva = feats(val, subsample(len(val), 20000), m.encoder_length)
    xtr = torch.nan_to_num(xtr).clamp(-10, 10)
    xva = torch.nan_to_num(xva).clamp(-10, 10)
    print("features", xtr.shape, xva.shape)

    def loss(head, x, y):
        return float(
            quantile_loss(monotone_quantiles(head(x)).unsqueeze(1).expand(-1, y.shape[1], -1), y, q)
        )

    # (a) noise floor: bias only, weights zero
    for lr, bs, steps in [
        (3e-3, 64, 100),
        (3e-3, 64, 300),
        (1e-3, 64, 300),
        (3e-4, 64, 300),
        (1e-3, 256, 300),
    ]:
        res = []
        for seed in range(3):
            head = torch.nn.Linear(xtr.shape[1], len(q))
            init_monotone_head(head, start)
            head.weight.requires_grad_(False)
            s0 = loss(head, xva, yva)
            opt = torch.optim.AdamW([head.bias], lr=lr, weight_decay=0)
            g = torch.Generator().manual_seed(seed)
            order = torch.randperm(len(ytr), generator=g)
            for step in range(steps):
                i = order[(step * bs) % len(ytr) : (step * bs) % len(ytr) + bs]
                for grp in opt.param_groups:
                    grp["lr"] = lr_at(step, peak_lr=lr, warmup_steps=20, total_steps=steps)
                out = monotone_quantiles(head(xtr[i]))
                lo = quantile_loss(out.unsqueeze(1).expand(-1, ytr.shape[1], -1), ytr[i], q)
                opt.zero_grad()
                lo.backward()
                opt.step()
            res.append((loss(head, xva, yva) / s0 - 1) * 100)
        print(
            f"(a) bias-only lr {lr} batch {bs} steps {steps}: val vs start {np.round(res, 3)} %",
            flush=True,
        )

    # (b) linear ceiling, full batch
    for _ in range(1):
        head = torch.nn.Linear(xtr.shape[1], len(q))
        init_monotone_head(head, start)
        s0tr, s0va = loss(head, xtr, ytr), loss(head, xva, yva)
        opt = torch.optim.Adam(head.parameters(), lr=3e-3)
        for step in range(400):
            out = monotone_quantiles(head(xtr))
            lo = quantile_loss(out.unsqueeze(1).expand(-1, ytr.shape[1], -1), ytr, q)
            opt.zero_grad()
            lo.backward()
            opt.step()
            if (step + 1) % 100 == 0:
                print(
                    f"(b) linear step {step + 1}: train {(loss(head, xtr, ytr) / s0tr - 1) * 100:+.3f} % val {(loss(head, xva, yva) / s0va - 1) * 100:+.3f} %",
                    flush=True,
                )
        per_h = quantile_loss_table(
            monotone_quantiles(head(xva)).unsqueeze(1).expand(-1, yva.shape[1], -1), yva, q
        ).mean(-1)
        head0 = torch.nn.Linear(xtr.shape[1], len(q))
        init_monotone_head(head0, start)
        per_h0 = quantile_loss_table(
            monotone_quantiles(head0(xva)).unsqueeze(1).expand(-1, yva.shape[1], -1), yva, q
        ).mean(-1)
        print("(b) per horizon %", [f"{x:+.2f}" for x in ((per_h / per_h0 - 1) * 100).tolist()])
        w = head.weight.detach().abs().sum(0)
        names = (
            [*train.spec.historical, *train.spec.known, *train.spec.static]
            if hasattr(train.spec, "historical")
            else None
        )
        top = torch.argsort(w, descending=True)[:12].tolist()
        print("(b) top inputs", [(names[i] if names else i, round(float(w[i]), 3)) for i in top])


if __name__ == "__main__":
    main()
