"""Scale-only forecasts with each bar's variance from its squared return or from its gap and range.

The question behind ``target_scale_estimator = "range"`` (docs/recipe.md, *Daily futures: the
bars' range and a fixed median*): does an EWMA of ``gap**2 + log(high/low)**2 / (4 ln 2)``
(Parkinson's estimator plus the opening gap, scaled to the squared return's mean on the training
bars) forecast the spread of h-bar returns better than an EWMA of squared returns, the way the
target scale uses it? No network: for every symbol, the cumulative variance over h = 1..H bars
at each origin is the window scale's (an EWMA over the last ``--encoder`` bars, normalised
weights or seeded with the 120-bar realised variance, reverting at ``phi`` per bar), times
standardised quantiles pooled over symbols and fitted on the training origins. Decay and
``phi`` are chosen on the training origins (every 5th scored); the later origins are then scored
once against GARCH(1,1) fitted per symbol as ``foxhunt evaluate`` fits it (Diebold-Mariano, HAC).

    PYTHONPATH=src .venv/bin/python benchmarks/experiments/range_scale.py \\
        --bars ../shared/data/real/quantiacs-futures-daily-1990-2014 --cut 2010-01-01

Reads whatever bars it is given; docs/recipe.md used ``../shared/data/real/``'s Quantiacs daily
futures (the origins from the cut on, their encoders may reach before it).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import numpy as np
import torch

from foxhunt.baselines.classical import _fit_garch
from foxhunt.baselines.vol_paths import forward_returns, garch_path, standardised_quantiles
from foxhunt.data.read.bars import read_bars
from foxhunt.infer.significance import compare
from foxhunt.model.quantile import pinball

LEVELS = np.array([0.02, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.98])
ANCHOR_BARS = 120


@dataclass
class Symbol:
    r: np.ndarray  # one-bar log returns (0 at the first bar)
    range_var: np.ndarray  # gap**2 + log(high/low)**2 / (4 ln 2)
    y: np.ndarray  # (n, H) forward cumulative log returns
    n_train: int  # bars before the cut


def load(path: str, cut: np.datetime64, horizon: int, min_bars: int) -> dict[str, Symbol]:
    bars = read_bars(path, allow_outliers=True)
    out = {}
    for (sym,), df in bars.group_by("symbol", maintain_order=True):
        ts = df["ts"].to_numpy()
        o, h, lo, c = (
            df[k].to_numpy().astype(np.float64) for k in ("open", "high", "low", "close")
        )
        positive = np.minimum.reduce([o, h, lo, c]) > 0  # back-adjusted series can reach zero
        start = int(np.flatnonzero(~positive)[-1]) + 1 if (~positive).any() else 0
        ts, o, h, lo, c = ts[start:], o[start:], h[start:], lo[start:], c[start:]
        if len(c) < min_bars:
            continue
        r = np.r_[0.0, np.diff(np.log(c))]
        gap = np.r_[0.0, np.log(o[1:] / c[:-1])]
        range_var = gap**2 + np.log(h / lo) ** 2 / (4 * math.log(2))
        out[str(sym)] = Symbol(r, range_var, forward_returns(c, horizon), int((ts < cut).sum()))
    return out


def origins(s: Symbol, later: bool, encoder: int, horizon: int) -> np.ndarray:
    first = max(encoder, ANCHOR_BARS)
    if later:
        return np.arange(max(s.n_train, first), len(s.r) - horizon)
    return np.arange(first, s.n_train - horizon)


def cumulative_variance(
    s: Symbol,
    kappa: float | None,
    decay: float,
    phi: float,
    anchored: bool,
    encoder: int,
    horizon: int,
) -> np.ndarray:
    """(n, H) the window scale's cumulative variance at every bar as origin; ``kappa`` None for
    the squared return, else the range variance's multiplier."""
    n_train = s.n_train
    v = s.r**2 if kappa is None else kappa * s.range_var
    kernel = (1 - decay) * decay ** np.arange(encoder)
    ewma = np.convolve(v, kernel)[: len(v)]
    if anchored:
        sums = np.r_[0.0, np.cumsum(s.r)]
        squares = np.r_[0.0, np.cumsum(s.r**2)]
        level = np.full(len(v), np.nan)
        t = np.arange(ANCHOR_BARS - 1, len(v))
        mean = (sums[t + 1] - sums[t + 1 - ANCHOR_BARS]) / ANCHOR_BARS
        level[t] = (squares[t + 1] - squares[t + 1 - ANCHOR_BARS]) / ANCHOR_BARS - mean**2
        level *= ANCHOR_BARS / (ANCHOR_BARS - 1)
        ewma = ewma + decay**encoder * level
    else:
        ewma = ewma / (1 - decay**encoder)
        level = np.full(len(v), np.mean(s.r[1:n_train] ** 2))
    k = np.arange(horizon)
    per_bar = level[:, None] + phi ** k[None, :] * (ewma - level)[:, None]
    return np.cumsum(per_bar, axis=1)


def pinball_rows(y: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(N, H) mean pinball over the levels."""
    loss = pinball(torch.from_numpy(q), torch.from_numpy(y), torch.from_numpy(LEVELS))
    return loss.numpy().mean(-1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bars", required=True)
    p.add_argument("--cut", required=True, help="first date of the later period, YYYY-MM-DD")
    p.add_argument("--encoder", type=int, default=48)
    p.add_argument("--horizon", type=int, default=10)
    a = p.parse_args()
    H, T = a.horizon, a.encoder
    symbols = load(a.bars, np.datetime64(a.cut), H, min_bars=4 * ANCHOR_BARS)
    garch_y, garch_q, kept = [], [], []
    for name, s in symbols.items():
        fit = _fit_garch(s.r[1 : s.n_train])
        if fit is None:
            continue
        initial = max(float(np.mean(s.r[1 : s.n_train] ** 2)), 1e-12)
        var = garch_path(s.r, fit["omega"], fit["alpha"], fit["beta"], initial, H)
        z = standardised_quantiles(s.y[1 : s.n_train - H], var[1 : s.n_train - H], LEVELS)
        o = origins(s, True, T, H)
        garch_y.append(s.y[o])
        garch_q.append(np.sqrt(var[o])[..., None] * z[None])
        kept.append(name)
    garch = pinball_rows(np.concatenate(garch_y), np.concatenate(garch_q))
    print(
        f"{len(kept)} symbols, {len(garch)} later origins; GARCH(1,1) {garch.mean() * 1e4:.3f} bp"
    )
    # as the target scale's kappa: pooled mean squared return over mean range variance (training)
    kappa = sum(float(np.sum(symbols[n].r[1 : symbols[n].n_train] ** 2)) for n in kept) / sum(
        float(np.sum(symbols[n].range_var[1 : symbols[n].n_train])) for n in kept
    )
    print(f"kappa {kappa:.4f}")

    def stacked(estimator: str, decay: float, phi: float, anchored: bool, later: bool):
        ys, vs = [], []
        for name in kept:
            s = symbols[name]
            o = origins(s, later, T, H)
            ys.append(s.y[o])
            k = kappa if estimator == "range" else None
            vs.append(cumulative_variance(s, k, decay, phi, anchored, T, H)[o])
        return np.concatenate(ys), np.concatenate(vs)

    print("estimator  anchored  decay  phi   later (bp)  vs GARCH   DM p")
    for estimator in ("close", "range"):
        for anchored in (False, True):
            best = None
            for decay in (0.9, 0.94, 0.97):
                for phi in (0.8, 0.9, 0.97, 1.0):
                    y, v = stacked(estimator, decay, phi, anchored, later=False)
                    ok = np.flatnonzero(np.isfinite(y).all(1) & np.isfinite(v).all(1))
                    z = np.quantile((y[ok] / np.sqrt(v[ok])).ravel(), LEVELS)
                    rows = ok[::5]
                    loss = pinball_rows(y[rows], np.sqrt(v[rows])[..., None] * z).mean()
                    if best is None or loss < best[0]:
                        best = (loss, decay, phi, z)
            assert best is not None
            _, decay, phi, z = best
            y, v = stacked(estimator, decay, phi, anchored, later=True)
            rows = pinball_rows(y, np.sqrt(v)[..., None] * z)
            c = compare(rows, garch)["pooled"]
            print(
                f"{estimator:9s}  {anchored!s:8s}  {decay:<5g}  {phi:<4g}  {rows.mean() * 1e4:10.3f}"
                f"  {c['relative'] * 100:+7.2f} %  {c['p_value']:.2g}"
            )


if __name__ == "__main__":
    main()
