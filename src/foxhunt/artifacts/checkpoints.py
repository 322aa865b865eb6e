"""Checkpoint files: safetensors weights, a JSON sidecar, and a weights-only resume state.

Layout inside ``<run>/checkpoints/``::

    tft_epoch_{N}.safetensors      weights after epoch N
    tft_epoch_{N}.json             sidecar: epoch, step, metrics, config, features, sha256
    optimizer_epoch_{N}.pt         optimizer + grad scaler + RNG + loop counters (resume only)
    tft_start.safetensors          the weights before epoch 1 (epoch 0), + .json
    tft_final_epoch{N}.safetensors the model to use (best validation weights), + .json
    best.json                      which epoch is best (0: the start), its validation loss and
                                   the file that holds its weights

Every file is written atomically (:func:`foxhunt.runtime.atomic_path`), so a crash
leaves either the old file or the new one, never half of one. Within an epoch the sidecar is
written last: an epoch is *complete* when its sidecar exists, which is how ``--resume`` finds
the last epoch it can continue from. Loading never executes code: weights come from safetensors,
metadata from JSON, and the resume state through ``torch.load(weights_only=True)``, which is
why that state may hold only tensors, numbers, strings, lists and dicts.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from foxhunt.errors import ModelDirError
from foxhunt.runtime import atomic_path, atomic_write_json, read_json

SIDECAR_FORMAT = 1
"""Version of the sidecar schema; a newer one is refused with a clear message."""

START_WEIGHTS = "tft_start.safetensors"
"""The model as training found it (epoch 0: the candidate every epoch has to beat)."""

_EPOCH_RE = re.compile(r"^tft_epoch_(\d+)\.json$")
_FINAL_RE = re.compile(r"^tft_final_epoch(\d+)\.safetensors$")


# --- paths -----------------------------------------------------------------------------------


def epoch_weights_path(ckpt_dir: Path, epoch: int) -> Path:
    """``tft_epoch_{N}.safetensors``."""
    return ckpt_dir / f"tft_epoch_{epoch}.safetensors"


def best_weights_path(ckpt_dir: Path, epoch: int) -> Path:
    """The weights of ``epoch`` as a candidate for best: ``tft_start`` for 0, else its epoch's."""
    return ckpt_dir / START_WEIGHTS if epoch == 0 else epoch_weights_path(ckpt_dir, epoch)


def final_weights_path(ckpt_dir: Path, epoch: int) -> Path:
    """``tft_final_epoch{N}.safetensors`` (N: the last epoch trained)."""
    return ckpt_dir / f"tft_final_epoch{epoch}.safetensors"


def optimizer_path(ckpt_dir: Path, epoch: int) -> Path:
    """``optimizer_epoch_{N}.pt``."""
    return ckpt_dir / f"optimizer_epoch_{epoch}.pt"


def sidecar_path(weights: Path) -> Path:
    """The JSON sidecar next to a ``.safetensors`` file."""
    return weights.with_suffix(".json")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --- weights ---------------------------------------------------------------------------------


def save_weights(
    path: Path, state_dict: Mapping[str, torch.Tensor], sidecar: dict[str, Any]
) -> None:
    """Write weights (safetensors) and then their sidecar (JSON), each atomically.

    Args:
        path: Target ``.safetensors`` path.
        state_dict: Parameter and buffer tensors (any device; copied to CPU).
        sidecar: JSON-able metadata; ``format`` and ``weights_sha256`` are added.
    """
    tensors = {k: v.detach().to("cpu").contiguous().clone() for k, v in state_dict.items()}
    with atomic_path(path) as tmp:
        save_file(tensors, str(tmp))
    meta = {"format": SIDECAR_FORMAT, **sidecar, "weights_sha256": _sha256(path)}
    atomic_write_json(sidecar_path(path), meta)


def load_sidecar(weights: Path) -> dict[str, Any]:
    """Read and check the sidecar of a weights file.

    Raises:
        ModelDirError: If it is missing, corrupt or of a newer format.
    """
    meta = read_json(sidecar_path(weights), "checkpoint sidecar")
    if not isinstance(meta, dict) or meta.get("format") != SIDECAR_FORMAT:
        fmt = meta.get("format") if isinstance(meta, dict) else None
        raise ModelDirError(
            f"{sidecar_path(weights)}: sidecar format {fmt!r} is not {SIDECAR_FORMAT} "
            "(written by another foxhunt version?)"
        )
    return meta


def load_weights(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Read a weights file and its sidecar, verifying the checksum.

    Args:
        path: A ``.safetensors`` file written by :func:`save_weights`.

    Returns:
        ``(state_dict on CPU, sidecar dict)``.

    Raises:
        ModelDirError: If either file is missing or corrupt, or the checksum differs.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelDirError(f"{path}: checkpoint is missing")
    meta = load_sidecar(path)
    expected = meta.get("weights_sha256")
    if expected is not None and _sha256(path) != expected:
        raise ModelDirError(f"{path}: checkpoint is corrupt (checksum differs from its sidecar)")
    try:
        tensors = load_file(str(path), device="cpu")
    except (SafetensorError, OSError, ValueError) as e:
        raise ModelDirError(f"{path}: checkpoint is corrupt ({e})") from e
    return tensors, meta


# --- resume state ----------------------------------------------------------------------------


def _check_plain(obj: Any, where: str = "state") -> None:
    """Refuse anything ``torch.load(weights_only=True)`` could not read back."""
    if obj is None or isinstance(obj, bool | int | float | str | torch.Tensor):
        return
    if isinstance(obj, list | tuple):
        for i, v in enumerate(obj):
            _check_plain(v, f"{where}[{i}]")
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            if not isinstance(k, str | int):
                raise TypeError(f"{where}: key {k!r} is not str or int")
            _check_plain(v, f"{where}[{k!r}]")
        return
    raise TypeError(f"{where}: {type(obj).__name__} cannot be loaded with weights_only=True")


def save_resume_state(path: Path, state: dict[str, Any]) -> None:
    """Write optimizer/scaler/RNG/loop state with ``torch.save``, atomically.

    Raises:
        TypeError: If ``state`` holds anything but tensors, numbers, strings, lists and dicts.
    """
    _check_plain(state)
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def load_resume_state(path: Path) -> dict[str, Any]:
    """Read a resume state with ``torch.load(weights_only=True)`` (no code is executed).

    Raises:
        ModelDirError: If the file is missing or cannot be read.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelDirError(f"{path}: optimizer state for resuming is missing")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for a damaged zip/pickle
        raise ModelDirError(f"{path}: optimizer state is corrupt ({type(e).__name__})") from e
    if not isinstance(state, dict):
        raise ModelDirError(f"{path}: optimizer state is not a dict")
    return state


# --- finding checkpoints ---------------------------------------------------------------------


def complete_epochs(ckpt_dir: Path) -> list[int]:
    """Epochs whose sidecar exists (the sidecar is written last), ascending."""
    if not Path(ckpt_dir).is_dir():
        return []
    epochs = (_EPOCH_RE.match(p.name) for p in Path(ckpt_dir).iterdir())
    return sorted(int(m.group(1)) for m in epochs if m)


def final_weights(ckpt_dir: Path) -> Path | None:
    """The final weights file with the highest epoch number whose sidecar exists, if any."""
    if not Path(ckpt_dir).is_dir():
        return None
    found = [
        (int(m.group(1)), p)
        for p in Path(ckpt_dir).iterdir()
        if (m := _FINAL_RE.match(p.name)) and sidecar_path(p).is_file()
    ]
    return max(found)[1] if found else None


def mark_best(ckpt_dir: Path, epoch: int, val_loss: float) -> None:
    """Record epoch ``epoch`` (0: the start) as the best so far in ``best.json``, naming the
    file that holds its weights (:func:`best_weights_path`)."""
    path = best_weights_path(Path(ckpt_dir), epoch)
    atomic_write_json(
        Path(ckpt_dir) / "best.json", {"epoch": epoch, "val_loss": val_loss, "file": path.name}
    )


def read_best(ckpt_dir: Path) -> dict[str, Any] | None:
    """The contents of ``best.json``, or None if no epoch has been marked yet."""
    path = Path(ckpt_dir) / "best.json"
    return read_json(path, "best-checkpoint marker") if path.is_file() else None
