"""What the report shows about the trained model: the forecast for the last validation window
(a fan chart over actual prices) and variable importance from the selection weights.

Both are computed once when training ends and stored in ``interpretation.json``, so the report
can be re-rendered without the model or the data.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import torch
from torch import nn

from foxhunt import runtime
from foxhunt.artifacts.rundir import RunDir
from foxhunt.config import RunConfig
from foxhunt.data.features import FeatureSpec
from foxhunt.data.prepared import PreparedData
from foxhunt.data.target_scale import TargetScale
from foxhunt.data.windows import WindowDataset


@torch.inference_mode()
def variable_importance(
    model: nn.Module,
    windows: WindowDataset,
    spec: FeatureSpec,
    *,
    batch_size: int,
    device: torch.device,
    max_windows: int = 4096,
) -> dict[str, Any]:
    """Mean variable-selection weight per input over the last ``max_windows`` windows.

    Returns:
        ``{"historical": {name: w}, "known": {...}, "static": {...}, "n_windows": n}``; each
        group's weights sum to 1.
    """
    model.eval()
    n = len(windows)
    start = max(0, n - max_windows)
    sums = {"static": torch.zeros(len(spec.static), dtype=torch.float64)}
    sums["historical"] = torch.zeros(len(spec.historical), dtype=torch.float64)
    sums["known"] = torch.zeros(len(spec.known), dtype=torch.float64)
    for a in range(start, n, batch_size):
        out = model(windows.batch(list(range(a, min(a + batch_size, n)))).to(device))
        sums["static"] += out.static_weights.double().sum(0).cpu()  # (S,)
        sums["historical"] += out.historical_weights.double().mean(1).sum(0).cpu()  # (V_h,)
        sums["known"] += out.known_weights.double().mean(1).sum(0).cpu()  # (V_k,)
    count = max(n - start, 1)
    names = {"static": spec.static, "historical": spec.historical, "known": spec.known}
    result: dict[str, Any] = {
        group: {name: float(v) / count for name, v in zip(names[group], sums[group], strict=True)}
        for group in sums
    }
    result["n_windows"] = n - start
    return result


@torch.inference_mode()
def last_window_forecast(
    model: nn.Module,
    windows: WindowDataset,
    bars: pl.DataFrame,
    scale: TargetScale,
    quantiles: tuple[float, ...],
    *,
    device: torch.device,
) -> dict[str, Any]:
    """The model's price quantiles for the last window, with the actual closes around it.

    Args:
        model: The trained model.
        windows: Windows with targets (the validation split).
        bars: The validated bars frame (``symbol``, ``ts``, ``close``) the windows came from.
        scale: The run's target scale (turns the network's outputs into log returns).
        quantiles: The model's quantile levels.
        device: Where the model is.

    Returns:
        ``symbol``, ``origin`` (ISO time), ``encoder_length``, ``quantiles``, ``times`` and
        ``close`` for the L encoder + H future bars, ``price_quantiles`` [H][Q] (sorted per row).
        Empty if there is no window.
    """
    n = len(windows)
    if n == 0:
        return {}
    model.eval()
    L, H = windows.encoder_length, windows.horizon
    origin = windows.origins().row(n - 1, named=True)
    symbol_bars = bars.filter(pl.col("symbol") == origin["symbol"]).select("ts", "close")
    hits = symbol_bars.with_row_index("i").filter(pl.col("ts") == origin["ts"])["i"]
    if hits.len() == 0:
        return {}
    i = int(hits[0])
    around = symbol_bars.slice(max(0, i - L + 1), L + H)
    batch = windows.batch([n - 1])
    out = model(batch.to(device))
    q = scale.to_returns(out.quantiles.double().cpu(), batch.historical)[0]  # (H, Q)
    q = torch.sort(q, dim=-1).values
    close0 = float(symbol_bars["close"][i])
    prices = (close0 * torch.exp(q)).tolist()
    return {
        "symbol": origin["symbol"],
        "origin": origin["ts"].isoformat(),
        "encoder_length": min(L, i + 1),
        "quantiles": list(quantiles),
        "times": [t.isoformat() for t in around["ts"].to_list()],
        "close": [float(c) for c in around["close"].to_list()],
        "price_quantiles": [[p if math.isfinite(p) else None for p in row] for row in prices],
    }


def write_interpretation(
    run: RunDir, model: nn.Module, data: PreparedData, cfg: RunConfig, device: torch.device
) -> None:
    """``interpretation.json``: variable importance on the validation windows and the fan
    chart of the last one (the report plots both)."""
    importance = variable_importance(
        model, data.val, data.spec, batch_size=cfg.train.validation_batch_size, device=device
    )
    fan = last_window_forecast(
        model,
        data.val,
        data.closes,
        TargetScale.of(cfg.data, data.spec, data.scaler),
        cfg.model.quantiles,
        device=device,
    )
    runtime.atomic_write_json(
        run.interpretation, {"fan_chart": fan, "variable_importance": importance}
    )
