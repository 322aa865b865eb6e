"""The TFT's forecast of a batch as log-return quantiles: the one place that makes them.

``evaluate``, ``predict`` and the streaming ``Forecaster`` all call :func:`tft_quantiles`:
model forward (standardised quantiles) -> conformal offsets (when the run has
``calibration.json``) -> times the target scale (global std per horizon, or the window's causal
volatility; :mod:`foxhunt.data.target_scale`) -> sorted along Q (a no-op for a monotone head
without calibration; it keeps quantiles from crossing in every other case).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from foxhunt.artifacts.calibration import Calibration, read_calibration
from foxhunt.artifacts.rundir import LoadedModel
from foxhunt.data.target_scale import TargetScale
from foxhunt.model.batch import TFTBatch
from foxhunt.runtime import autocast


@dataclass(frozen=True)
class QuantileMap:
    """What turns a run's network outputs into log-return quantiles.

    Attributes:
        scale: the run's target scale.
        calibration: its conformal offsets, or None (uncalibrated).
    """

    scale: TargetScale
    calibration: Calibration | None = None


def quantile_map(loaded: LoadedModel) -> QuantileMap:
    """The map of a loaded run (its config, scaler and ``calibration.json``).

    Raises:
        ModelDirError: a corrupt or mismatched ``calibration.json``.
    """
    cfg = loaded.config
    scale = TargetScale.of(
        cfg.data.target_scale, cfg.data.target_scale_decay, loaded.spec, loaded.scaler
    )
    m = cfg.model
    return QuantileMap(scale, read_calibration(loaded.run.calibration, m.quantiles, m.horizon))


@torch.inference_mode()
def tft_quantiles(
    model: nn.Module,
    batch: TFTBatch,
    qmap: QuantileMap,
    *,
    device: torch.device,
    precision: str = "fp32",
) -> Tensor:
    """Forecast ``batch`` as sorted log-return quantiles.

    Args:
        model: the TFT (in eval mode).
        batch: windows as the dataset gives them (any device; moved to ``device``).
        qmap: the run's :class:`QuantileMap`.
        device: where the model is.
        precision: autocast precision (used on CUDA only).

    Returns:
        (B, H, Q) float64 on the CPU, non-decreasing along Q.
    """
    with autocast(device, precision if device.type == "cuda" else "fp32"):  # type: ignore[arg-type]
        z = model(batch.to(device)).quantiles  # (B, H, Q) standardised
    z = z.double().cpu()
    if qmap.calibration is not None:
        z = qmap.calibration.apply(z)
    q = qmap.scale.to_returns(z, batch.historical.cpu())  # (B, H, Q) log returns
    return torch.sort(q, dim=-1).values
