"""What a run directory keeps per epoch so ``foxhunt train --resume`` continues exactly: the
epoch's weights and sidecar, the optimizer / grad-scaler / RNG / loop-counter state, the best
mark, and at the end the final (best) weights.

The loop counters arrive as a plain dict (the training loop's ``LoopState`` as ``asdict``), so
this room does not depend on training.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import nn

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.rundir import RunDir
from foxhunt.errors import ModelDirError

RESUME_FORMAT = 1
"""Version of the resume-state schema."""


class Stateful(Protocol):
    """An optimizer that saves and loads its state (``torch.optim`` or foxhunt's AdamW)."""

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state_dict: dict[str, Any]) -> None: ...


def resume_state(
    optimizer: Stateful,
    grad_scaler: torch.amp.GradScaler,
    loop: Mapping[str, Any],
    total_steps: int,
    train_weights: Mapping[str, torch.Tensor] | None = None,
) -> dict[str, Any]:
    """Everything beyond the weights that resuming needs, as weights_only-loadable values;
    ``train_weights``: the optimizer's weights when the checkpoint holds their average."""
    rng: dict[str, Any] = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        rng["cuda"] = torch.cuda.get_rng_state_all()
    state = {
        "format": RESUME_FORMAT,
        "optimizer": optimizer.state_dict(),
        "grad_scaler": grad_scaler.state_dict(),
        "rng": rng,
        "loop": dict(loop),
        "total_steps": total_steps,
    }
    if train_weights is not None:
        state["train_weights"] = dict(train_weights)  # saved at once, like the optimizer's
    return state


def restore(
    resume: Mapping[str, Any],
    optimizer: Stateful,
    grad_scaler: torch.amp.GradScaler,
    device: torch.device,
) -> dict[str, Any]:
    """Load optimizer, scaler and RNG state; return the loop counters (a dict)."""
    if resume.get("format") != RESUME_FORMAT:
        raise ModelDirError(f"resume state format {resume.get('format')!r} is not {RESUME_FORMAT}")
    optimizer.load_state_dict(resume["optimizer"])
    if resume["grad_scaler"]:
        grad_scaler.load_state_dict(resume["grad_scaler"])
    torch.set_rng_state(resume["rng"]["torch"])
    if "cuda" in resume["rng"] and device.type == "cuda":
        torch.cuda.set_rng_state_all(resume["rng"]["cuda"])
    return dict(resume["loop"])


def save_epoch(
    run: RunDir,
    model: nn.Module,
    optimizer: Stateful,
    grad_scaler: torch.amp.GradScaler,
    loop: Mapping[str, Any],
    sidecar: Mapping[str, Any],
    metrics: Mapping[str, float],
    improved: bool,
    total_steps: int,
    train_weights: Mapping[str, torch.Tensor] | None = None,
) -> None:
    """Write epoch ``loop["epoch"]``: resume state, weights, then the sidecar (the completion
    marker); mark it best if it ``improved``; keep only the two newest resume states.
    ``train_weights``: see :func:`resume_state` (``model`` then holds their average)."""
    epoch, d = int(loop["epoch"]), run.checkpoints
    ckpt.save_resume_state(
        ckpt.optimizer_path(d, epoch),
        resume_state(optimizer, grad_scaler, loop, total_steps, train_weights),
    )
    meta = {**sidecar, "epoch": epoch, "step": loop["step"], "metrics": dict(metrics)}
    ckpt.save_weights(
        ckpt.epoch_weights_path(d, epoch), model.state_dict(), meta | {"best": improved}
    )
    if improved:
        ckpt.mark_best(d, epoch, metrics["val_loss"])
    for old in range(1, epoch - 1):
        ckpt.optimizer_path(d, old).unlink(missing_ok=True)


def save_final(
    run: RunDir,
    model: nn.Module,
    loop: Mapping[str, Any],
    sidecar: Mapping[str, Any],
    stop_reason: str,
) -> Path:
    """Load the best epoch's weights into ``model`` and write them as the final checkpoint;
    best epoch 0 is the starting weights (``tft_start``: no epoch beat them)."""
    d = run.checkpoints
    best = loop["best_epoch"]
    source = d / ckpt.START_WEIGHTS if best == 0 else ckpt.epoch_weights_path(d, best)
    weights, best_meta = ckpt.load_weights(source)
    model.load_state_dict(weights)
    path = ckpt.final_weights_path(d, loop["epoch"])
    meta = {
        **sidecar,
        "epoch": loop["epoch"],
        "step": loop["step"],
        "best_epoch": loop["best_epoch"],
        "stop_reason": stop_reason,
        "metrics": best_meta.get("metrics", {}),
    }
    ckpt.save_weights(path, weights, meta)
    ckpt.mark_best(d, loop["best_epoch"], loop["best_val_loss"])
    return path
