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
from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.prepared import PreparedData
from foxhunt.data.scale.target import TargetScale
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.model.batch import TFTOutput


class SelectionWeights:
    """Mean variable-selection weight per input over the last ``max_windows`` of ``n`` windows.

    Fed the model's outputs batch by batch (:meth:`add`), so the pass that calibrates the run
    (:func:`foxhunt.train.calibration.calibrate.standardised_predictions`) also gives the importance: one
    forward pass over the validation windows instead of two.

    Args:
        spec: The run's feature spec (the variable names of each group).
        n: Windows the outputs will come from, in order.
        max_windows: Only the last this many windows count.
    """

    def __init__(self, spec: FeatureSpec, n: int, max_windows: int = 4096) -> None:
        self.names = {"static": spec.static, "historical": spec.historical, "known": spec.known}
        self.start = max(0, n - max_windows)
        self.count = n - self.start
        self.sums = {g: torch.zeros(len(v), dtype=torch.float64) for g, v in self.names.items()}

    def add(self, out: TFTOutput, rows: range) -> None:
        """Add the weights of windows ``rows`` (positions in the dataset) from one batch."""
        keep = slice(max(0, self.start - rows.start), None)  # rows before the last max_windows
        self.sums["static"] += out.static_weights[keep].double().sum(0).cpu()  # (S,)
        self.sums["historical"] += out.historical_weights[keep].double().mean(1).sum(0).cpu()
        self.sums["known"] += out.known_weights[keep].double().mean(1).sum(0).cpu()

    def result(self) -> dict[str, Any]:
        """``{"historical": {name: w}, "known": {...}, "static": {...}, "n_windows": n}``; each
        group's weights sum to 1."""
        count = max(self.count, 1)
        result: dict[str, Any] = {
            group: {
                name: float(v) / count
                for name, v in zip(self.names[group], self.sums[group], strict=True)
            }
            for group in self.sums
        }
        result["n_windows"] = self.count
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
    q = scale.to_returns(out.quantiles.double().cpu(), batch.historical, batch.known)[0]  # (H, Q)
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
    run: RunDir,
    model: nn.Module,
    data: PreparedData,
    cfg: RunConfig,
    device: torch.device,
    importance: dict[str, Any],
) -> None:
    """``interpretation.json``: variable importance on the validation windows
    (:class:`SelectionWeights`) and the fan chart of the last one (the report plots both)."""
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
