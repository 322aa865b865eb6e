"""A run's calibration as served: offsets added in the network's dtype and device, the map to
sorted float64 log returns, the map of a loaded run, the file's record and every refusal of a
bad one with its exact message. Exact comparisons only (``torch.testing.assert_close`` costs
seconds on its first call, which `make mutate` pays per mutant)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from foxhunt.artifacts.calibration import (
    Calibration,
    QuantileMap,
    ShrinkageChoice,
    quantile_map,
    read_calibration,
    write_calibration,
)
from foxhunt.artifacts.rundir import RunDir
from foxhunt.config import preset
from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.scale.target import TargetScale
from foxhunt.errors import ModelDirError

LEVELS = (0.1, 0.5, 0.9)
OFFSETS = ((-0.5, 0.25, 0.75), (-1.0, 0.5, 3.0))  # H = 2 rows of Q = 3
CHOICE = ShrinkageChoice((0.0, 1.0), (2.0e-4, 1.5e-4), (90, 88), 2)


def test_apply_adds_the_offsets_to_every_window_in_its_dtype() -> None:
    z = torch.arange(12, dtype=torch.float32).reshape(2, 2, 3)
    got = Calibration(LEVELS, OFFSETS, 10).apply(z)
    assert got.dtype == torch.float32 and got.device == z.device
    assert torch.equal(got, z + torch.tensor(OFFSETS, dtype=torch.float32)[None])


def test_apply_keeps_float64_offsets_exact_for_float64_quantiles() -> None:
    tenth = ((0.1, 0.2, 0.3), (0.7, 0.8, 0.9))  # not exact in float32
    z = torch.zeros(1, 2, 3, dtype=torch.float64)
    got = Calibration(LEVELS, tenth, 10).apply(z)
    assert got.dtype == torch.float64 and got[0].tolist() == [list(r) for r in tenth]


def test_apply_refuses_quantiles_of_another_shape_naming_both() -> None:
    cal = Calibration(LEVELS, OFFSETS, 10)
    with pytest.raises(ValueError, match=r"^calibration is \(2, 3\), quantiles \(4, 3, 3\)$"):
        cal.apply(torch.zeros(4, 3, 3))
    with pytest.raises(ValueError, match=r"^calibration is \(2, 3\), quantiles \(4, 2, 2\)$"):
        cal.apply(torch.zeros(4, 2, 2))


def test_to_returns_is_sorted_offset_quantiles_times_the_scale_in_float64() -> None:
    scale = TargetScale("global", (2.0, 3.0))
    z = torch.tensor([[[0.5, 0.0, -0.5], [1.0, 2.0, 3.0]]], dtype=torch.float32)  # crossing
    hist = torch.zeros(1, 4, 1)
    got = QuantileMap(scale, Calibration(LEVELS, OFFSETS, 10)).to_returns(z, hist)
    want = (z.double() + torch.tensor(OFFSETS, dtype=torch.float64)) * torch.tensor(
        [[2.0], [3.0]], dtype=torch.float64
    )
    assert got.dtype == torch.float64 and got.device.type == "cpu"
    assert torch.equal(got, torch.sort(want, dim=-1).values)
    bare = QuantileMap(scale).to_returns(z, hist)  # uncalibrated: sorted z times the scale
    assert torch.equal(bare, torch.sort(z.double() * torch.tensor([[2.0], [3.0]]), -1).values)


def _loaded(root: Path, mode: str) -> SimpleNamespace:
    cfg = preset("demo")
    cfg = dataclasses.replace(
        cfg,
        data=dataclasses.replace(cfg.data, target_scale=mode, target_scale_decay=0.9),
        model=dataclasses.replace(cfg.model, quantiles=LEVELS, horizon=2),
    )
    spec = FeatureSpec(historical=("obs__x",), known=(), static=(), targets=("t1", "t2"), warmup=0)
    scaler = ScalerParams(columns=("obs__x",), mean=(0.0,), std=(1.0,), target_std=(2.0, 3.0))
    return SimpleNamespace(config=cfg, spec=spec, scaler=scaler, run=RunDir(root))


def test_the_map_of_a_loaded_run_is_its_target_scale_and_its_calibration(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path, "global")
    assert quantile_map(loaded) == QuantileMap(TargetScale("global", (2.0, 3.0), 0.9), None)
    cal = Calibration.shrunk(LEVELS, OFFSETS, 10, 0.5, CHOICE)
    write_calibration(loaded.run.calibration, cal)
    assert quantile_map(loaded) == QuantileMap(TargetScale("global", (2.0, 3.0), 0.9), cal)
    three = _loaded(tmp_path, "global")
    three.config = dataclasses.replace(
        three.config, model=dataclasses.replace(three.config.model, horizon=3)
    )
    with pytest.raises(ModelDirError, match=r"does not match the run's 3 horizons"):
        quantile_map(three)  # the run's own horizon and levels check the file


def test_the_record_holds_every_field_and_serves_the_offsets_as_fitted() -> None:
    rec = Calibration(LEVELS, OFFSETS, 10).to_dict()
    assert rec == {
        "format": 2,
        "method": "conformalised quantile regression per level, validation split; "
        "offsets = shrinkage x fitted_offsets, shrinkage chosen by cross-fitting",
        "quantiles": [0.1, 0.5, 0.9],
        "offsets": [[-0.5, 0.25, 0.75], [-1.0, 0.5, 3.0]],
        "windows": 10,
        "shrinkage": 1.0,
        "fitted_offsets": [[-0.5, 0.25, 0.75], [-1.0, 0.5, 3.0]],
        "choice": None,
    }


def test_a_format_2_record_without_a_choice_round_trips(tmp_path: Path) -> None:
    cal = Calibration.shrunk(LEVELS, OFFSETS, 10, 0.25)
    write_calibration(tmp_path / "calibration.json", cal)
    assert read_calibration(tmp_path / "calibration.json", LEVELS, 2) == cal


def _write(tmp_path: Path, rec: object) -> Path:
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(rec) if not isinstance(rec, str) else rec)
    return path


def test_a_bad_file_is_refused_naming_it_and_what_is_wrong(tmp_path: Path) -> None:
    good = Calibration(LEVELS, OFFSETS, 10).to_dict()
    path = _write(tmp_path, {**good, "format": 3})
    where = re.escape(str(path))
    with pytest.raises(
        ModelDirError, match=rf"^{where}: unreadable calibration \(format 3 is not 1 or 2\)$"
    ):
        read_calibration(path, LEVELS, 2)
    _write(tmp_path, {k: v for k, v in good.items() if k != "windows"})
    with pytest.raises(ModelDirError, match=rf"^{where}: unreadable calibration \('windows'\)$"):
        read_calibration(path, LEVELS, 2)
    _write(tmp_path, "{not json")
    with pytest.raises(
        ModelDirError, match=rf"^{where}: calibration.json is corrupt \(not valid JSON\)$"
    ):
        read_calibration(path, LEVELS, 2)
    _write(tmp_path, good)
    with pytest.raises(
        ModelDirError,
        match=rf"^{where}: calibration does not match the run's 3 horizons and quantiles$",
    ):
        read_calibration(path, LEVELS, 3)
