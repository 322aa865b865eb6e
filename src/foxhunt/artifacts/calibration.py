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
