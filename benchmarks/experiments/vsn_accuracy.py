"""Does the fused VSN lose accuracy against the paper-faithful one? A controlled synthetic check.

The task needs variable selection: of ``V_h`` observed inputs only four carry signal (a
non-linear level term, an interaction across time steps, and one that sets the noise scale, so
the outer quantiles depend on it), one known-future input shifts each horizon, and one static
input shifts the level. Everything else is noise. Training draws fresh windows every step (no
overfitting to a finite set); the test set is fixed. Both VSN modes are trained with the same
seeds, sizes (``demo``-like: d=32, w=8, 4 heads, 1 LSTM layer), optimiser and steps, and scored
by mean pinball loss on the test windows; the oracle (true conditional quantiles) bounds it from
below.

Example:
    .venv/bin/python benchmarks/experiments/vsn_accuracy.py --seeds 0 1 2 --steps 400
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch

from foxhunt.config import TFTConfig
from foxhunt.model import TFT, TFTBatch, quantile_loss

INFORMATIVE = (3, 77, 150, 201)  # observed inputs that matter (level, pair, pair, noise scale)


def make_windows(
    config: TFTConfig, n: int, gen: torch.Generator
) -> tuple[TFTBatch, torch.Tensor, torch.Tensor]:
    """``n`` synthetic windows with the target's conditional mean and scale, each (B, T_dec)."""
    c = config
    static = torch.randn(n, c.n_static, generator=gen)
    hist = torch.randn(n, c.encoder_length, c.n_historical, generator=gen)
    known = torch.randn(n, c.total_length, c.n_known, generator=gen)
    a, b1, b2, s = INFORMATIVE
    last, prev = hist[:, -1], hist[:, -2]  # (B, V_h)
    level = torch.tanh(2 * last[:, a]) + 0.8 * prev[:, b1] * last[:, b2] + 0.5 * static[:, 0]
    future = 0.7 * known[:, c.encoder_length :, 0]  # (B, T_dec)
    mean = level[:, None] * torch.linspace(1.0, 0.5, c.horizon) + future
    scale = (0.2 + 0.6 * torch.sigmoid(2 * last[:, s]))[:, None].expand(n, c.horizon)
    target = mean + torch.randn(n, c.horizon, generator=gen) * scale
    return TFTBatch(static, hist, known, target), mean, scale


def oracle_loss(batch: TFTBatch, mean: torch.Tensor, scale: torch.Tensor, q: torch.Tensor) -> float:
    """Pinball loss of the true conditional quantiles (the floor any model can reach)."""
    assert batch.target is not None
    z = torch.distributions.Normal(0.0, 1.0).icdf(q)  # (Q,)
    pred = mean[..., None] + scale[..., None] * z  # (B, T_dec, Q)
    return float(quantile_loss(pred, batch.target, q))


def run(mode: str, seed: int, steps: int, batch_size: int, test: TFTBatch) -> float:
    """Train one model and return its test mean pinball loss."""
    config = TFTConfig(
        n_historical=210,
        hidden=32,
        n_heads=4,
        lstm_layers=1,
        encoder_length=16,
        horizon=5,
        variable_width=8,
        vsn_mode=mode,  # type: ignore[arg-type]
    )
    torch.manual_seed(seed)
    model = TFT(config).train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    q = torch.tensor(config.quantiles)
    gen = torch.Generator().manual_seed(10_000 + seed)
    for _ in range(steps):
        batch, _, _ = make_windows(config, batch_size, gen)
        assert batch.target is not None
        loss = quantile_loss(model(batch).quantiles, batch.target, q)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
    model.eval()
    assert test.target is not None
    with torch.inference_mode():
        return float(quantile_loss(model(test).quantiles, test.target, q))


def main(argv: list[str] | None = None) -> int:
    """Train both modes for every seed; print a JSON summary."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--test-windows", type=int, default=2000)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    probe = TFTConfig(n_historical=210, hidden=32, n_heads=4, encoder_length=16, horizon=5)
    test, mean, scale = make_windows(probe, a.test_windows, torch.Generator().manual_seed(999))
    results: dict[str, list[float]] = {"fused": [], "faithful": []}
    for seed in a.seeds:
        for mode in results:
            began = time.perf_counter()
            results[mode].append(run(mode, seed, a.steps, a.batch_size, test))
            sys.stderr.write(
                f"{mode} seed {seed}: {results[mode][-1]:.5f} ({time.perf_counter() - began:.0f} s)\n"
            )
    summary = {
        mode: {
            "test_pinball": losses,
            "mean": statistics.mean(losses),
            "stdev": statistics.stdev(losses) if len(losses) > 1 else 0.0,
        }
        for mode, losses in results.items()
    }
    oracle = oracle_loss(test, mean, scale, torch.tensor(probe.quantiles))
    doc = {"args": vars(a), "oracle_test_pinball": oracle, "results": summary}
    sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
