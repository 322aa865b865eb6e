"""Measure a TFT's real memory in a fresh process: training step, inference, saved activations.

How we quote memory on CPU (DESIGN.md §5): peak RSS minus RSS after imports and data loading, in
a fresh process. :func:`measure_in_subprocess` runs this module with ``python -m`` so that nothing
the caller allocated (or freed but kept mapped) counts. Run by hand::

    python -m foxhunt.commands.measure --preset tft-225 --batch-size 32 --mode train

prints one JSON object.

Numbers on CPU include allocator overhead: freed blocks that glibc keeps mapped, per-thread
arenas and oneDNN scratch buffers. They are process numbers, not tensor sums.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, Literal

import torch

from foxhunt.config import RunConfig
from foxhunt.memory.counters import peak_rss_bytes, reset_peak_rss, rss_bytes
from foxhunt.memory.saved_tensors import saved_activations_by_block
from foxhunt.memory.state import state_bytes
from foxhunt.model import TFT, quantile_loss, set_checkpointing
from foxhunt.model.batch import random_batch
from foxhunt.model.recompute import set_internal_recompute
from foxhunt.runtime import autocast, resolve_precision
from foxhunt.train.optimizer.optim import build_optimizer
from foxhunt.train.resources.oom import MicroBatching
from foxhunt.train.step import train_step

Mode = Literal["train", "infer"]


def measure_here(cfg: RunConfig, mode: Mode, *, steps: int = 2, seed: int = 0) -> dict[str, Any]:
    """Measure in this process (call it in a fresh one: see :func:`measure_in_subprocess`).

    ``train``: baseline RSS after imports and the batch; then build the model and AdamW and run
    ``steps`` optimizer steps through :func:`foxhunt.train.step.train_step`, the step training runs
    (micro-batches, quantile loss, backward, clipping, AdamW step, gradients cleared); report peak
    RSS minus baseline. Afterwards (outside the peak) count saved activations per block and state
    bytes. ``infer``: baseline likewise, then build the model and run one forward in ``eval`` and
    ``inference_mode``.

    Args:
        cfg: model and train settings (micro-batch, precision, checkpointing are used).
        mode: ``train`` or ``infer``.
        steps: optimizer steps in ``train`` mode (>= 2, so optimizer state exists in one).
        seed: parameter and batch seed.

    Returns:
        JSON-able dict: ``baseline_rss_bytes``, ``peak_rss_bytes``, ``peak_delta_bytes`` and, in
        ``train`` mode, ``saved_by_block`` and the ``state_bytes`` keys.
    """
    cpu = torch.device("cpu")
    cfg = cfg.replace(train={"precision": resolve_precision(cfg.train.precision, cpu)})
    train = cfg.train
    # Training holds the whole step's batch and runs it in micro-batches; inference one.
    batch_size = train.batch_size if mode == "train" else train.micro_batch
    batch = random_batch(cfg.model, batch_size, seed=seed)
    quantiles = torch.tensor(cfg.model.quantiles)
    tensors = [batch.static, batch.historical, batch.known, batch.target]
    batch_nbytes = sum(t.numel() * t.element_size() for t in tensors)
    baseline = rss_bytes()
    reset_peak_rss()  # the peak counts only what follows the baseline
    torch.manual_seed(seed)
    model = TFT(cfg.model)
    out: dict[str, Any] = {
        "mode": mode,
        "batch_size": batch_size,
        "precision": train.precision,
        "checkpointing": train.checkpointing,
        "recompute": train.recompute,
        "cpu_allocator": train.cpu_allocator,
        "threads": torch.get_num_threads(),
        "batch_bytes": batch_nbytes,
    }
    if mode == "infer":
        model.eval()
        with torch.inference_mode(), autocast(torch.device("cpu"), train.precision):
            model(batch)
        peak = peak_rss_bytes()
        out.update(
            baseline_rss_bytes=baseline, peak_rss_bytes=peak, peak_delta_bytes=peak - baseline
        )
        return out

    model.train()
    set_checkpointing(model, train.checkpointing)
    set_internal_recompute(model, train.recompute)
    # The optimizer step training runs: AdamW param groups, micro-batches, clipping, scaler.
    opt = build_optimizer(model, lr=train.lr, weight_decay=train.weight_decay)
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    micro = MicroBatching(batch_size, train.micro_batch)
    state: dict[str, int] = {}

    def keep_state(_: int) -> None:  # gradients present, optimizer state from earlier steps
        state.update(state_bytes(model, opt))

    for step in range(max(2, steps)):
        train_step(
            model,
            batch,
            opt,
            scaler,
            micro,
            quantiles=quantiles,
            precision=train.precision,
            grad_clip=train.grad_clip,
            step=step,
            before_optimizer_step=keep_state,
        )
    peak = peak_rss_bytes()
    out.update(baseline_rss_bytes=baseline, peak_rss_bytes=peak, peak_delta_bytes=peak - baseline)
    out["state_bytes"] = state
    micro_batch = batch.slice(0, micro.micro)

    def loss_fn() -> torch.Tensor:
        with autocast(torch.device("cpu"), train.precision):
            pred = model(micro_batch).quantiles
        return quantile_loss(pred.float(), micro_batch.target, quantiles)

    out["saved_by_block"] = saved_activations_by_block(model, loss_fn, exclude=tensors)
    return out


def measure_in_subprocess(
    cfg: RunConfig,
    mode: Mode,
    *,
    steps: int = 2,
    timeout_s: float = 600.0,
    num_threads: int | None = None,
) -> dict[str, Any]:
    """Run :func:`measure_here` in a fresh ``python -m foxhunt.commands.measure`` process.

    Args:
        cfg: the run config (written to a temporary JSON file for the child).
        mode: ``train`` or ``infer``.
        steps: optimizer steps in ``train`` mode.
        timeout_s: give up after this long.
        num_threads: torch CPU threads in the child (None: the config's, else torch's default).

    Returns:
        The child's JSON result.

    Raises:
        RuntimeError: the child failed or printed no JSON result (its stderr is in the
            message).
    """
    cmd = [
        sys.executable,
        "-m",
        "foxhunt.commands.measure",
        "--config-json",
        json.dumps(cfg.to_dict()),
    ]
    cmd += ["--mode", mode, "--steps", str(steps)]
    threads = num_threads if num_threads is not None else cfg.train.num_threads
    if threads is not None:
        cmd += ["--num-threads", str(threads)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"memory measurement ({mode}) failed: {done.stderr.strip()[-2000:]}")
    lines = done.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError) as e:
        last = repr(lines[-1][:200]) if lines else "nothing"
        raise RuntimeError(
            f"memory measurement ({mode}) printed {last} where its JSON result was expected: "
            f"{done.stderr.strip()[-2000:]}"
        ) from e
