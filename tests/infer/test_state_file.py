"""The streaming state's file (:mod:`foxhunt.infer.state_file`), without a trained model: what
a state file must be to be read, and the weights' digest a state is tied to."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from datetime import date
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from foxhunt.errors import DataError
from foxhunt.infer.state_file import STATE_FORMAT, read_state_file, weights_digest


def _npz(path: Path, **arrays: object) -> Path:
    np.savez(path, **arrays)  # type: ignore[arg-type]
    return path


def test_a_state_file_of_either_format_is_read_whole(tmp_path: Path) -> None:
    for fmt in (1, STATE_FORMAT):
        got = read_state_file(_npz(tmp_path / f"s{fmt}.npz", forecaster=[fmt], ts=np.arange(3)))
        assert sorted(got) == ["forecaster", "ts"] and got["ts"].tolist() == [0, 1, 2]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.write_bytes(b""), "not a forecaster state (not an .npz file: empty, cut short or another kind)"),
        (lambda p: p.write_text("ts,close\n"), "not a forecaster state (not an .npz file: empty, cut short or another kind)"),
        (lambda p: _npz(p, forecaster=[3]), "forecaster state format is not 2"),
        (lambda p: _npz(p, ts=np.arange(2)), "forecaster state format is not 2"),  # no format
        (lambda p: _npz(p, forecaster=[0]), "forecaster state format is not 2"),
    ],
    ids=["empty", "text", "format-3", "no-format", "format-0"],
)  # fmt: skip
def test_what_is_no_state_file_is_refused_in_one_line(
    tmp_path: Path, make: object, message: str
) -> None:
    path = tmp_path / "s.npz"
    make(path)  # type: ignore[operator]
    with pytest.raises(DataError) as e:
        read_state_file(path)
    assert str(e.value) == f"{path}: {message}"


def test_a_state_holding_pickled_objects_is_refused_not_unpickled(tmp_path: Path) -> None:
    """No pickle is ever loaded from a state file: an object array is refused."""
    path = _npz(tmp_path / "s.npz", forecaster=[STATE_FORMAT], x=np.array([date(2024, 1, 2)]))
    with pytest.raises(DataError, match=r"not a forecaster state \(Object arrays cannot be loaded"):
        read_state_file(path)


def test_a_zip_cut_short_is_refused(tmp_path: Path) -> None:
    buf = io.BytesIO()
    np.savez(buf, forecaster=[STATE_FORMAT], ts=np.arange(1000))
    path = tmp_path / "s.npz"
    path.write_bytes(buf.getvalue()[:200])
    with pytest.raises(DataError, match=r"^.*s\.npz: not a forecaster state \("):
        read_state_file(path)
    assert zipfile.is_zipfile(io.BytesIO(buf.getvalue()))


def test_the_weights_digest_of_a_run_an_ensemble_and_a_quantised_file(tmp_path: Path) -> None:
    run = SimpleNamespace(sidecar={"weights_sha256": "ab" * 32}, weights=tmp_path / "none")
    assert weights_digest(run) == "ab" * 32  # type: ignore[arg-type]
    members = [{"weights_sha256": "cd" * 32, "seed": 1, "when": date(2024, 1, 2)}]
    ensemble = SimpleNamespace(sidecar={"ensemble": members}, weights=tmp_path / "none")
    text = '[{"seed": 1, "weights_sha256": "' + "cd" * 32 + '", "when": "2024-01-02"}]'
    assert json.dumps(members, sort_keys=True, default=str) == text
    assert weights_digest(ensemble) == hashlib.sha256(text.encode()).hexdigest()  # type: ignore[arg-type]
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"int8 weights")
    quantised = SimpleNamespace(sidecar={"recipe": "int8"}, weights=str(weights))
    assert weights_digest(quantised) == hashlib.sha256(b"int8 weights").hexdigest()  # type: ignore[arg-type]
