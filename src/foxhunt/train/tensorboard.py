"""A TensorBoard event log of a training run (``foxhunt train --tensorboard [DIR]``).

:class:`TensorBoardLog` is a loop listener (:data:`foxhunt.train.observer.Listener`): it turns
the records ``metrics.jsonl`` gets, and the memory snapshots, into scalars, with the optimizer
step as TensorBoard's step:

- ``train/loss``, ``train/lr``, ``train/grad_norm``, ``train/samples_per_s``: every
  ``log_every`` steps (the loss is the mean over those steps, as in ``metrics.jsonl``);
- ``epoch/train_loss``, ``epoch/val_loss``: at the end of each epoch;
- ``memory/<name>_MB``: every size a snapshot holds (``rss``, ``peak_rss``,
  ``cuda_allocated``, ...), in MB (10^6 bytes), at the ``train_step`` and ``epoch_end`` points.

The writer is :class:`torch.utils.tensorboard.SummaryWriter` (needs the ``tensorboard``
package: ``pip install 'foxhunt[tune]'``); it is opened at the run's first record, so a run
refused before training leaves no event file. A fresh run (one that starts at epoch 0) first
removes the event files an earlier run left in the directory when ``fresh_start_clears``; a
resumed run appends a new event file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from torch.utils.tensorboard import SummaryWriter

_STEP_SCALARS = ("loss", "lr", "grad_norm", "samples_per_s")
_EPOCH_SCALARS = ("train_loss", "val_loss")
_MEMORY_POINTS = ("train_step", "epoch_end")
EVENT_GLOB = "events.out.tfevents.*"
"""How TensorBoard's event files are named."""


class TensorBoardLog:
    """Scalars of one training run in ``logdir`` (a listener; also a context manager).

    Args:
        logdir: Directory of the event files (created at the first record).
        fresh_start_clears: On a run starting at epoch 0, delete the event files already in
            ``logdir`` (use it for a directory owned by the run, e.g. ``RUN/tensorboard``).
    """

    def __init__(self, logdir: Path, *, fresh_start_clears: bool = False) -> None:
        self.logdir = Path(logdir)
        self.fresh_start_clears = fresh_start_clears
        self._writer: SummaryWriter | None = None

    def __call__(self, record: Mapping[str, Any]) -> None:
        kind = record.get("kind")
        if self._writer is None:
            self._open(record)
        step = int(record.get("step") or 0)
        if kind == "step":
            self._scalars("train", record, _STEP_SCALARS, step)
        elif kind == "epoch":
            self._scalars("epoch", record, _EPOCH_SCALARS, step)
        elif kind == "memory" and record.get("point") in _MEMORY_POINTS:
            for key, value in record.items():
                if key.endswith("_bytes") and isinstance(value, int | float):
                    self._add(f"memory/{key.removesuffix('_bytes')}_MB", value / 1e6, step)

    def close(self) -> None:
        """Flush and close the event file (if any was opened)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> TensorBoardLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _open(self, first: Mapping[str, Any]) -> None:
        fresh = first.get("point") == "run_start" and not first.get("epoch")
        if fresh and self.fresh_start_clears and self.logdir.is_dir():
            for old in self.logdir.glob(EVENT_GLOB):
                old.unlink()
        self._writer = SummaryWriter(log_dir=str(self.logdir))

    def _scalars(self, group: str, record: Mapping[str, Any], names: tuple[str, ...], step: int):
        for name in names:
            if isinstance(record.get(name), int | float):
                self._add(f"{group}/{name}", float(record[name]), step)

    def _add(self, tag: str, value: float, step: int) -> None:
        assert self._writer is not None
        if math.isfinite(value):
            self._writer.add_scalar(tag, value, global_step=step)
