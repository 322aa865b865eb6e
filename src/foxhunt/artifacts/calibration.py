"""A run's conformal calibration (``calibration.json``): one offset per horizon and quantile.

Conformalised quantile regression (Romano et al. 2019), one level at a time: on the validation
windows, the offset of level ``q`` at horizon ``h`` is the empirical ``q``-quantile of the
standardised residuals ``z_y - z_q`` (target minus predicted quantile, both divided by the
window's target scale, :mod:`foxhunt.data.scale.target`). Adding it moves each predicted
quantile so that, on the validation windows, exactly a share ``q`` of targets falls below it;
because residuals are in scale units, the correction widens with the window's volatility.
Fitted by :mod:`foxhunt.train.calibration.calibrate`; applied in standardised units by
:func:`foxhunt.infer.quantiles.tft_quantiles`. A run without the file is uncalibrated.

The offsets served are the fitted ones times a shrinkage ``lambda`` in [0, 1], chosen by
cross-fitting on the validation windows (:mod:`foxhunt.train.calibration.choice`): ``lambda`` 0
serves the network's quantiles unchanged. Format 2 stores the served offsets, the fitted ones,
``lambda`` and the cross-fitted scores behind it; a format-1 file (runs before the choice) loads
as ``lambda`` 1, its offsets both fitted and served.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from foxhunt import runtime
from foxhunt.artifacts.rundir import LoadedModel
from foxhunt.data.scale.target import TargetScale, constant_tensor
from foxhunt.errors import ModelDirError

CALIBRATION_FORMAT = 2
"""Version of the calibration.json schema (1: offsets only, read as shrinkage 1)."""

Offsets = tuple[tuple[float, ...], ...]
"""H rows of Q offsets, in target-scale units."""


@dataclass(frozen=True)
class ShrinkageChoice:
    """How the shrinkage was chosen: cross-fitted mean pinball of every candidate.

    Attributes:
        candidates: the shrinkages tried, ascending (0 = no calibration).
        pinball: for each, the mean pinball loss (log-return units) of the held-out blocks'
            windows, each block served with offsets fitted on the other blocks.
        block_windows: windows in each block (after the embargo).
        embargo: windows dropped between consecutive blocks, per symbol.
    """

    candidates: tuple[float, ...]
    pinball: tuple[float, ...]
    block_windows: tuple[int, ...]
    embargo: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-able record."""
        return {
            "candidates": list(self.candidates),
            "crossfit_pinball": list(self.pinball),
            "block_windows": list(self.block_windows),
            "embargo": self.embargo,
        }

    @classmethod
    def from_dict(cls, rec: dict[str, Any]) -> ShrinkageChoice:
        """Inverse of :meth:`to_dict` (KeyError/TypeError/ValueError on a bad record)."""
        return cls(
            candidates=tuple(float(x) for x in rec["candidates"]),
            pinball=tuple(float(x) for x in rec["crossfit_pinball"]),
            block_windows=tuple(int(x) for x in rec["block_windows"]),
            embargo=int(rec["embargo"]),
        )


@dataclass(frozen=True)
class Calibration:
    """Offsets to add to standardised quantiles.

    Attributes:
        quantiles: the Q levels, as in the run's config.
        offsets: H rows of Q offsets served, in target-scale units: ``shrinkage`` x
            ``fitted_offsets``.
        windows: validation windows they were fitted on.
        shrinkage: the share of the fitted offsets served (1: all, 0: none).
        fitted_offsets: the conformal offsets on all validation windows, before the shrinkage
            (None: the same as ``offsets``, shrinkage 1).
        choice: the cross-fitted scores ``shrinkage`` was chosen by (None: not chosen, e.g. a
            format-1 file or too few validation windows).
    """

    quantiles: tuple[float, ...]
    offsets: Offsets
    windows: int
    shrinkage: float = 1.0
    fitted_offsets: Offsets | None = None
    choice: ShrinkageChoice | None = None

    @classmethod
    def shrunk(
        cls,
        quantiles: tuple[float, ...],
        fitted: Offsets,
        windows: int,
        shrinkage: float,
        choice: ShrinkageChoice | None = None,
    ) -> Calibration:
        """The calibration serving ``shrinkage`` x ``fitted``."""
        served = tuple(tuple(shrinkage * x for x in row) for row in fitted)
        return cls(tuple(quantiles), served, windows, shrinkage, fitted, choice)

    def apply(self, z: Tensor) -> Tensor:
        """Standardised quantiles (B, H, Q) plus the offsets (same dtype and device)."""
        off = constant_tensor(self.offsets, z.dtype, z.device)  # (H, Q)
        if tuple(off.shape) != tuple(z.shape[1:]):
            raise ValueError(f"calibration is {tuple(off.shape)}, quantiles {tuple(z.shape)}")
        return z + off[None]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able record."""
        return {
            "format": CALIBRATION_FORMAT,
            "method": "conformalised quantile regression per level, validation split; "
            "offsets = shrinkage x fitted_offsets, shrinkage chosen by cross-fitting",
            "quantiles": list(self.quantiles),
            "offsets": [list(row) for row in self.offsets],
            "windows": self.windows,
            "shrinkage": self.shrinkage,
            "fitted_offsets": [list(row) for row in (self.fitted_offsets or self.offsets)],
            "choice": None if self.choice is None else self.choice.to_dict(),
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

    def to_returns(self, z: Tensor, historical: Tensor, known: Tensor | None = None) -> Tensor:
        """Network outputs -> sorted log-return quantiles.

        Args:
            z: (B, H, Q) the network's standardised quantiles.
            historical: (B, T_enc, V_h) the batch's observed inputs (for the window scale).
            known: (B, T_enc + H, V_k) its known inputs (for a seasonal window scale).

        Returns:
            (B, H, Q) float64 on the CPU, non-decreasing along Q: ``sort((z + offsets) x
            scale)`` (the sort is a no-op for a monotone head without calibration).
        """
        z = z.double().cpu()
        if self.calibration is not None:
            z = self.calibration.apply(z)
        q = self.scale.to_returns(
            z, historical.cpu(), None if known is None else known.cpu()
        )  # (B, H, Q) log returns
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

    A format-1 file (offsets only) loads as shrinkage 1: served exactly as before.

    Raises:
        ModelDirError: the file is corrupt or does not match the run's quantiles and horizon.
    """
    if not Path(path).is_file():
        return None
    rec = runtime.read_json(path, "calibration.json")
    try:
        if rec["format"] not in (1, CALIBRATION_FORMAT):
            raise ValueError(f"format {rec['format']!r} is not 1 or {CALIBRATION_FORMAT}")
        cal = _from_record(rec)
    except (KeyError, TypeError, ValueError) as e:
        raise ModelDirError(f"{path}: unreadable calibration ({e})") from e
    shape_ok = all(
        len(rows) == horizon and all(len(r) == len(quantiles) for r in rows)
        for rows in (cal.offsets, cal.fitted_offsets or cal.offsets)
    )
    if cal.quantiles != tuple(quantiles) or not shape_ok:
        raise ModelDirError(
            f"{path}: calibration does not match the run's {horizon} horizons and quantiles"
        )
    return cal


def _offsets(rows: Any) -> Offsets:
    return tuple(tuple(float(x) for x in row) for row in rows)


def _from_record(rec: dict[str, Any]) -> Calibration:
    """A format-1 or -2 record as a :class:`Calibration` (KeyError/TypeError/ValueError)."""
    quantiles = tuple(float(q) for q in rec["quantiles"])
    offsets, windows = _offsets(rec["offsets"]), int(rec["windows"])
    if rec["format"] == 1:
        return Calibration(quantiles, offsets, windows)
    fitted = _offsets(rec["fitted_offsets"])
    choice = None if rec["choice"] is None else ShrinkageChoice.from_dict(rec["choice"])
    return Calibration(quantiles, offsets, windows, float(rec["shrinkage"]), fitted, choice)
