"""``foxhunt export``'s ONNX writer pinned where `make mutate infer.export` needs it: what the
graph wrapper hands the TFT, the exporter's loggers and warnings kept quiet, the exact arguments
of both ``torch.onnx.export`` calls (opset, dynamic axes, names), the fallback from one exporter
to the other, the parity check's tolerance and its inputs, and every refusal of
``export_model`` (with the run loading, the exporter and the parity check replaced by fakes)."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

from demo_run import DemoRun
from foxhunt.errors import InputError
from foxhunt.infer import export
from foxhunt.model.batch import TFTBatch, random_batch


def test_the_graph_names_and_tolerances() -> None:
    assert export.INPUT_NAMES == ("static", "historical", "known")
    assert export.OUTPUT_NAME == "quantiles"
    assert export.ATOL == 1e-4 and export.RTOL == 1e-4
    assert export.EXPORTER_LOGGERS == ("torch.onnx", "torch.export", "onnxscript", "onnx_ir")


class _Recorder(torch.nn.Module):
    """A stand-in TFT: records the batch it is given and returns its own ``quantiles``."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[TFTBatch] = []
        self.out = torch.arange(6.0).reshape(1, 2, 3)

    def forward(self, batch: TFTBatch) -> SimpleNamespace:
        self.seen.append(batch)
        return SimpleNamespace(quantiles=self.out)


def test_the_quantile_graph_hands_the_three_tensors_in_order_and_returns_the_quantiles() -> None:
    tft = _Recorder()
    graph = export.QuantileGraph(tft)
    assert graph.tft is tft
    s, h, k = torch.zeros(1, 2), torch.ones(1, 3, 4), torch.full((1, 5, 6), 2.0)
    got = graph(s, h, k)
    assert got is tft.out
    (batch,) = tft.seen
    assert batch.static is s and batch.historical is h and batch.known is k
    assert batch.target is None
    assert list(graph.children()) == [tft]  # a registered submodule (.eval() reaches it)


def test_the_exporter_loggers_are_at_error_inside_and_restored_after() -> None:
    loggers = [logging.getLogger(n) for n in export.EXPORTER_LOGGERS]
    before = [lg.level for lg in loggers]
    try:
        for lg, level in zip(
            loggers, (logging.DEBUG, logging.INFO, 0, logging.WARNING), strict=True
        ):
            lg.setLevel(level)
        with export._quiet_exporter():
            assert [lg.level for lg in loggers] == [logging.ERROR] * 4
        assert [lg.level for lg in loggers] == [logging.DEBUG, logging.INFO, 0, logging.WARNING]
        with pytest.raises(RuntimeError, match="inside"):
            with export._quiet_exporter():
                raise RuntimeError("inside")
        assert [lg.level for lg in loggers] == [logging.DEBUG, logging.INFO, 0, logging.WARNING]
    finally:
        for lg, level in zip(loggers, before, strict=True):
            lg.setLevel(level)


def test_export_onnx_writes_the_wrapped_model_in_eval_mode_with_the_graph_names(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[tuple[Any, ...]] = []

    def fake_write(module: Any, args: Any, names: Any, output: Any, out: Any, **kw: Any) -> None:
        calls.append((module, args, names, output, out, kw, module.training, module.tft.training))

    monkeypatch.setattr(export, "write_onnx", fake_write)
    model = _Recorder().train()
    example = random_batch(SimpleNamespace(**_CFG), 2)
    out = tmp_path / "m.onnx"
    export.export_onnx(model, example, out)
    export.export_onnx(model, example, out, legacy=True)
    assert len(calls) == 2
    for (module, args, names, output, path, kw, training, inner), legacy in zip(
        calls, (False, True), strict=True
    ):
        assert isinstance(module, export.QuantileGraph) and module.tft is model
        assert not training and not inner  # .eval() on the wrapper and the TFT
        assert len(args) == 3
        assert args[0] is example.static and args[1] is example.historical
        assert args[2] is example.known
        assert names == ("static", "historical", "known") and output == "quantiles"
        assert path == out and kw == {"legacy": legacy}


def _front_filters(n: int) -> list[tuple[Any, ...]]:
    """The first ``n`` warnings filters as (action, message, category, module) patterns."""
    return [
        (a, m.pattern if m else None, c, mod.pattern if mod else None, line)
        for a, m, c, mod, line in warnings.filters[:n]
    ]


QUIET = [
    ("ignore", None, UserWarning, "torch", 0),
    ("ignore", None, FutureWarning, None, 0),
    ("ignore", None, DeprecationWarning, None, 0),
    ("ignore", ".*axis name.*will not be used.*", Warning, None, 0),
    ("ignore", ".*were assigned during export.*", Warning, None, 0),
]
"""The filters write_onnx adds (newest first), both exporters."""


class _FakeExporter:
    """``torch.onnx.export``: records what it is given and the state it runs in, writes bytes
    where the legacy exporter writes, returns a program object for the dynamo one."""

    def __init__(self, program: bool = True) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.filters: list[list[tuple[Any, ...]]] = []
        self.levels: list[list[int]] = []
        self.saved: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.program = program

    def __call__(self, *args: Any, **kw: Any) -> Any:
        self.calls.append((args, kw))
        self.filters.append(_front_filters(6))
        self.levels.append([logging.getLogger(n).level for n in export.EXPORTER_LOGGERS])
        if not kw["dynamo"]:
            Path(args[2]).write_bytes(b"legacy graph")
            return None
        if not self.program:
            return None
        return SimpleNamespace(save=self.save)

    def save(self, *args: Any, **kw: Any) -> None:
        self.saved.append((args, kw))
        Path(args[0]).write_bytes(b"dynamo graph")


def _module_and_args() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    return torch.nn.Identity(), (torch.zeros(2, 1), torch.zeros(2, 2), torch.zeros(2, 3))


def test_the_legacy_exporter_gets_opset_17_and_a_batch_axis_on_every_input(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = _FakeExporter()
    monkeypatch.setattr(torch.onnx, "export", fake)
    module, args = _module_and_args()
    out = tmp_path / "m.onnx"
    export.write_onnx(module, args, ("a", "b", "c"), "y", out, legacy=True)
    ((pos, kw),) = fake.calls  # once: the dynamo export does not follow
    assert pos[0] is module and pos[1] is args and pos[2] == str(tmp_path / "m.onnx.tmp")
    assert len(pos) == 3
    assert kw == {
        "dynamo": False,
        "input_names": ["a", "b", "c"],
        "output_names": ["y"],
        "dynamic_axes": {"a": {0: "batch"}, "b": {0: "batch"}, "c": {0: "batch"}},
        "opset_version": 17,
    }
    assert fake.filters[0] == [("ignore", None, torch.jit.TracerWarning, None, 0), *QUIET]
    assert fake.levels == [[logging.ERROR] * 4]
    assert fake.saved == []
    assert out.read_bytes() == b"legacy graph" and sorted(tmp_path.iterdir()) == [out]


def test_the_torch_export_exporter_gets_one_dynamic_batch_dim_and_saves_one_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = _FakeExporter()
    monkeypatch.setattr(torch.onnx, "export", fake)
    module, args = _module_and_args()
    out = tmp_path / "m.onnx"
    export.write_onnx(module, args, ["a", "b"], "y", out)  # legacy defaults to False
    ((pos, kw),) = fake.calls
    assert pos == (module, args) and pos[1] is args
    shapes = kw.pop("dynamic_shapes")
    assert kw == {
        "dynamo": True,
        "input_names": ["a", "b"],
        "output_names": ["y"],
        "verbose": False,
    }
    assert list(shapes) == ["a", "b"] and all(list(s) == [0] for s in shapes.values())
    dim = shapes["a"][0]
    assert shapes["b"][0] is dim  # one "batch" dimension shared by every input
    assert dim.__name__ == "batch" and dim.min == 1
    assert fake.filters[0][:5] == QUIET
    assert fake.filters[0][5] != ("ignore", None, torch.jit.TracerWarning, None, 0)
    assert fake.levels == [[logging.ERROR] * 4]
    assert fake.saved == [((str(tmp_path / "m.onnx.tmp"),), {"external_data": False})]
    assert out.read_bytes() == b"dynamo graph" and sorted(tmp_path.iterdir()) == [out]


def test_no_program_or_a_failing_exporter_leaves_no_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(torch.onnx, "export", _FakeExporter(program=False))
    module, args = _module_and_args()
    out = tmp_path / "m.onnx"
    with pytest.raises(AssertionError):
        export.write_onnx(module, args, ["a"], "y", out)
    assert list(tmp_path.iterdir()) == []

    def broken(*args: Any, **kw: Any) -> None:
        Path(args[2]).write_bytes(b"half")
        raise RuntimeError("exporter failed")

    monkeypatch.setattr(torch.onnx, "export", broken)
    with pytest.raises(RuntimeError, match="exporter failed"):
        export.write_onnx(module, args, ["a"], "y", out, legacy=True)
    assert list(tmp_path.iterdir()) == []


def test_checked_export_keeps_the_first_exporter_when_it_works(tmp_path: Path) -> None:
    out = tmp_path / "m.onnx"
    tried: list[bool] = []

    def attempt(legacy: bool) -> str:
        tried.append(legacy)
        out.write_bytes(b"graph")
        return f"legacy={legacy}"

    assert export.checked_export(attempt, out) == "legacy=True"
    assert tried == [True] and out.read_bytes() == b"graph"


def test_checked_export_removes_a_failed_first_file_then_tries_the_second(tmp_path: Path) -> None:
    out = tmp_path / "m.onnx"
    seen: list[tuple[bool, bool]] = []

    def attempt(legacy: bool) -> str:
        seen.append((legacy, out.exists()))
        if legacy:
            out.write_bytes(b"bad graph")
            raise ValueError("Split sizes\nsecond line")
        out.write_bytes(b"good graph")
        return "second"

    assert export.checked_export(attempt, out) == "second"
    assert seen == [(True, False), (False, False)]  # the first's file gone before the second
    assert out.read_bytes() == b"good graph"


def test_checked_export_raises_the_second_error_from_the_first(tmp_path: Path) -> None:
    out = tmp_path / "m.onnx"
    errors = {True: ValueError("first"), False: KeyError("second")}

    def attempt(legacy: bool) -> None:
        out.write_bytes(b"written")
        raise errors[legacy]

    with pytest.raises(KeyError) as info:
        export.checked_export(attempt, out)
    assert info.value is errors[False] and info.value.__cause__ is errors[True]
    assert not out.exists()

    def nothing_written(legacy: bool) -> None:  # nothing to remove: no FileNotFoundError
        raise errors[legacy]

    with pytest.raises(KeyError) as info:
        export.checked_export(nothing_written, out)
    assert info.value is errors[False]


class _Session:
    """``onnxruntime.InferenceSession``: records its path, providers and feeds."""

    made: list[tuple[Any, Any]] = []
    runs: list[tuple[Any, dict[str, np.ndarray]]] = []
    result: np.ndarray = np.zeros(1, np.float32)

    def __init__(self, path: Any, providers: Any = None) -> None:
        _Session.made.append((path, providers))

    def run(self, names: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        _Session.runs.append((names, feeds))
        return [_Session.result]


class _Fixed:
    """A stand-in TFT returning fixed float64 quantiles, recording inference mode."""

    def __init__(self, quantiles: np.ndarray) -> None:
        self.quantiles = torch.tensor(quantiles, dtype=torch.float64)
        self.inference: list[bool] = []
        self.batches: list[TFTBatch] = []

    def __call__(self, batch: TFTBatch) -> SimpleNamespace:
        self.inference.append(torch.is_inference_mode_enabled())
        self.batches.append(batch)
        return SimpleNamespace(quantiles=self.quantiles)


@pytest.fixture
def session(monkeypatch: pytest.MonkeyPatch) -> type[_Session]:
    import onnxruntime

    _Session.made, _Session.runs = [], []
    monkeypatch.setattr(onnxruntime, "InferenceSession", _Session)
    return _Session


def _batch(size: int) -> TFTBatch:
    g = torch.Generator().manual_seed(size)
    return TFTBatch(
        torch.randn(size, 2, generator=g, dtype=torch.float64),
        torch.randn(size, 3, 2, generator=g, dtype=torch.float64),
        torch.randn(size, 5, 1, generator=g, dtype=torch.float64),
    )


def test_parity_feeds_float32_inputs_by_name_on_the_cpu_provider(
    session: type[_Session], tmp_path: Path
) -> None:
    ref = np.array([[[-0.75, 0.1 + 1e-12]]])  # 0.1 + 1e-12 is 0.1 in float32
    session.result = ref.astype(np.float32)
    model, batch = _Fixed(ref), _batch(2)
    report = export.onnx_parity(model, tmp_path / "m.onnx", batch)  # type: ignore[arg-type]
    assert session.made == [(str(tmp_path / "m.onnx"), ["CPUExecutionProvider"])]
    ((names, feeds),) = session.runs
    assert names == ["quantiles"] and list(feeds) == ["static", "historical", "known"]
    for name, fed in feeds.items():
        assert fed.dtype == np.float32
        np.testing.assert_array_equal(fed, getattr(batch, name).float().numpy())
    assert model.inference == [True]
    assert len(model.batches) == 1 and model.batches[0] is batch
    # the reference is compared in float32, as onnxruntime computes: no difference at all
    assert report == {"batch_size": 2, "max_abs_diff": 0.0, "max_abs_value": 0.75, "ok": True}
    assert list(report) == ["batch_size", "max_abs_diff", "max_abs_value", "ok"]


@pytest.mark.parametrize(
    ("ref", "got", "ok"),
    [
        ([0.0], [1e-4], True),  # exactly ATOL: within
        ([0.0], [2e-4], False),
        ([1000.0], [1000.09375], True),  # within ATOL + RTOL x 1000 = 0.1001
        ([-1000.0], [-1000.09375], True),  # |value|
        ([1000.0], [1000.125], False),
        ([0.0, 0.0], [0.0, 1.0], False),  # every element must match
    ],
)
def test_parity_tolerance_is_atol_plus_rtol_times_the_value(
    session: type[_Session], tmp_path: Path, ref: list[float], got: list[float], ok: bool
) -> None:
    session.result = np.array(got, np.float32)
    report = export.onnx_parity(_Fixed(np.array(ref)), tmp_path / "m.onnx", _batch(1))  # type: ignore[arg-type]
    assert report["ok"] is ok
    diff = np.abs(np.array(got, np.float32) - np.array(ref, np.float32))
    assert report["max_abs_diff"] == float(diff.max())
    assert report["max_abs_value"] == max(abs(v) for v in ref)
    assert report["batch_size"] == 1


_CFG = {
    "n_static": 2,
    "encoder_length": 3,
    "n_historical": 2,
    "total_length": 5,
    "n_known": 1,
    "horizon": 2,
    "n_quantiles": 3,
}


class _Run:
    """``export_model`` with its collaborators replaced: the run loader, the exporter (writes
    ``size`` bytes) and the parity check (answers from ``checks[legacy]``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, checks: dict[bool, Any]) -> None:
        import foxhunt.quantize.model as qmodel

        self.cfg = SimpleNamespace(**_CFG)
        self.model = object()
        self.loads: list[tuple[Any, ...]] = []
        self.exports: list[tuple[Any, ...]] = []
        self.parity: list[tuple[Any, ...]] = []
        self.quantized: list[Any] = []
        self.checks = checks
        self.legacy = True
        monkeypatch.setattr(export, "load_model_dir", self.load)
        monkeypatch.setattr(export, "export_onnx", self.export)
        monkeypatch.setattr(export, "onnx_parity", self.check)
        monkeypatch.setattr(qmodel, "is_quantized_dir", self.is_quantized)

    def is_quantized(self, path: Any) -> bool:
        self.quantized.append(path)
        return False

    def load(self, *args: Any) -> SimpleNamespace:
        self.loads.append(args)
        return SimpleNamespace(config=SimpleNamespace(model=self.cfg), model=self.model)

    def export(self, model: Any, example: TFTBatch, out: Path, *, legacy: bool) -> None:
        self.exports.append((model, example, out, legacy))
        self.legacy = legacy
        out.write_bytes(b"x" * 123)

    def check(self, model: Any, path: Path, batch: TFTBatch) -> dict[str, Any]:
        self.parity.append((model, path, batch, self.legacy))
        answer = self.checks[self.legacy]
        if isinstance(answer, Exception):
            raise answer
        return dict(answer[batch.size])


def _good(diff1: float, diff3: float) -> dict[int, dict[str, Any]]:
    return {1: {"ok": True, "max_abs_diff": diff1}, 3: {"ok": True, "max_abs_diff": diff3}}


def test_export_model_reports_the_file_shapes_and_both_parity_checks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    run = _Run(monkeypatch, {True: _good(3e-6, 1e-6)})
    out = tmp_path / "m.onnx"
    report = export.export_model(str(tmp_path / "model"), str(out))  # type: ignore[arg-type]
    assert run.loads == [(tmp_path / "model", "cpu")]
    assert run.quantized == [tmp_path / "model"]
    staged = tmp_path / "m.onnx.tmp"  # written and checked beside out, then renamed over it
    ((model, example, path, legacy),) = run.exports
    assert model is run.model and path == staged and legacy is True
    want = random_batch(run.cfg, 2)
    for name in ("static", "historical", "known"):
        torch.testing.assert_close(getattr(example, name), getattr(want, name), rtol=0, atol=0)
    assert [(p[0], p[1], p[2].size, p[3]) for p in run.parity] == [
        (run.model, staged, 1, True),
        (run.model, staged, 3, True),
    ]
    for _, _, batch, _ in run.parity:  # seeded by their size
        want = random_batch(run.cfg, batch.size, seed=batch.size)
        torch.testing.assert_close(batch.known, want.known, rtol=0, atol=0)
    assert report == {
        "out": str(out),
        "bytes": 123,
        "shapes": {
            "static": ["batch", 2],
            "historical": ["batch", 3, 2],
            "known": ["batch", 5, 1],
            "quantiles": ["batch", 2, 3],
        },
        "parity": [{"ok": True, "max_abs_diff": 3e-6}, {"ok": True, "max_abs_diff": 1e-6}],
        "max_abs_diff": 3e-6,
    }
    assert out.stat().st_size == 123 and sorted(tmp_path.iterdir()) == [out]


@pytest.mark.parametrize("fails", ["export", "parity"])
def test_a_failed_export_leaves_an_earlier_file_at_out_as_it_was(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fails: str
) -> None:
    """Both exporters fail (before writing, or with a graph that does not run): the earlier
    export at ``--out`` is kept and nothing else is left beside it."""
    out = tmp_path / "m.onnx"
    out.write_bytes(b"the earlier export")
    run = _Run(monkeypatch, {True: RuntimeError("no run"), False: RuntimeError("no run")})
    if fails == "export":

        def refuse(*a: Any, **k: Any) -> None:
            raise RuntimeError("exporter failed")

        monkeypatch.setattr(export, "export_onnx", refuse)
    with pytest.raises((RuntimeError, InputError)):
        export.export_model(tmp_path / "model", out)
    assert out.read_bytes() == b"the earlier export"
    assert sorted(tmp_path.iterdir()) == [out]
    assert run.loads


def test_export_model_falls_back_when_the_first_graph_does_not_match(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bad = {1: {"ok": True, "max_abs_diff": 0.0}, 3: {"ok": False, "max_abs_diff": 0.5}}
    run = _Run(monkeypatch, {True: bad, False: _good(1e-6, 2e-6)})
    out = tmp_path / "m.ONNX"  # the suffix in any case
    report = export.export_model(tmp_path, out)
    assert [e[3] for e in run.exports] == [True, False]
    assert report["max_abs_diff"] == 2e-6 and report["out"] == str(out)
    assert [c["max_abs_diff"] for c in report["parity"]] == [1e-6, 2e-6]


def test_export_model_refuses_graphs_that_do_not_match_naming_the_worst_difference(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bad = {1: {"ok": False, "max_abs_diff": 0.5}, 3: {"ok": True, "max_abs_diff": 0.25}}
    _Run(monkeypatch, {True: bad, False: bad})
    out = tmp_path / "m.onnx"
    with pytest.raises(InputError) as info:
        export.export_model(tmp_path / "run", out)
    assert str(info.value) == (
        f"ONNX export of {tmp_path / 'run'} does not match PyTorch (max abs diff 0.5 > "
        "0.0001 + 0.0001 x |value|)"
    )
    assert not out.exists()


def test_export_model_refuses_graphs_onnxruntime_cannot_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    first, second = RuntimeError("bad Split\ndetails"), RuntimeError("no kernel\nmore")
    _Run(monkeypatch, {True: first, False: second})
    out = tmp_path / "m.onnx"
    with pytest.raises(InputError) as info:
        export.export_model(tmp_path / "run", out)
    run = tmp_path / "run"
    assert str(info.value) == f"ONNX export of {run} does not run in onnxruntime (no kernel)"
    cause = info.value.__cause__  # the first exporter's refusal, from onnxruntime's error
    assert isinstance(cause, InputError)
    assert str(cause) == f"ONNX export of {run} does not run in onnxruntime (bad Split)"
    assert cause.__cause__ is first
    assert not out.exists()


@pytest.mark.parametrize(
    ("kwargs", "name", "message"),
    [
        ({"fmt": "tflite"}, "m.onnx", "--format 'tflite': only onnx is supported"),
        ({}, "m.bin", "--out {out}: the file name must end in .onnx"),
        ({"fmt": "onnx"}, "m.onnx.tmp", "--out {out}: the file name must end in .onnx"),
        ({}, "nowhere/m.ONNX", "--out {out}: directory {parent} does not exist"),
    ],
)
def test_export_model_refuses_bad_arguments_before_loading(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    kwargs: dict[str, str],
    name: str,
    message: str,
) -> None:
    run = _Run(monkeypatch, {})
    out = tmp_path / name
    with pytest.raises(InputError) as info:
        export.export_model(tmp_path, out, **kwargs)
    assert str(info.value) == message.format(out=out, parent=out.parent)
    assert run.loads == [] and list(tmp_path.iterdir()) == []


def test_export_model_refuses_a_quantised_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import foxhunt.quantize.model as qmodel

    run = _Run(monkeypatch, {})
    monkeypatch.setattr(qmodel, "is_quantized_dir", lambda path: path == tmp_path / "int8")
    with pytest.raises(InputError) as info:
        export.export_model(str(tmp_path / "int8"), tmp_path / "m.onnx")  # type: ignore[arg-type]
    assert str(info.value) == (
        f"--model {tmp_path / 'int8'}: a quantised model directory cannot be exported (int8 "
        "matmuls have no ONNX lowering); export the fp32 run directory"
    )
    assert run.loads == []


def test_export_model_names_the_missing_onnx_packages(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import importlib.util

    run = _Run(monkeypatch, {})
    real, asked = importlib.util.find_spec, []

    def find_spec(name: str, *args: Any) -> Any:
        asked.append(name)
        return None if name in ("onnx", "onnxscript") else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(InputError) as info:
        export.export_model(tmp_path, tmp_path / "m.onnx")
    monkeypatch.undo()
    assert str(info.value) == ("foxhunt export needs onnx, onnxscript: pip install 'foxhunt[onnx]'")
    assert {"onnx", "onnxruntime", "onnxscript"} <= set(asked)
    assert run.loads == []


@pytest.mark.slow
def test_a_real_export_of_the_demo_run_passes_both_parity_checks(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    out = tmp_path / "m.onnx"
    report = export.export_model(demo_run.run, out)
    assert [c["batch_size"] for c in report["parity"]] == [1, 3]
    assert all(c["ok"] is True for c in report["parity"])
    assert report["max_abs_diff"] == max(c["max_abs_diff"] for c in report["parity"]) < 1e-4
    assert report["bytes"] == out.stat().st_size > 1000
    assert report["shapes"]["quantiles"] == ["batch", 4, 5]
    assert sorted(tmp_path.iterdir()) == [out]

    from foxhunt.artifacts.rundir import load_model_dir

    loaded = load_model_dir(demo_run.run)
    batch = random_batch(loaded.config.model, 2, seed=7)

    class Shifted(torch.nn.Module):  # the real model, off by 1e-3: the check says so
        def forward(self, b: TFTBatch) -> SimpleNamespace:
            return SimpleNamespace(quantiles=loaded.model(b).quantiles + 1e-3)

    same = export.onnx_parity(loaded.model, out, batch)
    off = export.onnx_parity(Shifted(), out, batch)
    assert same["ok"] is True and same["max_abs_diff"] < 1e-4 and same["batch_size"] == 2
    assert off["ok"] is False and off["max_abs_diff"] == pytest.approx(1e-3, rel=0.05)
