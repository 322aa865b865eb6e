"""What can the zero-initialised head find in the freshly initialised TFT's features?

Linear probe: freeze the TFT at its initial weights, take psi (the head's input, (B, H, d)) for
training and validation windows, and fit only the head (monotone, started at the scale-only
forecast) full-batch. If the initial features carry the volatility signal, the probe gains what
the linear model on the raw origin inputs gains (diag2 (b)); if not, W alone finds nothing and
the body must learn - but the body's gradient is W^T dL/dout, zero at the start.
Also: the share of psi's variance across windows that the historical (observed) inputs explain
(psi with each window's historical inputs swapped for another window's).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from learn_harness import scaled_splits, subsample  # noqa: E402

from foxhunt.model.quantile import monotone_quantiles, quantile_loss
from foxhunt.model.tft import TFT
from foxhunt.train.head_init import init_monotone_head


def features(model, ds, idx, swap_hist=False):
    got = []
    h = model.output.register_forward_hook(lambda m, i, o: got.append(i[0].detach()))
    ys = []
    model.eval()
    with torch.no_grad():
        for a in range(0, len(idx), 1024):
            b = ds.batch(idx[a : a + 1024])
            if swap_hist:
                b = dataclasses.replace(b, historical=b.historical.roll(1, dims=0))
            model(b)
            ys.append(b.target)
    h.remove()
    return torch.cat(got), torch.cat(ys)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bars", type=Path, required=True)
    ap.add_argument("--n-train", type=int, default=16000)
    ap.add_argument("--n-val", type=int, default=8000)
    a = ap.parse_args()
    torch.set_num_threads(1)
    cfg, train, val, q, start = scaled_splits(a.bars)
    m = cfg.model
    torch.manual_seed(0)
    model = TFT(m)
    init_monotone_head(model.output, start)
    ptr, ytr = features(model, train, subsample(len(train), a.n_train))
    pva, yva = features(model, val, subsample(len(val), a.n_val))
    psw, _ = features(model, val, subsample(len(val), a.n_val), swap_hist=True)
    var_all = pva.var(0).mean()
    var_hist = (pva - psw).pow(2).mean() / 2
    print(
        f"psi var across windows {var_all:.4f}; half mean sq change when historical inputs are swapped {var_hist:.4f} ({var_hist / var_all * 100:.1f} %)",
        flush=True,
    )

    def loss(head, p, y):
        with torch.no_grad():
            return float(quantile_loss(monotone_quantiles(head(p)), y, q))

    head = torch.nn.Linear(m.hidden, len(q))
    init_monotone_head(head, start)
    s0tr, s0va = loss(head, ptr, ytr), loss(head, pva, yva)
    opt = torch.optim.Adam(head.parameters(), lr=3e-3)
    for step in range(400):
        lo = quantile_loss(monotone_quantiles(head(ptr)), ytr, q)
        opt.zero_grad()
        lo.backward()
        opt.step()
        if (step + 1) % 100 == 0:
            print(
                f"probe on initial TFT features, step {step + 1}: train {(loss(head, ptr, ytr) / s0tr - 1) * 100:+.3f} % val {(loss(head, pva, yva) / s0va - 1) * 100:+.3f} %",
                flush=True,
            )


if __name__ == "__main__":
    main()
