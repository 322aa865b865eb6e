"""tft_quantiles on the shared demo run: calibration fitted on the validation windows at the end
of training, served times the shrinkage cross-fitting chose, applied before the window scale; a
run without the new config fields or calibration.json gives exactly the quantiles of the old code
path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from demo_run import QUANTILES, DemoRun
from foxhunt.artifacts.calibration import read_calibration
from foxhunt.artifacts.rundir import load_model_dir
from foxhunt.data.pipeline import prepare_training_data
from foxhunt.data.scale.scaler import unscale_targets
from foxhunt.errors import ModelDirError
from foxhunt.infer.quantiles import plain_forward, quantile_map, tft_quantiles
from foxhunt.train.calibration.calibrate import (
    conformal_offsets,
    standardised_predictions,
    window_scales,
)
from foxhunt.train.calibration.choice import choose_shrinkage, crossfit_blocks

CPU = torch.device("cpu")


@pytest.mark.slow
def test_demo_run_is_calibrated_on_its_validation_windows(demo_run: DemoRun) -> None:
    loaded = load_model_dir(demo_run.run)
    qmap = quantile_map(loaded)
    assert qmap.scale.mode == "window" and loaded.config.model.monotone_quantiles
    assert qmap.calibration is not None and qmap.calibration.quantiles == QUANTILES
    val = prepare_training_data(demo_run.bars, loaded.config).val.with_target_scale(qmap.scale)
    z_pred, z_y = standardised_predictions(loaded.model, val, batch_size=64, device=CPU)
    want = conformal_offsets(z_pred, z_y, QUANTILES)
    fitted = torch.tensor(qmap.calibration.fitted_offsets, dtype=torch.float64)
    torch.testing.assert_close(fitted, want, rtol=1e-5, atol=1e-7)
    # the shrinkage is the cross-fitted choice (tests/train/calibration/test_choice.py)
    blocks = crossfit_blocks(val.origins()["symbol"].to_list(), embargo=val.horizon)
    scale = window_scales(val, 64)
    lam, choice = choose_shrinkage(
        z_pred, z_y, scale, QUANTILES, blocks, conformal_offsets, embargo=val.horizon
    )
    assert qmap.calibration.shrinkage == lam and qmap.calibration.choice is not None
    torch.testing.assert_close(
        torch.tensor(qmap.calibration.choice.pinball),
        torch.tensor(choice.pinball),
        rtol=1e-4,
        atol=0,
    )
    got = torch.tensor(qmap.calibration.offsets, dtype=torch.float64)
    torch.testing.assert_close(got, lam * fitted, rtol=0, atol=0)
    # fully calibrated, the validation windows sit at nominal coverage for every level
    cover = (z_y[:, :, None] <= z_pred + fitted[None]).double().mean(0)  # (H, Q)
    assert (cover - torch.tensor(QUANTILES, dtype=torch.float64)).abs().max() <= 2 / len(val)
    # tft_quantiles = sort((z + offsets) x window scale), on raw (unstandardised) windows
    raw = prepare_training_data(demo_run.bars, loaded.config).val
    batch = raw.batch(range(10))
    q = tft_quantiles(loaded.model, batch, qmap, device=CPU)
    z = loaded.model(batch).quantiles.double().detach() + got[None]
    ref = torch.sort(qmap.scale.to_returns(z, batch.historical, batch.known), dim=-1).values
    torch.testing.assert_close(q, ref)
    assert (q[..., 1:] >= q[..., :-1]).all()


def _old_style_copy(demo_run: DemoRun, tmp_path: Path) -> Path:
    """The run as a version before this recipe would have left it: no calibration.json, no
    target_scale/monotone fields in config.json."""
    run = tmp_path / "old"
    shutil.copytree(demo_run.run, run)
    (run / "calibration.json").unlink()
    cfg = json.loads((run / "config.json").read_text())
    for section, key in (
        ("data", "target_scale"),
        ("data", "target_scale_decay"),
        ("model", "monotone_quantiles"),
    ):
        del cfg[section][key]
    (run / "config.json").write_text(json.dumps(cfg))
    return run


@pytest.mark.slow
def test_an_old_run_dir_loads_and_forecasts_as_before(demo_run: DemoRun, tmp_path: Path) -> None:
    loaded = load_model_dir(_old_style_copy(demo_run, tmp_path))
    assert loaded.config.data.target_scale == "global"
    assert not loaded.config.model.monotone_quantiles
    qmap = quantile_map(loaded)
    assert qmap.scale.mode == "global" and qmap.calibration is None
    batch = prepare_training_data(demo_run.bars, loaded.config).val.batch(range(8))
    q = tft_quantiles(loaded.model, batch, qmap, device=CPU)
    with torch.inference_mode():  # the three call sites before infer/quantiles.py
        out = loaded.model(batch).quantiles
    old = torch.sort(unscale_targets(out.double(), loaded.scaler, horizon_axis=1), dim=-1).values
    torch.testing.assert_close(q, old, rtol=0, atol=0)


@pytest.mark.slow
def test_a_mismatched_calibration_is_refused(demo_run: DemoRun, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(demo_run.run, run)
    rec = json.loads((run / "calibration.json").read_text())
    rec["offsets"] = rec["offsets"][:-1]  # one horizon short
    (run / "calibration.json").write_text(json.dumps(rec))
    with pytest.raises(ModelDirError, match="calibration does not match"):
        read_calibration(run / "calibration.json", QUANTILES, len(rec["offsets"]) + 1)


def test_the_plain_forward_is_the_models_quantiles() -> None:
    """The default ``forward`` of tft_quantiles: ``model(batch).quantiles``, nothing else."""
    made = torch.arange(6.0).reshape(1, 2, 3)

    class Net(torch.nn.Module):
        seen: list[object] = []

        def forward(self, batch: object) -> SimpleNamespace:
            self.seen.append(batch)
            return SimpleNamespace(quantiles=made, attention=None)

    net = Net()
    assert plain_forward(net, "batch") is made
    assert net.seen == ["batch"]
