"""The forecast service behind ``foxhunt serve``: an ASGI app (FastAPI) over one ``Forecaster``.

Routes (JSON unless said otherwise):

* ``POST /bars`` — new bars, ``{"bars": [{"ts": ISO-8601, "symbol", "open", "high", "low",
  "close", "volume"}, ...]}`` (or an Arrow IPC stream with those columns, content type
  ``application/vnd.apache.arrow.stream``) -> ``{"forecasts": [...]}``, the forecast rows of
  every symbol the bars updated that is ready (the table of ``Forecaster.update``).
* ``GET /forecast/{symbol}`` — the latest forecast of ``symbol`` (404 when it has none yet;
  after a restart from a state, the forecast from the last bar held).
* ``GET /symbols`` — per symbol held: bars given, the last bar's time, whether it is ready (a
  client resends from there after a crash); and ``bars_to_ready``, the bars a symbol needs
  before its first forecast (warm-up + encoder).
* ``DELETE /symbols/{symbol}`` — drop what is held for ``symbol`` (bars, features, forecast):
  its next bars start it afresh (a wrong first bar, a unit slip, otherwise refuses every right
  bar after it); the other symbols are kept exactly. 404 when it is not held.
* ``GET /health`` — updates, bars, symbols, latency percentiles of the last 1,000 updates,
  process RSS.

A bad request gets a 4xx with ``{"error": one line}`` naming the row (the checks of
``Forecaster.update``; a malformed row is named by its index in ``bars``); an update is all or
nothing, so nothing held changes. One lock serialises the forecaster: requests from many
clients are served in turn, every update in the same worker thread (one thread's caches and
allocator arena, not those of a pool of 40: the service's RSS levels off under load). The
state is saved to ``state_path`` (atomically) when the app stops (``foxhunt serve`` on
SIGINT/SIGTERM) and after an update once ``save_every`` seconds have passed since the last save
(a killed process loses at most those seconds' bars, and ``/symbols`` says which); a service
started on an existing state resumes it.
"""

from __future__ import annotations

import asyncio
import io
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import psutil
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException

from foxhunt.errors import DataError
from foxhunt.infer.bar_input import iso_us
from foxhunt.infer.forecaster import Forecaster

log = logging.getLogger(__name__)

ARROW = "application/vnd.apache.arrow.stream"
LATENCIES = 1000
"""Updates the latency percentiles of ``/health`` are taken over."""


class Bar(BaseModel):
    """One bar as JSON."""

    model_config = ConfigDict(extra="forbid")

    ts: datetime
    symbol: str
    open: float
    high: float
    low: float
    close: float
    volume: float


class Bars(BaseModel):
    """The body of ``POST /bars``."""

    bars: list[Bar]


class Stats:
    """Counters and recent latencies (thread-safe under the service's lock)."""

    def __init__(self) -> None:
        self.updates = 0
        self.bars = 0
        self.rejected = 0
        self.latencies: deque[float] = deque(maxlen=LATENCIES)
        self.started = time.time()

    def summary(self) -> dict[str, Any]:
        lat = np.array(self.latencies) if self.latencies else np.zeros(1)
        p50, p90, p99 = np.percentile(lat, [50, 90, 99]) * 1e3
        return {
            "updates": self.updates,
            "bars": self.bars,
            "rejected": self.rejected,
            "latency_ms": {"p50": p50, "p90": p90, "p99": p99, "n": len(self.latencies)},
            "uptime_s": time.time() - self.started,
            "rss_mb": psutil.Process().memory_info().rss / 2**20,
        }


def _bad(message: str, status: int = 422) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _validation_message(e: RequestValidationError) -> str:
    """One line naming the first bad row and field of a JSON body."""
    err = e.errors()[0]
    loc = [p for p in err.get("loc", ()) if p != "body"]
    if len(loc) >= 2 and loc[0] == "bars" and isinstance(loc[1], int):
        field = f", column {loc[2]!r}" if len(loc) > 2 else ""
        return f"bars row {loc[1]}{field}: {err.get('msg', 'invalid')}"
    return f"request body{(' ' + '.'.join(map(str, loc))) if loc else ''}: {err.get('msg')}"


def _frame(bars: list[Bar]) -> pl.DataFrame:
    rows = [b.model_dump() for b in bars]
    for r in rows:  # naive ts are UTC; aware ones too once converted (a mix would not build)
        if r["ts"].tzinfo is not None:
            r["ts"] = r["ts"].astimezone(UTC).replace(tzinfo=None)
    frame = pl.DataFrame(rows, schema_overrides={"ts": pl.Datetime("us", "UTC")})
    return frame if frame.height else pl.DataFrame()


def _records(frame: pl.DataFrame, forecaster: Forecaster) -> list[dict[str, Any]]:
    """The rows as JSON records, each with its ``target_ts`` after ``horizon``
    (:meth:`Forecaster.target_times`; none for a run that records no bar interval)."""
    targets = forecaster.target_times(frame)
    if targets is not None:
        frame = frame.insert_column(frame.columns.index("horizon") + 1, targets.alias("target_ts"))
    times = [c for c in ("origin_ts", "target_ts") if c in frame.columns]
    iso = "%Y-%m-%dT%H:%M:%S%.f%:z"
    return frame.with_columns(pl.col(c).dt.to_string(iso) for c in times).to_dicts()


def _remember(latest: dict[str, list[dict[str, Any]]], records: list[dict[str, Any]]) -> None:
    """Keep each symbol's rows of ``records`` as its latest forecast."""
    for sym in {r["symbol"] for r in records}:
        latest[sym] = [r for r in records if r["symbol"] == sym]


def make_app(
    forecaster: Forecaster, state_path: Path | None = None, save_every: float | None = None
) -> FastAPI:
    """The service over ``forecaster``; its state is saved to ``state_path`` when it stops.

    Args:
        forecaster: An incremental :class:`Forecaster` (possibly restored from a state: the
            forecasts of its ready symbols are served at once).
        state_path: Where the state is saved (None: not saved).
        save_every: Also save after an update once this many seconds have passed since the
            last save (None or 0: only when the app stops).
    """
    lock = threading.Lock()
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="foxhunt-update")
    stats = Stats()
    served = forecaster.allowed
    needed = forecaster.warmup + forecaster.encoder_length  # a symbol's bars before a forecast
    latest: dict[str, list[dict[str, Any]]] = {}

    def served_held() -> list[str]:
        """The symbols held that this service serves (a state may hold more)."""
        return [s for s in forecaster.symbols if served is None or s in served]

    restored = forecaster.forecast(served_held())  # a restored state's forecasts
    _remember(latest, _records(restored, forecaster))
    saved_at = [time.monotonic()]

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        worker.shutdown(wait=True)  # the update in flight ends before the state is saved
        if state_path is not None:
            with lock:
                try:
                    forecaster.save(state_path)
                except OSError as e:  # said plainly, not as uvicorn's "shutdown failed"
                    log.error("could not save the stream state to %s: %s", state_path, e)
                    return
            log.info(
                "saved the stream state of %d symbols to %s", len(forecaster.symbols), state_path
            )

    app = FastAPI(title="foxhunt forecasts", lifespan=lifespan)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, e: RequestValidationError) -> JSONResponse:
        with lock:
            stats.rejected += 1
        return _bad(_validation_message(e))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, e: StarletteHTTPException) -> JSONResponse:
        """An unknown route or method: ``{"error": ...}`` as every other refusal (until
        session 54 FastAPI's ``{"detail": ...}``)."""
        return _bad(f"{request.method} {request.url.path}: {e.detail}", e.status_code)

    def _update(frame: pl.DataFrame | None) -> JSONResponse | dict[str, Any]:
        """One update (``frame`` None: a JSON body of no bars, nothing to check or count)."""
        with lock:
            t0 = time.perf_counter()
            try:  # a frame of no rows is still checked for its columns
                out = forecaster.update(frame) if frame is not None else None
            except DataError as e:
                stats.rejected += 1
                return _bad(str(e))
            if frame is None or frame.height == 0:
                return {"forecasts": []}
            stats.latencies.append(time.perf_counter() - t0)
            stats.updates += 1
            stats.bars += frame.height
            records = _records(out, forecaster) if out is not None else []
            _remember(latest, records)
            warnings = forecaster.closed_bars(frame)
            if (
                state_path is not None
                and save_every
                and time.monotonic() - saved_at[0] >= save_every
            ):
                saved_at[0] = time.monotonic()  # a failed save is tried again save_every later
                try:
                    forecaster.save(state_path)
                except OSError as e:  # the update went through: its forecasts still go back
                    log.warning("could not save the stream state to %s: %s", state_path, e)
        return {"forecasts": records} | ({"warnings": warnings} if warnings else {})

    @app.post("/bars")
    async def post_bars(request: Request) -> Any:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == ARROW:
            try:
                frame = pl.read_ipc_stream(io.BytesIO(await request.body()))
            except Exception as e:  # pyarrow/polars raise several kinds for bad streams
                with lock:
                    stats.rejected += 1
                return _bad(f"not an Arrow IPC stream ({str(e).splitlines()[0]})", 400)
        else:
            try:
                body = Bars.model_validate_json(await request.body())
            except ValueError as e:
                if kind not in ("", "application/json") and "json" not in kind:
                    with lock:  # text/csv was answered "Invalid JSON" until session 54
                        stats.rejected += 1
                    return _bad(f"content-type {kind!r}: POST /bars takes JSON or {ARROW}", 415)
                if hasattr(e, "errors"):
                    raise RequestValidationError(
                        [{**err, "loc": ("body", *err["loc"])} for err in e.errors()]
                    ) from e
                raise
            frame = _frame(body.bars) if body.bars else None
        return await _in_thread(worker, _update, frame)

    @app.get("/forecast/{symbol}")
    def get_forecast(symbol: str) -> Any:
        with lock:
            rows = latest.get(symbol)
        if rows is None:
            return _bad(f"no forecast for symbol {symbol!r} yet", 404)
        return {"symbol": symbol, "forecast": rows}

    @app.get("/symbols")
    def symbols_held() -> dict[str, Any]:
        with lock:
            rows = [
                {
                    "symbol": s,
                    "bars": forecaster.held_bars(s),
                    "last_ts": None if (t := forecaster.last_ts(s)) is None else iso_us(t),
                    "ready": forecaster.ready(s),
                }
                for s in served_held()
            ]
        return {"symbols": rows, "bars_to_ready": needed}

    @app.delete("/symbols/{symbol}")
    async def forget_symbol(symbol: str) -> Any:
        def forget() -> JSONResponse | dict[str, Any]:
            with lock:
                bars = forecaster.held_bars(symbol)
                if (served is not None and symbol not in served) or not forecaster.forget(symbol):
                    return _bad(f"symbol {symbol!r} is not held", 404)
                latest.pop(symbol, None)
            log.info("forgot symbol %s (%d bars)", symbol, bars)
            return {"symbol": symbol, "forgotten_bars": bars}

        return await _in_thread(worker, forget)

    @app.get("/health")
    def health() -> dict[str, Any]:
        with lock:
            symbols = served_held()
            ready = sum(forecaster.ready(s) for s in symbols)
            head = {"status": "ok", "engine": forecaster.engine, "symbols": len(symbols)}
            head["ready"] = ready
            return head | stats.summary()

    return app


async def _in_thread(worker: ThreadPoolExecutor, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in the service's update thread (the forecaster's work must not block the
    event loop). One thread, not starlette's pool: each pool thread that ran an update kept its
    own onnxruntime, polars and glibc per-thread state, and RSS crept up for minutes as new
    threads took turns (``benchmarks/serve_load.py --rss-every``, docs/inference.md)."""
    return await asyncio.get_running_loop().run_in_executor(worker, fn, *args)
