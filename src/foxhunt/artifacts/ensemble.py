"""A seed ensemble's run directory (``foxhunt train --ensemble N``) and the model it loads as.

::

    runs/<name>/
      ensemble.json       format, the members' directories (relative) and seeds, how they combine
      config.json         member 0's config (the members differ only in train.seed)
      features.json       the members' feature spec, scaler and data fingerprint (all identical)
      baselines.json      member 0's (fitted on the training split: the same for every member)
      instruments.json    member 0's, when it has one
      run.json            the bars, symbols, windows, and per member: seed, seconds, peak RSS
      members/<k>/        member k: a complete run directory (its own checkpoints and
                          calibration.json), trained with seed ``seed + k``

How members combine: each member maps its network's outputs to log-return quantiles with its
own ``calibration.json`` and the shared target scale
(:meth:`foxhunt.artifacts.calibration.QuantileMap.to_returns`); the ensemble's quantile is the
mean of the members' (per window, horizon and level), sorted along Q (a no-op: a mean of sorted
vectors is sorted). There is no ensemble-level calibration. Done by
:func:`foxhunt.infer.quantiles.tft_quantiles`, which every consumer calls.

Memory: every member's weights are held; inference runs the members one after another over the
same batch, so the activation peak is one member's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from foxhunt import runtime
from foxhunt.artifacts.calibration import QuantileMap, quantile_map
from foxhunt.artifacts.rundir import (
    ENSEMBLE_FILE,
    LoadedModel,
    RunDir,
    load_model_dir,
    read_config,
    read_features,
    read_instruments,
)
from foxhunt.errors import ModelDirError

ENSEMBLE_FORMAT = 1
"""Version of the ensemble.json schema."""

COMBINE = "mean of the members' calibrated log-return quantiles, then sorted"


def is_ensemble_dir(path: Path) -> bool:
    """Whether ``path`` holds a seed ensemble (an ``ensemble.json``)."""
    return (Path(path) / ENSEMBLE_FILE).is_file()


def member_root(root: Path, k: int) -> Path:
    """Member ``k``'s run directory: ``root/members/<k>``."""
    return Path(root) / "members" / str(k)


@dataclass(frozen=True)
class EnsemblePlan:
    """What ``ensemble.json`` records.

    Attributes:
        members: the members' directories, relative to the ensemble's root.
        seeds: each member's training seed.
    """

    members: tuple[str, ...]
    seeds: tuple[int, ...]

    @classmethod
    def of(cls, seed: int, n: int) -> EnsemblePlan:
        """``n`` members in ``members/0..n-1`` with seeds ``seed, seed + 1, ...``."""
        return cls(tuple(f"members/{k}" for k in range(n)), tuple(seed + k for k in range(n)))

    def to_dict(self) -> dict[str, Any]:
        """JSON-able record."""
        return {
            "format": ENSEMBLE_FORMAT,
            "members": list(self.members),
            "seeds": list(self.seeds),
            "combine": COMBINE,
        }


def write_plan(root: Path, plan: EnsemblePlan) -> None:
    """Write ``ensemble.json`` atomically."""
    runtime.atomic_write_json(Path(root) / ENSEMBLE_FILE, plan.to_dict())


def read_plan(root: Path) -> EnsemblePlan:
    """Read ``ensemble.json``.

    Raises:
        ModelDirError: missing, corrupt, a newer format, or a member outside ``root``.
    """
    path = Path(root) / ENSEMBLE_FILE
    rec = runtime.read_json(path, ENSEMBLE_FILE)
    try:
        if rec["format"] != ENSEMBLE_FORMAT:
            raise ValueError(f"format {rec['format']!r} is not {ENSEMBLE_FORMAT}")
        members = tuple(str(m) for m in rec["members"])
        seeds = tuple(int(s) for s in rec["seeds"])
    except (KeyError, TypeError, ValueError) as e:
        raise ModelDirError(f"{path}: unreadable ensemble record ({e})") from e
    if not members or len(members) != len(seeds):
        raise ModelDirError(f"{path}: {len(members)} members but {len(seeds)} seeds")
    for m in members:  # a directory from someone else must not point us elsewhere
        if Path(m).is_absolute() or ".." in Path(m).parts:
            raise ModelDirError(f"{path}: member {m!r} is not a directory inside the ensemble")
    return EnsemblePlan(members, seeds)


class EnsembleTFT(nn.Module):
    """The members of a seed ensemble, each with the map from its outputs to log returns.

    Not a network of its own: :func:`foxhunt.infer.quantiles.tft_quantiles` runs the members
    one after another and averages their quantiles (module docstring).

    Args:
        members: the members' TFTs (eval mode).
        maps: each member's :class:`QuantileMap` (its own calibration).
    """

    def __init__(self, members: Sequence[nn.Module], maps: Sequence[QuantileMap]) -> None:
        super().__init__()
        if not members or len(members) != len(maps):
            raise ValueError(f"{len(members)} members but {len(maps)} quantile maps")
        self.members = nn.ModuleList(members)
        self.maps = tuple(maps)

    def forward(self, *_: Any) -> Any:
        raise TypeError(
            "an ensemble has no forward of its own; use foxhunt.infer.quantiles.tft_quantiles"
        )


def load_ensemble_dir(path: Path, device: torch.device | str = "cpu") -> LoadedModel:
    """Load a seed ensemble for inference, as one :class:`LoadedModel` whose ``model`` is an
    :class:`EnsembleTFT` (no code from the directory is executed).

    Raises:
        ModelDirError: a missing or corrupt file, a member that is not finished, or members
            whose architecture, features, scaler or data differ from the ensemble's.
    """
    run = RunDir(Path(path))
    plan = read_plan(run.root)
    info = runtime.read_json(run.run_info, "run.json") if run.run_info.is_file() else None
    if not isinstance(info, dict) or info.get("stop_reason") != "finished":
        raise ModelDirError(
            f"{run.root}: the ensemble's training has not finished; "
            f"continue it with foxhunt train --resume {run.root}"
        )
    cfg = read_config(run)
    spec, scaler, fingerprint = read_features(run, cfg)
    members, maps, sidecars = [], [], []
    for rel in plan.members:
        member = load_model_dir(run.root / rel, device)
        if member.config.model != cfg.model or (member.spec, member.scaler, member.fingerprint) != (
            spec,
            scaler,
            fingerprint,
        ):
            raise ModelDirError(
                f"{member.run.root}: this member's model, features or data differ from the "
                f"ensemble's ({run.config}, {run.features})"
            )
        members.append(member.model)
        maps.append(quantile_map(member))
        sidecars.append({"member": rel, "weights": member.weights.name, **member.sidecar})
    model = EnsembleTFT(members, maps).eval()
    weights = run.root / ENSEMBLE_FILE
    sidecar = {"ensemble": sidecars}
    instruments = read_instruments(run)
    return LoadedModel(run, cfg, spec, scaler, fingerprint, model, weights, sidecar, instruments)  # type: ignore[arg-type]
