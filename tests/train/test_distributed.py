"""Data-parallel training: two gloo processes on loopback vs one process (from the bars and
from a feature store: shards + one window cache, read from its files), and a failing rank.

The two-process runs are real ``torchrun`` launches (``python -m torch.distributed.run``) of the
ordinary CLI; the single-process reference runs in this process through :func:`main`, once for
both comparisons (the same config, bars and steps).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.cli import main
from foxhunt.config import RunConfig, demo
from foxhunt.data.pipeline import prepare_training_data
from foxhunt.data.store.manifest import CACHE_DIR
from foxhunt.errors import InputError
from foxhunt.train.distributed import FAIL_ENV, World

STEPS = 3
BATCH = 8  # global batch; 4 per rank with two processes


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tiny_config(path: Path) -> Path:
    """The demo preset shrunk to seconds; dropout 0 so both runs compute the same function."""
    cfg = demo().replace(
        model={
            "hidden": 16,
            "n_heads": 2,
            "encoder_length": 16,
            "horizon": 4,
            "variable_width": 4,
            "dropout": 0.0,
        },
        train={
            "batch_size": BATCH,
            "validation_batch_size": 64,
            "epochs": 1,
            "warmup_steps": 1,
            "log_every": 1,
            "num_threads": 1,
            # fp32: DDP and one process agree to summation order (bf16 autocast would round)
            "precision": "fp32",
        },
        data={"stride": 8},
    )
    cfg.save(path)
    return path


def _torchrun(args: list[str], *, env_extra: dict[str, str] | None = None, timeout: float = 120):
    env = {**os.environ, "OMP_NUM_THREADS": "1", **(env_extra or {})}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        str(_free_port()),
        "-m",
        "foxhunt",
        *args,
    ]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("ddp")
    bars = root / "ES.parquet"
    assert main(["data", "demo", "--bars", "900", "--seed", "5", "--out", str(bars)]) == 0
    return {"root": root, "bars": bars, "cfg": _tiny_config(root / "tiny.json")}


@pytest.fixture(scope="module")
def single_run(setup: dict[str, Path]) -> Path:
    """One process with the whole batch, from the bars: what both two-rank runs must match."""
    run = setup["root"] / "single"
    argv = ["train", "--config", str(setup["cfg"]), "--bars", str(setup["bars"])]
    threads = torch.get_num_threads()
    try:
        assert main([*argv, "--max-steps", str(STEPS), "--out", str(run)]) == 0  # 1 thread
    finally:
        torch.set_num_threads(threads)
    return run


def _final_weights(run: Path) -> dict[str, torch.Tensor]:
    path = ckpt.final_weights(run / "checkpoints")
    assert path is not None, f"no final checkpoint in {run}"
    return ckpt.load_weights(path)[0]


@pytest.mark.slow
@pytest.mark.subprocess
def test_two_processes_match_one_process_with_the_whole_batch(
    setup: dict[str, Path], single_run: Path
) -> None:
    common = ["train", "--config", str(setup["cfg"]), "--bars", str(setup["bars"])]
    common += ["--max-steps", str(STEPS)]
    ddp_run = setup["root"] / "ddp"
    # 2 micro-batches of 2 per rank: the first backward runs under no_sync
    proc = _torchrun([*common, "--micro-batch-size", "2", "--out", str(ddp_run)])
    assert proc.returncode == 0, proc.stderr[-4000:]

    ddp, single = _final_weights(ddp_run), _final_weights(single_run)
    assert ddp.keys() == single.keys()
    # Training moves weights by up to ~8e-3 here; the runs differ by ~5e-6 (summation order).
    for name in single:
        torch.testing.assert_close(ddp[name], single[name], rtol=1e-4, atol=5e-5, msg=name)

    # One checkpoint set, written by rank 0: the same files as the single-process run.
    names = sorted(p.name for p in (ddp_run / "checkpoints").iterdir())
    assert names == sorted(p.name for p in (single_run / "checkpoints").iterdir())
    assert names.count("tft_epoch_1.safetensors") == 1
    # Metrics: one line per step from rank 0 only, with the reduced (global-batch) loss.
    lines = [json.loads(x) for x in (ddp_run / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in lines if r.get("kind") == "step"]
    assert [r["step"] for r in steps] == list(range(1, STEPS + 1))
    assert all(r["micro_batch"] == 2 and r["accumulation"] == 2 for r in steps)
    # Memory: rank 0 in memory.jsonl, rank 1 in its own file.
    assert (ddp_run / "memory.jsonl").is_file() and (ddp_run / "memory.rank1.jsonl").is_file()
    assert "- rank1 peak RSS: " in (ddp_run / "report.md").read_text()  # per-rank memory
    assert not list(ddp_run.rglob("*.tmp"))


@pytest.mark.slow
@pytest.mark.subprocess
def test_two_ranks_from_a_feature_store_match_one_process_from_bars(
    setup: dict[str, Path], single_run: Path, tmp_path: Path
) -> None:
    """The store gives the same data as the bars: the same scaler, fingerprint, windows and
    (two ranks against one process) the same weights as the reference trained from the bars."""
    store = tmp_path / "store"
    horizon = json.loads(setup["cfg"].read_text())["model"]["horizon"]
    args = ["features", "--bars", str(setup["bars"]), "--out", str(store), "--shards"]
    assert main([*args, "--horizon", str(horizon)]) == 0

    ddp_run = tmp_path / "ddp"
    common = ["train", "--config", str(setup["cfg"]), "--max-steps", str(STEPS)]
    proc = _torchrun([*common, "--bars", str(store), "--out", str(ddp_run)])
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "window cache" in proc.stderr and "(read from its files)" in proc.stderr

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


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_failing_rank_fails_the_job_and_all_ranks_resume(setup: dict[str, Path]) -> None:
    cfg = RunConfig.load(setup["cfg"]).replace(train={"epochs": 2})
    cfg.save(setup["root"] / "two_epochs.json")
    steps_per_epoch = World(size=2).steps_per_epoch(
        len(prepare_training_data(setup["bars"], cfg).train), BATCH
    )
    run = setup["root"] / "fail"
    args = ["train", "--config", str(setup["root"] / "two_epochs.json")]
    args += ["--bars", str(setup["bars"]), "--out", str(run)]
    # rank 1 dies in the first step of epoch 2: the job must exit non-zero, not hang
    fail = {FAIL_ENV: f"1:{steps_per_epoch + 1}"}
    proc = _torchrun(args, env_extra=fail, timeout=120)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert f"rank 1: injected failure after step {steps_per_epoch + 1}" in out
    assert "rank 1 of 2 failed: RuntimeError" in out  # logged by process_group
    assert ckpt.complete_epochs(run / "checkpoints") == [1]
    assert ckpt.final_weights(run / "checkpoints") is None

    # restart all ranks from the epoch-1 checkpoint
    proc = _torchrun(["train", "--resume", str(run)], timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert ckpt.final_weights(run / "checkpoints") is not None
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    steps = [r["step"] for r in lines if r.get("kind") == "step"]
    assert steps == list(range(1, 2 * steps_per_epoch + 1))  # no step lost or logged twice


def test_world_splits_a_global_batch_like_distributed_sampler() -> None:
    order = list(range(10, 20))
    shards = [World(rank=r, size=2).shard(order) for r in range(2)]
    assert shards == [[10, 12, 14, 16, 18], [11, 13, 15, 17, 19]]
    sampler = torch.utils.data.DistributedSampler(order, num_replicas=2, rank=1, shuffle=False)
    assert [order[i] for i in sampler] == shards[1]
    w = World(rank=0, size=2)
    assert w.per_rank_batch(8) == 4
    with pytest.raises(InputError, match="not divisible"):
        w.per_rank_batch(7)
    # a last batch of 1 window would leave rank 1 empty: dropped; one of 2 is kept
    assert w.steps_per_epoch(17, 8) == 2 and w.steps_per_epoch(18, 8) == 3
    assert World().steps_per_epoch(17, 8) == 3
    # weights: a short last batch of 3 split 2 + 1; DDP's average of weighted means = mean
    assert w.grad_weight(2, 3) == pytest.approx(4 / 3)
    assert World(rank=1, size=2).grad_weight(1, 3) == pytest.approx(2 / 3)
