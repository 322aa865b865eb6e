"""Which weights a run serves, and what training did to its validation loss.

Every fresh run validates its starting weights (``checkpoints/tft_start``, epoch 0) and serves
the best of the start and its epochs (:mod:`foxhunt.train.loop`). A user has to know which one
they got: the hand-built scale-only start (the network's inputs then hardly matter) or a
trained epoch, and by how much training moved the validation loss. :func:`served_weights`
reads that from the checkpoint files; ``foxhunt evaluate`` prints it and stores it in the
evaluation, and ``report.md`` shows it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from foxhunt.artifacts import checkpoints as ckpt


def served_weights(ckpt_dir: Path, weights: Path) -> dict[str, Any]:
    """What ``weights`` (the file a run serves) are, from the run's checkpoint sidecars.

    Args:
        ckpt_dir: The run's ``checkpoints`` folder.
        weights: The weights file served (:func:`foxhunt.artifacts.rundir.model_weights`).

    Returns:
        ``served``: ``"start"`` (epoch 0 kept), ``"epoch"`` (a trained epoch) or ``"unknown"``
        (a run from before the start was saved); ``epoch`` (0 for the start, None unknown);
        ``epochs_trained``; ``start_val_loss`` and ``served_val_loss`` (None when not
        recorded); ``change`` = served / start - 1 (negative: training lowered it); and
        ``best_epoch_val_loss``: the lowest loss of any trained epoch (None without one).
    """
    meta = ckpt.load_sidecar(weights)
    epochs = ckpt.complete_epochs(ckpt_dir)
    losses = {e: _val_loss(ckpt.load_sidecar(ckpt.epoch_weights_path(ckpt_dir, e))) for e in epochs}
    start_file = ckpt_dir / ckpt.START_WEIGHTS
    start = _val_loss(ckpt.load_sidecar(start_file)) if start_file.is_file() else None
    epoch = meta.get("best_epoch", meta.get("epoch"))
    served = "unknown" if start is None and epoch == 0 else ("start" if epoch == 0 else "epoch")
    if weights.name == ckpt.START_WEIGHTS:
        served, epoch = "start", 0
    loss = _val_loss(meta)
    finite = [v for v in losses.values() if v is not None and math.isfinite(v)]
    change = loss / start - 1.0 if loss is not None and start else None
    return {
        "served": served,
        "epoch": epoch,
        "epochs_trained": len(epochs),
        "start_val_loss": start,
        "served_val_loss": loss,
        "change": change,
        "best_epoch_val_loss": min(finite) if finite else None,
    }


def served_line(info: dict[str, Any]) -> str:
    """One sentence for people: which weights, and how training moved the validation loss."""
    start, loss, n = info.get("start_val_loss"), info.get("served_val_loss"), info["epochs_trained"]
    if info["served"] == "start":
        best = info.get("best_epoch_val_loss")
        tail = (
            f"; the best of {n} epochs had {best:.6g} ({best / start - 1.0:+.2%})"
            if best is not None and start
            else ""
        )
        return (
            f"served weights: the START (no epoch of {n} beat its validation loss "
            f"{start:.6g}{tail}): training did not pay"
        )
    if info["served"] == "epoch" and start is not None and loss is not None:
        return (
            f"served weights: trained epoch {info['epoch']} of {n} (validation loss {loss:.6g}, "
            f"{info['change']:+.2%} against the start's {start:.6g})"
        )
    return f"served weights: epoch {info['epoch']} of {n} (the start's loss was not recorded)"


def _val_loss(meta: dict[str, Any]) -> float | None:
    value = (meta.get("metrics") or {}).get("val_loss")
    return float(value) if isinstance(value, int | float) else None
