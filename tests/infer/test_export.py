from __future__ import annotations

import contextlib
import io
import logging
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from demo_run import DemoRun
from foxhunt.artifacts.rundir import load_model_dir
from foxhunt.cli import main
from foxhunt.data.pipeline import prepare_inference_data
from foxhunt.errors import InputError
from foxhunt.infer.export import export_model
from foxhunt.quantize.recipe import quantize_run

EXPORT_LOG: dict[str, list[str] | str] = {}
"""What the fixture's ``foxhunt export`` logged (INFO and up, as the CLI shows) and printed."""


class _Collect(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(f"{record.name}: {record.getMessage()}")


@pytest.fixture(scope="module")
def exported(demo_run: DemoRun, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("onnx") / "model.onnx"
    records: list[str] = []
    root, handler, stdout = logging.getLogger(), _Collect(records), io.StringIO()
    level = root.level
    root.setLevel(logging.INFO)  # every library's INFO records reach the handler, as they did
    root.addHandler(handler)
    try:
        with contextlib.redirect_stdout(stdout):
            argv = ["export", "--model", str(demo_run.run), "--format", "onnx", "--out", str(out)]
            assert main(argv) == 0
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    EXPORT_LOG.update(records=records, stdout=stdout.getvalue())
    return out


@pytest.mark.slow
def test_export_says_one_line_with_its_shapes(exported: Path) -> None:
    """Issue 15: ~150 lines of exporter passes, and rich ate ``[batch, 5]`` as markup."""
    chatter = [r for r in EXPORT_LOG["records"] if not r.startswith("foxhunt")]
    assert chatter == []
    printed = " ".join(str(EXPORT_LOG["stdout"]).split())
    assert printed.startswith(f"wrote {exported} (") and "static [batch, 5]" in printed


def _run(session: ort.InferenceSession, batch) -> np.ndarray:  # noqa: ANN001
    feeds = {n: getattr(batch, n).numpy() for n in ("static", "historical", "known")}
    return session.run(["quantiles"], feeds)[0]


@pytest.mark.slow
def test_onnxruntime_matches_pytorch_on_demo_windows(exported: Path, demo_run: DemoRun) -> None:
    loaded = load_model_dir(demo_run.run)
    m = loaded.config.model
    windows = prepare_inference_data(
        demo_run.bars, loaded.spec, loaded.scaler, m.encoder_length, m.horizon, with_target=False
    )
    session = ort.InferenceSession(str(exported), providers=["CPUExecutionProvider"])
    n = len(windows)
    for idx in ([n - 1], list(range(0, n, n // 17))[:17]):  # batch 1 (the live origin) and 17
        batch = windows.batch(idx)
        with torch.inference_mode():
            ref = loaded.model(batch).quantiles.numpy()
        got = _run(session, batch)
        assert got.shape == ref.shape == (len(idx), m.horizon, m.n_quantiles)
        # Independent of the exporter's own acceptance check (ATOL/RTOL 1e-4 in infer/export.py):
        # fp32 graphs that compute the same thing agree to ~1e-6 on these magnitudes (~1e-1).
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_graph_has_a_dynamic_batch_axis_and_lstm_ops(exported: Path) -> None:
    model = onnx.load(str(exported))
    onnx.checker.check_model(model)
    dims = {i.name: i.type.tensor_type.shape.dim for i in model.graph.input}
    assert set(dims) == {"static", "historical", "known"}
    for d in dims.values():
        assert d[0].dim_param and not d[0].dim_value  # symbolic batch
    assert sum(n.op_type == "LSTM" for n in model.graph.node) == 4  # 2 layers x encoder, decoder
    assert not list(Path(exported).parent.glob("*.data"))  # one self-contained file


@pytest.mark.slow
def test_export_refuses_bad_input(demo_run: DemoRun, tmp_path: Path) -> None:
    assert main(["export", "--model", str(demo_run.run), "--out", str(tmp_path / "m.bin")]) == 2
    assert (
        main(["export", "--model", str(tmp_path / "nope"), "--out", str(tmp_path / "m.onnx")]) == 2
    )
    quantized = tmp_path / "int8"
    quantize_run(demo_run.run, quantized, measure=False)
    with pytest.raises(InputError, match="quantised model directory cannot be exported"):
        export_model(quantized, tmp_path / "q.onnx")
    assert not list(tmp_path.glob("*.onnx*"))


@pytest.mark.slow
def test_export_falls_back_to_the_second_exporter_when_the_first_fails_or_differs(
    demo_run: DemoRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from foxhunt.infer import export

    real, tried = export.export_onnx, []

    def first_bad(model: torch.nn.Module, example: object, out: Path, *, legacy: bool) -> None:
        tried.append(legacy)
        if legacy:
            out.write_bytes(b"not an onnx graph")  # exported, but onnxruntime cannot load it
            return
        real(model, example, out, legacy=True)  # type: ignore[arg-type]  # a good graph, fast

    monkeypatch.setattr(export, "export_onnx", first_bad)
    out = tmp_path / "m.onnx"
    report = export_model(demo_run.run, out)
    assert tried == [True, False] and report["max_abs_diff"] < 1e-4 and out.stat().st_size > 1000

    def both_raise(model: torch.nn.Module, example: object, out: Path, *, legacy: bool) -> None:
        raise RuntimeError(f"exporter legacy={legacy} gone")

    monkeypatch.setattr(export, "export_onnx", both_raise)
    with pytest.raises(RuntimeError, match="legacy=False gone"):
        export_model(demo_run.run, tmp_path / "n.onnx")
    assert not (tmp_path / "n.onnx").exists()
