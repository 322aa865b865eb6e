"""``engine="onnx"``: the live forward's historical VSN and temporal layers in onnxruntime give
the PyTorch engine's forecasts, are built once per model and cached beside it, and are refused
(or, under ``auto``, passed over) where they cannot run."""

from __future__ import annotations

import importlib.util
import logging
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import polars as pl
import pytest
import torch

from demo_run import DemoRun
from foxhunt.cli import main
from foxhunt.commands.options import LIVE_ENGINES
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import InputError
from foxhunt.infer.forecaster import Forecaster
from foxhunt.infer.incremental import graphs as g
from foxhunt.model.static_encoder import StaticContexts

pytest.importorskip("onnxruntime")
# found, not imported: importing onnxscript takes 0.5 s of every xdist worker's collection
if importlib.util.find_spec("onnxscript") is None:
    pytest.skip("onnxscript not installed", allow_module_level=True)

SYMBOLS = ["ES", "NQ"]


@pytest.fixture(scope="module")
def run_copy(demo_run: DemoRun, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo run, copied (the graphs are cached inside the run directory)."""
    root = tmp_path_factory.mktemp("graphs") / "run"
    shutil.copytree(demo_run.run, root)
    return root


@pytest.fixture(scope="module")
def onnx_forecaster(run_copy: Path) -> Forecaster:
    """A forecaster on the onnx engine: its first construction exports both graphs."""
    return Forecaster.load(run_copy, symbols=SYMBOLS, engine="onnx")


def _stream(fc: Forecaster) -> pl.DataFrame:
    """A backlog, then one bar at a time, one symbol alone every third step."""
    bars = pl.concat([demo_bars(240, seed=40 + i, symbol=s) for i, s in enumerate(SYMBOLS)])
    bars = bars.sort(["ts", "symbol"])
    times = bars["ts"].unique().sort()
    backlog = fc.warmup + fc.encoder_length + 1
    outs = [fc.update(bars.filter(pl.col("ts") < times[backlog]))]
    for i, t in enumerate(times[backlog:].to_list()):
        step = bars.filter(pl.col("ts") == t)
        outs.append(fc.update(step.head(1) if i % 3 == 2 else step))
    return pl.concat(outs)


def _assert_same_quantiles(got: pl.DataFrame, want: pl.DataFrame) -> None:
    values = [c for c in want.columns if c.startswith(("return_q", "price_q"))]
    np.testing.assert_allclose(
        got.select(values).to_numpy(), want.select(values).to_numpy(), rtol=1e-5, atol=1e-8
    )


@pytest.mark.slow
def test_onnx_engine_streams_the_torch_engines_forecasts(
    onnx_forecaster: Forecaster, run_copy: Path
) -> None:
    assert onnx_forecaster.engine == "onnx"
    assert sorted(p.name.split(".", 1)[1] for p in (run_copy / "live").iterdir()) == [
        "historical.onnx",
        "temporal.onnx",
    ]
    torch_fc = Forecaster.load(run_copy, symbols=SYMBOLS, engine="torch")
    assert torch_fc.engine == "torch" and torch_fc._selected.graphs is None
    got, want = _stream(onnx_forecaster), _stream(torch_fc)
    assert got.height == want.height > 0
    assert got.select("symbol", "origin_ts", "horizon").equals(
        want.select("symbol", "origin_ts", "horizon")
    )
    _assert_same_quantiles(got, want)


@pytest.mark.slow
def test_graphs_are_loaded_from_the_cache_and_rebuilt_for_other_weights(
    onnx_forecaster: Forecaster, run_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tft = onnx_forecaster.loaded.model
    cached = sorted((run_copy / "live").iterdir())
    assert all(p.name.startswith(g.graph_key(tft)) for p in cached)

    def no_export(*a: object, **k: object) -> None:
        raise AssertionError("exported again")

    monkeypatch.setattr("foxhunt.infer.export.write_onnx", no_export)
    again = Forecaster.load(run_copy, symbols=SYMBOLS, engine="onnx")
    assert again.engine == "onnx"
    # other weights: another key, so they would never be served by this cache's graphs
    other = again.loaded.model
    with torch.no_grad():
        next(other.parameters()).add_(1.0)
    assert g.graph_key(other) != g.graph_key(tft)
    with pytest.raises(InputError, match="exported again|cannot be built"):
        g.build_graphs(other, run_copy / "live", 1)


@pytest.mark.slow
def test_a_corrupt_or_wrong_cached_graph_is_built_again(
    onnx_forecaster: Forecaster, run_copy: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = tmp_path / "live"
    shutil.copytree(run_copy / "live", cache)
    (temporal,) = cache.glob("*.temporal.onnx")
    (historical,) = cache.glob("*.historical.onnx")
    temporal.write_bytes(b"not a graph")
    # a graph that loads but computes something else (another model's) fails the load check
    other_tft = Forecaster.load(run_copy, symbols=SYMBOLS).loaded.model
    with torch.no_grad():
        for p in other_tft.historical_vsn.parameters():
            p.add_(0.5)
    g.build_graphs(other_tft, tmp_path / "other", 1)
    (wrong,) = (tmp_path / "other").glob("*.historical.onnx")
    shutil.copy(wrong, historical)
    with caplog.at_level(logging.WARNING, logger=g.__name__):
        graphs = g.build_graphs(onnx_forecaster.loaded.model, cache, 1)
    assert caplog.text.count("cannot be loaded") == 2
    assert temporal.stat().st_size > 1000 and sorted(p.name for p in cache.iterdir()) == sorted(
        [temporal.name, historical.name]
    )
    c = onnx_forecaster.loaded.config.model
    gen = torch.Generator().manual_seed(3)
    selected = torch.randn(2, c.encoder_length + c.horizon, c.hidden, generator=gen)
    contexts = StaticContexts(*(torch.randn(2, c.hidden, generator=gen) for _ in range(4)))
    x = torch.randn(2, c.n_historical, generator=gen)
    tft = onnx_forecaster.loaded.model
    with torch.inference_mode():
        want = tft.temporal(selected, contexts)[0]
        want_h = tft.historical_vsn(x, contexts.selection)[0]
    torch.testing.assert_close(graphs.temporal(selected, contexts), want, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(
        graphs.historical(x, contexts.selection), want_h, rtol=1e-5, atol=1e-6
    )


@pytest.mark.slow
def test_historical_graph_in_row_slices_equals_one_call(onnx_forecaster: Forecaster) -> None:
    graphs = onnx_forecaster._selected.graphs
    assert graphs is not None
    tft = onnx_forecaster.loaded.model
    x = torch.randn(7, tft.historical_vsn.n_vars, generator=torch.Generator().manual_seed(1))
    ctx = torch.randn(7, tft.config.hidden, generator=torch.Generator().manual_seed(2))
    with torch.inference_mode():
        want = tft.historical_vsn(x, ctx)[0]
    whole = graphs[0].historical(x, ctx)
    sliced = g.LiveGraphs(graphs[0].temporal_session, graphs[0].historical_session, 3)
    torch.testing.assert_close(whole, want, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(sliced.historical(x, ctx), whole, rtol=1e-6, atol=1e-7)


@pytest.mark.slow
def test_predict_follow_on_the_onnx_engine_writes_the_torch_engines_forecasts(
    onnx_forecaster: Forecaster, run_copy: Path, tmp_path: Path
) -> None:
    feed = tmp_path / "feed.csv"
    demo_bars(230, seed=5, symbol="ES").write_csv(feed)  # the run's one trained symbol
    outs = {}
    for engine in ("onnx", "torch"):  # onnx: the graphs cached by the fixture, not exported
        outs[engine] = tmp_path / f"{engine}.csv"
        argv = ["predict", "--model", str(run_copy), "--follow", str(feed), "--engine", engine]
        assert main([*argv, "--out", str(outs[engine]), "--max-polls", "1"]) == 0
    got, want = pl.read_csv(outs["onnx"]), pl.read_csv(outs["torch"])
    assert got.height == want.height == onnx_forecaster.horizon
    _assert_same_quantiles(got, want)


class _Small(torch.nn.Module):
    """A module whose forward names its input ``x`` (the exporter's dynamic axes go by name)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(3, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.linear(x))


@pytest.mark.slow  # a torch.export export: about 4 s
def test_the_torch_export_exporter_builds_a_graph_the_legacy_one_cannot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from foxhunt.infer import export

    real, tried = export.write_onnx, []

    def legacy_fails(*a: object, legacy: bool = False) -> None:
        tried.append(legacy)
        if legacy:
            raise RuntimeError("legacy exporter gone")
        real(*a, legacy=legacy)  # type: ignore[arg-type]

    monkeypatch.setattr(export, "write_onnx", legacy_fails)
    module = _Small().eval()
    args = (torch.randn(2, 3, generator=torch.Generator().manual_seed(4)),)
    path = tmp_path / "h.onnx"
    session = g._export(module, args, ("x",), path, 1, "h")
    assert tried == [True, False] and sorted(tmp_path.iterdir()) == [path]
    with torch.inference_mode():
        want = module(*args).numpy()
    np.testing.assert_allclose(session.run(None, {"x": args[0].numpy()})[0], want, rtol=1e-6)

    def both_fail(*a: object, legacy: bool = False) -> None:
        raise RuntimeError(f"no exporter (legacy={legacy})")

    monkeypatch.setattr(export, "write_onnx", both_fail)
    with pytest.raises(InputError, match=r"no exporter \(legacy=True\); no exporter \(legacy"):
        g._export(module, args, ("x",), tmp_path / "x.onnx", 1, "h")
    assert sorted(tmp_path.iterdir()) == [path]


def test_unknown_engine_is_refused() -> None:
    assert LIVE_ENGINES == g.ENGINES
    with pytest.raises(InputError, match="--engine 'fast': choose from auto, torch, onnx"):
        g.check_engine("fast")


def test_why_a_model_cannot_run_in_the_graphs(
    demo_run: DemoRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    tft = Forecaster.load(demo_run.run, symbols=SYMBOLS).loaded.model
    assert g.unsupported(tft, torch.device("cpu")) is None
    assert "on cuda:0" in str(g.unsupported(tft, torch.device("cuda:0")))
    half = Forecaster.load(demo_run.run, symbols=SYMBOLS).loaded.model.to(torch.bfloat16)
    assert "quantised or non-float32" in str(g.unsupported(half, torch.device("cpu")))
    real = g.importlib.util.find_spec
    monkeypatch.setattr(
        g.importlib.util, "find_spec", lambda m: None if m == "onnxscript" else real(m)
    )
    assert "onnxscript not installed" in str(g.unsupported(tft, torch.device("cpu")))


def test_auto_falls_back_to_torch_and_onnx_refuses(
    demo_run: DemoRun, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(g, "unsupported", lambda tft, device: "a reason")
    with caplog.at_level(logging.INFO, logger=g.__name__):
        fc = Forecaster.load(demo_run.run, symbols=SYMBOLS, engine="auto")
    assert fc.engine == "torch" and fc._selected.graphs is None
    assert "live forward in PyTorch: a reason" in caplog.text
    with pytest.raises(InputError, match="--engine onnx: a reason"):
        Forecaster.load(demo_run.run, symbols=SYMBOLS, engine="onnx")


def test_a_graph_that_differs_from_pytorch_is_refused() -> None:
    module = torch.nn.Linear(3, 2).eval()
    args = (torch.ones(2, 3),)
    with torch.inference_mode():
        right = module(*args).numpy()

    def session(out: np.ndarray) -> SimpleNamespace:
        return SimpleNamespace(
            get_inputs=lambda: [SimpleNamespace(name="x")], run=lambda names, feeds: [out]
        )

    g._check(module, session(right + 5e-5), args, "test")  # within ATOL 1e-4
    with pytest.raises(InputError, match="the test graph does not match PyTorch"):
        g._check(module, session(right + 1e-3), args, "test")
