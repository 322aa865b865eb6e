from __future__ import annotations

import json

import pytest
import torch

from foxhunt import runtime
from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.errors import ModelDirError


class _Payload:
    """Unpickling this runs code: it touches the file named in ``marker``."""

    def __init__(self, marker) -> None:
        self.marker = marker

    def __reduce__(self):
        return (type(self.marker).touch, (self.marker,))


def _state() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return {"a.weight": torch.randn(3, 4, generator=g), "a.bias": torch.zeros(4)}


def test_weights_roundtrip_with_sidecar(tmp_path) -> None:
    path = ckpt.epoch_weights_path(tmp_path, 2)
    ckpt.save_weights(path, _state(), {"epoch": 2, "step": 10, "metrics": {"val_loss": 0.5}})
    state, meta = ckpt.load_weights(path)
    assert torch.equal(state["a.weight"], _state()["a.weight"])
    assert meta["epoch"] == 2 and meta["metrics"]["val_loss"] == 0.5
    assert meta["format"] == ckpt.SIDECAR_FORMAT and len(meta["weights_sha256"]) == 64
    assert path.name == "tft_epoch_2.safetensors" and (tmp_path / "tft_epoch_2.json").is_file()
    assert not list(tmp_path.glob("*.tmp"))
    assert ckpt.complete_epochs(tmp_path) == [2]


def test_weights_get_the_same_permissions_as_their_sidecar(tmp_path) -> None:
    """safetensors creates its files 0600; a run directory's files are all readable alike."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        path = ckpt.epoch_weights_path(tmp_path, 1)
        ckpt.save_weights(path, _state(), {"epoch": 1, "step": 1, "metrics": {}})
    finally:
        os.umask(old)
    weights = stat.S_IMODE(path.stat().st_mode)
    sidecar = stat.S_IMODE(ckpt.sidecar_path(path).stat().st_mode)
    assert weights == sidecar == 0o644


def test_failed_write_leaves_old_file_and_no_tmp(tmp_path) -> None:
    path = tmp_path / "x.json"
    runtime.atomic_write_json(path, {"v": 1})
    with pytest.raises(RuntimeError), runtime.atomic_path(path) as tmp:
        tmp.write_text('{"v": 2, "half')
        raise RuntimeError("killed mid-write")
    assert json.loads(path.read_text()) == {"v": 1}
    assert not list(tmp_path.glob("*.tmp"))


def test_epoch_without_sidecar_is_not_complete(tmp_path) -> None:
    ckpt.save_weights(ckpt.epoch_weights_path(tmp_path, 1), _state(), {"epoch": 1})
    ckpt.save_weights(ckpt.epoch_weights_path(tmp_path, 2), _state(), {"epoch": 2})
    (tmp_path / "tft_epoch_2.json").unlink()  # killed between weights and sidecar
    (tmp_path / "tft_epoch_3.safetensors.tmp").write_bytes(b"partial")
    assert ckpt.complete_epochs(tmp_path) == [1]
    assert runtime.remove_stale_tmp(tmp_path) == [tmp_path / "tft_epoch_3.safetensors.tmp"]


def test_missing_and_corrupt_checkpoints_raise_model_dir_error(tmp_path) -> None:
    path = ckpt.epoch_weights_path(tmp_path, 1)
    with pytest.raises(ModelDirError, match="missing"):
        ckpt.load_weights(path)
    ckpt.save_weights(path, _state(), {"epoch": 1})
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF  # flip bits in the tensor data
    path.write_bytes(bytes(data))
    with pytest.raises(ModelDirError, match="corrupt"):
        ckpt.load_weights(path)
    path.write_bytes(b"\x00\x01garbage")  # truncated / not safetensors, checksum ignored
    meta = json.loads(ckpt.sidecar_path(path).read_text())
    meta.pop("weights_sha256")
    ckpt.sidecar_path(path).write_text(json.dumps(meta))
    with pytest.raises(ModelDirError, match="corrupt"):
        ckpt.load_weights(path)
    ckpt.sidecar_path(path).write_text("{not json")
    with pytest.raises(ModelDirError, match="corrupt"):
        ckpt.load_weights(path)


@pytest.mark.slow
def test_resume_state_is_weights_only_loadable(tmp_path) -> None:
    net = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    net(torch.randn(4, 3)).sum().backward()
    opt.step()
    state = {
        "optimizer": opt.state_dict(),
        "rng": {"torch": torch.get_rng_state()},
        "loop": {"step": 3, "best_val_loss": 0.25, "history": [1.0, 0.5]},
    }
    path = ckpt.optimizer_path(tmp_path, 1)
    ckpt.save_resume_state(path, state)
    back = torch.load(path, weights_only=True)  # what --resume does: no code executed
    assert back["loop"] == state["loop"]
    assert torch.equal(back["rng"]["torch"], state["rng"]["torch"])
    assert ckpt.load_resume_state(path)["optimizer"]["param_groups"][0]["lr"] == 1e-3


def test_resume_state_refuses_objects(tmp_path) -> None:
    with pytest.raises(TypeError, match="weights_only"):
        ckpt.save_resume_state(tmp_path / "s.pt", {"x": object()})
    assert not list(tmp_path.iterdir())


def test_corrupt_resume_state(tmp_path) -> None:
    path = tmp_path / "optimizer_epoch_1.pt"
    path.write_bytes(b"PK\x03\x04 truncated zip")
    with pytest.raises(ModelDirError, match="corrupt"):
        ckpt.load_resume_state(path)
    with pytest.raises(ModelDirError, match="missing"):
        ckpt.load_resume_state(tmp_path / "nope.pt")


def test_best_and_final(tmp_path) -> None:
    assert ckpt.read_best(tmp_path) is None and ckpt.final_weights(tmp_path) is None
    ckpt.mark_best(tmp_path, 3, 0.125)
    assert ckpt.read_best(tmp_path) == {
        "epoch": 3,
        "val_loss": 0.125,
        "file": "tft_epoch_3.safetensors",
    }
    ckpt.save_weights(ckpt.final_weights_path(tmp_path, 4), _state(), {"epoch": 4})
    assert ckpt.final_weights(tmp_path) == tmp_path / "tft_final_epoch4.safetensors"


@pytest.mark.parametrize("with_checksum", [True, False], ids=["checksum", "no-checksum"])
def test_truncated_safetensors_is_refused(tmp_path, with_checksum: bool) -> None:
    """A weights file cut short (a copy interrupted, a full disk) is refused, never half-read."""
    path = ckpt.epoch_weights_path(tmp_path, 1)
    ckpt.save_weights(path, _state(), {"epoch": 1})
    data = path.read_bytes()
    if not with_checksum:  # an older sidecar without the checksum: safetensors itself refuses
        meta = json.loads(ckpt.sidecar_path(path).read_text())
        meta.pop("weights_sha256")
        ckpt.sidecar_path(path).write_text(json.dumps(meta))
    for keep in (len(data) // 2, len(data) - 1, 4):
        path.write_bytes(data[:keep])
        with pytest.raises(ModelDirError, match="corrupt"):
            ckpt.load_weights(path)


def test_malicious_optimizer_pickle_runs_no_code(tmp_path) -> None:
    """--resume reads optimizer_epoch_N.pt with weights_only=True: a planted pickle that would
    run code on load is refused as corrupt, and its code never runs."""
    marker = tmp_path / "pwned"
    path = ckpt.optimizer_path(tmp_path, 1)
    torch.save({"optimizer": {}, "loop": {"step": 1}, "x": _Payload(marker)}, path)
    with pytest.raises(ModelDirError, match="corrupt"):
        ckpt.load_resume_state(path)
    assert not marker.exists()
    torch.load(path, weights_only=False)  # the file is what it claims: unsafe loading runs it
    assert marker.exists()


def test_atomic_dir_without_replace_keeps_a_finished_directory(tmp_path) -> None:
    """Two ``quantize --out SAME``: the one finishing second must not delete the first's."""
    out = tmp_path / "q"
    with runtime.atomic_dir(out, replace=False) as tmp:
        (tmp / "a").write_text("first")
    with pytest.raises(OSError), runtime.atomic_dir(out, replace=False) as tmp:
        (tmp / "a").write_text("second")
    assert (out / "a").read_text() == "first" and [p.name for p in tmp_path.iterdir()] == ["q"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with runtime.atomic_dir(empty, replace=False) as tmp:  # an empty one is fine
        (tmp / "a").write_text("x")
    assert (empty / "a").read_text() == "x"
