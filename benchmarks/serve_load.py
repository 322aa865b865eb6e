"""Load test of the forecast service on loopback: C clients post bars of S symbols for T seconds.

::

    .venv/bin/python benchmarks/serve_load.py --model runs/demo --symbols 100 --clients 8 --seconds 60

``--engine`` as ``foxhunt serve``'s (default ``auto``: the onnx engine where it can run).

The service (``foxhunt.infer.service.make_app`` over an incremental ``Forecaster``) runs in
this process under uvicorn on 127.0.0.1 (a free port); each symbol first gets a backlog of
warm-up + encoder bars, then each client owns every C-th symbol and posts one new bar of its
next symbol per request (httpx, one connection per client) until T seconds have passed.
Printed: requests, errors, requests/s, client-side p50/p90/p99 latency, whether every update
arrived (the service's update count and each symbol's bar count against what was sent), and the
process RSS after the backlog and at the end; with ``--rss-every K`` also the RSS every K
seconds while the clients post, and again after ``malloc_trim(0)`` (glibc's free pages given
back; what is left is live memory): whether it levels off, "RSS flat".
"""

from __future__ import annotations

import argparse
import logging
import socket
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import polars as pl
import psutil
import uvicorn

from foxhunt.data.sources.demo import demo_bars
from foxhunt.infer.forecaster import Forecaster
from foxhunt.infer.service import make_app
from foxhunt.memory.allocator import release_free_heap

_ROOTS = ("ES", "NQ", "YM", "RTY", "MES", "MNQ")


def _rows(frame: pl.DataFrame) -> list[dict]:
    return frame.with_columns(pl.col("ts").dt.to_string("%Y-%m-%dT%H:%M:%S%:z")).to_dicts()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", type=Path, required=True)
    p.add_argument("--symbols", type=int, default=100)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument(
        "--engine", choices=["auto", "torch", "onnx"], default="auto", help="as foxhunt serve's"
    )
    p.add_argument(
        "--rss-every", type=float, default=0.0, help="print the RSS every K seconds (0: never)"
    )
    a = p.parse_args()
    logging.basicConfig(level=logging.ERROR)
    names = [f"{r}{m}{y}" for r in _ROOTS for y in range(10) for m in "FGHJKMNQUVXZ"]
    syms = names[: a.symbols]
    fc = Forecaster.load(a.model, symbols=syms, engine=a.engine)
    print(f"engine: {fc.engine}", flush=True)
    backlog = fc.warmup + fc.encoder_length
    live = 5000  # bars available per symbol after the backlog (far more than T seconds use)
    data = {
        s: demo_bars(backlog + live, seed=i).with_columns(symbol=pl.lit(s))
        for i, s in enumerate(syms)
    }
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(make_app(fc), log_level="error"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    with httpx.Client(base_url=url, timeout=600) as client:
        for s in syms:
            client.post("/bars", json={"bars": _rows(data[s].head(backlog))}).raise_for_status()
    rss0 = psutil.Process().memory_info().rss
    sent = dict.fromkeys(syms, 0)
    lat: list[float] = []
    errors: list[str] = []
    stop = time.monotonic() + a.seconds

    def client_loop(mine: list[str]) -> None:
        with httpx.Client(base_url=url, timeout=600) as client:
            k = 0
            while time.monotonic() < stop:
                s = mine[k % len(mine)]
                bar = data[s].slice(backlog + sent[s], 1)
                t0 = time.perf_counter()
                r = client.post("/bars", json={"bars": _rows(bar)})
                lat.append(time.perf_counter() - t0)
                if r.status_code != 200:
                    errors.append(r.text[:200])
                sent[s] += 1
                k += 1

    t0 = time.monotonic()
    threads = [
        threading.Thread(target=client_loop, args=(syms[c :: a.clients],)) for c in range(a.clients)
    ]
    for t in threads:
        t.start()
    while a.rss_every > 0 and any(t.is_alive() for t in threads):
        time.sleep(min(a.rss_every, max(stop - time.monotonic(), 0.0)) or 0.05)
        if time.monotonic() < stop:
            rss = psutil.Process().memory_info().rss / 2**20
            release_free_heap()  # what glibc's arenas hold free is not a leak: give it back
            kept = psutil.Process().memory_info().rss / 2**20
            print(
                f"  {time.monotonic() - t0:6.0f} s  {len(lat):7d} requests  RSS {rss:.0f} MB, "
                f"{kept:.0f} MB after malloc_trim"
            )
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    rss1 = psutil.Process().memory_info().rss
    with httpx.Client(base_url=url, timeout=60) as client:
        health = client.get("/health").json()
    server.should_exit = True
    n = len(lat)
    lost = sum(fc.held_bars(s) != backlog + sent[s] for s in syms)
    p50, p90, p99 = np.percentile(lat, [50, 90, 99]) * 1e3
    print(
        f"{a.clients} clients, {a.symbols} symbols, {elapsed:.0f} s: {n} requests, {len(errors)} "
        f"errors, {n / elapsed:.1f} requests/s; latency p50 {p50:.1f} ms, p90 {p90:.1f} ms, "
        f"p99 {p99:.1f} ms; updates counted {health['updates'] - a.symbols} of {n}, symbols "
        f"whose bar count differs from what was sent: {lost}; RSS {rss0 / 2**20:.0f} -> "
        f"{rss1 / 2**20:.0f} MB"
    )


if __name__ == "__main__":
    main()
