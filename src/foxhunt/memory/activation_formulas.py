"""Closed-form bytes each TFT block's ops keep for backward, one formula per block kind.

Pure arithmetic on a :class:`Shape` (no torch, no model): gate-add-norm, GRN, variable selection,
the stacked LSTM (with oneDNN's workspace, :func:`lstm_workspace_bytes`), interpretable
attention, and what a checkpointed block keeps. :mod:`foxhunt.memory.activations` assembles them
into a per-block estimate for a config; docs/memory.md derives them block by block.

Vocabulary: B batch, T_enc / T_dec / T = T_enc + T_dec lengths, d hidden, d_v per-variable width,
V a VSN's variable count, nh heads, d_h head width, L LSTM layers, Q quantiles, f activation bytes
per element (4 in fp32).

Convention (the one :func:`foxhunt.memory.saved_tensors.saved_activations_by_block` measures): a
storage belongs to the block that saves it first; parameters and the input batch are not
activations; under non-reentrant checkpointing a block keeps only its tensor inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from foxhunt.config import RunConfig

DeviceType = Literal["cpu", "cuda"]

F32 = 4
MASK = 1
"""Bytes per element of a dropout mask (the drawn bytes foxhunt.model.dropout.ByteDropout keeps)."""

_PAGE = 4096


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def _good_ld(dim: int) -> int:
    """oneDNN's leading dimension for fp32: 64-byte aligned, and not a multiple of 256 elements."""
    ld = _round_up(dim, 16)
    return ld + 16 if ld % 256 == 0 else ld


def lstm_workspace_bytes(
    batch: int, steps: int, d_in: int, d_hidden: int, device: DeviceType, f: int = F32
) -> int:
    """Workspace one training-mode LSTM layer keeps for backward (fp32 on the CPU).

    On CPU PyTorch runs each layer through oneDNN (``mkldnn_rnn_layer``), whose workspace holds
    the gates, the hidden states and five (state, diff-state) buffers over ``steps + 1``
    positions, each section padded to a good leading dimension and rounded to 4 KiB pages. The
    formula reproduces the allocation byte for byte (checked over random shapes in
    tests/memory/test_estimate.py). On CUDA cuDNN's reserve space is approximated by gates plus
    hidden and cell states per step, 6·T·B·H·4 per layer: an H200 kept 11.03·T·B·H·4 for two
    layers (H = 256, T = 10 and 50, B = 8 to 1024), so this errs high by 9 % there
    (docs/memory.md).

    Args:
        batch: B.
        steps: sequence length.
        d_in: input width of the layer.
        d_hidden: hidden width H.
        device: ``cpu`` or ``cuda``.
        f: bytes per element of the LSTM's compute on CUDA (2 under autocast); the CPU's is fp32.

    Returns:
        Bytes.
    """
    b, t, h = batch, steps, d_hidden
    if device == "cuda":
        return t * b * 6 * h * f

    def page(x: int) -> int:
        return _round_up(x, _PAGE)

    def states(ld: int) -> int:
        return page(2 * (t + 1) * b * ld * F32)

    gates = page(t * b * _good_ld(4 * h) * F32)
    hidden = page(t * b * _good_ld(h) * F32)
    return gates + hidden + 3 * states(_good_ld(max(d_in, h))) + 2 * states(h)


# --- saved activations, block by block ------------------------------------------------------


@dataclass(frozen=True)
class Shape:
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


def gate_add_norm_bytes(rows: int, d_in: int, d_out: int, dropout: bool, f: int) -> int:
    """GLU(dropout(x)) + skip, then LayerNorm: bytes saved.

    Dropout (:class:`foxhunt.model.dropout.ByteDropout`) keeps its drawn bytes (1 byte per
    element) and the linear keeps the dropped input (N d_in); without dropout the linear keeps
    ``x`` itself (no earlier op saves it in any of the gates). The GLU keeps its 2 d_out input,
    LayerNorm its d_out input and per-row mean and rstd.
    """
    keep_in = d_in * f + (d_in * MASK if dropout else 0)
    return rows * (keep_in + 3 * d_out * f) + rows * 2 * F32  # LayerNorm stats: fp32


def grn_bytes(
    rows: int,
    d_in: int,
    d_hidden: int,
    d_out: int,
    s: Shape,
    *,
    a_new: bool,
    context_rows: int = 0,
) -> int:
    """GRN: fc1 keeps ``a`` (if new), fc2 its input (ELU runs in place and uses the same tensor), then gate-add-norm.

    ``context_rows`` rows of a d-wide context are kept by the context projection (0 if the
    context was saved before or there is none). A projected skip keeps ``a`` again (same
    storage, not counted twice).
    """
    a = rows * d_in * s.f if a_new else 0
    inner = rows * d_hidden * s.f  # the ELU output: fc2's input and ELU's own (in place)
    ctx = context_rows * s.d * s.f
    return a + ctx + inner + gate_add_norm_bytes(rows, d_hidden, d_out, s.dropout, s.f)


def vsn_bytes(
    n_vars: int, rows: int, s: Shape, *, mode: str, chunk: int, context_rows: int, streaming: bool
) -> tuple[int, int]:
    """VSN over ``n_vars`` inputs at ``rows`` positions: (bytes saved, recompute transient).

    Selection: GRN(x -> V) with hidden min(d, V); its input is the batch (not counted), then a
    softmax that keeps its output (N V). Per variable (fused): GRN at d_v without a LayerNorm
    affine (it is folded into the lift) and with the embedding folded into fc1 (no embedding
    kept), the normalised state (kept by its LayerNorm, with one fp32 ``1/std`` per row, and by
    the weighting: one tensor), and the contiguous copy of the chunk's inputs ((5 d_v + 2) fp32
    values per row, plus dropout's d_v-byte mask: the weight-scaled states are not kept,
    :mod:`foxhunt.model.weighted_lift`; in half precision they are). A streaming VSN
    runs the selection under checkpoint (keeping its context and its output, the weights) and
    the per-variable part chunk by chunk under checkpoint (keeping nothing new: its inputs are
    views of the batch and of the weights); in backward the selection and then one chunk at a
    time are recomputed, the larger of which is the transient returned.
    """
    v, f = n_vars, s.f
    hs = min(s.d, v)
    grn = grn_bytes(rows, v, hs, v, s, a_new=False, context_rows=0)
    softmax = rows * v * f
    ctx = context_rows * s.d * f
    half_input = rows * v * f if f != F32 else 0  # autocast's copy of x, kept for fc1 and skip
    if mode == "fused":
        mask = s.d_v * MASK if s.dropout else 0
        if f == F32:
            per_var_row_bytes = (5 * s.d_v + 2) * F32 + mask
        else:  # half precision throughout (the normalised state too: model/variable_grn.py),
            # LayerNorm's 1/std in fp32
            per_var_row_bytes = 12 * s.d_v + 6 + mask
    else:  # faithful: GRN d_v -> d with hidden min(d_v, d) and a LayerNorm affine, then einsum
        # (kept: ELU and dropout outputs, GLU input, the normalised state with its fp32 1/std,
        # the affine's output, the chunk's inputs)
        dh = min(s.d_v, s.d)
        mask = dh * MASK if s.dropout else 0
        per_var_row_bytes = (2 * dh + 2 * s.d + s.d + s.d) * f + 2 * F32 + mask
    per_var = v * rows * per_var_row_bytes
    # The backward of the selection weighting (states x weights) makes the gradients of both
    # over the chunk's (or all) variables before it reduces the weights' one: two per-variable
    # tensors at the state width, live beside everything the chunk keeps.
    width = s.d_v if mode == "fused" else s.d
    weighting_grads = 2 * rows * width * f
    if streaming:
        # Kept: the context (a checkpoint input) and the selection weights (the chunks' input).
        # Recomputed in backward: one chunk at a time, then the selection GRN. A chunk's widest
        # moment is the weighting's backward: what the chunk keeps (recomputed), the two
        # weighting tensors (fp32, fused: the states' gradient and the weight-scaled states,
        # remade for the lift's gradient) and the selection weights' gradients of the chunks
        # before it, held until the last one (one concatenation: model/vsn.py), so the widest
        # chunk is the last (measured at the demo's batch 8 and 32 after session 51's in-place
        # GRN, tests/memory/test_estimate.py)
        kept = (context_rows * s.d * f if f == F32 else 0) + softmax
        selection = grn + half_input + (ctx if f != F32 else 0)
        vc = min(chunk, v)
        chunk_row = per_var_row_bytes + weighting_grads // rows
        held = (v - vc) * rows * f
        return kept, max(selection, vc * rows * chunk_row + held)
    return ctx + grn + softmax + half_input + per_var, v * weighting_grads


CUDNN_LSTM_WORKSPACE_FIXED = {4: 20 * 2**20, 2: 18 * 2**20}
"""The size-independent part of cuDNN's LSTM workspace, by bytes per element (fp32, half)."""


def cudnn_lstm_workspace_bytes(batch: int, steps: int, d_hidden: int, f: int) -> int:
    """cuDNN's workspace for one call of a stacked LSTM in training: (7·T + 20)·B·H·f + 20 MiB
    in fp32 (f = 4), + 18 MiB in half precision (f = 2, the LSTM under CUDA autocast).

    Short-lived: allocated for the forward and again for each half of the backward (one at a
    time), on top of the reserve space (:func:`lstm_workspace_bytes`). Fitted to the 28 shapes
    measured on an NVIDIA H200 (cuDNN 9, PyTorch 2.11; two layers, H = 256, T = 10 and 50,
    B = 8 to 1024, fp32 and bf16; docs/memory.md), all of which it matches to the precision the
    probe printed (the allocation over B·T·H·4 to two decimals); other depths and widths are
    unverified.
    """
    return (7 * steps + 20) * batch * d_hidden * f + CUDNN_LSTM_WORKSPACE_FIXED[f]


def lstm_bytes(steps: int, s: Shape) -> int:
    """Stacked nn.LSTM (L layers, d -> d) seeded with an (L, B, d) state, run without recompute.

    Keeps the initial h and c ((L, B, d) each), and per layer: its input (a transposed copy for
    the first layer; for later layers the previous output, plus dropout's mask and output when
    dropout is on), its output (T, B, d), final h and c (B, d each) and the oneDNN workspace.
    Counted in fp32 on the CPU: under CPU autocast the LSTM runs with autocast off, except on
    CPUs with native bf16, where oneDNN's bf16 LSTM keeps less (TFT-225 batch 32: 53.7 instead
    of 72.7 MB; the estimate errs high there). On CUDA autocast runs cuDNN's LSTM in half
    precision: its per-step tensors count at ``s.f`` bytes.
    """
    b, d = s.b, s.d
    g = s.f if s.device == "cuda" else F32
    total = 2 * s.layers * b * d * F32
    for layer in range(s.layers):
        if layer == 0:
            total += steps * b * d * g  # input copy
        elif s.dropout:
            total += 2 * steps * b * d * g  # dropout mask + dropped input
        total += steps * b * d * g + 2 * b * d * F32  # output, final h and c
        total += lstm_workspace_bytes(b, steps, d, d, s.device, g)
    return total


def lstm_backward_scratch_bytes(batch: int, steps: int, d_in: int, d_hidden: int) -> int:
    """What oneDNN's backward of one LSTM layer allocates beside its workspace, on the CPU:
    the gates' gradients over ``steps + 1`` positions (padded like the workspace's gates, one
    page-rounded buffer) and the layer's two weight gradients before they are copied out
    (4H x d_in and 4H x H, fp32). Live one layer at a time, on top of every layer's workspace
    and the block's input and output gradients.

    Measured with the exact tensor peak (``memory/tensor_peak.py``) of an ``LSTMBlock``
    forward + backward: 9.06 MB above the rest at B = 32, T = 50, H = 256, two layers (this
    gives 8.89), 15.85 at B = 64 (15.68), 3.73 at T = 10 (3.56), 3.99 for one layer at H = 128
    (3.97); the estimate was that much low without it (docs/memory.md).
    """
    gates = _round_up((steps + 1) * batch * _good_ld(4 * d_hidden) * F32, _PAGE)
    return gates + 4 * d_hidden * (d_in + d_hidden) * F32


def attention_bytes(s: Shape) -> int:
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


def checkpointed_input_bytes(s: Shape) -> dict[str, int]:
    """What each block of ``CHECKPOINTED_BLOCKS`` keeps when wrapped by ``set_checkpointing``:
    its tensor inputs not saved before (non-reentrant checkpoint). The VSNs and LSTMs are not
    among them: they recompute by themselves (``TrainConfig.recompute``)."""
    b, t, d, f = s.b, s.t, s.d, s.f
    dec = b * s.t_dec * d * f
    return {
        "post_lstm_gate": b * t * d * f,  # LSTM output (B, T, d)
        "static_enrichment": b * t * d * f + b * d * f,  # temporal features + context c_e
        "attention": b * t * d * f + s.t_dec * t,  # enriched (B, T, d) + the bool mask
        "post_attention_gate": dec,
        "positionwise_grn": dec,
        "pre_output_gate": dec,
    }


def largest_variable_tensor(cfg: RunConfig, micro: int, precision: str, recompute: bool) -> int:
    """Bytes of the widest per-variable VSN activation, (V or chunk, rows, d_var)."""
    c = cfg.model
    f = 4 if precision == "fp32" else 2
    width = []
    for n_vars, steps in ((c.n_historical, c.encoder_length), (c.n_known, c.total_length)):
        vars_at_once = min(c.vsn_chunk, n_vars) if recompute else n_vars
        width.append(vars_at_once * micro * steps * c.variable_width * f)
    return max(width)
