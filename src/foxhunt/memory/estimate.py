"""Estimate training and inference memory of a TFT before allocating anything.

Every number here is a closed-form function of the :class:`~foxhunt.config.TFTConfig`, the batch
size, the precision and the checkpointing flag, written from what each block's ops keep for
backward (see docs/memory.md for the derivation, block by block). Parameter counts come from the
model built on the ``meta`` device (shapes only, no storage). Nothing touches real memory.

Vocabulary: B batch, T_enc / T_dec / T = T_enc + T_dec lengths, d hidden, d_v per-variable width,
V a VSN's variable count, nh heads, d_h head width, L LSTM layers, Q quantiles, f activation bytes
per element (4 in fp32).

The saved-activation formulas follow the same convention as
:func:`foxhunt.memory.probes.saved_activations_by_block`: a storage belongs to the block that
saves it first; parameters and the input batch are not activations; under non-reentrant
checkpointing a block keeps only its tensor inputs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Literal

import torch

from foxhunt.config import Precision, RunConfig, TFTConfig
from foxhunt.model.recompute import CHECKPOINTED_BLOCKS
from foxhunt.model.tft import BLOCK_NAMES, TFT

DeviceType = Literal["cpu", "cuda"]

F32 = 4
OTHER = "other"
"""Bytes saved outside the blocks: the quantile loss."""

_PAGE = 4096


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def _good_ld(dim: int) -> int:
    """oneDNN's leading dimension for fp32: 64-byte aligned, and not a multiple of 256 elements."""
    ld = _round_up(dim, 16)
    return ld + 16 if ld % 256 == 0 else ld


def lstm_workspace_bytes(
    batch: int, steps: int, d_in: int, d_hidden: int, device: DeviceType
) -> int:
    """Workspace one training-mode LSTM layer keeps for backward (fp32).

    On CPU PyTorch runs each layer through oneDNN (``mkldnn_rnn_layer``), whose workspace holds
    the gates, the hidden states and five (state, diff-state) buffers over ``steps + 1``
    positions, each section padded to a good leading dimension and rounded to 4 KiB pages. The
    formula reproduces the allocation byte for byte (checked over random shapes in
    tests/memory/test_estimate.py). On CUDA cuDNN's reserve space is approximated by gates plus
    hidden and cell states per step (unverified without a GPU; see docs/memory.md).

    Args:
        batch: B.
        steps: sequence length.
        d_in: input width of the layer.
        d_hidden: hidden width H.
        device: ``cpu`` or ``cuda``.

    Returns:
        Bytes.
    """
    b, t, h = batch, steps, d_hidden
    if device == "cuda":
        return t * b * 6 * h * F32

    def page(x: int) -> int:
        return _round_up(x, _PAGE)

    def states(ld: int) -> int:
        return page(2 * (t + 1) * b * ld * F32)

    gates = page(t * b * _good_ld(4 * h) * F32)
    hidden = page(t * b * _good_ld(h) * F32)
    return gates + hidden + 3 * states(_good_ld(max(d_in, h))) + 2 * states(h)


# --- saved activations, block by block ------------------------------------------------------


@dataclass(frozen=True)
class _Shape:
    """The sizes the formulas need, resolved once."""

    b: int
    t_enc: int
    t_dec: int
    d: int
    d_v: int
    nh: int
    layers: int
    q: int
    dropout: bool
    f: int
    device: DeviceType

    @property
    def t(self) -> int:
        return self.t_enc + self.t_dec


def _gate_add_norm(rows: int, d_in: int, d_out: int, dropout: bool, x_new: bool, f: int) -> int:
    """GLU(dropout(x)) + skip, then LayerNorm: bytes saved.

    Dropout keeps its scaled mask and the linear keeps the dropped input (2 N d_in); without
    dropout the linear keeps ``x`` itself (counted only if no earlier op saved it). The GLU keeps
    its 2 d_out input, LayerNorm its d_out input and per-row mean and rstd.
    """
    keep_in = 2 * d_in if dropout else (d_in if x_new else 0)
    return rows * (keep_in + 2 * d_out + d_out) * f + rows * 2 * F32  # LayerNorm stats: fp32


def _grn(
    rows: int,
    d_in: int,
    d_hidden: int,
    d_out: int,
    s: _Shape,
    *,
    a_new: bool,
    context_rows: int = 0,
) -> int:
    """GRN: fc1 keeps ``a`` (if new), ELU its input, fc2 its input, then gate-add-norm.

    ``context_rows`` rows of a d-wide context are kept by the context projection (0 if the
    context was saved before or there is none). A projected skip keeps ``a`` again (same
    storage, not counted twice).
    """
    a = rows * d_in * s.f if a_new else 0
    inner = 2 * rows * d_hidden * s.f  # ELU input, fc2 input
    ctx = context_rows * s.d * s.f
    return a + ctx + inner + _gate_add_norm(rows, d_hidden, d_out, s.dropout, True, s.f)


def _vsn(
    n_vars: int, rows: int, s: _Shape, *, mode: str, chunk: int, context_rows: int, streaming: bool
) -> tuple[int, int]:
    """VSN over ``n_vars`` inputs at ``rows`` positions: (bytes saved, recompute transient).

    Selection: GRN(x -> V) with hidden min(d, V); its input is the batch (not counted), then a
    softmax that keeps its output (N V). Per variable (fused): embedding, GRN at d_v without a
    LayerNorm affine (it is folded into the lift), the normalised state kept by the weighting,
    the weight-scaled states (10 d_v + 2 per row; 9 d_v + 2 without dropout). A streaming VSN
    runs the selection under checkpoint (keeping its context and its output, the weights) and
    the per-variable part chunk by chunk under checkpoint (keeping nothing new: its inputs are
    views of the batch and of the weights); in backward the selection and then one chunk at a
    time are recomputed, the larger of which is the transient returned.
    """
    v, f = n_vars, s.f
    hs = min(s.d, v)
    grn = _grn(rows, v, hs, v, s, a_new=False, context_rows=0)
    softmax = rows * v * f
    ctx = context_rows * s.d * f
    half_input = rows * v * f if f != F32 else 0  # autocast's copy of x, kept for fc1 and skip
    if mode == "fused":
        if f == F32:
            per_var_row_bytes = ((10 if s.dropout else 9) * s.d_v + 2) * F32
        else:  # GRN internals in half precision; LayerNorm and the states in fp32
            per_var_row_bytes = (24 if s.dropout else 22) * s.d_v + 8
    else:  # faithful: GRN d_v -> d with hidden min(d_v, d) and a LayerNorm affine, then einsum
        dh = min(s.d_v, s.d)
        drop = 2 * dh if s.dropout else dh
        per_var_row_bytes = (s.d_v + 2 * dh + drop + 2 * s.d + s.d + 2 + s.d + s.d) * f
    per_var = v * rows * per_var_row_bytes
    if streaming:
        # Kept: the context (a checkpoint input) and the selection weights (the chunks' input).
        # Recomputed in backward: the selection GRN once, then one chunk at a time.
        kept = (context_rows * s.d * f if f == F32 else 0) + softmax
        selection = grn + half_input + (ctx if f != F32 else 0)
        return kept, max(selection, min(chunk, v) * rows * per_var_row_bytes)
    return ctx + grn + softmax + half_input + per_var, 0


def _lstm(steps: int, s: _Shape) -> int:
    """Stacked nn.LSTM (L layers, d -> d) seeded with an (L, B, d) state, run without recompute.

    Keeps the initial h and c ((L, B, d) each), and per layer: its input (a transposed copy for
    the first layer; for later layers the previous output, plus dropout's mask and output when
    dropout is on), its output (T, B, d), final h and c (B, d each) and the oneDNN workspace.
    Always fp32: under CPU autocast the LSTM runs with autocast off.
    """
    b, d = s.b, s.d
    total = 2 * s.layers * b * d * F32
    for layer in range(s.layers):
        if layer == 0:
            total += steps * b * d * F32  # input copy
        elif s.dropout:
            total += 2 * steps * b * d * F32  # dropout mask + dropped input
        total += steps * b * d * F32 + 2 * b * d * F32  # output, final h and c
        total += lstm_workspace_bytes(b, steps, d, d, s.device)
    return total


def _attention(s: _Shape) -> int:
    """Interpretable attention, decoder queries over all T positions.

    Both paths keep the query copy (B T_dec d), the key/value input (B T d, first saved here) and
    the head mean (B T_dec d_h). With dropout (CPU math path) SDPA keeps K^T and the scaled Q per
    head, the expanded shared V (B nh T d_h) and the softmax probabilities (B nh T_dec T) with
    dropout's mask and output; in reduced precision those internals are fp32. Without dropout
    (CPU flash path) it keeps Q, K, V as projected (B T_dec d, B T d, B T d_h), its output
    (B nh T_dec d_h), the fp32 log-sum-exp (B nh T_dec) and the mask as floats (T_dec T).
    """
    b, tq, tk, d, nh, f = s.b, s.t_dec, s.t, s.d, s.nh, s.f
    dh = d // nh
    outer = (b * tq * d + b * tk * d + b * tq * dh) * f
    if s.dropout:
        inner = b * nh * dh * tk + b * nh * tq * dh + 3 * b * nh * tq * tk + b * nh * tk * dh
        return outer + inner * F32
    inner = (b * tq * d + b * tk * d + b * tk * dh + b * nh * tq * dh + tq * tk) * f
    return outer + inner + b * nh * tq * F32


def _checkpointed_inputs(s: _Shape) -> dict[str, int]:
    """What each block keeps when wrapped by ``set_checkpointing``: its tensor inputs not saved
    before (non-reentrant checkpoint). Only the blocks in ``CHECKPOINTED_BLOCKS`` are used."""
    b, t, d, f = s.b, s.t, s.d, s.f
    dec = b * s.t_dec * d * f
    return {
        "historical_vsn": b * d * f,  # the selection context (the batch is not counted)
        "known_vsn": 0,  # same context, already kept
        "lstm_encoder": b * t * d * f,  # the selected embeddings (B, T, d), a slice of them
        "lstm_decoder": 0,  # another slice of the same storage; the state tuple is not a tensor
        "post_lstm_gate": b * t * d * f,  # LSTM output (B, T, d)
        "static_enrichment": b * t * d * f + b * d * f,  # temporal features + context c_e
        "attention": b * t * d * f + s.t_dec * t,  # enriched (B, T, d) + the bool mask
        "post_attention_gate": dec,
        "positionwise_grn": dec,
        "pre_output_gate": dec,
    }


def _shape(config: TFTConfig, batch_size: int, precision: Precision, device: DeviceType) -> _Shape:
    return _Shape(
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


def _structure(config: TFTConfig) -> _Structure:
    model = _meta_model(config)
    vsns = ("static_vsn", "historical_vsn", "known_vsn")
    return _Structure(
        streaming={n: bool(getattr(getattr(model, n), "streaming", False)) for n in vsns},
        lstm_recompute=bool(getattr(model.lstm_encoder, "recompute", False)),
    )


def _blocks_unchecked(config: TFTConfig, s: _Shape) -> tuple[dict[str, int], dict[str, int]]:
    """Saved bytes per block without block checkpointing, and per-block recompute transients
    (what a block recomputes in backward by itself: a VSN chunk, the LSTM's internals)."""
    b, t, d, f = s.b, s.t, s.d, s.f
    st = _structure(config)
    dec_rows = b * s.t_dec
    vsn = {"mode": config.vsn_mode, "chunk": config.vsn_chunk}
    static_vsn, t0 = _vsn(
        config.n_static, b, s, context_rows=0, streaming=st.streaming["static_vsn"], **vsn
    )
    hist, t1 = _vsn(
        config.n_historical,
        b * s.t_enc,
        s,
        context_rows=b,
        streaming=st.streaming["historical_vsn"],
        **vsn,
    )
    # In half precision each VSN makes its own half copy of the context.
    known_ctx = b if s.f != F32 else 0
    known, t2 = _vsn(
        config.n_known, b * t, s, context_rows=known_ctx, streaming=st.streaming["known_vsn"], **vsn
    )
    enc_full, dec_full = _lstm(s.t_enc, s), _lstm(s.t_dec, s)
    if st.lstm_recompute:
        # Checkpointed LSTM: the encoder keeps the selected embeddings (B, T, d; its input is a
        # slice) and the two (B, d) contexts its state expands; the decoder keeps the encoder's
        # final state ((L, B, d) twice, fp32). The internals are recomputed in backward.
        enc = b * t * d * f + 2 * b * d * f
        dec = 2 * s.layers * b * d * F32
        transients = {"lstm_encoder": enc_full, "lstm_decoder": dec_full}
    else:
        enc, dec = enc_full, dec_full
        transients = {}
    transients.update(static_vsn=t0, historical_vsn=t1, known_vsn=t2)
    blocks = {
        "static_vsn": static_vsn,
        # four GRNs d -> d on the static embedding; the first one keeps it (B d)
        "static_encoders": b * d * f + 4 * (_grn(b, d, d, d, s, a_new=False)),
        "historical_vsn": hist,
        "known_vsn": known,
        "lstm_encoder": enc,
        "lstm_decoder": dec,
        "post_lstm_gate": _gate_add_norm(b * t, d, d, s.dropout, True, f),
        "static_enrichment": _grn(b * t, d, d, d, s, a_new=True, context_rows=b),
        "attention": _attention(s),
        "post_attention_gate": _gate_add_norm(dec_rows, d, d, s.dropout, True, f),
        "positionwise_grn": _grn(dec_rows, d, d, d, s, a_new=True),
        "pre_output_gate": _gate_add_norm(dec_rows, d, d, False, True, f),
        "output": dec_rows * d * f,
    }
    return blocks, transients


def _loss_bytes(s: _Shape) -> int:
    """Pinball loss in fp32: q and q - 1 (Q each) and both products (B T_dec Q each)."""
    return 2 * s.q * F32 + 2 * s.b * s.t_dec * s.q * F32


def estimate_saved_activations(
    config: TFTConfig,
    batch_size: int,
    *,
    precision: Precision = "fp32",
    checkpointing: bool = False,
    device: DeviceType = "cpu",
) -> dict[str, int]:
    """Bytes kept for backward by one training forward (plus loss), per top-level block.

    Args:
        config: the network.
        batch_size: B, samples in the forward (the micro-batch).
        precision: ``fp32``; ``bf16``/``fp16`` halve the activation element size (the LSTM and
            the loss stay fp32), an approximation.
        checkpointing: blocks in ``CHECKPOINTED_BLOCKS`` keep only their inputs.
        device: ``cpu`` (exact) or ``cuda`` (LSTM and attention approximated).

    Returns:
        Block name -> bytes for every name in ``BLOCK_NAMES``, then ``"other"`` (the loss).
    """
    s = _shape(config, batch_size, precision, device)
    blocks, _ = _blocks_unchecked(config, s)
    if checkpointing:
        kept = _checkpointed_inputs(s)
        blocks.update({name: kept[name] for name in CHECKPOINTED_BLOCKS})
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
    model = _meta_model(config)
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


# --- state and the whole step -----------------------------------------------------------------


@functools.lru_cache(maxsize=16)
def _meta_model(config: TFTConfig) -> TFT:
    """The model on the ``meta`` device: shapes and structure, no storage (cached per config)."""
    with torch.device("meta"):
        return TFT(config)


def parameter_bytes_by_block(config: TFTConfig) -> dict[str, int]:
    """fp32 parameter bytes per top-level block (model built on ``meta``, nothing allocated)."""
    model = _meta_model(config)
    return {
        name: sum(p.numel() * F32 for p in child.parameters())
        for name, child in model.named_children()
    }


@dataclass(frozen=True)
class MemoryEstimate:
    """Estimated bytes of one TFT training step and of inference.

    Attributes:
        batch_size: samples per forward/backward (the micro-batch).
        precision: fp32, bf16 or fp16.
        checkpointing: whether the heavy blocks recompute in backward.
        parameter_bytes: fp32 weights (master weights stay fp32 under autocast).
        gradient_bytes: one gradient per parameter (fp32).
        optimizer_bytes: AdamW's two moments (fp32) and one fp32 step counter per tensor.
        batch_bytes: the input batch (fp32: static, historical, known, target).
        saved_by_block: saved activations per block and ``other`` (the loss).
        backward_transient_bytes: the largest short-lived allocation of backward.
        optimizer_transient_bytes: temporaries of AdamW's multi-tensor step (one param-sized
            buffer).
        inference_peak_bytes: weights + batch + the largest live activations of a no-grad
            forward.
        training_peak_bytes: the modelled peak of a step (see :func:`estimate_memory`).
    """

    batch_size: int
    precision: Precision
    checkpointing: bool
    parameter_bytes: int
    gradient_bytes: int
    optimizer_bytes: int
    batch_bytes: int
    saved_by_block: dict[str, int] = field(default_factory=dict)
    backward_transient_bytes: int = 0
    optimizer_transient_bytes: int = 0
    inference_peak_bytes: int = 0
    training_peak_bytes: int = 0

    @property
    def saved_activation_bytes(self) -> int:
        """All saved activations, the loss included."""
        return sum(self.saved_by_block.values())

    @property
    def state_bytes(self) -> int:
        """Parameters, gradients and optimizer state."""
        return self.parameter_bytes + self.gradient_bytes + self.optimizer_bytes

    def components(self) -> dict[str, int]:
        """Flat name -> bytes: state, batch, saved activations per block, transients, peaks."""
        out = {
            "parameters": self.parameter_bytes,
            "gradients": self.gradient_bytes,
            "optimizer": self.optimizer_bytes,
            "batch": self.batch_bytes,
        }
        out.update({f"saved.{k}": v for k, v in self.saved_by_block.items()})
        out["saved_activations"] = self.saved_activation_bytes
        out["backward_transient"] = self.backward_transient_bytes
        out["inference_peak"] = self.inference_peak_bytes
        out["training_peak"] = self.training_peak_bytes
        return out


def batch_bytes(config: TFTConfig, batch_size: int) -> int:
    """fp32 bytes of one batch: static (B, S), historical (B, T_enc, V_h), known (B, T, V_k),
    target (B, T_dec)."""
    c = config
    per_sample = (
        c.n_static + c.encoder_length * c.n_historical + c.total_length * c.n_known + c.horizon
    )
    return batch_size * per_sample * F32


def _inference_activation_bytes(config: TFTConfig, s: _Shape) -> int:
    """Live activations at the widest moment of a no-grad forward.

    Nothing is kept for backward, so the widest moment is inside a VSN: one chunk of Vc
    variables over N rows has about six (Vc, N, d_v) intermediates alive at once (embedding,
    hidden, ELU, GLU input of twice the width, normalised state), next to the selection weights
    and inputs (N, V) and the embeddings already produced ((B, T, d) twice). The LSTM and
    attention phases are narrower for every preset (their (B, T, d) tensors and (B, nh, T_dec, T)
    scores are smaller than a chunk); they are included as the alternative.
    """
    b, t, d, f = s.b, s.t, s.d, s.f
    stream = 2 * b * t * d * f
    widest = 0
    for n_vars, rows in (
        (config.n_historical, b * s.t_enc),
        (config.n_known, b * t),
        (config.n_static, b),
    ):
        chunk = min(config.vsn_chunk, n_vars)
        widest = max(widest, 6 * chunk * rows * s.d_v * f + 2 * rows * n_vars * f)
    lstm = 4 * b * t * d * F32
    attention = 3 * b * s.nh * s.t_dec * t * f
    return stream + max(widest, lstm, attention)


CPU_TRAINING_OVERHEAD = 105 * 2**20
"""CPU process memory a training run adds beyond its tensors: code pages of the backward kernels
(about 29 MB of RssFile), oneDNN's primitive cache and JIT kernels, thread arenas and stacks,
Python objects. Fitted to peak-RSS deltas (VmHWM reset at the baseline) at TFT-225 batch 8, 32
and 64 (docs/memory.md)."""

CPU_INFERENCE_OVERHEAD = 12 * 2**20
"""The same for a no-grad forward (fewer kernels, no optimizer)."""


def process_overhead_bytes(device: DeviceType, mode: Literal["train", "infer"] = "train") -> int:
    """Bytes a process adds beyond its tensors when quoting CPU peak RSS; 0 on CUDA.

    On CUDA memory is quoted as ``max_memory_allocated``, which counts tensors only.

    Args:
        device: ``cpu`` or ``cuda``.
        mode: ``train`` or ``infer``.

    Returns:
        Bytes to add to a tensor-level estimate to compare with a CPU peak-RSS delta.
    """
    if device == "cuda":
        return 0
    return CPU_TRAINING_OVERHEAD if mode == "train" else CPU_INFERENCE_OVERHEAD


def estimate_memory(
    config: TFTConfig,
    batch_size: int,
    *,
    precision: Precision = "fp32",
    checkpointing: bool = False,
    device: DeviceType = "cpu",
) -> MemoryEstimate:
    """Estimate one training step's memory and inference memory, without allocating.

    The training peak is modelled as: weights + optimizer state + batch, plus the largest of

    * the end of forward: all saved activations;
    * backward, block by block from the output back: activations saved by the blocks not yet
      processed + gradients of the parameters of the blocks already processed + that block's
      transient (its recomputed activations when checkpointed, or one VSN chunk's, plus the
      gradient of its output and input);
    * the optimizer step: all gradients + one param-sized temporary.

    Args:
        config: the network.
        batch_size: samples per forward/backward (the micro-batch).
        precision: fp32, bf16 or fp16 autocast.
        checkpointing: activation checkpointing of the heavy blocks.
        device: ``cpu`` or ``cuda`` (LSTM and attention terms differ).

    Returns:
        The estimate; :meth:`MemoryEstimate.components` flattens it.
    """
    s = _shape(config, batch_size, precision, device)
    saved = estimate_saved_activations(
        config, batch_size, precision=precision, checkpointing=checkpointing, device=device
    )
    unchecked, own_transient = _blocks_unchecked(config, s)
    params_by_block = parameter_bytes_by_block(config)
    n_params = sum(params_by_block.values())
    n_tensors = sum(1 for _ in _meta_model(config).parameters())
    optimizer = 2 * n_params + n_tensors * F32
    x = batch_bytes(config, batch_size)

    # Gradient of a block's output flowing in and of its input flowing out: (B, T, d) for the
    # temporal blocks; VSN outputs are the same size.
    io = 2 * s.b * s.t * s.d * s.f
    order = [*BLOCK_NAMES]
    live_saved = sum(saved.values())
    grads = 0
    backward_peak = live_saved
    transient_max = 0
    for name in reversed(order):
        if checkpointing and name in CHECKPOINTED_BLOCKS:
            recompute = unchecked[name] + own_transient.get(name, 0)
        else:
            recompute = own_transient.get(name, 0)
        transient = recompute + io
        grads += params_by_block.get(name, 0)
        backward_peak = max(backward_peak, live_saved + grads + transient)
        transient_max = max(transient_max, transient)
        live_saved -= saved[name]
    step_transient = n_params
    step_peak = n_params + step_transient
    base = n_params + optimizer + x
    training_peak = base + max(backward_peak, step_peak)
    inference = n_params + x + _inference_activation_bytes(config, s)
    return MemoryEstimate(
        batch_size=batch_size,
        precision=precision,
        checkpointing=checkpointing,
        parameter_bytes=n_params,
        gradient_bytes=n_params,
        optimizer_bytes=optimizer,
        batch_bytes=x,
        saved_by_block=saved,
        backward_transient_bytes=transient_max,
        optimizer_transient_bytes=step_transient,
        inference_peak_bytes=inference,
        training_peak_bytes=training_peak,
    )


def run_device_type(cfg: RunConfig) -> DeviceType:
    """``cuda`` or ``cpu``: the kind of device a run's ``train.device`` names."""
    return "cuda" if cfg.train.device.startswith("cuda") else "cpu"


def estimate_for_run(cfg: RunConfig) -> MemoryEstimate:
    """:func:`estimate_memory` at a run's micro-batch, precision, checkpointing and device."""
    t = cfg.train
    return estimate_memory(
        cfg.model,
        t.micro_batch,
        precision=t.precision,
        checkpointing=t.checkpointing,
        device=run_device_type(cfg),
    )
