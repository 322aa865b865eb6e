"""Exact behaviour of ``foxhunt.infer.service`` without a trained model: the 422 texts, the
``/health`` statistics, the JSON bars frame, the ISO ``origin_ts`` and the one update thread,
driven through FastAPI's TestClient over a fake forecaster (the mutation survivors' cases)."""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import polars as pl
import psutil
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.exceptions import RequestValidationError  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from foxhunt.infer import service  # noqa: E402
from foxhunt.infer.service import (  # noqa: E402
    LATENCIES,
    Bar,
    Stats,
    _frame,
    _in_thread,
    _records,
    _validation_message,
    make_app,
)

ROW = {"symbol": "ES", "open": 1.0, "high": 2.0, "low": 0.5, "close": 1.5, "volume": 10.0}


class FakeForecaster:
    """What the service uses of a ``Forecaster``: ``update``, ``forecast``, ``symbols``,
    ``allowed``, ``ready``, ``engine`` and ``save``; records the frames it gets and the thread
    each ran on."""

    engine = "fake"
    allowed = None
    warmup, encoder_length = 3, 2

    def __init__(self, forecast: bool = True) -> None:
        self.emits = forecast
        self.frames: list[pl.DataFrame] = []
        self.threads: list[str] = []
        self.symbols: list[str] = []

    def update(self, frame: pl.DataFrame) -> pl.DataFrame | None:
        self.frames.append(frame)
        self.threads.append(threading.current_thread().name)
        for s in frame["symbol"].unique().sort().to_list():
            if s not in self.symbols:
                self.symbols.append(s)
        if not self.emits:
            return None
        last = frame.group_by("symbol", maintain_order=True).agg(pl.col("ts").last())
        return last.select(
            "symbol",
            pl.col("ts").alias("origin_ts"),
            pl.lit(0.25).alias("return_q0.5"),
        )

    def ready(self, symbol: str) -> bool:
        return symbol == "ES"

    def forecast(self, symbols: list[str] | None = None) -> pl.DataFrame:  # none held at start
        return pl.DataFrame(schema={"origin_ts": pl.Datetime("us", "UTC")})

    def save(self, path: Path) -> None:
        path.write_text("saved")

    def target_times(self, frame: pl.DataFrame) -> None:  # a run without a bar interval
        return None

    closed: tuple[str, ...] = ()

    def closed_bars(self, frame: pl.DataFrame) -> list[str]:
        return list(self.closed)


class RecordingExecutor(ThreadPoolExecutor):
    """The service's worker pool, its constructor's keywords recorded."""

    made: list[dict[str, Any]] = []

    def __init__(self, **kwargs: Any) -> None:
        RecordingExecutor.made.append(kwargs)
        super().__init__(**kwargs)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``perf_counter`` in the service steps 10.0, 10.5, 11.0, ...: each update takes 0.5 s."""
    ticks = (10.0 + 0.5 * i for i in itertools.count())
    monkeypatch.setattr(
        service,
        "time",
        SimpleNamespace(perf_counter=lambda: next(ticks), time=time.time, monotonic=time.monotonic),
    )
    yield


def _invalid(*errors: dict[str, Any]) -> RequestValidationError:
    return RequestValidationError(list(errors))


@pytest.mark.parametrize(
    ("error", "want"),
    [
        ({"loc": ("body", "bars", 1, "open"), "msg": "bad"}, "bars row 1, column 'open': bad"),
        ({"loc": ("body", "bars", 3), "msg": "bad"}, "bars row 3: bad"),
        ({"loc": ("bars", 0, "ts")}, "bars row 0, column 'ts': invalid"),
        ({"loc": ("body", "bars"), "msg": "Field required"}, "request body bars: Field required"),
        ({"loc": ("body", "bars", "x"), "msg": "m"}, "request body bars.x: m"),
        ({"loc": ("body", "other", 3, "y"), "msg": "m"}, "request body other.3.y: m"),
        ({"loc": ("body",), "msg": "Invalid JSON"}, "request body: Invalid JSON"),
        ({"msg": "no loc"}, "request body: no loc"),
        ({"loc": ("body", "bars", 2, "open")}, "bars row 2, column 'open': invalid"),
    ],
)
def test_validation_message_names_row_field_or_body(error: dict[str, Any], want: str) -> None:
    assert _validation_message(_invalid(error, {"loc": ("body",), "msg": "second"})) == want


def test_bad_json_bodies_get_exact_422s_and_are_counted() -> None:
    fc = FakeForecaster()
    bad_open = [{**ROW, "ts": "2024-03-01T14:30:00"}, {**ROW, "ts": "2024-03-01T14:31:00"}]
    bad_open[1]["open"] = "x"
    cases = [
        (
            {"json": {"bars": bad_open}},
            "bars row 1, column 'open': Input should be a valid number, "
            "unable to parse string as a number",
        ),
        (
            {"json": {"bars": [{**ROW, "ts": "2024-03-01T14:30:00", "foo": 1}]}},
            "bars row 0, column 'foo': Extra inputs are not permitted",
        ),
        (
            {"content": b"{not json"},
            "request body: Invalid JSON: key must be a string at line 1 column 2",
        ),
        ({"content": b'{"bars": 5}'}, "request body bars: Input should be a valid array"),
        ({"content": b"{}"}, "request body bars: Field required"),
        ({"content": b"[]"}, "request body: Input should be an object"),
    ]
    with TestClient(make_app(fc)) as client:  # type: ignore[arg-type]
        for kwargs, want in cases:
            r = client.post("/bars", **kwargs)
            assert (r.status_code, r.json()) == (422, {"error": want})
        health = client.get("/health").json()
    assert fc.frames == []
    assert (health["rejected"], health["updates"], health["bars"]) == (len(cases), 0, 0)


def test_stats_percentiles_are_in_ms_over_the_last_latencies() -> None:
    stats = Stats()
    assert LATENCIES == 1000 and stats.latencies.maxlen == LATENCIES
    for i in range(101):  # 0 .. 100 ms
        stats.latencies.append(i / 1e3)
    lat = stats.summary()["latency_ms"]
    assert lat["n"] == 101
    assert lat["p50"] == pytest.approx(50.0, rel=1e-9)
    assert lat["p90"] == pytest.approx(90.0, rel=1e-9)
    assert lat["p99"] == pytest.approx(99.0, rel=1e-9)
    for _ in range(LATENCIES):
        stats.latencies.append(2.0)
    lat = stats.summary()["latency_ms"]
    assert lat == {"p50": 2000.0, "p90": 2000.0, "p99": 2000.0, "n": LATENCIES}


def test_stats_with_no_latencies_report_zero() -> None:
    stats = Stats()
    stats.updates, stats.bars, stats.rejected = 3, 7, 2
    s = stats.summary()
    assert s["latency_ms"] == {"p50": 0.0, "p90": 0.0, "p99": 0.0, "n": 0}
    assert (s["updates"], s["bars"], s["rejected"]) == (3, 7, 2)
    assert set(s) == {"updates", "bars", "rejected", "latency_ms", "uptime_s", "rss_mb"}


def test_stats_uptime_is_seconds_since_start_and_rss_is_mib() -> None:
    stats = Stats()
    stats.started -= 5.0
    before = psutil.Process().memory_info().rss / 2**20
    s = stats.summary()
    after = psutil.Process().memory_info().rss / 2**20
    assert 5.0 <= s["uptime_s"] < 5.0 + 600
    assert 0.8 * min(before, after) <= s["rss_mb"] <= 1.2 * max(before, after)


def test_frame_ts_is_utc_microseconds_and_empty_bars_an_empty_frame() -> None:
    bars = [
        Bar(ts="2024-03-01T14:30:00", **ROW),  # naive: UTC
        Bar(ts="2024-03-01T15:31:00+01:00", **ROW),  # aware: converted
        Bar(ts="2024-03-01T14:32:00.5Z", **ROW),
    ]
    frame = _frame(bars)
    assert frame.schema["ts"] == pl.Datetime("us", "UTC")
    assert frame["ts"].to_list() == [
        datetime(2024, 3, 1, 14, 30, tzinfo=UTC),
        datetime(2024, 3, 1, 14, 31, tzinfo=UTC),
        datetime(2024, 3, 1, 14, 32, 0, 500000, tzinfo=UTC),
    ]
    assert frame.columns == ["ts", "symbol", "open", "high", "low", "close", "volume"]
    only_naive = _frame([Bar(ts="2024-03-01T14:30:00", **ROW)])
    assert only_naive.schema["ts"] == pl.Datetime("us", "UTC")
    empty = _frame([])
    assert empty.shape == (0, 0) and empty.columns == []


def test_frame_converts_aware_times_to_utc_whatever_the_machines_zone() -> None:
    """On a machine whose local zone is not UTC, an aware time is still converted to UTC (not
    to the local zone) before its zone is dropped."""
    import time

    saved = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    try:
        frame = _frame([Bar(ts="2024-03-01T15:31:00+01:00", **ROW)])
    finally:
        if saved is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = saved
        time.tzset()
    assert frame["ts"].to_list() == [datetime(2024, 3, 1, 14, 31, tzinfo=UTC)]


def test_records_write_origin_ts_as_iso_text() -> None:
    frame = pl.DataFrame(
        {
            "symbol": ["ES", "NQ"],
            "origin_ts": [
                datetime(2024, 3, 1, 14, 30, tzinfo=UTC),
                datetime(2024, 3, 1, 14, 30, 0, 250000, tzinfo=UTC),
            ],
        },
        schema_overrides={"origin_ts": pl.Datetime("us", "UTC")},
    )
    assert _records(frame, FakeForecaster()) == [
        {"symbol": "ES", "origin_ts": "2024-03-01T14:30:00+00:00"},
        {"symbol": "NQ", "origin_ts": "2024-03-01T14:30:00.250+00:00"},
    ]


def test_in_thread_runs_on_the_given_worker() -> None:
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="given-worker") as worker:
        name = asyncio.run(_in_thread(worker, lambda x: (x, threading.current_thread().name), 7))
    assert name == (7, "given-worker_0")


def test_app_updates_in_its_one_named_thread_and_times_updates(
    monkeypatch: pytest.MonkeyPatch, clock: None, tmp_path: Path
) -> None:
    monkeypatch.setattr(RecordingExecutor, "made", [])
    monkeypatch.setattr(service, "ThreadPoolExecutor", RecordingExecutor)
    fc = FakeForecaster()
    state = tmp_path / "state"
    app = make_app(fc, state)  # type: ignore[arg-type]
    assert app.title == "foxhunt forecasts"
    assert RecordingExecutor.made == [{"max_workers": 1, "thread_name_prefix": "foxhunt-update"}]
    bars = [
        {**ROW, "ts": "2024-03-01T14:30:00Z"},
        {**ROW, "symbol": "NQ", "ts": "2024-03-01T14:30:00Z"},
        {**ROW, "ts": "2024-03-01T15:31:00+01:00"},
    ]
    with TestClient(app) as client:
        assert client.get("/openapi.json").json()["info"]["title"] == "foxhunt forecasts"
        r = client.post("/bars", json={"bars": bars})
        assert r.status_code == 200
        assert r.json() == {
            "forecasts": [
                {"symbol": "ES", "origin_ts": "2024-03-01T14:31:00+00:00", "return_q0.5": 0.25},
                {"symbol": "NQ", "origin_ts": "2024-03-01T14:30:00+00:00", "return_q0.5": 0.25},
            ]
        }
        got = client.get("/forecast/NQ")
        assert got.json() == {"symbol": "NQ", "forecast": [r.json()["forecasts"][1]]}
        missing = client.get("/forecast/YM")
        assert (missing.status_code, missing.json()) == (
            404,
            {"error": "no forecast for symbol 'YM' yet"},
        )
        health = client.get("/health").json()
    assert state.read_text() == "saved"
    assert fc.threads == ["foxhunt-update_0"]
    assert len(fc.frames) == 1 and fc.frames[0].schema["ts"] == pl.Datetime("us", "UTC")
    assert fc.frames[0].height == 3
    assert health["latency_ms"] == {"p50": 500.0, "p90": 500.0, "p99": 500.0, "n": 1}
    assert (health["status"], health["engine"], health["symbols"], health["ready"]) == (
        "ok",
        "fake",
        2,
        1,
    )
    assert (health["updates"], health["bars"], health["rejected"]) == (1, 3, 0)


def test_empty_bars_skip_the_forecaster_and_none_gives_no_forecasts(clock: None) -> None:
    fc = FakeForecaster(forecast=False)
    with TestClient(make_app(fc)) as client:  # type: ignore[arg-type]
        r = client.post("/bars", json={"bars": []})
        assert (r.status_code, r.json()) == (200, {"forecasts": []})
        assert fc.frames == []
        r = client.post("/bars", json={"bars": [{**ROW, "ts": "2024-03-01T14:30:00"}]})
        assert (r.status_code, r.json()) == (200, {"forecasts": []})
        assert client.get("/forecast/ES").status_code == 404
        health = client.get("/health").json()
    assert len(fc.frames) == 1 and fc.threads == ["foxhunt-update_0"]
    # an update of no bars is not counted, nor timed
    assert (health["updates"], health["bars"], health["latency_ms"]["n"]) == (1, 1, 1)
    assert health["latency_ms"]["p50"] == 500.0


def test_a_failed_periodic_save_answers_the_update_and_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The update went through before the save: a full disk made it a 500 (the client resent
    and was told "duplicate"), and every later update a 500 too."""
    import logging

    class FullDisk(FakeForecaster):
        def save(self, path: Path) -> None:
            raise OSError(28, "No space left on device")

    fc = FullDisk()
    with caplog.at_level(logging.WARNING, logger="foxhunt.infer.service"):
        with TestClient(make_app(fc, tmp_path / "s.npz", save_every=1e-9)) as client:  # type: ignore[arg-type]
            for minute in (30, 31):
                r = client.post(
                    "/bars", json={"bars": [{**ROW, "ts": f"2024-03-01T14:{minute}:00"}]}
                )
                assert r.status_code == 200, r.text
    assert len(fc.frames) == 2
    assert "could not save the stream state to" in caplog.text and "No space left" in caplog.text


def test_bars_where_the_calendar_is_shut_are_taken_and_said() -> None:
    """The forecaster's lines for bars in closed hours come back under ``warnings``; an update
    without any has no such key."""
    fc = FakeForecaster()
    with TestClient(make_app(fc)) as client:  # type: ignore[arg-type]
        plain = client.post("/bars", json={"bars": [{**ROW, "ts": "2024-03-01T14:30:00Z"}]})
        assert "warnings" not in plain.json()
        fc.closed = ("ES: 1 bar in hours calendar cme_equity does not trade (first ...)",)
        said = client.post("/bars", json={"bars": [{**ROW, "ts": "2024-03-02T14:30:00Z"}]})
        assert said.status_code == 200
        assert said.json()["warnings"] == list(fc.closed)
        assert said.json()["forecasts"][0]["origin_ts"] == "2024-03-02T14:30:00+00:00"
