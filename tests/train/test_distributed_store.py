"""Two gloo ranks train from a feature store (shards + one memory-mapped window cache).

Reuses the launch helpers of :mod:`test_distributed`; the reference is one process trained from
the bars themselves, so this also checks the store gives the same data as the bars.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from foxhunt.cli import main
from foxhunt.data.store.manifest import CACHE_DIR

from .test_distributed import BATCH, STEPS, _final_weights, _tiny_config, _torchrun


@pytest.mark.slow
@pytest.mark.subprocess
def test_two_ranks_from_a_feature_store_match_one_process_from_bars(tmp_path: Path) -> None:
    bars, store = tmp_path / "ES.parquet", tmp_path / "store"
    assert main(["data", "demo", "--bars", "900", "--seed", "5", "--out", str(bars)]) == 0
    cfg = _tiny_config(tmp_path / "tiny.json")
    horizon = json.loads(cfg.read_text())["model"]["horizon"]
    args = ["features", "--bars", str(bars), "--out", str(store), "--shards"]
    assert main([*args, "--horizon", str(horizon)]) == 0

    common = ["train", "--config", str(cfg), "--max-steps", str(STEPS)]
    ddp_run, single_run = tmp_path / "ddp", tmp_path / "single"
    proc = _torchrun([*common, "--bars", str(store), "--out", str(ddp_run)])
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "window cache" in proc.stderr and "(memory-mapped)" in proc.stderr
    threads = torch.get_num_threads()
    try:
        assert main([*common, "--bars", str(bars), "--out", str(single_run)]) == 0
    finally:
        torch.set_num_threads(threads)

    # One cache, built by rank 0 alone; the same scaler and fingerprint as from the bars.
    caches = list((store / CACHE_DIR).iterdir())
    assert len(caches) == 1 and (caches[0] / "meta.json").is_file()
    assert not list(store.rglob("*.tmp"))
    ddp_features = json.loads((ddp_run / "features.json").read_text())
    assert ddp_features == json.loads((single_run / "features.json").read_text())
    run_info = json.loads((ddp_run / "run.json").read_text())
    assert run_info["windows"] == json.loads((single_run / "run.json").read_text())["windows"]
    assert json.loads((ddp_run / "interpretation.json").read_text())["fan_chart"]

    ddp, single = _final_weights(ddp_run), _final_weights(single_run)
    assert ddp.keys() == single.keys() and BATCH % 2 == 0
    for name in single:
        torch.testing.assert_close(ddp[name], single[name], rtol=1e-4, atol=5e-5, msg=name)
