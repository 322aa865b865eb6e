"""Checkpoint sidecar and best-marker errors that `make mutate` found unguarded: each names the
file, what it is, and what is wrong with it."""

from __future__ import annotations

import json
import re

import pytest
import torch

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.errors import ModelDirError


def _saved(tmp_path):
    path = ckpt.epoch_weights_path(tmp_path, 1)
    ckpt.save_weights(path, {"w": torch.ones(2)}, {"epoch": 1})
    return path, ckpt.sidecar_path(path)


def test_a_missing_or_corrupt_sidecar_is_named(tmp_path) -> None:
    path, sidecar = _saved(tmp_path)
    sidecar.write_text("{not json")
    with pytest.raises(
        ModelDirError, match=rf"^{re.escape(str(sidecar))}: checkpoint sidecar is corrupt"
    ):
        ckpt.load_sidecar(path)
    sidecar.unlink()
    with pytest.raises(
        ModelDirError, match=rf"^{re.escape(str(sidecar))}: checkpoint sidecar is missing$"
    ):
        ckpt.load_sidecar(path)


@pytest.mark.parametrize(("content", "shown"), [({"format": 2, "epoch": 1}, "2"), ([1, 2], "None")])
def test_a_sidecar_of_another_format_is_refused_naming_its_format(tmp_path, content, shown) -> None:
    path, sidecar = _saved(tmp_path)
    sidecar.write_text(json.dumps(content))
    expected = (
        f"{sidecar}: sidecar format {shown} is not {ckpt.SIDECAR_FORMAT} "
        "(written by another foxhunt version?)"
    )
    with pytest.raises(ModelDirError, match=f"^{re.escape(expected)}$"):
        ckpt.load_sidecar(path)
    with pytest.raises(ModelDirError, match=re.escape(expected)):
        ckpt.load_weights(path)


def test_a_corrupt_best_marker_is_named(tmp_path) -> None:
    (tmp_path / "best.json").write_text("[")
    marker = tmp_path / "best.json"
    with pytest.raises(
        ModelDirError, match=rf"^{re.escape(str(marker))}: best-checkpoint marker is corrupt"
    ):
        ckpt.read_best(tmp_path)
