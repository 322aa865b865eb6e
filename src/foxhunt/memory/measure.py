"""Measure a TFT's real memory in a fresh process: training step, inference, saved activations.

How we quote memory on CPU (DESIGN.md §5): peak RSS minus RSS after imports and data loading, in
a fresh process. :func:`measure_in_subprocess` runs this module with ``python -m`` so that nothing
the caller allocated (or freed but kept mapped) counts. Run by hand::

    python -m foxhunt.memory.measure --preset tft-225 --batch-size 32 --mode train

prints one JSON object.

Numbers on CPU include allocator overhead: freed blocks that glibc keeps mapped, per-thread
arenas and oneDNN scratch buffers. They are process numbers, not tensor sums.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import torch

from foxhunt.config import ConfigError, RunConfig, TFTConfig, preset
from foxhunt.errors import InputError
from foxhunt.memory.allocator import tune_cpu_allocator
from foxhunt.memory.profile import (
    peak_rss_bytes,
    reset_peak_rss,
    rss_bytes,
    saved_activations_by_block,
    state_bytes,
)

Mode = Literal["train", "infer"]


def random_batch(config: TFTConfig, batch_size: int, *, seed: int = 0) -> Any:
    """A batch of standard-normal inputs with the config's shapes (fp32, CPU).

    Args:
        config: the network.
        batch_size: B.
        seed: generator seed.

    Returns:
        A :class:`~foxhunt.model.batch.TFTBatch` with a target.
    """
    from foxhunt.model.batch import TFTBatch

    g = torch.Generator().manual_seed(seed)
    c = config
    return TFTBatch(
        static=torch.randn(batch_size, c.n_static, generator=g),
        historical=torch.randn(batch_size, c.encoder_length, c.n_historical, generator=g),
        known=torch.randn(batch_size, c.total_length, c.n_known, generator=g),
        target=torch.randn(batch_size, c.horizon, generator=g),
    )


def _autocast(precision: str) -> torch.autocast:
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    return torch.autocast("cpu", dtype=dtype, enabled=precision != "fp32")


def measure_here(cfg: RunConfig, mode: Mode, *, steps: int = 2, seed: int = 0) -> dict[str, Any]:
    """Measure in this process (call it in a fresh one: see :func:`measure_in_subprocess`).

    ``train``: baseline RSS after imports and the batch; then build the model and AdamW and run
    ``steps`` full optimizer steps (forward, pinball loss, backward, step, zero_grad); report peak
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
    from foxhunt.model import TFT, quantile_loss, set_checkpointing

    train = cfg.train
    batch_size = train.micro_batch
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
        "threads": torch.get_num_threads(),
        "batch_bytes": batch_nbytes,
    }
    if mode == "infer":
        model.eval()
        with torch.inference_mode(), _autocast(train.precision):
            model(batch)
        peak = peak_rss_bytes()
        out.update(
            baseline_rss_bytes=baseline, peak_rss_bytes=peak, peak_delta_bytes=peak - baseline
        )
        return out

    model.train()
    set_checkpointing(model, train.checkpointing)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=train.weight_decay)

    def loss_fn() -> torch.Tensor:
        with _autocast(train.precision):
            pred = model(batch).quantiles
        return quantile_loss(pred, batch.target, quantiles)

    state: dict[str, int] = {}
    for _ in range(max(2, steps)):
        loss_fn().backward()
        state = state_bytes(model, opt)  # gradients present, optimizer state from earlier steps
        opt.step()
        opt.zero_grad(set_to_none=True)
    peak = peak_rss_bytes()
    out.update(baseline_rss_bytes=baseline, peak_rss_bytes=peak, peak_delta_bytes=peak - baseline)
    out["state_bytes"] = state
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
    """Run :func:`measure_here` in a fresh ``python -m foxhunt.memory.measure`` process.

    Args:
        cfg: the run config (written to a temporary JSON file for the child).
        mode: ``train`` or ``infer``.
        steps: optimizer steps in ``train`` mode.
        timeout_s: give up after this long.
        num_threads: torch CPU threads in the child (None: the config's, else torch's default).

    Returns:
        The child's JSON result.

    Raises:
        RuntimeError: the child failed (its stderr is in the message).
    """
    cmd = [
        sys.executable,
        "-m",
        "foxhunt.memory.measure",
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
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """``python -m foxhunt.memory.measure``: measure once, print one JSON line."""
    p = argparse.ArgumentParser(prog="python -m foxhunt.memory.measure", description=__doc__)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--preset", default="tft-225")
    g.add_argument("--config", type=Path)
    g.add_argument("--config-json", help="the config itself, as JSON")
    p.add_argument("--batch-size", type=int)
    p.add_argument("--precision", choices=["fp32", "bf16", "fp16"])
    p.add_argument("--checkpointing", action="store_true")
    p.add_argument("--mode", choices=["train", "infer"], default="train")
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--num-threads", type=int)
    p.add_argument(
        "--default-allocator",
        action="store_true",
        help="measure with glibc's default malloc thresholds instead of foxhunt's tuned ones",
    )
    a = p.parse_args(argv)
    if not a.default_allocator:
        tune_cpu_allocator()
    if a.num_threads:
        torch.set_num_threads(a.num_threads)
    try:
        if a.config_json:
            cfg = RunConfig.from_dict(json.loads(a.config_json))
        else:
            cfg = RunConfig.load(a.config) if a.config else preset(a.preset)
    except (InputError, ConfigError, json.JSONDecodeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    train: dict[str, Any] = {}
    if a.batch_size:
        train.update(batch_size=a.batch_size, micro_batch_size=None)
    if a.precision:
        train["precision"] = a.precision
    if a.checkpointing:
        train["checkpointing"] = True
    if train:
        cfg = cfg.replace(train=train)
    result = measure_here(cfg, a.mode, steps=a.steps)
    result["command"] = [
        Path(sys.executable).name,
        "-m",
        "foxhunt.memory.measure",
        *(argv or sys.argv[1:]),
    ]
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
