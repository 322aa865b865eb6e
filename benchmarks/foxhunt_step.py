"""One foxhunt TFT setting, in this (fresh) process; prints ONE JSON line.

The twin of ``pf_step.py``: same synthetic inputs (``harness.synthetic_batch``), same thread
pinning, same timer, same memory window. Defaults are the TFT-225 sizes and foxhunt's shipped
model defaults (``TFTConfig()``); flags override single fields for the scaling curves.

Timed, per mode:
  train: ``model(batch)`` + ``quantile_loss`` + ``backward`` + ``torch.optim.Adam.step``
         (+ ``zero_grad(set_to_none=True)``), in ``model.train()``; bf16 runs forward and loss
         under ``torch.autocast("cpu", torch.bfloat16)``.
  infer: ``model(batch)`` under ``model.eval()`` and ``torch.inference_mode()``.

Train mode also reports, after the timed steps (so they cannot disturb time or peak memory):

- ``saved_activation_bytes``: bytes autograd retains for backward in one forward + loss
  (``foxhunt.memory.saved_tensors.saved_activation_bytes``, parameters and inputs excluded);
- ``flops_per_step``: FLOPs of one forward + backward counted by
  ``torch.utils.flop_counter.FlopCounterMode`` (matmuls, attention) plus the oneDNN LSTM kernels,
  which that counter does not know and which are counted from their shapes (``lstm_flops``);
  ``flops_per_s`` = ``flops_per_step`` / median step time.

Example:
    .venv/bin/python benchmarks/foxhunt_step.py --mode train --batch-size 4 --hidden 16 \
        --heads 2 --n-historical 20 --steps 3
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; unset model fields keep ``TFTConfig()``'s (TFT-225) values."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=["train", "infer"], default="train")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--n-static", type=int)
    p.add_argument("--n-historical", type=int)
    p.add_argument("--n-known", type=int)
    p.add_argument("--hidden", type=int)
    p.add_argument("--heads", type=int, dest="n_heads")
    p.add_argument("--lstm-layers", type=int)
    p.add_argument("--encoder-length", type=int)
    p.add_argument("--horizon", type=int)
    p.add_argument("--variable-width", type=int)
    p.add_argument("--vsn-mode", choices=["fused", "faithful"])
    p.add_argument("--vsn-chunk", type=int)
    p.add_argument("--dropout", type=float)
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--checkpointing", action="store_true", help="recompute activations in backward")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--max-seconds", type=float, default=None, help="time budget for timed steps")
    p.add_argument("--no-saved", action="store_true", help="skip counting saved-activation bytes")
    p.add_argument("--no-flops", action="store_true", help="skip FLOP counting")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--allocator",
        choices=["default", "tuned"],
        default="default",
        help="glibc as is, or foxhunt.memory.allocator.tune_cpu_allocator (what `foxhunt train` "
        "does: less memory, slower steps)",
    )
    return p.parse_args(argv)


MODEL_FIELDS = (
    "n_static",
    "n_historical",
    "n_known",
    "hidden",
    "n_heads",
    "lstm_layers",
    "encoder_length",
    "horizon",
    "variable_width",
    "vsn_mode",
    "vsn_chunk",
    "dropout",
)


def model_config(a: argparse.Namespace):  # -> TFTConfig
    """``TFTConfig()`` (TFT-225, shipped defaults) with the given flags applied."""
    from foxhunt.config import TFTConfig

    overrides = {k: getattr(a, k) for k in MODEL_FIELDS if getattr(a, k) is not None}
    return dataclasses.replace(TFTConfig(), **overrides)


def lstm_flop_mapping() -> dict[Any, Any]:
    """FlopCounterMode formulas for oneDNN's fused LSTM layer ops and the in-place GEMMs
    (unknown to the counter).

    Forward of one layer: 2 * B * T * 4h * (in + h) multiply-adds counted as FLOPs (the two
    gate GEMMs); backward: twice that (input gradients and weight gradients).
    """
    import torch

    aten = torch.ops.aten

    def fwd(inp, w0, w1, *args: Any, out_shape: Any = None, **kwargs: Any) -> int:
        batch_first = args[-2] if len(args) >= 2 else kwargs.get("batch_first", True)
        b, t = (inp[0], inp[1]) if batch_first else (inp[1], inp[0])
        gates, n_in = w0
        _, n_hidden = w1
        return 2 * b * t * gates * (n_in + n_hidden)

    def bwd(inp, w0, w1, *args: Any, out_shape: Any = None, **kwargs: Any) -> int:
        # input is (B, T, in) or (T, B, in); either way B * T is the product of the first two
        gates, n_in = w0
        _, n_hidden = w1
        return 2 * 2 * inp[0] * inp[1] * gates * (n_in + n_hidden)

    # the in-place GEMMs (``out.addmm_(a, b)``, as the weighted lift adds its parts into its
    # output) count as their out-of-place forms do: the counter knows only those
    def addmm_(self_shape, a, b, *args: Any, out_shape: Any = None, **kwargs: Any) -> int:
        return 2 * a[0] * a[1] * b[1]

    def baddbmm_(self_shape, a, b, *args: Any, out_shape: Any = None, **kwargs: Any) -> int:
        return 2 * a[0] * a[1] * a[2] * b[2]

    return {
        aten.mkldnn_rnn_layer: fwd,
        aten.mkldnn_rnn_layer_backward: bwd,
        aten.addmm_: addmm_,
        aten.baddbmm_: baddbmm_,
    }


def main(argv: list[str] | None = None) -> int:
    """Measure one setting and print one JSON line."""
    a = parse_args(argv)
    harness.set_thread_env(a.threads)
    t_import = time.perf_counter()
    import torch

    import foxhunt
    from foxhunt.model.batch import TFTBatch
    from foxhunt.model.quantile import quantile_loss
    from foxhunt.model.tft import TFT

    harness.pin_torch_threads(a.threads)
    if a.allocator == "tuned":
        from foxhunt.memory.allocator import tune_cpu_allocator

        tune_cpu_allocator()
    torch.manual_seed(a.seed)
    cfg = model_config(a)
    import_s = time.perf_counter() - t_import

    syn = harness.synthetic_batch(
        a.batch_size,
        cfg.n_static,
        cfg.n_historical,
        cfg.n_known,
        cfg.encoder_length,
        cfg.horizon,
        a.seed,
    )
    batch = TFTBatch(
        static=syn.static, historical=syn.historical, known=syn.known, target=syn.target
    )
    quantiles = torch.tensor(cfg.quantiles)
    mem = harness.MemoryWindow()
    mem.start()  # baseline: after imports and synthetic data, before the model is built

    model = TFT(cfg)
    if a.checkpointing:
        from foxhunt.model.recompute import set_checkpointing

        set_checkpointing(model, True)
    n_params = sum(p.numel() for p in model.parameters())
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16")

    def forward_loss() -> torch.Tensor:
        with autocast:
            out = model(batch)
            return quantile_loss(out.quantiles, batch.target, quantiles)

    if a.mode == "train":
        model.train()
        opt = torch.optim.Adam(model.parameters(), lr=a.lr)

        def step() -> None:
            loss = forward_loss()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    else:
        model.eval()

        def step() -> None:
            with torch.inference_mode(), autocast:
                model(batch)

    times = harness.time_calls(step, a.warmup, a.steps, a.max_seconds)
    measured = harness.measurement(times, a.batch_size, a.warmup, mem, import_s)
    extras: dict[str, Any] = {}
    if a.mode == "train" and not a.no_saved:
        from foxhunt.memory.saved_tensors import saved_activation_bytes

        exclude = [*model.parameters(), syn.static, syn.historical, syn.known, syn.target]
        extras["saved_activation_bytes"] = saved_activation_bytes(forward_loss, exclude=exclude)
    if a.mode == "train" and not a.no_flops:
        from torch.utils.flop_counter import FlopCounterMode

        counter = FlopCounterMode(display=False, custom_mapping=lstm_flop_mapping())
        with counter:
            forward_loss().backward()
        opt.zero_grad(set_to_none=True)
        by_op = {str(k): int(v) for k, v in counter.get_flop_counts()["Global"].items()}
        extras["flops_per_step"] = int(counter.get_total_flops())
        extras["lstm_flops"] = sum(v for k, v in by_op.items() if "rnn" in k)
        extras["flops_by_op"] = by_op
        extras["flops_per_s"] = extras["flops_per_step"] / measured["median_s"]

    record = {
        "library": "foxhunt",
        "version": foxhunt.__version__,
        "mode": a.mode,
        "batch_size": a.batch_size,
        **{k: getattr(cfg, k) for k in MODEL_FIELDS},
        "heads": cfg.n_heads,
        "precision": a.precision,
        "checkpointing": a.checkpointing,
        "allocator": a.allocator,
        "params": n_params,
        **measured,
        **extras,
        **harness.environment(),
    }
    harness.emit(record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
