"""Everything the training loop reports, kept out of the loop's body: memory snapshots at
named points, progress bars, ``metrics.jsonl`` records and the end-of-run leak check.

:func:`foxhunt.train.loop.fit` calls one method per event; this object decides what each event
writes. Under torchrun only rank 0 writes ``metrics.jsonl`` (every rank keeps its own memory
log). Progress is drawn by whatever object the caller passes (the CLI's rich bars); library
code draws nothing itself. Listeners (:data:`Listener`: the TensorBoard log, a tuning trial's
pruner) see every record and snapshot as it is written, on rank 0 only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from foxhunt.config import TrainConfig
from foxhunt.memory.log import MemoryLog
from foxhunt.runtime import append_jsonl

log = logging.getLogger(__name__)

Listener = Callable[[Mapping[str, Any]], None]
"""Called with every metrics record ``fit`` writes (``kind``: step, epoch, oom, memory_warning)
and every memory snapshot (as a record of kind ``memory``). An exception it raises (a pruned
tuning trial) propagates out of ``fit``: the run stops there."""


class Progress(Protocol):
    """What the loop tells a progress display (see ``foxhunt.commands.progress``)."""

    def start_epoch(self, epoch: int, n_batches: int) -> None: ...

    def step(self, *, loss: float, samples_per_s: float, memory_bytes: int | None) -> None: ...

    def start_validation(self, n_batches: int) -> None: ...

    def validation_step(self) -> None: ...

    def end_epoch(self, line: str) -> None: ...

    def note(self, line: str) -> None: ...


class LoopObserver:
    """Snapshots, progress and metrics for one call of ``fit``.

    Args:
        metrics: ``metrics.jsonl`` to append to, or None (not rank 0: write nothing).
        memory: The memory log (snapshots, leak check).
        progress: A progress display, or None.
        log_every: Optimizer steps between step records / memory snapshots.
        epochs: Total epochs of the run (for the epoch line).
        listeners: Called with every record and snapshot (see :data:`Listener`).
    """

    def __init__(
        self,
        metrics: Path | None,
        memory: MemoryLog,
        progress: Progress | None,
        *,
        log_every: int,
        epochs: int,
        listeners: Sequence[Listener] = (),
    ) -> None:
        self.metrics, self.memory, self.progress = metrics, memory, progress
        self.listeners = tuple(listeners)
        self.log_every, self.epochs = log_every, epochs
        self._t0 = time.perf_counter()
        self._samples = 0
        self._window_loss, self._window_steps = 0.0, 0
        self._mem_bytes: int | None = None  # shown in the progress bar

    @classmethod
    def for_fit(
        cls,
        metrics: Path,
        is_main: bool,
        memory: MemoryLog,
        progress: Progress | None,
        tc: TrainConfig,
        listeners: Sequence[Listener],
    ) -> LoopObserver:
        """The observer of one ``fit``: under DDP, rank 0 alone writes metrics and has listeners."""
        return cls(
            metrics if is_main else None,
            memory,
            progress,
            log_every=tc.log_every,
            epochs=tc.epochs,
            listeners=listeners if is_main else (),
        )

    def emit(self, record: Mapping[str, Any]) -> None:
        """Append a metrics record (rank 0 only) and hand it to the listeners."""
        if self.metrics is not None:
            append_jsonl(self.metrics, record)
        for listener in self.listeners:
            listener(record)

    def snapshot(self, point: str, **fields: Any) -> dict[str, Any]:
        """A memory snapshot at a named point, handed to the listeners; returns it."""
        snap = self.memory.snapshot(point, **fields)
        for listener in self.listeners:
            listener({"kind": "memory", **snap})
        return snap

    def epoch_start(self, epoch: int, step: int, n_steps: int) -> None:
        self.snapshot("epoch_start", epoch=epoch, step=step)
        self._t0, self._samples = time.perf_counter(), 0
        self._window_loss, self._window_steps = 0.0, 0
        if self.progress:
            self.progress.start_epoch(epoch, n_steps)

    def oom(self, epoch: int, step: int, messages: list[str]) -> None:
        for m in messages:
            self.emit({"kind": "oom", "epoch": epoch, "step": step, "message": m})
            if self.progress:
                self.progress.note(m)

    def step(self, epoch: int, step: int, samples: int, loss: float, **fields: Any) -> None:
        """After optimizer step ``step``: a record and a snapshot every ``log_every`` steps."""
        self._samples += samples
        self._window_loss, self._window_steps = self._window_loss + loss, self._window_steps + 1
        samples_per_s = self._samples / max(time.perf_counter() - self._t0, 1e-9)
        if step % self.log_every == 0:
            snap = self.snapshot("train_step", epoch=epoch, step=step)
            self._mem_bytes = snap.get("cuda_allocated_bytes", snap.get("rss_bytes"))
            loss_mean = self._window_loss / self._window_steps
            self.emit(
                {
                    "kind": "step",
                    "epoch": epoch,
                    "step": step,
                    "lr": fields["lr"],
                    "loss": loss_mean,
                    "grad_norm": fields["grad_norm"],
                    "samples_per_s": samples_per_s,
                    "micro_batch": fields["micro_batch"],
                    "accumulation": fields["accumulation"],
                }
            )
            self._window_loss, self._window_steps = 0.0, 0
        if self.progress:
            self.progress.step(loss=loss, samples_per_s=samples_per_s, memory_bytes=self._mem_bytes)

    def interrupted(self, epoch: int, step: int, kept_epoch: int, root: Path) -> None:
        kept = f"epoch {kept_epoch} kept" if kept_epoch else "no complete epoch yet"
        log.warning(
            "interrupted at step %d: epoch %d discarded, %s; continue with: "
            "foxhunt train --resume %s",
            step,
            epoch,
            kept,
            root,
        )

    def epoch_end(
        self, epoch: int, step: int, metrics: Mapping[str, float], improved: bool, seen: int
    ) -> None:
        """After the epoch's checkpoint: its record, its line, the closing snapshots."""
        self.snapshot("after_checkpoint", epoch=epoch, step=step)
        seconds = time.perf_counter() - self._t0
        self.emit(
            {
                "kind": "epoch",
                "epoch": epoch,
                "step": step,
                **metrics,
                "best": improved,
                "samples_seen": seen,
                "seconds": seconds,
            }
        )
        line = (
            f"epoch {epoch}/{self.epochs}: train {metrics['train_loss']:.4f} · "
            f"val {metrics['val_loss']:.4f}{' (best)' if improved else ''} · {step} steps · "
            f"{seconds:.1f} s"
        )
        if self.progress:
            self.progress.end_epoch(line)
        else:
            log.info(line)
        self.snapshot("epoch_end", epoch=epoch, step=step)

    def run_end(self, epoch: int, step: int) -> None:
        """The leak check over the run's snapshots, then the last snapshot."""
        for leak in self.memory.check_leaks():
            self.emit({"kind": "memory_warning", "message": leak})
        self.snapshot("run_end", epoch=epoch, step=step)
