"""The whole process's peak memory on CPU: what ``top`` shows, not only the live tensors.

A ``foxhunt train`` process peaks at

    import baseline + data + tensors of a step + process overhead + allocator slack

* **import baseline** (:data:`IMPORT_BASELINE_BYTES`): RSS after importing torch, polars and
  foxhunt's training stack, before any data (measured by ``tests/memory/test_process.py``);
* **data**: the prepared window arrays (known once the bars are read; 0 in a measurement that
  trains on one random batch);
* **tensors**: the analytical training peak (:func:`foxhunt.memory.estimate.estimate_memory`:
  weights, AdamW state, gradients, saved activations, the largest transient) with the whole
  effective batch resident;
* **process overhead** (:func:`process_overhead`): kernel code pages, oneDNN caches, thread
  arenas;
* **allocator slack**: RSS beyond the estimated activations, a fitted fraction of them
  (:data:`ACTIVATION_RSS_FACTOR` - 1): larger with glibc's default malloc
  (``cpu_allocator="glibc"``), which keeps blocks freed in a step resident in its heap arenas,
  than with ``lean`` (:mod:`foxhunt.memory.allocator`), which returns them.

On CUDA the budget bounds device memory; this module is CPU only.
"""

from __future__ import annotations

from dataclasses import dataclass

from foxhunt.config import CpuAllocator, Precision, RunConfig
from foxhunt.memory.activation_formulas import largest_variable_tensor
from foxhunt.memory.allocator import BALANCED_MIN_BLOCK, GLIBC_MMAP_MAX
from foxhunt.memory.estimate import batch_bytes, estimate_memory

IMPORT_BASELINE_BYTES = 245 * 2**20
"""RSS of a process that has imported torch 2.13 (CPU), polars and ``foxhunt.train.run``, before
any data, at the low end of what it measures on Linux x86-64. About 160 MB of it is anonymous
memory (the same everywhere); the rest is pages of the shared libraries (libtorch) mapped from
the page cache, which depends on what the cache holds: 278 MiB in a venv installed hours
earlier, 355 MiB right after a fresh install (RssFile 95 vs 172 MB, same packages), both while
``foxhunt.train.run`` still imported matplotlib (+30 MiB; since session 6 only the report
does, after training: 251 MiB measured; ``tests/memory/test_process.py`` measures it in a fresh
process)."""


def measured_baseline() -> int:
    """This process's import baseline: its RSS now (call it before reading any data), or the
    constant when that is higher (RSS unreadable, or a process that imported less).

    The page-cache part of the baseline depends on the machine (up to about 80 MB above the
    constant right after an install), so ``foxhunt train`` plans with what it measures."""
    from foxhunt.memory.counters import rss_bytes

    return max(IMPORT_BASELINE_BYTES, rss_bytes())


RUN_IMPORTS = ("pandas", "pandas_market_calendars", "arch")
"""Modules a run that prepares its data in-process imports after it starts, beyond the import
baseline, with their RSS on this machine (``import`` one after the other after
``foxhunt.train.run``): pandas +62 MiB and pandas_market_calendars +9 (the calendars behind
the known features), arch +92 with the parts of scipy it loads (the GARCH baseline). Not here:
torch._dynamo, which ``torch.utils.checkpoint`` imports in runs with checkpointing or
recomputation (:data:`COMPILER_IMPORT_BYTES`)."""


def resident_before_training(data_bytes: int, *, prepared_here: bool = True) -> int:
    """What the process will hold before its first step, less the window arrays: the modules of
    :data:`RUN_IMPORTS` imported now, the heap trimmed, then RSS measured (it also holds what
    data preparation left resident: polars' and pandas' arenas). ``foxhunt train
    --memory-budget`` plans with this instead of the import baseline once the bars are read.

    ``prepared_here`` False: a child process prepared the data (``foxhunt train``); this
    process imports none of those modules, and its windows are memory-mapped and not yet read,
    so its RSS does not hold them."""
    import importlib

    from foxhunt.memory.allocator import release_free_heap
    from foxhunt.memory.counters import rss_bytes

    for name in RUN_IMPORTS if prepared_here else ():
        try:
            importlib.import_module(name)
        except ImportError:  # an optional dependency this run will not load either
            pass
    release_free_heap()
    return max(IMPORT_BASELINE_BYTES, rss_bytes() - (data_bytes if prepared_here else 0))


ACTIVATION_RSS_FACTOR: dict[str, float] = {"lean": 1.0, "balanced": 1.1, "glibc": 1.45}
"""Peak RSS per byte of estimated step activations (saved, transients, gradients in flight),
by allocator: glibc's default malloc keeps freed blocks resident; the lean allocator returns
them. Fitted (bf16, recompute off, 2 threads, one fresh process per point) to the 12-point
matrix of ``tests/memory/test_process.py`` after foxhunt's AdamW took torch._dynamo out of
training processes (docs/memory.md has the table): with :data:`PROCESS_OVERHEAD` the estimate
is -10 % (demo batch 128, glibc) to +14 % (TFT-225 batch 128, lean) of the measured peak. The
same matrix with torch._dynamo imported had glibc's TFT-225 batch 32 peak vary from 793 to 894
MiB over three processes; without it four processes measured 686-701 MiB."""

RECOMPUTE_ACTIVATION_RSS_FACTOR = 2.0
"""The same with ``recompute`` on, either allocator: the streamed VSNs' and recomputed LSTMs'
transients come and go outside the tensor estimate's saved bytes. Fitted to one point only
(TFT-225, batch 32 as 2 x 16, lean, bf16: 590.3 MiB measured, 589 estimated)."""

PROCESS_OVERHEAD: dict[tuple[str, str], int] = {
    ("avx512", "bf16"): 100 * 2**20,
    ("avx512", "fp32"): 50 * 2**20,
    ("avx2", "bf16"): 45 * 2**20,
    ("avx2", "fp32"): 45 * 2**20,
}
"""Process memory beyond tensors and slack (kernel code pages, oneDNN's JIT kernels and
primitive caches, thread arenas, Python objects), by the CPU's vector ISA and the training
precision (fp16 is quoted as bf16). ``avx512`` (AMD Zen 5 with AVX-512 BF16), bf16: fitted with
:data:`ACTIVATION_RSS_FACTOR` as 150 MiB while every run imported torch._dynamo through
``torch.optim``, 100 MiB once foxhunt's AdamW (``train/optimizer/adamw.py``) took that import
out (now :data:`COMPILER_IMPORT_BYTES`, counted only where it still happens); measured again in
session 17 at 61-136 MiB over five points (demo batch 8, 32, 128, TFT-225 batch 8, 32,
``balanced``; median 84). ``avx512``, fp32 (``--precision fp32`` there, or
``FOXHUNT_FORCE_FP32=1``): 34-50 MiB over four of those points and 126 at demo batch 128
(median 41); 100 MiB had overestimated demo batch 8 by 21 % (``make test-fp32``, session 16),
50 MiB puts the five points at -12 % to +5 %. ``avx2`` (AMD Zen 3, no AVX-512): peak RSS over
the child's baseline less tensors and slack measured 30-68 MiB in fp32 over four points (demo
batch 8 and 128, TFT-225 batch 8 and 32, balanced) and 19-25 MiB in bf16 (demo and TFT-225
batch 8); 100 MiB there overestimated demo batch 8 by 20 % (docs/memory.md)."""


def process_overhead(precision: str = "bf16") -> int:
    """:data:`PROCESS_OVERHEAD` of a training process on this machine's CPU at ``precision``
    (``auto`` resolved; fp16 counts as bf16)."""
    from foxhunt.runtime import cpu_has_avx512

    isa = "avx512" if cpu_has_avx512() else "avx2"
    return PROCESS_OVERHEAD[(isa, "fp32" if precision == "fp32" else "bf16")]


COMPILER_IMPORT_BYTES = 50 * 2**20
"""RSS of importing torch._dynamo in a training process after its first step (47 MiB measured,
70.8 in a process that has only imported ``foxhunt.train.run``). ``torch.utils.checkpoint``
imports it on first use, so runs with checkpointing or recomputation hold it."""


@dataclass(frozen=True)
class ProcessPeak:
    """Estimated peak RSS of a training process, by part (bytes)."""

    import_baseline: int
    data: int
    tensors: int
    overhead: int
    allocator_slack: int

    @property
    def total(self) -> int:
        """The estimated peak process RSS."""
        return (
            self.import_baseline + self.data + self.tensors + self.overhead + self.allocator_slack
        )

    def parts(self) -> dict[str, int]:
        """Name -> bytes, and the total."""
        return {
            "import_baseline": self.import_baseline,
            "data": self.data,
            "tensors": self.tensors,
            "overhead": self.overhead,
            "allocator_slack": self.allocator_slack,
            "total": self.total,
        }


def process_training_peak(
    cfg: RunConfig,
    *,
    micro_batch: int | None = None,
    checkpointing: bool | None = None,
    precision: Precision | None = None,
    allocator: CpuAllocator | None = None,
    data_bytes: int = 0,
    recompute: bool | None = None,
    import_baseline: int = IMPORT_BASELINE_BYTES,
) -> ProcessPeak:
    """Estimated peak RSS of a CPU training process at these settings (default: ``cfg``'s).

    The CPU half of :func:`foxhunt.memory.budget.training_peak`, the one training peak that
    training, tuning and ``foxhunt memory`` call; this one also gives the parts.

    Args:
        cfg: The run (model, effective batch size; ``train.precision`` must be resolved unless
            ``precision`` is given).
        micro_batch: Samples per forward/backward.
        checkpointing: Activation checkpointing of the heavy blocks.
        precision: fp32 or bf16 autocast.
        allocator: ``glibc`` or ``lean``.
        data_bytes: The prepared data's bytes held by the process.
        recompute: VSN streaming and LSTM recomputation (``TrainConfig.recompute``).
        import_baseline: The process's RSS before any data, when measured (default: the
            constant, the low end of what a process measures; see :data:`IMPORT_BASELINE_BYTES`).

    Returns:
        The estimate, by part.
    """
    t = cfg.train
    precision = precision or t.precision  # type: ignore[assignment]
    est = estimate_memory(
        cfg.model,
        micro_batch or t.micro_batch,
        precision=precision,  # type: ignore[arg-type]
        checkpointing=t.checkpointing if checkpointing is None else checkpointing,
        device="cpu",
        recompute=t.recompute if recompute is None else recompute,
        weight_average=bool(t.weight_average),
    )
    full_batch = batch_bytes(cfg.model, t.batch_size)
    resident = est.parameter_bytes + est.optimizer_bytes + est.average_bytes
    static = resident + full_batch
    activations = est.training_peak_bytes - resident - est.batch_bytes
    if (micro_batch or t.micro_batch) < t.batch_size:
        # Accumulating: every gradient is live through the later micro-batches' forward and
        # backward (the tensor estimate counts them only as backward reaches each block).
        held = est.gradient_bytes + est.saved_activation_bytes + est.backward_transient_bytes
        static += max(0, held - activations)
    tensors = static + activations
    alloc = allocator or t.cpu_allocator
    micro = micro_batch or t.micro_batch
    rec = t.recompute if recompute is None else recompute
    widest = largest_variable_tensor(cfg, micro, precision, rec)
    if alloc != "lean" and widest >= GLIBC_MMAP_MAX:
        alloc = "lean"  # the big activations are mapped and returned either way
    elif alloc == "balanced" and widest < BALANCED_MIN_BLOCK:
        alloc = "glibc"  # memory/allocator.py leaves glibc as it is there
    factor = RECOMPUTE_ACTIVATION_RSS_FACTOR if rec else ACTIVATION_RSS_FACTOR[alloc]
    slack = int((factor - 1) * activations)
    ckpt = t.checkpointing if checkpointing is None else checkpointing
    overhead = process_overhead(precision) + (COMPILER_IMPORT_BYTES if ckpt or rec else 0)
    return ProcessPeak(import_baseline, data_bytes, tensors, overhead, slack)
