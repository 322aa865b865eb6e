"""The run's memory log: snapshots at named points of a run, appended to ``memory.jsonl``.

A :class:`MemoryLog` reads its sources (process RSS, CUDA counters; see
:mod:`foxhunt.memory.counters`) at each named point, adds the caller's numbers (e.g.
:func:`foxhunt.memory.state.state_bytes`), writes one JSON line per snapshot, and at the end of a
run tells whether memory kept growing after warm-up (:meth:`MemoryLog.check_leaks`, the rule in
:mod:`foxhunt.memory.leaks`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from foxhunt.memory.counters import Source, default_sources
from foxhunt.memory.leaks import MIN_GROWTH_BYTES, PEAK_FRACTION, find_leaks

logger = logging.getLogger(__name__)

SNAPSHOT_POINTS: tuple[str, ...] = (
    "run_start",
    "epoch_start",
    "train_step",
    "after_training",
    "before_validation",
    "validation_start",
    "validation_end",
    "after_checkpoint",
    "epoch_end",
    "run_end",
    "oom_retry",
)
"""Names a snapshot may carry, in the order they occur in a run (``oom_retry``: after a CUDA
out-of-memory error halved the micro-batch)."""


class MemoryLog:
    """Memory snapshots at named points of a run, appended to ``memory.jsonl``.

    Each snapshot is one JSON object per line, flushed as it is written:
    ``time`` (unix seconds), ``elapsed_s``, ``point``, ``epoch``, ``step``, ``device``, the
    numbers of every source (``rss_bytes``, ``peak_rss_bytes``; on CUDA ``cuda_allocated_bytes``,
    ``cuda_max_allocated_bytes``, ``cuda_reserved_bytes``, ``cuda_free_bytes``,
    ``cuda_total_bytes``), the caller's extra numbers, and ``errors``: a dict from source name to
    error text, empty when every source answered.

    A source that fails is never skipped silently: it is logged with ``logging.error`` and
    recorded under ``errors`` in the line (or, with ``strict=True``, the snapshot raises).

    Args:
        path: ``memory.jsonl`` to append to; None keeps the records in memory only.
        device: the device the run trains on (selects the CUDA source).
        leak_threshold_bytes: the leak check's absolute floor: growth after warm-up below this
            is never reported (see :func:`foxhunt.memory.leaks.find_leaks`).
        sources: name -> callable returning numbers; default
            :func:`~foxhunt.memory.counters.default_sources`.
        strict: raise instead of logging when a source fails.
        warmup_epochs: epochs that warm up (create the optimizer state, fill allocator and
            kernel caches); the end of the last of them is the leak check's baseline. At least 1.
        leak_peak_fraction: growth after warm-up beyond this fraction of the run's peak is
            reported.

    Raises:
        ValueError: ``warmup_epochs`` < 1.
    """

    def __init__(
        self,
        path: Path | None,
        device: torch.device,
        *,
        leak_threshold_bytes: int = MIN_GROWTH_BYTES,
        sources: Mapping[str, Source] | None = None,
        strict: bool = False,
        warmup_epochs: int = 1,
        leak_peak_fraction: float = PEAK_FRACTION,
    ) -> None:
        if warmup_epochs < 1:
            raise ValueError(f"warmup_epochs must be >= 1, got {warmup_epochs}")
        self.path = Path(path) if path is not None else None
        self.device = torch.device(device)
        self.leak_threshold_bytes = int(leak_threshold_bytes)
        self.leak_peak_fraction = float(leak_peak_fraction)
        self.sources: dict[str, Source] = dict(
            sources if sources is not None else default_sources(self.device)
        )
        self.strict = strict
        self.warmup_epochs = int(warmup_epochs)
        self._records: list[dict[str, Any]] = []
        self._t0 = time.time()

    def snapshot(
        self, point: str, *, epoch: int | None = None, step: int | None = None, **extra: Any
    ) -> dict[str, Any]:
        """Read every source, record one line and return it.

        Args:
            point: one of :data:`SNAPSHOT_POINTS`.
            epoch: epoch number (the leak check follows the ``epoch_end`` snapshots), or None.
            step: optimizer step, or None.
            **extra: more JSON-able numbers to record, e.g. ``**state_bytes(model, opt)`` or
                ``saved_activation_bytes=...``; current sizes ending in ``_bytes`` take part in
                :meth:`check_leaks`.

        Returns:
            The record as written.

        Raises:
            ValueError: ``point`` is not a known snapshot point.
            RuntimeError: a source failed and the log is ``strict``.
            OSError: ``memory.jsonl`` cannot be written.
        """
        if point not in SNAPSHOT_POINTS:
            raise ValueError(f"unknown snapshot point {point!r}; expected one of {SNAPSHOT_POINTS}")
        now = time.time()
        record: dict[str, Any] = {
            "time": now,
            "elapsed_s": round(now - self._t0, 6),
            "point": point,
            "epoch": epoch,
            "step": step,
            "device": str(self.device),
        }
        errors: dict[str, str] = {}
        for name, source in self.sources.items():
            try:
                record.update(source())
            except Exception as e:  # any failure must surface, whatever it is
                message = f"{type(e).__name__}: {e}"
                if self.strict:
                    raise RuntimeError(
                        f"memory snapshot {point!r}: source {name!r} failed: {message}"
                    ) from e
                logger.error("memory snapshot %r: source %r failed: %s", point, name, message)
                errors[name] = message
        record.update(extra)
        record["errors"] = errors
        self._records.append(record)
        if self.path is not None:
            with self.path.open("a") as f:
                f.write(json.dumps(record) + "\n")
                f.flush()
        return record

    def records(self) -> list[dict[str, Any]]:
        """Every snapshot taken so far, oldest first (copies)."""
        return [dict(r) for r in self._records]

    def check_leaks(self) -> list[str]:
        """Whether memory kept growing at epoch ends after warm-up.

        The baseline is the ``epoch_end`` snapshot of the last warm-up epoch (by default the
        end of the first epoch this log saw, so a resumed run warms up again); growth to the
        last epoch end is reported when it exceeds ``leak_threshold_bytes`` and either
        ``leak_peak_fraction`` of the run's peak or rose at each of two or more later epoch
        ends. The full rule is in :mod:`foxhunt.memory.leaks`. Each finding is also logged as a
        warning.

        Returns:
            One line of text per finding, with the numbers; empty when memory is flat.
        """
        return find_leaks(
            self._records,
            warmup_epochs=self.warmup_epochs,
            min_growth_bytes=self.leak_threshold_bytes,
            peak_fraction=self.leak_peak_fraction,
        )
