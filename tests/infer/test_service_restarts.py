"""``foxhunt serve``'s app across restarts and crashes: the latest forecast served at once from a
restored state, ``/symbols`` saying where each symbol stands, the state saved while running,
unreadable states refused in one line, and an Arrow body without columns refused."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import polars as pl
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from demo_run import DemoRun  # noqa: E402
from foxhunt.data.sources.demo import demo_bars  # noqa: E402
from foxhunt.errors import DataError  # noqa: E402
from foxhunt.infer.forecaster import Forecaster  # noqa: E402
from foxhunt.infer.service import ARROW, make_app  # noqa: E402


def _json(frame: pl.DataFrame) -> dict:
    rows = frame.with_columns(pl.col("ts").dt.to_string("%Y-%m-%dT%H:%M:%S%:z")).to_dicts()
    return {"bars": rows}


@pytest.fixture(scope="module")
def bars() -> pl.DataFrame:
    return demo_bars(240, seed=9)


def test_a_restored_state_serves_its_latest_forecast_at_once(
    demo_run: DemoRun, bars: pl.DataFrame, tmp_path: Path
) -> None:
    state = tmp_path / "s.npz"
    with TestClient(make_app(Forecaster.load(demo_run.run), state)) as client:
        posted = client.post("/bars", json=_json(bars)).json()["forecasts"]
        assert posted and client.get("/forecast/ES").json()["forecast"] == posted
    with TestClient(make_app(Forecaster.load(demo_run.run, state=state), state)) as client:
        got = client.get("/forecast/ES")
        assert got.status_code == 200, got.text
        again = got.json()["forecast"]
    assert [(r["origin_ts"], r["horizon"]) for r in again] == [
        (r["origin_ts"], r["horizon"]) for r in posted
    ]
    for a, b in zip(again, posted, strict=True):  # the restored state's forward: to rounding
        assert {k: v for k, v in a.items() if k.startswith(("return", "price"))} == pytest.approx(
            {k: v for k, v in b.items() if k.startswith(("return", "price"))}, rel=1e-5, abs=1e-9
        )


def test_symbols_say_where_each_symbol_stands(
    demo_run: DemoRun, bars: pl.DataFrame, tmp_path: Path
) -> None:
    fc = Forecaster.load(demo_run.run, symbols=["ES", "NQ"])
    nq = demo_bars(3, seed=2, symbol="NQ")
    with TestClient(make_app(fc)) as client:
        need = fc.warmup + fc.encoder_length
        assert client.get("/symbols").json() == {"symbols": [], "bars_to_ready": need}
        client.post("/bars", json=_json(pl.concat([bars, nq])))
        got = client.get("/symbols").json()["symbols"]
        health = client.get("/health").json()
    assert got == [
        {"symbol": "ES", "bars": 240, "last_ts": bars["ts"][-1].isoformat(), "ready": True},
        {"symbol": "NQ", "bars": 3, "last_ts": nq["ts"][-1].isoformat(), "ready": False},
    ]
    assert (health["symbols"], health["ready"]) == (2, 1)
    # a restart serving fewer symbols than its state holds lists (and counts) the served ones
    state = tmp_path / "s.npz"
    fc.save(state)
    fc = Forecaster.load(demo_run.run, symbols=["NQ"], state=state)
    with TestClient(make_app(fc)) as client:
        assert [s["symbol"] for s in client.get("/symbols").json()["symbols"]] == ["NQ"]
        assert client.get("/health").json()["symbols"] == 1


def test_the_state_is_saved_while_running_not_only_at_shutdown(
    demo_run: DemoRun, bars: pl.DataFrame, tmp_path: Path
) -> None:
    """A kill -9 loses the bars since the last save, not the whole session."""
    state = tmp_path / "s.npz"
    with TestClient(make_app(Forecaster.load(demo_run.run), state, save_every=1e-9)) as client:
        client.post("/bars", json=_json(bars.head(200)))
        assert Forecaster.load(demo_run.run, state=state).held_bars("ES") == 200
        client.post("/bars", json=_json(bars.slice(200, 5)))
        assert Forecaster.load(demo_run.run, state=state).held_bars("ES") == 205
    unsaved = tmp_path / "u.npz"
    with TestClient(make_app(Forecaster.load(demo_run.run), unsaved, save_every=None)) as client:
        client.post("/bars", json=_json(bars.head(200)))
        assert not unsaved.exists()  # only at shutdown
    assert Forecaster.load(demo_run.run, state=unsaved).held_bars("ES") == 200


def test_an_arrow_body_without_columns_is_refused(demo_run: DemoRun) -> None:
    buf = io.BytesIO()
    pl.DataFrame().write_ipc_stream(buf)
    with TestClient(make_app(Forecaster.load(demo_run.run))) as client:
        r = client.post("/bars", content=buf.getvalue(), headers={"content-type": ARROW})
        health = client.get("/health").json()
    assert r.status_code == 422 and "Forecaster.update" in r.json()["error"], r.text
    assert (health["updates"], health["rejected"]) == (0, 1)


@pytest.mark.parametrize("kind", ["empty", "cut", "random"])
def test_an_unreadable_state_is_refused_in_one_line(
    demo_run: DemoRun, bars: pl.DataFrame, tmp_path: Path, kind: str
) -> None:
    good = tmp_path / "good.npz"
    fc = Forecaster.load(demo_run.run)
    fc.update(bars.head(10), forecast=False)
    fc.save(good)
    data = good.read_bytes()
    assert zipfile.is_zipfile(good)
    bad = tmp_path / "bad.npz"
    bad.write_bytes({"empty": b"", "cut": data[: len(data) // 2], "random": b"\x93x" * 99}[kind])
    with pytest.raises(DataError, match=rf"^{bad}: not a forecaster state \("):
        Forecaster.load(demo_run.run, state=bad)
