"""Bytes held between steps: parameters, buffers, gradients, optimizer state, live tensors.

Deterministic for a given model and optimizer; each storage is counted once (see
:func:`foxhunt.memory.saved_tensors.storage_key`). The results are plain dicts meant to be
splatted into :meth:`foxhunt.memory.log.MemoryLog.snapshot` as extra numbers.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from torch import Tensor, nn

from foxhunt.memory.saved_tensors import storage_key


def _unique_bytes(tensors: Iterable[Tensor]) -> int:
    seen: dict[int, int] = {}
    for t in tensors:
        seen.setdefault(storage_key(t), t.untyped_storage().nbytes())
    return sum(seen.values())


class HasState(Protocol):
    """An optimizer: per-parameter state dicts (``torch.optim`` or foxhunt's AdamW)."""

    state: Mapping[Any, Mapping[str, Any]]


def state_bytes(model: nn.Module, optimizer: HasState | None = None) -> dict[str, int]:
    """Bytes held by the model and optimizer between steps, each storage counted once.

    Args:
        model: the model.
        optimizer: its optimizer, or None.

    Returns:
        ``parameter_bytes``, ``buffer_bytes``, ``gradient_bytes`` (gradients present now) and
        ``optimizer_bytes`` (every tensor in the optimizer's state, e.g. AdamW's two moments and
        step counters); splat into ``MemoryLog.snapshot`` as extra numbers.
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
