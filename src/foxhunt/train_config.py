"""The optimisation section of a run's configuration (:class:`TrainConfig`).

Re-exported by :mod:`foxhunt.config`, which bundles it into :class:`~foxhunt.config.RunConfig`;
torch-free like it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from foxhunt.errors import require_config as _require

Precision = Literal["fp32", "bf16", "fp16"]
PrecisionSetting = Literal["auto", "fp32", "bf16", "fp16"]
CpuAllocator = Literal["balanced", "lean", "glibc"]


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings for ``foxhunt train``."""

    batch_size: int = 32
    """Effective batch size (samples per optimizer step)."""
    micro_batch_size: int | None = None
    """Samples per forward/backward; None means batch_size (no accumulation)."""
    validation_batch_size: int = 256
    """Samples per validation forward pass (no autograd state, so it can be larger)."""
    epochs: int = 5
    """Passes over the training windows."""
    max_steps: int | None = None
    """Stop after this many optimizer steps in total (quick runs); None means no limit."""
    epoch_steps: int | None = 2000
    """Optimizer steps per epoch at most: with more training windows than ``epoch_steps x
    batch_size`` each epoch takes that many from a fresh seeded permutation of all of them
    (every symbol, the whole period; ``foxhunt.train.sampling``); None: every epoch is a full
    pass."""
    validation_windows: int | None = None
    """Validation windows per epoch: a fixed seeded subsample of the validation split, the same
    every epoch. None: 0.3 x an epoch's training samples (validation then costs about a tenth
    of the epoch's training), at least 4096; all when the split has fewer."""
    max_minutes: float | None = None
    """Stop training at the first step boundary after this many minutes of wall clock in the
    training loop (validations included, data preparation not), then validate that epoch and
    keep the best weights; None means no limit."""
    lr: float = 1e-3
    """Peak learning rate of the warm-up + cosine schedule."""
    weight_decay: float = 1e-2
    """AdamW decoupled weight decay, applied only to weights with >= 2 dimensions."""
    warmup_steps: int = 50
    """Linear warm-up steps before cosine decay."""
    grad_clip: float = 1.0
    """Clip the global gradient norm to this value (0 disables)."""
    weight_average: float = 0.0
    """Validate, checkpoint and serve an exponential moving average of the weights with this
    decay per optimizer step (about the last ``1 / (1 - a)`` steps; ``foxhunt.train.averaging``);
    0 (default) serves the weights of the epoch's last step."""
    precision: PrecisionSetting = "auto"
    """``auto`` (bf16 autocast where the hardware computes bf16 natively: a CPU with AVX512-BF16
    or AMX, a CUDA device with bf16; fp32 elsewhere), fp32, bf16 autocast (CPU and CUDA) or fp16
    autocast + GradScaler (CUDA only). A run resolves ``auto`` once and stores what it chose."""
    checkpointing: bool = False
    """Recompute block activations in backward (torch.utils.checkpoint)."""
    recompute: bool = False
    """Stream the time-varying VSNs over variable chunks and recompute the LSTMs in backward:
    the least activation memory (about 1/2-1/8 of it), one more forward of those blocks per step.
    False (default) keeps their activations: faster steps; ``--memory-budget`` turns it on when
    the run needs it (``foxhunt.model.recompute.set_internal_recompute``)."""
    patience: int = 3
    """Early stopping: epochs without validation improvement before stopping."""
    seed: int = 0
    """Seed for parameter init, shuffling and dropout."""
    device: str = "cpu"
    """torch device string: cpu, cuda, cuda:1, ..."""
    num_threads: int | None = None
    """torch intra-op threads on CPU; None leaves torch's default."""
    cpu_allocator: CpuAllocator = "balanced"
    """On CPU (``foxhunt.memory.allocator``): ``balanced`` (default) makes glibc map blocks as
    large as the VSN's per-variable activations on their own and give them back when freed,
    smaller ones reuse its heap: glibc's step rate within the noise, peak RSS near ``lean``'s;
    ``glibc`` leaves glibc's malloc as it is (freed activations stay resident); ``lean`` maps
    every block >= 1 MiB: the least RSS, the slowest steps (docs/benchmarks.md). The memory
    estimate quotes each."""
    log_every: int = 10
    """Log metrics and take a memory snapshot every this many optimizer steps."""

    def __post_init__(self) -> None:
        _require(self.batch_size >= 1, f"batch_size must be >= 1, got {self.batch_size}")
        mb = self.micro_batch_size
        _require(
            mb is None or 1 <= mb <= self.batch_size,
            f"micro_batch_size must be in [1, batch_size], got {mb}",
        )
        _require(
            self.validation_batch_size >= 1,
            f"validation_batch_size must be >= 1, got {self.validation_batch_size}",
        )
        _require(self.epochs >= 1, f"epochs must be >= 1, got {self.epochs}")
        _require(
            self.max_steps is None or self.max_steps >= 1,
            f"max_steps must be >= 1: {self.max_steps}",
        )
        _require(
            self.epoch_steps is None or self.epoch_steps >= 1,
            f"epoch_steps must be >= 1: {self.epoch_steps}",
        )
        _require(
            self.validation_windows is None or self.validation_windows >= 1,
            f"validation_windows must be >= 1: {self.validation_windows}",
        )
        _require(
            self.max_minutes is None or self.max_minutes > 0,
            f"max_minutes must be > 0: {self.max_minutes}",
        )
        _require(self.lr > 0, f"lr must be > 0, got {self.lr}")
        _require(self.weight_decay >= 0, f"weight_decay must be >= 0, got {self.weight_decay}")
        _require(self.warmup_steps >= 0, f"warmup_steps must be >= 0, got {self.warmup_steps}")
        _require(self.grad_clip >= 0, f"grad_clip must be >= 0, got {self.grad_clip}")
        _require(
            0 <= self.weight_average < 1,
            f"weight_average must be in [0, 1), got {self.weight_average}",
        )
        _require(
            self.precision in ("auto", "fp32", "bf16", "fp16"),
            f"unknown precision {self.precision!r} (auto, fp32, bf16 or fp16)",
        )
        _require(self.patience >= 1, f"patience must be >= 1, got {self.patience}")
        _require(
            self.cpu_allocator in ("balanced", "lean", "glibc"),
            f"unknown cpu_allocator {self.cpu_allocator!r} (balanced, lean or glibc)",
        )
        _require(self.log_every >= 1, f"log_every must be >= 1, got {self.log_every}")

    @property
    def micro_batch(self) -> int:
        """Samples per forward/backward pass."""
        return self.micro_batch_size or self.batch_size
