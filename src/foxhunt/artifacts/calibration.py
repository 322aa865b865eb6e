"""A run's conformal calibration (``calibration.json``): one offset per horizon and quantile.

Conformalised quantile regression (Romano et al. 2019), one level at a time: on the validation
windows, the offset of level ``q`` at horizon ``h`` is the empirical ``q``-quantile of the
standardised residuals ``z_y - z_q`` (target minus predicted quantile, both divided by the
window's target scale, :mod:`foxhunt.data.target_scale`). Adding it moves each predicted
quantile so that, on the validation windows, exactly a share ``q`` of targets falls below it;
because residuals are in scale units, the correction widens with the window's volatility.
Fitted by :mod:`foxhunt.train.calibrate`; applied in standardised units by
:func:`foxhunt.infer.quantiles.tft_quantiles`. A run without the file is uncalibrated.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from foxhunt import runtime
from foxhunt.artifacts.rundir import LoadedModel
from foxhunt.data.target_scale import TargetScale
from foxhunt.errors import ModelDirError

CALIBRATION_FORMAT = 1
"""Version of the calibration.json schema."""


@dataclass(frozen=True)
class Calibration:
    """Offsets to add to standardised quantiles.

    Attributes:
        quantiles: the Q levels, as in the run's config.
        offsets: H rows of Q offsets, in target-scale units.
        windows: validation windows they were fitted on.
    """

    quantiles: tuple[float, ...]
    offsets: tuple[tuple[float, ...], ...]
    windows: int

    def apply(self, z: Tensor) -> Tensor:
        """Standardised quantiles (B, H, Q) plus the offsets (same dtype and device)."""
        off = torch.tensor(self.offsets, dtype=z.dtype, device=z.device)  # (H, Q)
        if tuple(off.shape) != tuple(z.shape[1:]):
            raise ValueError(f"calibration is {tuple(off.shape)}, quantiles {tuple(z.shape)}")
        return z + off[None]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able record."""
        return {
            "format": CALIBRATION_FORMAT,
            "method": "conformalised quantile regression per level, validation split",
            "quantiles": list(self.quantiles),
            "offsets": [list(row) for row in self.offsets],
            "windows": self.windows,
        }


@dataclass(frozen=True)
class QuantileMap:
    """What turns a run's network outputs into log-return quantiles.

    Attributes:
        scale: the run's target scale.
        calibration: its conformal offsets, or None (uncalibrated).
    """

    scale: TargetScale
    calibration: Calibration | None = None

    def to_returns(self, z: Tensor, historical: Tensor) -> Tensor:
        """Network outputs -> sorted log-return quantiles.

        Args:
            z: (B, H, Q) the network's standardised quantiles.
            historical: (B, T_enc, V_h) the batch's observed inputs (for the window scale).

        Returns:
            (B, H, Q) float64 on the CPU, non-decreasing along Q: ``sort((z + offsets) x
            scale)`` (the sort is a no-op for a monotone head without calibration).
        """
        z = z.double().cpu()
        if self.calibration is not None:
            z = self.calibration.apply(z)
        q = self.scale.to_returns(z, historical.cpu())  # (B, H, Q) log returns
        return torch.sort(q, dim=-1).values


def quantile_map(loaded: LoadedModel) -> QuantileMap:
    """The map of a loaded run (its config, scaler and ``calibration.json``).

    Raises:
        ModelDirError: a corrupt or mismatched ``calibration.json``.
    """
    cfg = loaded.config
    scale = TargetScale.of(cfg.data, loaded.spec, loaded.scaler)
    m = cfg.model
    return QuantileMap(scale, read_calibration(loaded.run.calibration, m.quantiles, m.horizon))


def write_calibration(path: Path, calibration: Calibration) -> None:
    """Write ``calibration.json`` atomically."""
    runtime.atomic_write_json(path, calibration.to_dict())


def read_calibration(path: Path, quantiles: tuple[float, ...], horizon: int) -> Calibration | None:
    """The run's calibration, or None when it has no file (runs trained before it).

    Raises:
        ModelDirError: the file is corrupt or does not match the run's quantiles and horizon.
    """
    if not Path(path).is_file():
        return None
    rec = runtime.read_json(path, "calibration.json")
    try:
        if rec["format"] != CALIBRATION_FORMAT:
            raise ValueError(f"format {rec['format']!r} is not {CALIBRATION_FORMAT}")
        cal = Calibration(
            quantiles=tuple(float(q) for q in rec["quantiles"]),
            offsets=tuple(tuple(float(x) for x in row) for row in rec["offsets"]),
            windows=int(rec["windows"]),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise ModelDirError(f"{path}: unreadable calibration ({e})") from e
    shape_ok = len(cal.offsets) == horizon and all(len(r) == len(quantiles) for r in cal.offsets)
    if cal.quantiles != tuple(quantiles) or not shape_ok:
        raise ModelDirError(
            f"{path}: calibration does not match the run's {horizon} horizons and quantiles"
        )
    return cal
