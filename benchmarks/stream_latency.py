"""Live forecasting: latency and throughput of ``Forecaster.update`` with one new bar for each of
N symbols (the incremental path: N feature steps and one batched forward), fp32 or int8, on CPU.
The feature step is the compiled one where numba is installed (``FOXHUNT_FEATURE_KERNEL=numpy``
times the numpy one; the line "engine used" says which ran).

::

    .venv/bin/python benchmarks/stream_latency.py --preset demo --symbols 1,10,100,500
    .venv/bin/python benchmarks/stream_latency.py --preset tft-225 --symbols 1,10,100
    .venv/bin/python benchmarks/stream_latency.py --model runs/es --symbols 1,10

``--preset`` trains a throwaway run of that preset for one optimizer step on 1,200 synthetic
bars (latency does not depend on the weights' values; ``--run-dir DIR`` keeps it there and reuses
it next time); ``--model`` uses a run directory (fp32 or quantised).
Symbols are CME equity-index contracts (``ESF0 ...``) with synthetic ES-like 5-minute bars
(``foxhunt.data.sources.demo``) on their calendar's schedule, each
given a backlog of warm-up + encoder + 20 bars first (``--engine``: ``onnx`` runs the forward's
historical VSN and temporal layers in onnxruntime graphs built once into ``RUN/live/``;
``torch`` runs it all in eager PyTorch; ``auto``, the default, is ``onnx`` where it can run, so
``torch`` for a quantised ``--model``); then ``--rounds`` updates each carry one new
bar for every one of the N symbols. Printed per N: median and p90 wall time per update, the median CPU time of the process per
update (on a shared, oversubscribed machine the wall time includes waiting for a core; the CPU
time is what one free core would take, to within cache effects), the CPU time in the
incremental feature step and in the model's forward (kept rows + the new bars' variable
selection + decoder, LSTMs, attention, head; medians), symbol-updates per second by wall time
(N / median) and by CPU time (N / CPU ms), and the process RSS before and after the timed
rounds. Torch uses ``--threads`` threads (1: the
"one core" of the issue's bar). The machine's load average is printed before and after (on a
shared machine the CPU columns are the ones to read).
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import psutil
import torch

from foxhunt.config import preset
from foxhunt.data.sources.demo import demo_bars, write_demo_bars
from foxhunt.infer.forecaster import Forecaster
from foxhunt.quantize.model import load_inference_model


def throwaway_run(name: str, root: Path) -> Path:
    """A run of preset ``name`` trained for one optimizer step (weights' values do not matter)."""
    from foxhunt.train.run import run_training

    bars = root / "bars.parquet"
    write_demo_bars(bars, n_bars=1200, seed=0)
    cfg = preset(name).replace(
        train={"max_steps": 1, "epochs": 1, "batch_size": 8, "num_threads": 1, "warmup_steps": 1}
    )
    run_training(
        cfg,
        bars=bars,
        out=root / "run",
        resume=None,
        memory_budget=None,
        allow_precision_change=False,
    )
    return root / "run"


_ROOTS = ("ES", "NQ", "YM", "RTY", "MES", "MNQ")


def bench(run: Path, n: int, rounds: int, engine: str) -> dict[str, Any]:
    loaded = load_inference_model(run, torch.device("cpu"))
    fc = Forecaster(loaded, symbols=None, engine=engine)
    assert fc.incremental
    backlog_len = fc.warmup + fc.encoder_length + 20
    # Contract symbols of CME equity-index futures: their bars (ES-like, from the demo
    # generator) follow their calendar, as live bars do.
    contracts = [f"{r}{m}{y}" for r in _ROOTS for y in range(10) for m in "FGHJKMNQUVXZ"]
    syms = contracts[:n]
    frames = [
        demo_bars(backlog_len + rounds, seed=i).with_columns(symbol=pl.lit(s))
        for i, s in enumerate(syms)
    ]
    bars = pl.concat(frames)
    backlog = bars.group_by("symbol", maintain_order=True).head(backlog_len)
    live = bars.group_by("symbol", maintain_order=True).tail(rounds)
    fc.update(backlog.sort(["ts", "symbol"]), forecast=False)
    steps = [
        live.group_by("symbol", maintain_order=True).agg(pl.all().slice(r, 1))
        for r in range(rounds)
    ]
    steps = [s.explode(pl.exclude("symbol")) for s in steps]
    feature_time: list[float] = []
    model_time: list[float] = []

    def timed(f: Callable[..., Any], into: list[float]) -> Callable[..., Any]:
        def run(*a: object, **k: object) -> Any:
            t0 = time.thread_time()  # CPU time of this thread (torch runs on it: --threads 1)
            out = f(*a, **k)
            into.append(time.thread_time() - t0)
            return out

        return run

    fc._live.engine.step = timed(fc._live.engine.step, feature_time)  # type: ignore[method-assign]
    # the forward: kept rows + the new bars' VSN + decoder, LSTMs, attention, head
    fc._selected.outputs = timed(fc._selected.outputs, model_time)  # type: ignore[method-assign]
    fc.update(steps[0])  # warm the forward
    feature_time.clear()
    model_time.clear()
    rss0 = psutil.Process().memory_info().rss
    lat, cpu = [], []
    for frame in steps[1:]:
        t0, c0 = time.perf_counter(), time.process_time()
        out = fc.update(frame)
        lat.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        assert out.height == n * fc.horizon
    rss1 = psutil.Process().memory_info().rss
    med = float(np.median(lat))
    return {
        "engine": fc.engine,
        "kernel": "compiled" if fc._live.engine.compiled else "numpy",
        "symbols": n,
        "median_ms": med * 1e3,
        "p90_ms": float(np.percentile(lat, 90)) * 1e3,
        "cpu_ms": float(np.median(cpu)) * 1e3,
        "feature_ms": float(np.median(feature_time)) * 1e3,
        "model_ms": float(np.median(model_time)) * 1e3,
        "updates_per_s": n / med,
        "updates_per_cpu_s": n / float(np.median(cpu)),
        "rss_mb_before": rss0 / 2**20,
        "rss_mb_after": rss1 / 2**20,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--preset", choices=["demo", "tft-225"])
    src.add_argument("--model", type=Path)
    p.add_argument("--symbols", default="1,10,100,500")
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--run-dir", type=Path, help="keep the throwaway run here (reused if present)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--engine",
        choices=["auto", "torch", "onnx"],
        default="auto",
        help="the forward's engine (onnx: onnxruntime graphs, built once into RUN/live/; auto: "
        "onnx where it can run, torch for a quantised model)",
    )
    a = p.parse_args()
    logging.basicConfig(level=logging.ERROR)
    torch.set_num_threads(a.threads)
    with tempfile.TemporaryDirectory() as tmp:
        if a.model:
            run = a.model
        elif a.run_dir and (a.run_dir / "run").is_dir():
            run = a.run_dir / "run"
        else:
            a.run_dir = a.run_dir or Path(tmp)
            a.run_dir.mkdir(parents=True, exist_ok=True)
            run = throwaway_run(a.preset, a.run_dir)
        name = a.preset or str(a.model)
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"{name}, engine {a.engine}, {a.threads} thread(s), {a.rounds} rounds per N, "
            f"load average {load}",
            flush=True,
        )
        print(
            f"{'N':>5} {'median ms':>10} {'p90 ms':>8} {'CPU ms':>8} {'features':>9} "
            f"{'forward':>8} {'upd/s':>7} {'upd/CPU-s':>10} {'RSS MB':>13}"
        )
        sizes = [int(x) for x in a.symbols.split(",")]
        first = sizes[0]
        for n in sizes:
            r = bench(run, n, a.rounds, a.engine)
            if n == first:
                print(
                    f"engine used: {r['engine']}, feature step: {r['kernel']} "
                    f"(FOXHUNT_FEATURE_KERNEL=numpy for the numpy one)",
                    flush=True,
                )
            print(
                f"{n:>5} {r['median_ms']:>10.2f} {r['p90_ms']:>8.2f} {r['cpu_ms']:>8.2f} "
                f"{r['feature_ms']:>9.2f} {r['model_ms']:>8.2f} "
                f"{r['updates_per_s']:>7.0f} {r['updates_per_cpu_s']:>10.0f} "
                f"{r['rss_mb_before']:>6.0f}->{r['rss_mb_after']:.0f}",
                flush=True,
            )
        print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
