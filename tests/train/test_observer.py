from __future__ import annotations

import json

import torch

from foxhunt.config import TrainConfig
from foxhunt.memory.log import MemoryLog
from foxhunt.train.observer import LoopObserver


def _observer(tmp_path, is_main: bool, heard: list) -> LoopObserver:
    memory = MemoryLog(None, torch.device("cpu"), sources={"fake": lambda: {"rss_bytes": 7}})
    tc = TrainConfig(log_every=2, epochs=1)
    return LoopObserver.for_fit(
        tmp_path / "metrics.jsonl", is_main, memory, None, tc, [heard.append]
    )


def _one_epoch(obs: LoopObserver) -> None:
    obs.snapshot("run_start", epoch=0, step=0)
    obs.epoch_start(1, 0, 2)
    for step in (1, 2):
        obs.step(1, step, 8, 0.5 * step, lr=1e-3, grad_norm=1.0, micro_batch=8, accumulation=1)
    obs.epoch_end(1, 2, {"train_loss": 0.75, "val_loss": 0.5}, True, 16)


def test_listeners_hear_every_record_and_snapshot_on_the_main_rank(tmp_path) -> None:
    heard: list = []
    _one_epoch(_observer(tmp_path, True, heard))
    written = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r for r in heard if r["kind"] != "memory"] == written  # the same records, in order
    assert [r["kind"] for r in written] == ["step", "epoch"]
    assert written[0]["loss"] == 0.75 and written[1]["val_loss"] == 0.5
    points = [r["point"] for r in heard if r["kind"] == "memory"]
    assert points == ["run_start", "epoch_start", "train_step", "after_checkpoint", "epoch_end"]
    assert all(r["rss_bytes"] == 7 for r in heard if r["kind"] == "memory")


def test_other_ranks_write_nothing_and_tell_no_listener(tmp_path) -> None:
    heard: list = []
    _one_epoch(_observer(tmp_path, False, heard))
    assert heard == [] and not (tmp_path / "metrics.jsonl").exists()
