"""Activation checkpointing, applied to a TFT from outside.

``set_checkpointing(model, True)`` makes each heavy top-level block (``CHECKPOINTED_BLOCKS``)
recompute its activations in backward: the block's ``forward`` is replaced, on that instance only, by a call through
``torch.utils.checkpoint.checkpoint(..., use_reentrant=False)``. This is real recomputation —
gradients are identical to the plain ones (dropout masks are reproduced from the saved RNG
state) and reach every parameter; nothing is ``.detach()``-ed. Module names, ``state_dict`` keys
and module hooks are unchanged, so weights load either way and per-block memory attribution
keeps working. Calling it again with the same flag does nothing; ``False`` restores the blocks'
own ``forward``.

Note for measurement: a checkpointed region's inputs are saved through autograd's ordinary
saved-tensor mechanism, so an outer ``torch.autograd.graph.saved_tensors_hooks`` sees them; the
tensors its forward would have saved go through checkpoint's own hooks instead (they are
recomputed, not kept) and are not seen — which is exactly what is retained.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from torch import nn
from torch.utils.checkpoint import checkpoint

from foxhunt.model.lstm import LSTMBlock
from foxhunt.model.tft import TFT
from foxhunt.model.vsn import VariableSelectionNetwork

#: Blocks whose forward is recomputed. Left out: the VSNs and LSTMs, which already recompute
#: their internals by themselves (streaming VSN, ``LSTMBlock(recompute=True)``) and keep little
#: more than their inputs, so wrapping them again would only add a third forward pass; the static
#: blocks, which see only B rows; and the output head, one small Linear.
CHECKPOINTED_BLOCKS: tuple[str, ...] = (
    "post_lstm_gate",
    "static_enrichment",
    "attention",
    "post_attention_gate",
    "positionwise_grn",
    "pre_output_gate",
)

_FLAG = "_foxhunt_checkpointed"


def _checkpointed(forward: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return checkpoint(forward, *args, use_reentrant=False, **kwargs)


def set_checkpointing(model: TFT, enabled: bool) -> None:
    """Turn activation checkpointing of the TFT's heavy blocks on or off.

    Args:
        model: The model to change in place.
        enabled: True to recompute block activations in backward, False to restore.
    """
    for name in CHECKPOINTED_BLOCKS:
        block: nn.Module = getattr(model, name)
        active = block.__dict__.get(_FLAG, False)
        if enabled and not active:
            own_forward = type(block).forward.__get__(block)
            block.forward = functools.partial(_checkpointed, own_forward)
            setattr(block, _FLAG, True)
        elif not enabled and active:
            del block.forward
            delattr(block, _FLAG)


def is_checkpointing(model: TFT) -> bool:
    """Whether :func:`set_checkpointing` is on for ``model``.

    Args:
        model: A TFT.

    Returns:
        True if its blocks recompute activations in backward.
    """
    return all(getattr(model, n).__dict__.get(_FLAG, False) for n in CHECKPOINTED_BLOCKS)


def set_internal_recompute(model: nn.Module, enabled: bool) -> None:
    """Turn the VSNs' streaming and the LSTMs' recomputation on (the default) or off.

    On, each time-varying VSN keeps only its inputs and selection weights and recomputes the
    per-variable states chunk by chunk in backward, and each LSTM recomputes its forward instead
    of keeping oneDNN's workspace: the least memory, one more forward of those blocks per step.
    Off, both keep their activations: faster steps where memory is plentiful (the budget planner
    decides; ``TrainConfig.recompute``). Gradients are the same either way (up to float
    summation order over variable chunks).

    Args:
        model: A TFT (any module holding VSNs or LSTM blocks), changed in place.
        enabled: True to recompute, False to keep activations.
    """
    for m in model.modules():
        if isinstance(m, VariableSelectionNetwork) and m is not getattr(model, "static_vsn", None):
            m.streaming = enabled
        elif isinstance(m, LSTMBlock):
            m.recompute = enabled
