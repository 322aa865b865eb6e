"""Estimated bytes kept for backward by one training forward of a TFT, per top-level block.

:func:`estimate_saved_activations` resolves a config's sizes (:func:`shape_of`), reads which
parts recompute by themselves from the model built on the ``meta`` device (:func:`meta_model`:
shapes only, no storage), and sums the closed-form block formulas of
:mod:`foxhunt.memory.activation_formulas`, adding what checkpointing keeps and the half-precision
weight copies autocast saves. Nothing touches real memory.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from foxhunt.config import Precision, TFTConfig
from foxhunt.memory.activation_formulas import (
    F32,
    DeviceType,
    Shape,
    attention_bytes,
    checkpointed_input_bytes,
    cudnn_lstm_workspace_bytes,
    gate_add_norm_bytes,
    grn_bytes,
    lstm_backward_scratch_bytes,
    lstm_bytes,
    vsn_bytes,
)
from foxhunt.model.recompute import CHECKPOINTED_BLOCKS
from foxhunt.model.tft import BLOCK_NAMES, TFT

OTHER = "other"
"""Bytes saved outside the blocks: the quantile loss."""


@functools.lru_cache(maxsize=16)
def meta_model(config: TFTConfig) -> TFT:
    """The model on the ``meta`` device: shapes and structure, no storage (cached per config)."""
    with torch.device("meta"):
        return TFT(config)


def shape_of(config: TFTConfig, batch_size: int, precision: Precision, device: DeviceType) -> Shape:
    """The sizes the block formulas need, read from ``config`` (``f`` is 2 below fp32)."""
    return Shape(
        b=batch_size,
        t_enc=config.encoder_length,
        t_dec=config.horizon,
        d=config.hidden,
        d_v=config.variable_width,
        nh=config.n_heads,
        layers=config.lstm_layers,
        q=config.n_quantiles,
        dropout=config.dropout > 0,
        f=F32 if precision == "fp32" else 2,
        device=device,
    )


@dataclass(frozen=True)
class _Structure:
    """Switches read from the model built on ``meta``: which parts recompute by themselves."""

    streaming: dict[str, bool]
    lstm_recompute: bool


def _structure(config: TFTConfig, recompute: bool) -> _Structure:
    """``recompute=False``: as after ``set_internal_recompute(model, False)`` (time-varying VSNs
    not streamed, LSTMs keep their internals)."""
    model = meta_model(config)
    vsns = ("static_vsn", "historical_vsn", "known_vsn")
    return _Structure(
        streaming={
            n: recompute and bool(getattr(getattr(model, n), "streaming", False)) for n in vsns
        },
        lstm_recompute=recompute and bool(getattr(model.lstm_encoder, "recompute", False)),
    )


def gradients_made_after(config: TFTConfig, recompute: bool = True) -> dict[str, int]:
    """fp32 bytes of a block's own parameter gradients that do not exist yet at its widest
    moment in backward: a streamed VSN's selection GRN is recomputed and back-propagated after
    all its chunks (its gradients come last), so at a chunk's widest moment, and at the
    selection's own, those gradients are not yet made."""
    st = _structure(config, recompute)
    model = meta_model(config)
    return {
        name: sum(p.numel() for p in getattr(model, name).selection.parameters()) * F32
        for name, streamed in st.streaming.items()
        if streamed
    }


def blocks_unchecked(
    config: TFTConfig, s: Shape, recompute: bool = True
) -> tuple[dict[str, int], dict[str, int]]:
    """Saved bytes per block without block checkpointing, and per-block recompute transients
    (what a block recomputes in backward by itself: a VSN chunk, the LSTM's internals);
    ``recompute=False``: the VSNs and LSTMs keep their activations instead."""
    b, t, d, f = s.b, s.t, s.d, s.f
    st = _structure(config, recompute)
    dec_rows = b * s.t_dec
    vsn = {"mode": config.vsn_mode, "chunk": config.vsn_chunk}
    static_vsn, t0 = vsn_bytes(
        config.n_static, b, s, context_rows=0, streaming=st.streaming["static_vsn"], **vsn
    )
    hist, t1 = vsn_bytes(
        config.n_historical,
        b * s.t_enc,
        s,
        context_rows=b,
        streaming=st.streaming["historical_vsn"],
        **vsn,
    )
    # In half precision each VSN makes its own half copy of the context.
    known_ctx = b if s.f != F32 else 0
    known, t2 = vsn_bytes(
        config.n_known, b * t, s, context_rows=known_ctx, streaming=st.streaming["known_vsn"], **vsn
    )
    enc_full, dec_full = lstm_bytes(s.t_enc, s), lstm_bytes(s.t_dec, s)
    if st.lstm_recompute:
        # Checkpointed LSTM: the encoder keeps the selected embeddings (B, T, d; its input is a
        # slice) and the two (B, d) contexts its state expands; the decoder keeps the encoder's
        # final state ((L, B, d) twice, fp32). The internals are recomputed in backward.
        enc = b * t * d * f + 2 * b * d * f
        dec = 2 * s.layers * b * d * F32
        transients = {"lstm_encoder": enc_full, "lstm_decoder": dec_full}
    else:
        enc, dec = enc_full, dec_full
        transients = {"lstm_encoder": 0, "lstm_decoder": 0}
    if s.device == "cuda":  # cuDNN's workspace, live in each backward beside the reserve space
        transients["lstm_encoder"] += cudnn_lstm_workspace_bytes(b, s.t_enc, d, f)
        transients["lstm_decoder"] += cudnn_lstm_workspace_bytes(b, s.t_dec, d, f)
    else:  # oneDNN's backward scratch, one layer at a time
        transients["lstm_encoder"] += lstm_backward_scratch_bytes(b, s.t_enc, d, d)
        transients["lstm_decoder"] += lstm_backward_scratch_bytes(b, s.t_dec, d, d)
    transients.update(static_vsn=t0, historical_vsn=t1, known_vsn=t2)
    blocks = {
        "static_vsn": static_vsn,
        # four GRNs d -> d on the static embedding; the first one keeps it (B d)
        "static_encoders": b * d * f + 4 * (grn_bytes(b, d, d, d, s, a_new=False)),
        "historical_vsn": hist,
        "known_vsn": known,
        "lstm_encoder": enc,
        "lstm_decoder": dec,
        "post_lstm_gate": gate_add_norm_bytes(b * t, d, d, s.dropout, f),
        "static_enrichment": grn_bytes(b * t, d, d, d, s, a_new=True, context_rows=b),
        "attention": attention_bytes(s),
        "post_attention_gate": gate_add_norm_bytes(dec_rows, d, d, s.dropout, f),
        "positionwise_grn": grn_bytes(dec_rows, d, d, d, s, a_new=True),
        "pre_output_gate": gate_add_norm_bytes(dec_rows, d, d, False, f),
        "output": dec_rows * d * f,
    }
    return blocks, transients


def _loss_bytes(s: Shape) -> int:
    """Pinball loss in fp32: q and q - 1 (Q each) and both products (B T_dec Q each)."""
    return 2 * s.q * F32 + 2 * s.b * s.t_dec * s.q * F32


def estimate_saved_activations(
    config: TFTConfig,
    batch_size: int,
    *,
    precision: Precision = "fp32",
    checkpointing: bool = False,
    device: DeviceType = "cpu",
    recompute: bool = True,
) -> dict[str, int]:
    """Bytes kept for backward by one training forward (plus loss), per top-level block.

    Args:
        config: the network.
        batch_size: B, samples in the forward (the micro-batch).
        precision: ``fp32``; ``bf16``/``fp16`` halve the activation element size (the LSTM and
            the loss stay fp32), an approximation.
        checkpointing: blocks in ``CHECKPOINTED_BLOCKS`` keep only their inputs.
        device: ``cpu`` (exact) or ``cuda`` (LSTM and attention approximated).
        recompute: the VSNs stream and the LSTMs recompute (``TrainConfig.recompute``).

    Returns:
        Block name -> bytes for every name in ``BLOCK_NAMES``, then ``"other"`` (the loss).
    """
    s = shape_of(config, batch_size, precision, device)
    blocks, _ = blocks_unchecked(config, s, recompute)
    if checkpointing:
        kept = checkpointed_input_bytes(s)
        blocks.update({name: kept[name] for name in CHECKPOINTED_BLOCKS})
        if not _structure(config, recompute).lstm_recompute:
            # an LSTM keeping its internals saves a copy of its input, not the selected
            # embeddings: the post-LSTM gate's skip input is first kept there
            blocks["post_lstm_gate"] += s.b * s.t * s.d * s.f
    if precision != "fp32":
        for name, extra in _weight_copy_bytes(config).items():
            if not (checkpointing and name in CHECKPOINTED_BLOCKS):
                blocks[name] += extra
    out = {name: blocks[name] for name in BLOCK_NAMES}
    out[OTHER] = _loss_bytes(s)
    return out


def _weight_copy_bytes(config: TFTConfig) -> dict[str, int]:
    """Half-precision copies of the weights autocast makes for matmuls, kept for backward.

    Approximation: half the fp32 parameter bytes of each block, except the LSTMs (they run in
    fp32) and, for a streaming VSN, the per-variable weights (used inside checkpointed chunks).
    """
    model = meta_model(config)
    out: dict[str, int] = {}
    for name, child in model.named_children():
        if name in ("lstm_encoder", "lstm_decoder"):
            continue
        params = list(child.parameters())
        selection = getattr(child, "selection", None)
        if isinstance(selection, torch.nn.Module) and getattr(child, "streaming", False):
            params = list(selection.parameters())
        out[name] = sum(p.numel() for p in params) * 2
    return out
