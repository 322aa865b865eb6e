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


def test_a_resume_state_holding_an_object_is_refused_naming_where(tmp_path) -> None:
    where = r"state\['loop'\]\['seen'\]\[1\]"
    with pytest.raises(TypeError, match=rf"^{where}: object cannot be loaded with weights_only"):
        ckpt.save_resume_state(tmp_path / "r.pt", {"loop": {"seen": [1, object()]}})
    with pytest.raises(TypeError, match=r"^state\['loop'\]: key \(1, 2\) is not str or int$"):
        ckpt.save_resume_state(tmp_path / "r.pt", {"loop": {(1, 2): 3}})
    assert not (tmp_path / "r.pt").exists()


def test_an_unreadable_or_non_dict_resume_state_is_named(tmp_path) -> None:
    path = tmp_path / "optimizer_epoch_1.pt"
    path.write_bytes(b"not a zip archive")
    with pytest.raises(ModelDirError, match=r"optimizer state is corrupt \((?!NoneType)\w+\)$"):
        ckpt.load_resume_state(path)
    torch.save([1, 2], path)
    with pytest.raises(
        ModelDirError, match=rf"^{re.escape(str(path))}: optimizer state is not a dict$"
    ):
        ckpt.load_resume_state(path)


def test_a_resume_state_round_trips_through_its_file(tmp_path) -> None:
    """What ``--resume`` reads back is what was saved, and nothing is left beside it."""
    state = {
        "optimizer": {"state": {0: {"exp_avg": torch.arange(3.0)}}, "param_groups": [{"lr": 0.5}]},
        "loop": {"step": 3, "history": [1.0, 0.5], "name": "x"},
    }
    path = ckpt.optimizer_path(tmp_path, 2)
    ckpt.save_resume_state(path, state)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["optimizer_epoch_2.pt"]
    back = ckpt.load_resume_state(path)
    assert back["loop"] == state["loop"]
    assert back["optimizer"]["param_groups"] == [{"lr": 0.5}]
    exp_avg = back["optimizer"]["state"][0]["exp_avg"]
    assert exp_avg.device.type == "cpu" and torch.equal(exp_avg, torch.arange(3.0))


def test_the_best_candidate_of_epoch_zero_is_the_start_weights(tmp_path) -> None:
    assert ckpt.best_weights_path(tmp_path, 0) == tmp_path / ckpt.START_WEIGHTS
    assert ckpt.best_weights_path(tmp_path, 1) == ckpt.epoch_weights_path(tmp_path, 1)
    assert ckpt.best_weights_path(tmp_path, 7) == ckpt.epoch_weights_path(tmp_path, 7)
