"""One pytorch-forecasting TFT setting, in this (fresh) process; prints ONE JSON line.

Runs in ``.venv-bench`` (see ``setup_bench_venv.sh``). The model is built the way a user builds
it — ``TemporalFusionTransformer.from_dataset`` on a ``TimeSeriesDataSet`` with the same columns
as foxhunt's inputs (S static reals, V_h time-varying unknown reals, V_k time-varying known reals;
the dataset holds one tiny series, only to define the columns) — then fed synthetic batches of
the benchmark's shapes directly as pytorch-forecasting's ``x`` dict. The dataloader, Lightning's
``Trainer`` and its logging are NOT timed: only the network.

Timed, per mode:
  train: ``model(x)`` + ``QuantileLoss.loss(prediction, target).mean()`` + ``backward`` +
         ``torch.optim.Adam.step`` (+ ``zero_grad(set_to_none=True)``), in ``model.train()``.
  infer: ``model(x)`` under ``model.eval()`` and ``torch.inference_mode()``.

Memory is peak RSS minus RSS after imports and synthetic data, taken before the model is built,
so it includes parameters, gradients and Adam state (train) or parameters (infer).

Example:
    .venv-bench/bin/python benchmarks/pf_step.py --mode train --batch-size 8 --hidden 16 \
        --n-historical 20 --hidden-continuous-size 4 --steps 2
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from dataclasses import dataclass, fields
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402  (sets nothing at import; thread env is set explicitly below)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (defaults: the TFT-225 sizes)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=["train", "infer"], default="train")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--n-static", type=int, default=5)
    p.add_argument("--n-historical", type=int, default=210)
    p.add_argument("--n-known", type=int, default=10)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--lstm-layers", type=int, default=2)
    p.add_argument("--encoder-length", type=int, default=50)
    p.add_argument("--horizon", type=int, default=10)
    p.add_argument("--hidden-continuous-size", type=int, default=16)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--max-seconds", type=float, default=None, help="time budget for timed steps")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def column_names(n_static: int, n_historical: int, n_known: int) -> tuple[list[str], ...]:
    """Static, observed and known column names, in the order the batches are laid out."""
    return (
        [f"s{i}" for i in range(n_static)],
        [f"h{i}" for i in range(n_historical)],
        [f"k{i}" for i in range(n_known)],
    )


@dataclass(frozen=True)
class PFSizes:
    """The sizes a pytorch-forecasting TFT is built at (names as in its constructor)."""

    n_static: int = 5
    n_historical: int = 210
    n_known: int = 10
    hidden: int = 256
    heads: int = 8
    lstm_layers: int = 2
    encoder_length: int = 50
    horizon: int = 10
    hidden_continuous_size: int = 16
    dropout: float = 0.1
    quantiles: tuple[float, ...] = harness.QUANTILES

    @classmethod
    def from_args(cls, a: argparse.Namespace) -> PFSizes:
        """From this script's command line."""
        names = [f.name for f in fields(cls) if f.name != "quantiles"]
        return cls(**{n: getattr(a, n) for n in names})


def build_model(sizes: PFSizes, lr: float = 1e-3, seed: int = 0):  # -> TemporalFusionTransformer
    """``TemporalFusionTransformer.from_dataset`` on a one-series dataset with the right columns.

    Inputs are used as given (no scalers, identity target normaliser): the caller feeds data
    already scaled, exactly as foxhunt receives it.
    """
    import numpy as np
    import pandas as pd
    from pytorch_forecasting import TemporalFusionTransformer, TimeSeriesDataSet
    from pytorch_forecasting.metrics import QuantileLoss

    static, hist, known = column_names(sizes.n_static, sizes.n_historical, sizes.n_known)
    n_rows = sizes.encoder_length + sizes.horizon + 2
    rng = np.random.default_rng(seed)
    cols = {name: rng.standard_normal(n_rows).astype("float32") for name in hist + known}
    cols.update({name: np.full(n_rows, float(i), dtype="float32") for i, name in enumerate(static)})
    frame = pd.DataFrame(
        {
            "series": "ES",
            "time_idx": np.arange(n_rows),
            "target": rng.standard_normal(n_rows).astype("float32"),
            **cols,
        }
    )
    dataset = TimeSeriesDataSet(
        frame,
        time_idx="time_idx",
        target="target",
        group_ids=["series"],
        max_encoder_length=sizes.encoder_length,
        min_encoder_length=sizes.encoder_length,
        max_prediction_length=sizes.horizon,
        min_prediction_length=sizes.horizon,
        static_reals=static,
        time_varying_known_reals=known,
        time_varying_unknown_reals=hist,
        target_normalizer=None,
        scalers={name: None for name in static + hist + known},
        add_relative_time_idx=False,
        add_target_scales=False,
        add_encoder_length=False,
    )
    return TemporalFusionTransformer.from_dataset(
        dataset,
        hidden_size=sizes.hidden,
        attention_head_size=sizes.heads,
        lstm_layers=sizes.lstm_layers,
        dropout=sizes.dropout,
        hidden_continuous_size=sizes.hidden_continuous_size,
        output_size=len(sizes.quantiles),
        loss=QuantileLoss(quantiles=list(sizes.quantiles)),
        learning_rate=lr,
        log_interval=-1,
    )


def pf_inputs(batch: Any, x_reals: list[str], sizes: PFSizes) -> dict:
    """pytorch-forecasting's ``x`` dict from a batch with ``static`` (B, S), ``historical``
    (B, T_enc, V_h), ``known`` (B, T_enc+T_dec, V_k) and ``target`` (B, T_dec) tensors (a
    ``harness.SyntheticBatch`` or a foxhunt ``TFTBatch``).

    Static reals are repeated along time (as its dataloader does); decoder slots of observed
    (unknown) reals are zero — the decoder variable selection never reads them.
    """
    import torch

    b, t_enc, t_dec = batch.static.shape[0], sizes.encoder_length, sizes.horizon
    static, hist, known = column_names(sizes.n_static, sizes.n_historical, sizes.n_known)
    index = {name: i for i, name in enumerate(x_reals)}
    dtype = batch.historical.dtype
    enc = torch.zeros(b, t_enc, len(x_reals), dtype=dtype)  # (B, T_enc, S+V_h+V_k)
    dec = torch.zeros(b, t_dec, len(x_reals), dtype=dtype)  # (B, T_dec, S+V_h+V_k)
    s_idx = [index[n] for n in static]
    h_idx = [index[n] for n in hist]
    k_idx = [index[n] for n in known]
    enc[:, :, s_idx] = batch.static[:, None, :]
    dec[:, :, s_idx] = batch.static[:, None, :]
    enc[:, :, h_idx] = batch.historical
    enc[:, :, k_idx] = batch.known[:, :t_enc]
    dec[:, :, k_idx] = batch.known[:, t_enc:]
    target = batch.target if batch.target is not None else torch.zeros(b, t_dec, dtype=dtype)
    return {
        "encoder_cont": enc,
        "decoder_cont": dec,
        "encoder_cat": torch.zeros(b, t_enc, 0, dtype=torch.long),
        "decoder_cat": torch.zeros(b, t_dec, 0, dtype=torch.long),
        "encoder_lengths": torch.full((b,), t_enc, dtype=torch.long),
        "decoder_lengths": torch.full((b,), t_dec, dtype=torch.long),
        "encoder_target": torch.zeros(b, t_enc, dtype=dtype),
        "decoder_target": target,
        "target_scale": torch.tensor([[0.0, 1.0]], dtype=dtype).expand(b, 2).contiguous(),
        "encoder_time_idx_start": torch.zeros(b, dtype=torch.long),
        "decoder_time_idx": torch.arange(t_enc, t_enc + t_dec).expand(b, t_dec),
        "groups": torch.zeros(b, 1, dtype=torch.long),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure one setting and print one JSON line."""
    a = parse_args(argv)
    harness.set_thread_env(a.threads)
    t_import = time.perf_counter()
    import torch

    warnings.filterwarnings("ignore")
    import lightning
    import pytorch_forecasting

    harness.pin_torch_threads(a.threads)
    torch.manual_seed(a.seed)
    import_s = time.perf_counter() - t_import

    batch = harness.synthetic_batch(
        a.batch_size, a.n_static, a.n_historical, a.n_known, a.encoder_length, a.horizon, a.seed
    )
    mem = harness.MemoryWindow()
    mem.start()  # baseline: after imports and synthetic data, before the model is built

    sizes = PFSizes.from_args(a)
    model = build_model(sizes, lr=a.lr, seed=a.seed)
    n_params = sum(p.numel() for p in model.parameters())
    x = pf_inputs(batch, list(model.hparams.x_reals), sizes)
    target = batch.target

    if a.mode == "train":
        model.train()
        opt = torch.optim.Adam(model.parameters(), lr=a.lr)

        def step() -> None:
            out = model(x)
            loss = model.loss.loss(out["prediction"], target).mean()  # (B, T_dec, Q) -> ()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    else:
        model.eval()

        def step() -> None:
            with torch.inference_mode():
                model(x)

    times = harness.time_calls(step, a.warmup, a.steps, a.max_seconds)
    measured = harness.measurement(times, a.batch_size, a.warmup, mem, import_s)
    record = {
        "library": "pytorch-forecasting",
        "version": pytorch_forecasting.__version__,
        "lightning": lightning.__version__,
        "mode": a.mode,
        "batch_size": a.batch_size,
        "n_static": a.n_static,
        "n_historical": a.n_historical,
        "n_known": a.n_known,
        "hidden": a.hidden,
        "heads": a.heads,
        "lstm_layers": a.lstm_layers,
        "encoder_length": a.encoder_length,
        "horizon": a.horizon,
        "hidden_continuous_size": a.hidden_continuous_size,
        "precision": "fp32",
        "checkpointing": False,
        "params": n_params,
        **measured,
        **harness.environment(),
    }
    harness.emit(record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
