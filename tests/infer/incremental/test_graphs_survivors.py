"""The live onnxruntime graphs (``foxhunt.infer.incremental.graphs``) pinned where mutation
testing found them loose: the engine choice and its refusals (exact messages), which models the
graphs refuse, the graphs cache under ``RUN/live/`` (built into missing folders, reused without
an export, rebuilt when a file is corrupt or computes something else, never left half-written),
the graphs' inputs, output and dynamic batch axis, their outputs against PyTorch at batches of
1 and more, the onnxruntime session settings, the check's tolerance and the cache key."""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch
from torch import Tensor, nn
from torch.nn.utils import parametrize

from demo_run import DemoRun
from foxhunt.config import TFTConfig
from foxhunt.errors import InputError
from foxhunt.infer import export
from foxhunt.infer.incremental import graphs as g
from foxhunt.model.static_encoder import StaticContexts
from foxhunt.model.tft import TFT
from foxhunt.quantize.layers import QuantLinear
from foxhunt.quantize.model import load_inference_model
from foxhunt.quantize.tensors import quantize_int8

ort = pytest.importorskip("onnxruntime")
# found, not imported: importing onnxscript takes 0.5 s of every xdist worker's collection
if importlib.util.find_spec("onnxscript") is None:
    pytest.skip("onnxscript not installed", allow_module_level=True)

pytestmark = pytest.mark.slow  # the trained demo run and one export of its two graphs

CPU = torch.device("cpu")
MISSING = "onnxruntime and onnxscript not installed (pip install 'foxhunt[onnx]')"
QUANTISED = "a quantised or non-float32 model (int8 matmuls have no ONNX lowering)"


@pytest.fixture(scope="module")
def tft(demo_run: DemoRun) -> TFT:
    """The trained demo run's float CPU model (eval mode)."""
    return load_inference_model(demo_run.run).model  # type: ignore[return-value]


@pytest.fixture(scope="module")
def built(tft: TFT, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, g.LiveGraphs]:
    """The model's graphs, exported once into a cache whose parent folders do not exist yet."""
    cache = tmp_path_factory.mktemp("graphs") / "deep" / "run" / "live"
    return cache, g.build_graphs(tft, cache, 1)


def _no_export(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Make every export fail with ``blocked``; returns the ``legacy`` flags it was asked for."""
    asked: list[bool] = []

    def blocked(*a: object, legacy: bool = False) -> None:
        asked.append(legacy)
        raise RuntimeError("blocked")

    monkeypatch.setattr(export, "write_onnx", blocked)
    return asked


def _contexts(tft: TFT, batch: int, seed: int) -> tuple[Tensor, StaticContexts, Tensor]:
    """Random (B, T, d) selected embeddings, static contexts and (B, V) observed inputs."""
    c = tft.config
    gen = torch.Generator().manual_seed(seed)
    selected = torch.randn(batch, c.encoder_length + c.horizon, c.hidden, generator=gen)
    ctx = StaticContexts(*(torch.randn(batch, c.hidden, generator=gen) for _ in range(4)))
    x = torch.randn(batch, tft.historical_vsn.n_vars, generator=gen)
    return selected, ctx, x


# --- the cache under RUN/live/ ----------------------------------------------------------------


def test_graphs_are_built_into_missing_folders_as_two_whole_files(
    built: tuple[Path, g.LiveGraphs], tft: TFT
) -> None:
    """The cache folder is made with its parents, and holds exactly the two checked graphs
    under the model's key: no process-named temporary file is left beside them."""
    cache, _ = built
    key = g.graph_key(tft)
    assert cache.is_dir()
    assert sorted(p.name for p in cache.iterdir()) == [
        f"{key}.historical.onnx",
        f"{key}.temporal.onnx",
    ]


def test_valid_cached_graphs_are_loaded_without_an_export(
    built: tuple[Path, g.LiveGraphs], tft: TFT, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second build over a valid cache exports nothing and gives the same outputs; a backlog
    goes in slices of as many rows as the (rows x V x d_var) budget holds, at least one."""
    cache, first = built
    asked = _no_export(monkeypatch)
    again = g.build_graphs(tft, cache, 1)
    assert asked == []
    vsn = tft.historical_vsn
    assert again.rows_per_call == g._ROW_VALUES // (vsn.n_vars * vsn.d_var) > 1
    _, ctx, x = _contexts(tft, 4, seed=11)
    torch.testing.assert_close(
        again.historical(x, ctx.selection), first.historical(x, ctx.selection), rtol=0, atol=0
    )
    monkeypatch.setattr(g, "_ROW_VALUES", 1)  # a row wider than the budget: one row per call
    tight = g.build_graphs(tft, cache, 1)
    assert tight.rows_per_call == 1 and asked == []
    torch.testing.assert_close(
        tight.historical(x, ctx.selection), first.historical(x, ctx.selection)
    )


def test_rows_per_call_of_a_one_value_row_is_the_whole_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model of one observed input of width 1 takes ``_ROW_VALUES`` rows per call."""
    tiny = TFT(
        TFTConfig(
            n_static=1,
            n_historical=1,
            n_known=1,
            hidden=4,
            n_heads=1,
            lstm_layers=1,
            encoder_length=2,
            horizon=1,
            quantiles=(0.5,),
            variable_width=1,
        )
    ).eval()
    assert tiny.historical_vsn.n_vars * tiny.historical_vsn.d_var == 1
    monkeypatch.setattr(g, "_export", lambda *a: SimpleNamespace())
    assert g.build_graphs(tiny, tmp_path / "live", 1).rows_per_call == g._ROW_VALUES


def test_a_cached_graph_computing_something_else_is_named_and_rebuilt(
    built: tuple[Path, g.LiveGraphs],
    tft: TFT,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Cached graphs of other historical-VSN weights under this model's key: the temporal one
    (same weights) is reused, the historical one fails its load check, is logged with the
    check's reason and is exported again; an export that fails names the graph and both
    exporters' errors, and leaves no file of its own in the cache."""
    cache, _ = built
    other = copy.deepcopy(tft)
    with torch.no_grad():
        for p in other.historical_vsn.parameters():
            p.add_(0.5)
    key, other_key = g.graph_key(tft), g.graph_key(other)
    live = tmp_path / "live"
    live.mkdir()
    for what in ("temporal", "historical"):
        (live / f"{other_key}.{what}.onnx").write_bytes((cache / f"{key}.{what}.onnx").read_bytes())
    asked = _no_export(monkeypatch)
    path = live / f"{other_key}.historical.onnx"
    with caplog.at_level(logging.WARNING, logger=g.__name__):
        with pytest.raises(InputError) as e:
            g.build_graphs(other, live, 1)
    assert str(e.value) == f"{path}: the live historical graph cannot be built (blocked; blocked)"
    assert asked == [True, False]  # the historical graph only, with both exporters
    (warning,) = [r.getMessage() for r in caplog.records]
    assert warning.startswith(
        f"{path}: cannot be loaded (the historical graph does not match PyTorch (max abs diff "
    )
    assert warning.endswith("; use --engine torch); building it again")
    assert sorted(p.name for p in live.iterdir()) == [
        f"{other_key}.historical.onnx",
        f"{other_key}.temporal.onnx",
    ]


def test_a_corrupt_cached_graph_is_rebuilt_and_the_live_forward_goes_on(
    built: tuple[Path, g.LiveGraphs],
    tft: TFT,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A damaged cached file does not stop ``engine="onnx"``: it is logged, exported again in
    place, and the graphs give PyTorch's outputs."""
    cache, _ = built
    key = g.graph_key(tft)
    live = tmp_path / "live"
    live.mkdir()
    (live / f"{key}.temporal.onnx").write_bytes((cache / f"{key}.temporal.onnx").read_bytes())
    bad = live / f"{key}.historical.onnx"
    bad.write_bytes(b"not a graph")
    with caplog.at_level(logging.WARNING, logger=g.__name__):
        out = g.live_graphs([tft], "onnx", CPU, live)
    assert out is not None and len(out) == 1
    assert caplog.text.count("cannot be loaded") == 1 and f"{bad}: cannot be loaded" in caplog.text
    assert bad.stat().st_size > 1000
    assert sorted(p.name for p in live.iterdir()) == sorted([bad.name, f"{key}.temporal.onnx"])
    _, ctx, x = _contexts(tft, 3, seed=5)
    with torch.inference_mode():
        want = tft.historical_vsn(x, ctx.selection)[0]
    torch.testing.assert_close(
        out[0].historical(x, ctx.selection), want, rtol=export.RTOL, atol=export.ATOL
    )


# --- the graphs themselves ---------------------------------------------------------------------


def test_graph_inputs_output_and_dynamic_batch_axis(
    built: tuple[Path, g.LiveGraphs], tft: TFT
) -> None:
    """The temporal graph reads ``selected`` and the three contexts, the historical one ``x``
    and ``context``; both give one float output ``out``; the batch axis is dynamic and the
    other axes are the model's."""
    _, graphs = built
    c = tft.config
    temporal, historical = graphs.temporal_session, graphs.historical_session
    assert [i.name for i in temporal.get_inputs()] == ["selected", "enrichment", "cell", "hidden"]
    assert [i.name for i in historical.get_inputs()] == ["x", "context"]
    for session in (temporal, historical):
        assert [o.name for o in session.get_outputs()] == ["out"]
        assert all(i.type == "tensor(float)" for i in session.get_inputs())
        assert all(isinstance(i.shape[0], str) for i in session.get_inputs())
    assert temporal.get_inputs()[0].shape[1:] == [c.encoder_length + c.horizon, c.hidden]
    assert historical.get_inputs()[0].shape[1:] == [tft.historical_vsn.n_vars]
    assert temporal.get_outputs()[0].shape[1:] == [c.horizon, len(c.quantiles)]


@pytest.mark.parametrize("batch", [1, 5])
def test_graphs_give_pytorchs_outputs(
    built: tuple[Path, g.LiveGraphs], tft: TFT, batch: int
) -> None:
    """At a batch of one and of several, both graphs give ``tft.temporal`` and the historical
    VSN's outputs, float32 and shaped as PyTorch's, within the export tolerance."""
    _, graphs = built
    selected, ctx, x = _contexts(tft, batch, seed=batch)
    with torch.inference_mode():
        want_t = tft.temporal(selected, ctx)[0]
        want_h = tft.historical_vsn(x, ctx.selection)[0]
    got_t, got_h = graphs.temporal(selected, ctx), graphs.historical(x, ctx.selection)
    assert got_t.dtype == got_h.dtype == torch.float32
    assert got_t.shape == (batch, tft.config.horizon, len(tft.config.quantiles))
    assert got_h.shape == (batch, tft.config.hidden)
    torch.testing.assert_close(got_t, want_t, rtol=export.RTOL, atol=export.ATOL)
    torch.testing.assert_close(got_h, want_h, rtol=export.RTOL, atol=export.ATOL)


def test_historical_takes_float64_arrays(built: tuple[Path, g.LiveGraphs], tft: TFT) -> None:
    """NumPy inputs of another float dtype are fed as float32 (the graph's type)."""
    _, graphs = built
    _, ctx, x = _contexts(tft, 3, seed=8)
    got = graphs.historical(x.double().numpy(), ctx.selection.double().numpy())
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, graphs.historical(x, ctx.selection), rtol=0, atol=0)


def test_a_backlog_of_two_slices_keeps_every_row(
    built: tuple[Path, g.LiveGraphs], tft: TFT
) -> None:
    """Rows going in exactly two calls come back whole, in order, as one call gives them."""
    _, graphs = built
    _, ctx, x = _contexts(tft, 6, seed=9)
    sliced = g.LiveGraphs(graphs.temporal_session, graphs.historical_session, 3)
    got = sliced.historical(x, ctx.selection)
    assert got.shape == (6, tft.config.hidden)
    torch.testing.assert_close(got, graphs.historical(x, ctx.selection), rtol=1e-6, atol=1e-7)


def test_the_historical_graph_is_the_one_chunk_vsn(tft: TFT) -> None:
    """The exported historical module runs all variables in one chunk (the documented
    single-chunk forward), bit for bit."""
    _, ctx, x = _contexts(tft, 7, seed=10)
    vsn = tft.historical_vsn
    with torch.inference_mode():
        want = vsn(x, ctx.selection, chunk=vsn.n_vars)[0]
        got = g.HistoricalGraph(tft).eval()(x, ctx.selection)
    assert torch.equal(got, want)


@pytest.mark.parametrize(("threads", "intra"), [(0, 1), (1, 1), (3, 3)])
def test_sessions_run_sequentially_on_the_cpu_with_the_threads_asked(
    built: tuple[Path, g.LiveGraphs],
    monkeypatch: pytest.MonkeyPatch,
    threads: int,
    intra: int,
) -> None:
    """A session gets ``threads`` intra-op threads (at least one), one inter-op thread,
    sequential execution, all graph optimisations, no spinning, warnings silenced, and the CPU
    execution provider only."""
    cache, _ = built
    (path,) = cache.glob("*.historical.onnx")
    real, calls = ort.InferenceSession, []

    def record(*a: Any, **k: Any) -> Any:
        calls.append((a, k))
        return real(*a, **k)

    monkeypatch.setattr(ort, "InferenceSession", record)
    session = g._session(path, threads)
    ((args, kwargs),) = calls
    assert args[0] == str(path) and kwargs == {"providers": ["CPUExecutionProvider"]}
    so = args[1]
    assert isinstance(so, ort.SessionOptions)
    assert so.intra_op_num_threads == intra and so.inter_op_num_threads == 1
    assert so.execution_mode == ort.ExecutionMode.ORT_SEQUENTIAL
    assert so.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert so.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert so.log_severity_level == 3
    assert session.get_providers() == ["CPUExecutionProvider"]


# --- the check against PyTorch and the export ------------------------------------------------


def _fake_session(out: np.ndarray, names: list[str]) -> SimpleNamespace:
    """A session of inputs ``names`` whose run gives ``out``."""
    return SimpleNamespace(
        get_inputs=lambda: [SimpleNamespace(name=n) for n in names],
        run=lambda outputs, feeds: [out],
    )


def _constant(value: float) -> nn.Module:
    """A (B, 3) -> (B, 2) module giving ``value`` everywhere."""
    module = nn.Linear(3, 2).eval()
    with torch.no_grad():
        module.weight.zero_()
        module.bias.fill_(value)
    return module


def test_the_check_names_the_graph_and_the_way_out() -> None:
    """A graph off by 0.5 is refused with its name, the largest difference and the advice to
    use the PyTorch engine."""
    args = (torch.ones(2, 3),)
    session = _fake_session(np.full((2, 2), 0.5, np.float32), ["x"])
    with pytest.raises(InputError) as e:
        g._check(_constant(0.0), session, args, "temporal")
    assert str(e.value) == (
        "the temporal graph does not match PyTorch (max abs diff 0.5); use --engine torch"
    )


def test_an_exact_graph_passes_even_at_zero_tolerance(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tolerance is inclusive: a graph equal to PyTorch passes with ATOL = RTOL = 0."""
    monkeypatch.setattr(export, "ATOL", 0.0)
    monkeypatch.setattr(export, "RTOL", 0.0)
    module, args = _constant(0.25), (torch.ones(2, 3),)
    with torch.inference_mode():
        exact = module(*args).numpy()
    g._check(module, _fake_session(exact.copy(), ["x"]), args, "historical")
    with pytest.raises(InputError, match="historical graph does not match"):
        g._check(module, _fake_session(exact + np.float32(1e-3), ["x"]), args, "historical")


def test_the_relative_tolerance_grows_with_the_output() -> None:
    """Outputs of about 1000 may differ by ``ATOL + RTOL * 1000`` (about 0.1), no more."""
    module, args = _constant(1000.0), (torch.ones(2, 3),)
    with torch.inference_mode():
        ref = module(*args).numpy()
    g._check(module, _fake_session(ref + np.float32(0.05), ["x"]), args, "temporal")
    with pytest.raises(InputError, match="max abs diff 0.2"):
        g._check(module, _fake_session(ref + np.float32(0.2), ["x"]), args, "temporal")


class _Sum(nn.Module):
    """``a + b``: a module of two inputs."""

    def forward(self, a: Tensor, b: Tensor) -> Tensor:
        return a + b


@pytest.mark.parametrize("names", [["a"], ["a", "b", "c"]])
def test_a_graph_of_other_inputs_than_the_modules_is_refused(names: list[str]) -> None:
    """A graph whose inputs are not one per module argument fails the check, even where its
    output happens to match (a cached graph of another layout is built again)."""
    args = (torch.ones(2, 2), torch.ones(2, 2))
    right = np.full((2, 2), 2.0, np.float32)
    g._check(_Sum(), _fake_session(right, ["a", "b"]), args, "temporal")
    with pytest.raises(ValueError, match="zip"):
        g._check(_Sum(), _fake_session(right, names), args, "temporal")


def test_an_export_that_does_not_match_names_the_graph_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both exporters' graphs failing the check: the error names the live graph and gives both
    checks' reasons; neither the graph nor its temporary file is left in the cache."""

    def write(module: object, args: object, names: object, out: str, own: Path, **k: Any) -> None:
        own.write_bytes(b"graph")

    monkeypatch.setattr(export, "write_onnx", write)
    monkeypatch.setattr(
        g, "_session", lambda p, t: _fake_session(np.ones((2, 2), np.float32), ["x"])
    )
    path = tmp_path / "k.temporal.onnx"
    with pytest.raises(InputError) as e:
        g._export(_constant(0.0), (torch.ones(2, 3),), ("x",), path, 1, "temporal")
    why = "the temporal graph does not match PyTorch (max abs diff 1); use --engine torch"
    assert str(e.value) == f"{path}: the live temporal graph cannot be built ({why}; {why})"
    assert list(tmp_path.iterdir()) == []


def test_check_examples_are_fixed_and_leave_the_global_rng_alone(tft: TFT) -> None:
    """The windows a graph is checked on are the same at every build (a cached graph that
    passed passes again), several per batch, and drawing them does not move ``torch``'s global
    random stream (a seeded caller gets the same numbers with either engine)."""
    torch.manual_seed(123)
    first = g._examples(tft)
    after = torch.rand(4)
    torch.manual_seed(123)
    assert torch.equal(torch.rand(4), after)
    torch.manual_seed(999)  # another global seed: the same windows
    second = g._examples(tft)
    for a, b in zip((*first[0], *first[1]), (*second[0], *second[1]), strict=True):
        assert torch.equal(a, b)
    c = tft.config
    temporal, historical = first
    assert temporal[0].shape[1:] == (c.encoder_length + c.horizon, c.hidden)
    assert [t.shape[1:] for t in temporal[1:]] == [(c.hidden,)] * 3
    assert historical[0].shape[1:] == (tft.historical_vsn.n_vars,)
    assert historical[1].shape[1:] == (c.hidden,)
    assert len({t.shape[0] for t in (*temporal, *historical)}) == 1 and temporal[0].shape[0] > 1


# --- the cache key -----------------------------------------------------------------------------


def test_the_key_covers_config_format_and_versions(
    tft: TFT, monkeypatch: pytest.MonkeyPatch
) -> None:
    """16 hex digits, the same for an identical model, and another for another config (same
    weights), graph format, torch version or onnxruntime version: a cache never serves graphs
    built for something else."""
    key = g.graph_key(tft)
    assert len(key) == 16 and int(key, 16) >= 0 and key == key.lower()
    assert g.graph_key(copy.deepcopy(tft)) == key
    other = copy.deepcopy(tft)
    other.config = dataclasses.replace(tft.config, dropout=tft.config.dropout / 2)
    assert g.graph_key(other) != key
    with monkeypatch.context() as m:
        m.setattr(g, "FORMAT", g.FORMAT + 1)
        assert g.graph_key(tft) != key
    with monkeypatch.context() as m:
        m.setattr(torch, "__version__", "0.0.1")
        assert g.graph_key(tft) != key
    with monkeypatch.context() as m:
        m.setattr(ort, "__version__", "0.0.1")
        assert g.graph_key(tft) != key
    assert g.graph_key(tft) == key


# --- the engine choice and the models refused ------------------------------------------------


def test_torch_asks_for_no_graphs_and_touches_no_cache(tmp_path: Path, tft: TFT) -> None:
    """``torch`` runs in PyTorch: no graphs, no ``live/`` folder; each engine name is kept."""
    assert [g.check_engine(e) for e in g.ENGINES] == ["auto", "torch", "onnx"]
    assert g.live_graphs([tft], "torch", CPU, tmp_path / "live") is None
    assert not (tmp_path / "live").exists()


def test_an_unwritable_cache_fails_onnx_and_sends_auto_to_pytorch(
    tft: TFT, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A ``live`` path that cannot be a folder: ``onnx`` refuses with the OS error, ``auto``
    logs it and runs in PyTorch."""
    cache = tmp_path / "live"
    cache.write_text("a file")
    with pytest.raises(InputError) as e:
        g.live_graphs([tft], "onnx", CPU, cache)
    assert isinstance(e.value.__cause__, FileExistsError)
    assert str(e.value) == f"--engine onnx: {e.value.__cause__}"
    with caplog.at_level(logging.INFO, logger=g.__name__):
        assert g.live_graphs([tft], "auto", CPU, cache) is None
    (message,) = [r.getMessage() for r in caplog.records]
    assert message == (
        f"live forward in PyTorch: the onnxruntime graphs could not be built ({e.value.__cause__})"
    )


def test_without_onnxruntime_and_onnxscript(
    tft: TFT, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Neither package importable: ``unsupported`` names both and how to install them; ``onnx``
    refuses with it, ``auto`` logs it and runs in PyTorch."""
    real = g.importlib.util.find_spec
    missing = ("onnxruntime", "onnxscript")
    monkeypatch.setattr(
        g.importlib.util, "find_spec", lambda m, *a: None if m in missing else real(m, *a)
    )
    assert g.unsupported(tft, CPU) == MISSING
    with pytest.raises(InputError) as e:
        g.live_graphs([tft], "onnx", CPU, tmp_path / "live")
    assert str(e.value) == f"--engine onnx: {MISSING}"
    with caplog.at_level(logging.INFO, logger=g.__name__):
        assert g.live_graphs([tft], "auto", CPU, tmp_path / "live") is None
    assert [r.getMessage() for r in caplog.records] == [f"live forward in PyTorch: {MISSING}"]
    assert not (tmp_path / "live").exists()


class _Same(nn.Module):
    """An identity parametrisation (not one of foxhunt's)."""

    def forward(self, w: Tensor) -> Tensor:
        return w


def test_a_parametrised_float_model_is_refused(tft: TFT) -> None:
    """A float32 model whose weight goes through a parametrisation cannot be exported."""
    model = copy.deepcopy(tft)
    linear = next(m for m in model.modules() if isinstance(m, nn.Linear))
    parametrize.register_parametrization(linear, "weight", _Same())
    assert all(p.dtype == torch.float32 for p in model.parameters())
    assert g.unsupported(model, CPU) == QUANTISED


def test_a_model_with_a_quantised_layer_is_refused(tft: TFT) -> None:
    """A model holding one of foxhunt's quantised layers (int8 codes as buffers, every
    parameter float32, nothing parametrised) is refused."""
    model = copy.deepcopy(tft)
    name, linear = next((n, m) for n, m in model.named_modules() if isinstance(m, nn.Linear))
    codes, scale = quantize_int8(linear.weight, (1,))
    parent, _, attr = name.rpartition(".")
    quant = QuantLinear(codes, scale, linear.bias.detach().clone(), "none")
    setattr(model.get_submodule(parent) if parent else model, attr, quant)
    assert all(p.dtype == torch.float32 for p in model.parameters())
    assert not any(parametrize.is_parametrized(m) for m in model.modules())
    assert g.unsupported(model, CPU) == QUANTISED
    assert g.unsupported(tft, CPU) is None
