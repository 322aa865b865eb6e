"""calibration.json: format 2 round-trips the shrinkage and its choice, a format-1 file (runs
before the choice) loads unchanged as shrinkage 1, and the served quantiles are
``sort((raw + shrinkage x fitted offsets) x scale)``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from foxhunt.artifacts.calibration import (
    Calibration,
    QuantileMap,
    ShrinkageChoice,
    read_calibration,
    write_calibration,
)
from foxhunt.data.scale.target import TargetScale
from foxhunt.errors import ModelDirError

LEVELS = (0.1, 0.5, 0.9)
FITTED = ((-0.5, 0.25, 0.75), (-1.0, 0.5, 3.0))  # H = 2 rows of Q = 3
CHOICE = ShrinkageChoice((0.0, 0.5, 1.0), (2.0e-4, 1.5e-4, 1.75e-4), (90, 88), 2)


def test_format_2_round_trips(tmp_path: Path) -> None:
    cal = Calibration.shrunk(LEVELS, FITTED, 200, 0.5, CHOICE)
    assert cal.offsets == ((-0.25, 0.125, 0.375), (-0.5, 0.25, 1.5))
    write_calibration(tmp_path / "calibration.json", cal)
    rec = json.loads((tmp_path / "calibration.json").read_text())
    assert rec["format"] == 2 and rec["shrinkage"] == 0.5
    assert rec["choice"]["crossfit_pinball"] == [2.0e-4, 1.5e-4, 1.75e-4]
    assert read_calibration(tmp_path / "calibration.json", LEVELS, 2) == cal


def test_a_format_1_file_loads_unchanged_as_shrinkage_1(tmp_path: Path) -> None:
    old = {
        "format": 1,
        "method": "conformalised quantile regression per level, validation split",
        "quantiles": list(LEVELS),
        "offsets": [list(r) for r in FITTED],
        "windows": 300,
    }
    (tmp_path / "calibration.json").write_text(json.dumps(old))
    cal = read_calibration(tmp_path / "calibration.json", LEVELS, 2)
    assert cal == Calibration(LEVELS, FITTED, 300)
    assert cal.offsets == FITTED and cal.shrinkage == 1.0 and cal.choice is None


def test_a_record_whose_fitted_offsets_do_not_match_is_refused(tmp_path: Path) -> None:
    rec = Calibration.shrunk(LEVELS, FITTED, 200, 0.5, CHOICE).to_dict()
    rec["fitted_offsets"] = [list(FITTED[0])]
    (tmp_path / "calibration.json").write_text(json.dumps(rec))
    with pytest.raises(ModelDirError, match="does not match"):
        read_calibration(tmp_path / "calibration.json", LEVELS, 2)


@pytest.mark.slow
@pytest.mark.parametrize("shrinkage", [0.0, 0.25, 1.0])
def test_served_quantiles_are_raw_plus_shrunk_offsets_sorted(shrinkage: float) -> None:
    g = torch.Generator().manual_seed(0)
    scale = TargetScale("global", (2.0, 3.0))
    z = torch.randn(5, 2, 3, generator=g, dtype=torch.float64)
    hist = torch.zeros(5, 4, 1)
    qmap = QuantileMap(scale, Calibration.shrunk(LEVELS, FITTED, 200, shrinkage, CHOICE))
    got = qmap.to_returns(z, hist)
    fitted = torch.tensor(FITTED, dtype=torch.float64)
    want = torch.sort((z + shrinkage * fitted[None]) * torch.tensor([2.0, 3.0])[None, :, None])
    torch.testing.assert_close(got, want.values, rtol=0, atol=1e-15)
    if shrinkage == 0.0:  # lambda 0 serves the uncalibrated quantiles
        torch.testing.assert_close(got, QuantileMap(scale, None).to_returns(z, hist))
