"""``foxhunt.quantize.bench`` in this process: the random model directory, what one measurement
runs and returns, the child's command line, and the preset comparison (its children faked)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.rundir import RunDir, load_model_dir, read_config
from foxhunt.config import preset
from foxhunt.model.batch import random_batch
from foxhunt.model.tft import TFT
from foxhunt.quantize import bench
from foxhunt.quantize import model as qmodel
from foxhunt.quantize.model import held_bytes


@pytest.fixture(scope="module")
def random_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bench.write_random_run(preset("demo"), tmp_path_factory.mktemp("bench") / "fp32")


def test_the_random_run_is_a_loadable_model_directory_of_the_seeded_net(
    random_dir: Path, tmp_path: Path
) -> None:
    cfg = preset("demo")
    assert read_config(RunDir(random_dir)) == cfg
    loaded = load_model_dir(random_dir)
    torch.manual_seed(0)
    expected = TFT(cfg.model).state_dict()
    got = loaded.model.state_dict()
    assert got.keys() == expected.keys()
    assert all(torch.equal(got[k], expected[k]) for k in expected)
    # the identity scaler: every input centred at 0 with scale 1, every horizon's target scale 1
    n = len(loaded.spec.inputs)
    assert loaded.scaler.mean == (0.0,) * n and loaded.scaler.std == (1.0,) * n
    assert loaded.scaler.target_std == (1.0,) * cfg.model.horizon
    record = json.loads((random_dir / "features.json").read_text())
    assert record["fingerprint"] == "random"
    weights = ckpt.final_weights_path(random_dir / "checkpoints", 0)
    assert loaded.weights == weights
    _, sidecar = ckpt.load_weights(weights)
    assert sidecar["epoch"] == 0
    other = load_model_dir(bench.write_random_run(cfg, tmp_path / "seed1", seed=1))
    moved = [k for k, v in other.model.state_dict().items() if not torch.equal(v, got[k])]
    assert len(moved) > len(got) // 2  # another seed, other weights


def test_one_measurement_runs_each_batch_size_in_order_and_reports_it(
    random_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes: list[int] = []
    first: list[Any] = []
    real_load = qmodel.load_inference_model

    def counting_load(path: Path, device: str = "cpu") -> Any:
        loaded = real_load(path, device)

        def hook(_m: Any, args: tuple[Any, ...]) -> None:
            sizes.append(int(args[0].historical.shape[0]))
            if not first:
                first.append(args[0])

        loaded.model.register_forward_pre_hook(hook)
        return loaded

    # each timed pass takes (its number) milliseconds: passes 1, 2 at batch 1, 3, 4 at batch 3
    clock = iter([0.0, 0.001, 1.0, 1.002, 2.0, 2.003, 3.0, 3.004])
    monkeypatch.setattr(qmodel, "load_inference_model", counting_load)
    monkeypatch.setattr(bench.time, "perf_counter", lambda: next(clock))
    out = bench.measure_here(random_dir, [3, 1], repeats=2, seed=5)
    expected = random_batch(preset("demo").model, 3, seed=5)
    assert torch.equal(first[0].historical, expected.historical)
    assert out["latency_ms"] == pytest.approx({"1": 1.5, "3": 3.5})
    # one pass at the largest batch (the peak), then per size in increasing order 2 warm-up
    # passes and `repeats` timed ones
    assert sizes == [3] + [1] * 4 + [3] * 4
    assert out["model"] == str(random_dir)
    assert out["peak_batch_size"] == 3 and out["repeats"] == 2
    assert out["peak_delta_bytes"] == out["peak_rss_bytes"] - out["baseline_rss_bytes"]
    assert out["baseline_rss_bytes"] > 0 and out["peak_rss_bytes"] >= out["baseline_rss_bytes"]
    assert out["threads"] == torch.get_num_threads()
    assert out["held_bytes"] == held_bytes(load_model_dir(random_dir).model)
    json.dumps(out)  # the child prints it as one JSON line


def test_the_child_gets_the_measurement_s_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def fake_run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        seen["cmd"], seen["kwargs"] = cmd, kwargs
        out = 'loading...\n{"peak_delta_bytes": 12}\n'
        return subprocess.CompletedProcess(cmd, 0, stdout=out, stderr="")

    monkeypatch.setattr(bench.subprocess, "run", fake_run)
    got = bench.measure_in_subprocess(
        Path("some/dir"), (1, 8), repeats=4, num_threads=2, timeout_s=7.5
    )
    assert got == {"peak_delta_bytes": 12}  # the last line of its output
    assert seen["cmd"] == [
        sys.executable,
        "-m",
        "foxhunt.commands.qbench",
        "--model",
        "some/dir",
        "--batch-size",
        "1",
        "--batch-size",
        "8",
        "--repeats",
        "4",
        "--num-threads",
        "2",
    ]
    assert seen["kwargs"] == {
        "capture_output": True,
        "text": True,
        "timeout": 7.5,
        "check": False,
    }
    default = bench.measure_in_subprocess(Path("d"))
    assert default == {"peak_delta_bytes": 12}
    assert seen["cmd"][5:] == [
        "--batch-size",
        "1",
        "--batch-size",
        "32",
        "--repeats",
        "10",
        "--num-threads",
        "1",
    ]
    assert seen["kwargs"]["timeout"] == 600.0


def test_a_failed_child_raises_with_the_end_of_its_stderr(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stderr = "x" * 3000 + "Traceback ...\nValueError: broken weights\n"

    def fake_run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(cmd, 1, stdout="", stderr=stderr)

    monkeypatch.setattr(bench.subprocess, "run", fake_run)
    with pytest.raises(RuntimeError) as err:
        bench.measure_in_subprocess(Path("d"))
    message = str(err.value)
    assert message.startswith("inference measurement failed: ")
    assert message.endswith("ValueError: broken weights")
    assert len(message) == len("inference measurement failed: ") + 2000


def test_a_preset_comparison_measures_the_fp32_and_the_quantised_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[Path, dict[str, Any]]] = []

    def fake_measure(model_dir: Path, **kwargs: Any) -> dict[str, Any]:
        marker = model_dir / "quantization.json"
        calls.append((model_dir, kwargs))
        recipe = json.loads(marker.read_text()) if marker.is_file() else None
        return {"dir": model_dir.name, "quantised": recipe is not None}

    monkeypatch.setattr(bench, "measure_in_subprocess", fake_measure)
    bench.compare_preset("demo", "int8", "dynamic")
    assert [kw for _, kw in calls] == [{"repeats": 10, "num_threads": 1}] * 2
    calls.clear()
    out = bench.compare_preset("demo", "int8", "dynamic", repeats=3, num_threads=2)
    assert out["preset"] == "demo" and out["precision"] == "int8" and out["mode"] == "dynamic"
    assert out["fp32"] == {"dir": "fp32", "quantised": False}
    assert out["int8"] == {"dir": "int8", "quantised": True}
    assert [kw for _, kw in calls] == [{"repeats": 3, "num_threads": 2}] * 2
    assert not calls[0][0].exists()  # the temporary folder is gone


def test_a_measurement_times_ten_passes_by_default(
    random_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ticks = iter(range(1000))
    monkeypatch.setattr(bench.time, "perf_counter", lambda: float(next(ticks)))
    out = bench.measure_here(random_dir, [2])
    assert out["repeats"] == 10 and out["peak_batch_size"] == 2
    assert out["latency_ms"] == {"2": 1000.0}  # each pass one tick (a second) long
    assert next(ticks) == 20  # 10 passes, two readings each
