"""Data-parallel training across processes: PyTorch DDP, launched by ``torchrun``.

``torchrun --nproc-per-node N -m foxhunt train ...`` starts N copies of the ordinary CLI with
``WORLD_SIZE``, ``RANK``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT`` in the environment.
:func:`process_group` reads them and joins the process group (gloo on CPU, NCCL on CUDA). Without
them it yields a one-process :class:`World` whose every helper is a no-op, so a plain
``foxhunt train`` runs exactly as before.

How a step's batch is split: the loop draws the *global* batch ``order[s : s + batch_size]``
from the seeded per-epoch shuffle (identical on every rank) and each rank takes
``global[rank::world_size]`` (:meth:`World.shard`). That is ``DistributedSampler``'s arithmetic
(``indices[rank::world_size]`` over an already shuffled order) applied per step, so the union of
the ranks' batches is exactly the single-process batch and the effective batch is unchanged.
Each rank's loss is weighted by its share of the global batch times ``world_size``
(:meth:`World.grad_weight`): DDP averages gradients over ranks, so the averaged gradient is the
global batch's mean, also for a short last batch. A last batch smaller than ``world_size`` would
leave a rank empty and is dropped (:meth:`World.steps_per_epoch`).

Validation is sharded the same way (:class:`ShardedWindows`) and the sample-weighted losses are
summed across ranks (:meth:`World.mean`), so every rank sees the same validation loss and makes
the same early-stopping decision. Only rank 0 writes checkpoints, ``metrics.jsonl``, reports and
progress bars; rank 0 writes ``memory.jsonl`` and rank N > 0 writes ``memory.rankN.jsonl``.

A failing rank must not hang the others: every collective has a timeout (``timeout`` of
:func:`process_group`, default :data:`DEFAULT_TIMEOUT_S`), and ``torchrun`` tears down the other
ranks when one exits non-zero.

Test hook: ``FOXHUNT_DDP_FAIL="RANK:STEP"`` makes rank RANK raise after optimizer step STEP
(:meth:`World.maybe_fail`); the tests use it to check that the job fails fast and clearly.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
import torch.distributed as torch_dist
from torch import nn
from torch.distributed.elastic.multiprocessing.errors import ErrorHandler
from torch.nn.parallel import DistributedDataParallel

from foxhunt.errors import InputError
from foxhunt.model.batch import TFTBatch

if TYPE_CHECKING:
    from foxhunt.train.source import WindowSource

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 300.0
"""Seconds a collective (or joining the group) may wait for a peer before the job fails."""

FAIL_ENV = "FOXHUNT_DDP_FAIL"
"""Test hook: ``"RANK:STEP"`` makes that rank raise after that optimizer step."""


@dataclass(frozen=True)
class World:
    """Where this process sits in the job; ``size == 1`` means no process group.

    Attributes:
        rank: Global rank (0..size-1).
        size: Number of processes.
        local_rank: Rank on this node (selects the CUDA device).
    """

    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def distributed(self) -> bool:
        """Whether a process group is in use."""
        return self.size > 1

    @property
    def is_main(self) -> bool:
        """Rank 0: the one process that writes files and draws progress."""
        return self.rank == 0

    def per_rank_batch(self, batch_size: int) -> int:
        """Samples each rank processes per optimizer step.

        Raises:
            InputError: If ``batch_size`` is not divisible by the world size.
        """
        if batch_size % self.size:
            raise InputError(
                f"--batch-size {batch_size} is not divisible by the {self.size} processes; "
                f"choose a multiple of {self.size} (the effective batch is split evenly)"
            )
        return batch_size // self.size

    def steps_per_epoch(self, n: int, batch_size: int) -> int:
        """Optimizer steps per epoch over ``n`` windows: a last partial batch counts only if
        every rank gets at least one of its samples (always, in one process)."""
        full, rest = divmod(n, batch_size)
        return full + (1 if rest >= self.size else 0)

    def shard(self, indices: Sequence[int]) -> list[int]:
        """This rank's part of a global batch: ``indices[rank::size]`` (DistributedSampler's
        split, applied to one step's batch)."""
        return list(indices[self.rank :: self.size])

    def grad_weight(self, local: int, global_: int) -> float:
        """Factor on this rank's mean loss so DDP's average over ranks is the global mean."""
        return local * self.size / global_

    def wrap(self, model: nn.Module, device: torch.device) -> nn.Module:
        """``model`` in :class:`DistributedDataParallel`, or ``model`` itself in one process."""
        if not self.distributed:
            return model
        ids = [device.index] if device.type == "cuda" else None
        return DistributedDataParallel(model, device_ids=ids)

    def mean(self, value: float, weight: float, device: torch.device) -> float:
        """Weighted mean of ``value`` over ranks: sum(value * weight) / sum(weight)."""
        if not self.distributed:
            return value
        t = torch.tensor([value * weight, weight], dtype=torch.float64, device=device)
        torch_dist.all_reduce(t)
        return float(t[0] / t[1]) if float(t[1]) > 0 else float("nan")

    def any(self, flag: bool, device: torch.device) -> bool:
        """Whether ``flag`` is set on any rank (e.g. a stop signal only one rank received)."""
        if not self.distributed:
            return flag
        t = torch.tensor([int(flag)], dtype=torch.int32, device=device)
        torch_dist.all_reduce(t, op=torch_dist.ReduceOp.MAX)
        return bool(t.item())

    def barrier(self) -> None:
        """Wait for every rank (no-op in one process)."""
        if self.distributed:
            torch_dist.barrier()

    def maybe_fail(self, step: int) -> None:
        """Test hook: raise if :data:`FAIL_ENV` names this rank and ``step``.

        Raises:
            RuntimeError: When injected.
        """
        spec = os.environ.get(FAIL_ENV)
        if spec and spec == f"{self.rank}:{step}":
            raise RuntimeError(f"rank {self.rank}: injected failure after step {step} ({FAIL_ENV})")


def world_from_env() -> World:
    """The :class:`World` torchrun describes in the environment (one process without it).

    Raises:
        InputError: If the variables are inconsistent.
    """
    size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", str(rank)))
    if size < 1 or not 0 <= rank < size:
        raise InputError(f"WORLD_SIZE={size}, RANK={rank}: rank must be in [0, WORLD_SIZE)")
    return World(rank=rank, size=size, local_rank=local)


def rank_device(world: World, device: torch.device) -> torch.device:
    """The device of this rank: ``cuda:LOCAL_RANK`` for CUDA runs under torchrun."""
    if world.distributed and device.type == "cuda":
        return torch.device("cuda", world.local_rank)
    return device


@contextlib.contextmanager
def process_group(device: torch.device, timeout_s: float = DEFAULT_TIMEOUT_S) -> Iterator[World]:
    """Join the process group torchrun set up (if any) for the duration of the block.

    Args:
        device: This rank's device; NCCL for CUDA, gloo otherwise.
        timeout_s: Longest wait for a peer in any collective.

    Yields:
        This process's :class:`World`.
    """
    world = world_from_env()
    if not world.distributed:
        yield world
        return
    backend = "nccl" if device.type == "cuda" else "gloo"
    if device.type == "cuda":
        torch.cuda.set_device(device)
    torch_dist.init_process_group(backend=backend, timeout=dt.timedelta(seconds=timeout_s))
    log.info("rank %d of %d joined the %s process group", world.rank, world.size, backend)
    try:
        yield world
        # Leave together: a rank that tears gloo down while a peer still holds its connections
        # (rank 0 writing the report) could abort at exit ("terminate called without an active
        # exception") and fail a finished job.
        torch_dist.barrier()
    except Exception as e:
        log.error("rank %d of %d failed: %s: %s", world.rank, world.size, type(e).__name__, e)
        ErrorHandler().record_exception(e)  # torchrun's summary then shows it as the root cause
        raise
    finally:
        torch_dist.destroy_process_group()


class ShardedWindows:
    """This rank's windows ``rank, rank + size, ...`` of a dataset (for sharded validation).

    Args:
        source: Any object with ``__len__`` and ``batch(indices) -> TFTBatch``.
        world: This process's place in the job.
    """

    def __init__(self, source: WindowSource, world: World) -> None:
        self._source = source
        self._rows = list(range(world.rank, len(source), world.size))

    def __len__(self) -> int:
        return len(self._rows)

    def batch(self, indices: Sequence[int]) -> TFTBatch:
        """The windows at ``indices`` of this shard."""
        return self._source.batch([self._rows[i] for i in indices])
