"""Bytes the autograd graph retains for backward, counted while a forward runs.

Every tensor autograd saves goes through a ``torch.autograd.graph.saved_tensors_hooks`` pack
hook; each distinct storage is counted once (by data pointer) and, per block, attributed to the
top-level child module that saved it *first*. The numbers are deterministic for a given config:
tests assert them exactly, and :mod:`foxhunt.memory.activations` models the same convention in
closed form.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import Tensor, nn

OTHER = "other"
"""Block name for bytes saved outside every top-level child module (e.g. the loss)."""


def storage_key(t: Tensor) -> int:
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
        self.exclude = {storage_key(t) for t in exclude}
        self.bytes_by_storage: dict[int, tuple[int, str]] = {}
        self.block_stack: list[str] = []
        self._keep: list[Tensor] = []

    def pack(self, t: Tensor) -> Tensor:
        # Hand autograd a detached alias (same storage and version counter), never ``t`` itself:
        # when ``t`` is an output of the node saving it, ``t`` -> grad_fn -> saved ``t`` would be
        # a reference cycle through C++ that Python's gc cannot break, and every measured graph
        # would leak (first-order backward through the alias is unchanged).
        alias = t.detach()
        key = storage_key(t)
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
