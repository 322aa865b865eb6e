"""Estimate training and inference memory of a TFT before allocating anything.

Every number here is a closed-form function of the :class:`~foxhunt.config.TFTConfig`, the batch
size, the precision and the checkpointing flag (see docs/memory.md for the derivation, block by
block). :func:`estimate_memory` combines the parts into one step's peak:

* saved activations per block: :mod:`foxhunt.memory.activations` (formulas in
  :mod:`foxhunt.memory.activation_formulas`);
* parameters, gradients, optimizer state and the batch: here, from the model built on the
  ``meta`` device (shapes only, no storage);
* the process beyond its tensors (CPU): :mod:`foxhunt.memory.overhead`.

Nothing touches real memory. Names that lived here before the split (``OTHER``, ``DeviceType``,
``estimate_saved_activations``, ``lstm_workspace_bytes``, ``process_overhead_bytes`` and the
overhead constants) are still importable from this module.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import torch

from foxhunt.config import Precision, RunConfig, TFTConfig
from foxhunt.memory.activation_formulas import F32, DeviceType, Shape, lstm_workspace_bytes
from foxhunt.memory.activations import (
    OTHER,
    blocks_unchecked,
    estimate_saved_activations,
    gradients_made_after,
    meta_model,
    shape_of,
)
from foxhunt.memory.cuda_libraries import cuda_library_bytes
from foxhunt.memory.overhead import (
    CPU_INFERENCE_OVERHEAD,
    CPU_TRAINING_OVERHEAD,
    process_overhead_bytes,
)
from foxhunt.model.recompute import CHECKPOINTED_BLOCKS
from foxhunt.model.tft import BLOCK_NAMES
from foxhunt.runtime import resolve_precision

__all__ = [
    "CPU_INFERENCE_OVERHEAD",
    "CPU_TRAINING_OVERHEAD",
    "OTHER",
    "DeviceType",
    "MemoryEstimate",
    "batch_bytes",
    "estimate_for_run",
    "estimate_memory",
    "estimate_saved_activations",
    "lstm_workspace_bytes",
    "parameter_bytes_by_block",
    "process_overhead_bytes",
    "run_device_type",
]


def parameter_bytes_by_block(config: TFTConfig) -> dict[str, int]:
    """fp32 parameter bytes per top-level block (model built on ``meta``, nothing allocated)."""
    return dict(_parameter_bytes_by_block(config))


@functools.lru_cache(maxsize=16)
def _parameter_bytes_by_block(config: TFTConfig) -> tuple[tuple[str, int], ...]:
    """Counted once per config (a budget plan estimates the same model many times)."""
    model = meta_model(config)
    return tuple(
        (name, sum(p.numel() * F32 for p in child.parameters()))
        for name, child in model.named_children()
    )


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
        average_bytes: the weight average's copy of the parameters
            (``TrainConfig.weight_average``; 0 without one).
        library_bytes: on CUDA, the cuBLAS workspaces and cuDNN dropout state the libraries
            hold (:mod:`foxhunt.memory.cuda_libraries`; training's in ``training_peak_bytes``,
            inference's one workspace in ``inference_peak_bytes``); 0 on the CPU.
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
    average_bytes: int = 0
    library_bytes: int = 0

    @property
    def saved_activation_bytes(self) -> int:
        """All saved activations, the loss included."""
        return sum(self.saved_by_block.values())

    @property
    def state_bytes(self) -> int:
        """Parameters, gradients, optimizer state and the weight average."""
        return (
            self.parameter_bytes + self.gradient_bytes + self.optimizer_bytes + self.average_bytes
        )

    def components(self) -> dict[str, int]:
        """Flat name -> bytes: state, batch, saved activations per block, transients, peaks."""
        out = {
            "parameters": self.parameter_bytes,
            "gradients": self.gradient_bytes,
            "optimizer": self.optimizer_bytes,
            "batch": self.batch_bytes,
        }
        if self.average_bytes:
            out["weight_average"] = self.average_bytes
        if self.library_bytes:
            out["cuda_libraries"] = self.library_bytes
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


def _inference_activation_bytes(config: TFTConfig, s: Shape) -> int:
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


def _inference_shape(s: Shape, config: TFTConfig) -> Shape:
    """The shape a no-grad forward's activations take: on the CPU at fp32 width whatever the
    precision (bf16 autocast there keeps the VSNs' intermediates at fp32, and holds a bf16 copy
    of the weights: measured TFT-225 inference peaks at bf16 were 71-98 MB at batch 8-64
    against 40-65 MB estimated at bf16 width until session 54; docs/memory.md)."""
    if s.f == F32 or s.device == "cuda":
        return s
    return shape_of(config, s.b, "fp32", s.device)


def estimate_memory(
    config: TFTConfig,
    batch_size: int,
    *,
    precision: Precision = "fp32",
    checkpointing: bool = False,
    device: DeviceType = "cpu",
    recompute: bool = True,
    weight_average: bool = False,
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
        recompute: VSN streaming and LSTM recomputation on (``TrainConfig.recompute``).
        weight_average: a copy of the parameters is averaged (``TrainConfig.weight_average``):
            resident all run, like the optimizer state.

    Returns:
        The estimate; :meth:`MemoryEstimate.components` flattens it.
    """
    s = shape_of(config, batch_size, precision, device)
    saved = estimate_saved_activations(
        config,
        batch_size,
        precision=precision,
        checkpointing=checkpointing,
        device=device,
        recompute=recompute,
    )
    unchecked, own_transient = blocks_unchecked(config, s, recompute)
    made_after = gradients_made_after(config, recompute)
    params_by_block = parameter_bytes_by_block(config)
    n_params = sum(params_by_block.values())
    n_tensors = sum(1 for _ in meta_model(config).parameters())
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
            redo = unchecked[name] + own_transient.get(name, 0)
        else:
            redo = own_transient.get(name, 0)
        transient = redo + io
        grads += params_by_block.get(name, 0)
        widest = live_saved + grads - made_after.get(name, 0) + transient
        backward_peak = max(backward_peak, widest)
        transient_max = max(transient_max, transient)
        live_saved -= saved[name]
    step_transient = n_params
    step_peak = n_params + step_transient
    average = n_params if weight_average else 0
    cuda = device == "cuda"
    library = cuda_library_bytes(config) if cuda else 0
    base = n_params + optimizer + average + x + library
    training_peak = base + max(backward_peak, step_peak)
    inference = n_params + x + _inference_activation_bytes(config, _inference_shape(s, config))
    if precision in ("bf16", "fp16") and not cuda:  # autocast's weight casts (measured on CPU)
        inference += n_params // 2
    inference += cuda_library_bytes(config, "infer") if cuda else 0
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
        average_bytes=average,
        library_bytes=library,
    )


def run_device_type(cfg: RunConfig) -> DeviceType:
    """``cuda`` or ``cpu``: the kind of device a run's ``train.device`` names."""
    return "cuda" if cfg.train.device.startswith("cuda") else "cpu"


def estimate_for_run(cfg: RunConfig) -> MemoryEstimate:
    """:func:`estimate_memory` at a run's micro-batch, precision, checkpointing and device."""
    t = cfg.train
    precision = resolve_precision(t.precision, torch.device(run_device_type(cfg)))
    return estimate_memory(
        cfg.model,
        t.micro_batch,
        precision=precision,
        checkpointing=t.checkpointing,
        device=run_device_type(cfg),
        recompute=t.recompute,
        weight_average=bool(t.weight_average),
    )
