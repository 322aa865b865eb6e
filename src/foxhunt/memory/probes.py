"""Measure memory: bytes saved for backward, model/optimizer state, process and CUDA counters.

Two kinds of numbers live here:

* **Deterministic** ones, the same on every run of the same config: bytes the autograd graph
  retains for backward (:func:`saved_activation_bytes`, :func:`saved_activations_by_block`,
  counted through ``torch.autograd.graph.saved_tensors_hooks`` and deduplicated by storage) and
  parameter/gradient/optimizer bytes (:func:`state_bytes`). Tests assert these exactly.
* **Process** ones: CPU RSS and peak RSS, and on CUDA the caching allocator's counters. They
  include allocator overhead and vary from run to run; :class:`MemoryLog` records them at named
  points of a run into ``memory.jsonl`` and compares equivalent points of consecutive epochs.
"""

from __future__ import annotations

import gc
import json
import logging
import re
import resource
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import psutil
import torch
from torch import Tensor, nn

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

Source = Callable[[], Mapping[str, int | float]]
"""A snapshot source: returns named numbers, or raises if it cannot read them."""

OTHER = "other"
"""Block name for bytes saved outside every top-level child module (e.g. the loss)."""


# --- process counters ---------------------------------------------------------------------


def rss_bytes() -> int:
    """Resident set size of this process now, in bytes (psutil)."""
    return int(psutil.Process().memory_info().rss)


def _proc_status_kib(field: str) -> int | None:
    """A ``VmXXX`` field of ``/proc/self/status`` in KiB (Linux), else None."""
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    m = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
    return int(m.group(1)) if m else None


def reset_peak_rss() -> bool:
    """Reset this process's peak RSS to its current RSS (Linux ``/proc/self/clear_refs``).

    Call it right after taking a baseline, so the peak measures only what follows. Without it
    ``ru_maxrss`` on Linux also keeps the high-water mark of the process *before* ``exec``: a
    child started by a parent holding 500 MB would report a peak of at least 500 MB.

    Returns:
        True if the kernel's high-water mark (``VmHWM``) was reset; False elsewhere.
    """
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return _proc_status_kib("VmHWM") is not None


def peak_rss_bytes() -> int:
    """Peak resident set size of this process, in bytes.

    Linux's ``VmHWM`` (resettable, see :func:`reset_peak_rss`) where available, else
    ``getrusage`` ``ru_maxrss`` (KiB on Linux, bytes on macOS). The kernel updates its
    high-water mark lazily, so it can trail the current RSS by a few pages; the result is never
    below :func:`rss_bytes`.
    """
    hwm = _proc_status_kib("VmHWM")
    if hwm is not None:
        peak = hwm * 1024
    else:
        maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        peak = int(maxrss if sys.platform == "darwin" else maxrss * 1024)
    return max(peak, rss_bytes())


def cpu_source() -> dict[str, int]:
    """Snapshot source for the process: ``rss_bytes`` and ``peak_rss_bytes``."""
    return {"rss_bytes": rss_bytes(), "peak_rss_bytes": peak_rss_bytes()}


def cuda_source(device: torch.device) -> Source:
    """Snapshot source for one CUDA device's allocator counters.

    Args:
        device: a CUDA device.

    Returns:
        A callable returning ``cuda_allocated_bytes``, ``cuda_max_allocated_bytes``,
        ``cuda_reserved_bytes``, ``cuda_free_bytes`` and ``cuda_total_bytes``.
    """

    def read() -> dict[str, int]:
        free, total = torch.cuda.mem_get_info(device)
        return {
            "cuda_allocated_bytes": int(torch.cuda.memory_allocated(device)),
            "cuda_max_allocated_bytes": int(torch.cuda.max_memory_allocated(device)),
            "cuda_reserved_bytes": int(torch.cuda.memory_reserved(device)),
            "cuda_free_bytes": int(free),
            "cuda_total_bytes": int(total),
        }

    return read


def default_sources(device: torch.device) -> dict[str, Source]:
    """The sources a :class:`MemoryLog` reads on ``device``: ``cpu`` always, ``cuda`` on CUDA."""
    sources: dict[str, Source] = {"cpu": cpu_source}
    if device.type == "cuda":
        sources["cuda"] = cuda_source(device)
    return sources


# --- the run's memory log -----------------------------------------------------------------


def _is_leak_metric(key: str) -> bool:
    """Numbers compared between epochs: current sizes, not peaks, maxima or free space."""
    return key.endswith("_bytes") and not any(
        word in key for word in ("peak", "max", "free", "total")
    )


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
        leak_threshold_bytes: growth between equivalent points of consecutive epochs beyond this
            is reported by :meth:`check_leaks`.
        sources: name -> callable returning numbers; default :func:`default_sources`.
        strict: raise instead of logging when a source fails.
        warmup_epochs: the first epochs logged that :meth:`check_leaks` leaves out: the first
            epoch creates the optimizer state and fills allocator and kernel caches.
    """

    def __init__(
        self,
        path: Path | None,
        device: torch.device,
        *,
        leak_threshold_bytes: int = 32 * 2**20,
        sources: Mapping[str, Source] | None = None,
        strict: bool = False,
        warmup_epochs: int = 1,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.device = torch.device(device)
        self.leak_threshold_bytes = int(leak_threshold_bytes)
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
            epoch: epoch number (equivalent points are compared across epochs), or None.
            step: optimizer step, or None.
            **extra: more JSON-able numbers to record, e.g. ``**state_bytes(model, opt)`` or
                ``saved_activation_bytes=...``; keys ending in ``_bytes`` take part in
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
        """Compare equivalent points of consecutive epochs; report growth beyond the threshold.

        The first ``warmup_epochs`` epochs in the log are left out. Equivalent points share
        ``point`` and their position among that point's snapshots in the epoch (the 3rd ``train_step`` of epoch 2 is compared with the 3rd of epoch 1). Compared
        numbers: every ``*_bytes`` value that is a current size (not a peak, maximum, free or
        total). When there are three or more epochs, growth from the first to the last epoch
        beyond the threshold is reported too, so a slow leak below the per-epoch threshold is
        still caught. Each finding is also logged as a warning.

        Returns:
            One line of text per finding, with the numbers; empty when memory is flat.
        """
        by_epoch: dict[int, dict[tuple[str, int], dict[str, Any]]] = {}
        for r in self._records:
            if r["epoch"] is None:
                continue
            points = by_epoch.setdefault(int(r["epoch"]), {})
            index = sum(1 for key in points if key[0] == r["point"])
            points[(r["point"], index)] = r
        epochs = sorted(by_epoch)[self.warmup_epochs :]
        pairs = list(zip(epochs, epochs[1:], strict=False))
        if len(epochs) >= 3:
            pairs.append((epochs[0], epochs[-1]))
        found: list[str] = []
        for a, b in pairs:
            for key, rb in by_epoch[b].items():
                ra = by_epoch[a].get(key)
                if ra is None:
                    continue
                for metric, vb in rb.items():
                    va = ra.get(metric)
                    if not (_is_leak_metric(metric) and isinstance(va, int | float)):
                        continue
                    if not isinstance(vb, int | float):
                        continue
                    growth = vb - va
                    if growth > self.leak_threshold_bytes:
                        point, index = key
                        text = (
                            f"possible leak: {metric} at {point}#{index} grew by {growth:,} bytes "
                            f"from epoch {a} ({va:,}) to epoch {b} ({vb:,}); "
                            f"threshold {self.leak_threshold_bytes:,}"
                        )
                        logger.warning(text)
                        found.append(text)
        return found


# --- bytes retained for backward ----------------------------------------------------------


def _storage_key(t: Tensor) -> int:
    """Identity of the storage behind ``t``: its data pointer, or (meta/empty) its StorageImpl."""
    storage = t.untyped_storage()
    ptr = storage.data_ptr()
    return ptr if ptr != 0 else storage._cdata


class _SavedTensorCounter:
    """Pack hook that records each new storage once, with the block that saved it first.

    Saved tensors are kept referenced until the count is read, so a storage freed mid-forward
    cannot hand its address to another one and be miscounted.
    """

    def __init__(self, exclude: Iterable[Tensor]) -> None:
        self.exclude = {_storage_key(t) for t in exclude}
        self.bytes_by_storage: dict[int, tuple[int, str]] = {}
        self.block_stack: list[str] = []
        self._keep: list[Tensor] = []

    def pack(self, t: Tensor) -> Tensor:
        # Hand autograd a detached alias (same storage and version counter), never ``t`` itself:
        # when ``t`` is an output of the node saving it, ``t`` -> grad_fn -> saved ``t`` would be
        # a reference cycle through C++ that Python's gc cannot break, and every measured graph
        # would leak (first-order backward through the alias is unchanged).
        alias = t.detach()
        key = _storage_key(t)
        if key not in self.exclude and key not in self.bytes_by_storage:
            block = self.block_stack[-1] if self.block_stack else OTHER
            self.bytes_by_storage[key] = (t.untyped_storage().nbytes(), block)
            self._keep.append(alias)
        return alias

    @staticmethod
    def unpack(t: Tensor) -> Tensor:
        return t

    def by_block(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for nbytes, block in self.bytes_by_storage.values():
            out[block] = out.get(block, 0) + nbytes
        return out

    def release(self) -> None:
        self._keep.clear()


def saved_activation_bytes(fn: Callable[[], Any], *, exclude: Iterable[Tensor] = ()) -> int:
    """Bytes the autograd graph retains for backward while ``fn`` runs.

    Every tensor autograd saves goes through a ``saved_tensors_hooks`` pack hook; the bytes of
    each distinct storage are counted once. Under non-reentrant activation checkpointing only
    what the checkpoint keeps (the region's inputs) is counted, which is what it retains.

    Args:
        fn: runs a forward (typically returning the loss); its return value is dropped.
        exclude: tensors whose storages are not counted (e.g. parameters, the input batch).

    Returns:
        Bytes of distinct storages saved for backward.
    """
    counter = _SavedTensorCounter(exclude)
    try:
        with torch.autograd.graph.saved_tensors_hooks(counter.pack, counter.unpack):
            fn()
        return sum(counter.by_block().values())
    finally:
        counter.release()


def saved_activations_by_block(
    model: nn.Module, fn: Callable[[], Any], *, exclude: Iterable[Tensor] = ()
) -> dict[str, int]:
    """Bytes retained for backward while ``fn`` runs, attributed to ``model``'s top-level blocks.

    A storage belongs to the block running when it was first saved (so a block's output that
    the next block's first op saves is counted in the next block). Parameters and buffers of
    ``model`` are never counted: they are state, not activations.

    Args:
        model: the module whose direct children are the blocks.
        fn: runs a forward of ``model`` (typically returning the loss).
        exclude: more tensors not to count (e.g. the input batch).

    Returns:
        Block name -> bytes, every direct child in registration order (0 when it saved nothing),
        then ``"other"`` for bytes saved outside every block.
    """
    state = [*model.parameters(), *model.buffers()]
    counter = _SavedTensorCounter([*state, *exclude])
    handles = []

    def enter(name: str) -> Callable[..., None]:
        def hook(module: nn.Module, args: Any) -> None:
            counter.block_stack.append(name)

        return hook

    def leave(module: nn.Module, args: Any, output: Any) -> None:
        counter.block_stack.pop()

    names = [name for name, _ in model.named_children()]
    try:
        for name, child in model.named_children():
            handles.append(child.register_forward_pre_hook(enter(name)))
            handles.append(child.register_forward_hook(leave, always_call=True))
        with torch.autograd.graph.saved_tensors_hooks(counter.pack, counter.unpack):
            fn()
        found = counter.by_block()
    finally:
        for h in handles:
            h.remove()
        counter.release()
    return {name: found.get(name, 0) for name in [*names, OTHER]}


# --- state and live tensors ---------------------------------------------------------------


def _unique_bytes(tensors: Iterable[Tensor]) -> int:
    seen: dict[int, int] = {}
    for t in tensors:
        seen.setdefault(_storage_key(t), t.untyped_storage().nbytes())
    return sum(seen.values())


def state_bytes(model: nn.Module, optimizer: torch.optim.Optimizer | None = None) -> dict[str, int]:
    """Bytes held by the model and optimizer between steps, each storage counted once.

    Args:
        model: the model.
        optimizer: its optimizer, or None.

    Returns:
        ``parameter_bytes``, ``buffer_bytes``, ``gradient_bytes`` (gradients present now) and
        ``optimizer_bytes`` (every tensor in the optimizer's state, e.g. AdamW's two moments and
        step counters); splat into :meth:`MemoryLog.snapshot` as extra numbers.
    """
    params = list(model.parameters())
    opt_tensors: list[Tensor] = []
    if optimizer is not None:
        for per_param in optimizer.state.values():
            opt_tensors.extend(v for v in per_param.values() if isinstance(v, Tensor))
    return {
        "parameter_bytes": _unique_bytes(params),
        "buffer_bytes": _unique_bytes(model.buffers()),
        "gradient_bytes": _unique_bytes(p.grad for p in params if p.grad is not None),
        "optimizer_bytes": _unique_bytes(opt_tensors),
    }


def _has_storage(t: Tensor) -> bool:
    """False for tensors without real memory behind them (FakeTensor and FunctionalTensor left
    alive by tracing, e.g. an ONNX export): they hold no bytes and their storage cannot be read."""
    try:
        t.untyped_storage().data_ptr()
    except RuntimeError:
        return False
    return True


def live_tensor_stats() -> dict[str, int]:
    """Python-visible tensors alive now (after a ``gc.collect()``), each storage counted once.

    Slow (walks every object the garbage collector tracks): for epoch-level snapshots and tests,
    not for every step.

    Returns:
        ``live_tensor_count`` and ``live_tensor_bytes``.
    """
    gc.collect()
    # type(), not isinstance(): isinstance trips lazy module proxies into deprecation warnings
    tensors = [o for o in gc.get_objects() if issubclass(type(o), Tensor) and _has_storage(o)]
    return {"live_tensor_count": len(tensors), "live_tensor_bytes": _unique_bytes(tensors)}
