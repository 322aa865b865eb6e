"""The data-parallel helpers in this process: the world torchrun describes, each rank's device
and shard, the failure hook, and the collectives over a one-process gloo group (the two-process
jobs are ``slow`` subprocess tests, which ``make mutate`` leaves out)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import torch
import torch.distributed as torch_dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from foxhunt.errors import InputError
from foxhunt.train.distributed import (
    FAIL_ENV,
    ShardedWindows,
    World,
    rank_device,
    world_from_env,
)

TORCHRUN_VARS = ("WORLD_SIZE", "RANK", "LOCAL_RANK")


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No torchrun variables unless the test sets them."""
    for name in (*TORCHRUN_VARS, FAIL_ENV):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_without_torchrun_the_world_is_one_process(env: pytest.MonkeyPatch) -> None:
    w = world_from_env()
    assert w == World(rank=0, size=1, local_rank=0)
    assert not w.distributed and w.is_main


def test_torchrun_variables_make_the_world(env: pytest.MonkeyPatch) -> None:
    env.setenv("WORLD_SIZE", "4")
    env.setenv("RANK", "2")
    assert world_from_env() == World(rank=2, size=4, local_rank=2)  # local rank: the rank
    env.setenv("LOCAL_RANK", "1")
    w = world_from_env()
    assert w == World(rank=2, size=4, local_rank=1)
    assert w.distributed and not w.is_main
    env.setenv("RANK", "0")
    env.setenv("WORLD_SIZE", "2")
    assert world_from_env().is_main and world_from_env().distributed


@pytest.mark.parametrize(("size", "rank"), [("0", "0"), ("2", "2"), ("2", "-1"), ("-1", "0")])
def test_inconsistent_torchrun_variables_are_refused(
    env: pytest.MonkeyPatch, size: str, rank: str
) -> None:
    env.setenv("WORLD_SIZE", size)
    env.setenv("RANK", rank)
    with pytest.raises(
        InputError, match=rf"^WORLD_SIZE={size}, RANK={rank}: rank must be in \[0, WORLD_SIZE\)$"
    ):
        world_from_env()


def test_edges_of_a_consistent_world_are_accepted(env: pytest.MonkeyPatch) -> None:
    env.setenv("WORLD_SIZE", "1")
    assert world_from_env() == World()
    env.setenv("WORLD_SIZE", "3")
    env.setenv("RANK", "2")
    assert world_from_env().rank == 2


def test_each_rank_uses_the_cuda_device_of_its_local_rank() -> None:
    ranked = World(rank=5, size=8, local_rank=1)
    assert rank_device(ranked, torch.device("cuda")) == torch.device("cuda", 1)
    assert rank_device(ranked, torch.device("cuda", 3)) == torch.device("cuda", 1)
    assert rank_device(ranked, torch.device("cpu")) == torch.device("cpu")
    # one process: the device as given
    assert rank_device(World(local_rank=1), torch.device("cuda", 3)) == torch.device("cuda", 3)


def test_a_batch_not_divisible_by_the_world_is_refused_in_words() -> None:
    with pytest.raises(InputError) as e:
        World(rank=0, size=3).per_rank_batch(32)
    assert str(e.value) == (
        "--batch-size 32 is not divisible by the 3 processes; choose a multiple of 3 (the "
        "effective batch is split evenly)"
    )
    per_rank = World(rank=2, size=4).per_rank_batch(32)
    assert per_rank == 8 and isinstance(per_rank, int)
    assert World().per_rank_batch(7) == 7


class _Source:
    """A window source that records the rows each batch asks for."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.asked: list[list[int]] = []

    def __len__(self) -> int:
        return self.n

    def batch(self, indices: Sequence[int]) -> list[int]:  # type: ignore[override]
        self.asked.append(list(indices))
        return list(indices)


def test_sharded_windows_are_every_size_th_window_from_the_rank() -> None:
    source = _Source(8)
    shard = ShardedWindows(source, World(rank=1, size=3))  # type: ignore[arg-type]
    assert len(shard) == 3  # windows 1, 4, 7
    assert shard.batch([2, 0]) == [7, 1]  # type: ignore[comparison-overlap]
    assert source.asked == [[7, 1]]
    assert len(ShardedWindows(_Source(8), World(rank=2, size=3))) == 2  # type: ignore[arg-type]
    assert len(ShardedWindows(_Source(5), World())) == 5  # type: ignore[arg-type]


def test_the_failure_hook_fires_on_its_rank_and_step_only(env: pytest.MonkeyPatch) -> None:
    rank1 = World(rank=1, size=2)
    rank1.maybe_fail(3)  # no hook set
    env.setenv(FAIL_ENV, "1:3")
    with pytest.raises(RuntimeError) as e:
        rank1.maybe_fail(3)
    assert str(e.value) == f"rank 1: injected failure after step 3 ({FAIL_ENV})"
    rank1.maybe_fail(2)
    rank1.maybe_fail(13)
    World(rank=0, size=2).maybe_fail(3)
    env.setenv(FAIL_ENV, "")
    rank1.maybe_fail(3)


def test_one_process_helpers_are_no_ops() -> None:
    one = World()
    model = nn.Linear(2, 1)
    assert one.wrap(model, torch.device("cpu")) is model
    assert one.mean(2.5, 0.0, torch.device("cpu")) == 2.5
    assert one.any(True, torch.device("cpu")) is True
    assert one.any(False, torch.device("cpu")) is False
    one.barrier()  # no process group: returns at once


@pytest.fixture
def group(tmp_path: Path) -> Iterator[None]:
    """A gloo process group of this process alone, for the collectives' arithmetic."""
    store = torch_dist.FileStore(str(tmp_path / "store"), 1)
    torch_dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        yield
    finally:
        torch_dist.destroy_process_group()


def test_collectives_reduce_across_the_group(group: None) -> None:
    """With one member the all-reduce returns this rank's own terms: the weighted mean is the
    value, a zero total weight is NaN, and the flag is this rank's."""
    w = World(rank=0, size=2)  # as a rank of a distributed job
    cpu = torch.device("cpu")
    assert w.mean(3.0, 2.0, cpu) == 3.0
    assert w.mean(-1.5, 0.5, cpu) == -1.5
    assert w.mean(1 / 3, 3.0, cpu) == 1 / 3  # summed in float64: float32 gives 0.33333334
    assert math.isnan(w.mean(3.0, 0.0, cpu))
    assert w.any(True, cpu) is True and w.any(False, cpu) is False
    w.barrier()
    model = nn.Linear(2, 1)
    wrapped = w.wrap(model, cpu)
    assert isinstance(wrapped, DistributedDataParallel) and wrapped.module is model
    assert wrapped.device_ids is None  # CPU: no device ids
