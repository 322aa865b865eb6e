"""The file a :class:`~foxhunt.infer.forecaster.Forecaster` saves its streaming state to: a
numpy ``.npz`` (no pickle), versioned, tied to the model's features and weights."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import numpy as np

from foxhunt.artifacts.rundir import LoadedModel
from foxhunt.data.read.magic import ZIP_MAGIC
from foxhunt.errors import DataError

STATE_FORMAT = 2
"""Version of the file :meth:`Forecaster.save` writes (2 adds the model's per-bar rows,
:class:`~foxhunt.infer.incremental.selected.SelectedRows`; a format-1 file is read, its rows
computed again at the next forecast)."""


def weights_digest(loaded: LoadedModel) -> str:
    """SHA-256 of a loaded model's weights: its checkpoint sidecar's ``weights_sha256``; of a
    seed ensemble, of its members' (their sidecars, as the ensemble recorded them); else (a
    quantised model, whose sidecar holds its recipe) of the weights file itself."""
    side = loaded.sidecar
    if isinstance(side.get("weights_sha256"), str):
        return str(side["weights_sha256"])
    members = side.get("ensemble")
    if isinstance(members, list):
        text = json.dumps(members, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()
    return hashlib.sha256(Path(loaded.weights).read_bytes()).hexdigest()


def read_state_file(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a state file, its format checked.

    Raises:
        DataError: unreadable file (empty, cut short, another kind) or another format.
    """
    try:
        with path.open("rb") as f:
            head = f.read(4)
        if head != ZIP_MAGIC:  # numpy would take it for a pickle, or fail at its end
            raise ValueError("not an .npz file: empty, cut short or another kind")
        with np.load(path, allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise DataError(f"{path}: not a forecaster state ({e})") from e
    if arrays.get("forecaster", np.array([0])).tolist() not in ([1], [STATE_FORMAT]):
        raise DataError(f"{path}: forecaster state format is not {STATE_FORMAT}")
    return arrays
