from __future__ import annotations

import json

import pytest
import torch

from foxhunt.cli import main
from foxhunt.commands.memory import BUDGETS, build_report, parse_members
from foxhunt.config import RunConfig, TrainConfig, tft_225
from foxhunt.errors import InputError
from foxhunt.memory.estimate import estimate_saved_activations
from foxhunt.model import TFT
from memory_helpers import TINY


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, dict]:
    rc = main(argv)
    return rc, json.loads(capsys.readouterr().out)


def test_json_estimates_and_budgets_at_tft225(capsys: pytest.CaptureFixture[str]) -> None:
    rc, report = _json(capsys, ["memory", "--preset", "tft-225", "--batch-size", "32", "--json"])
    assert rc == 0 and report["pass"] is True
    comps = report["components"]
    n_params = sum(p.numel() for p in TFT(tft_225().model).parameters())
    assert comps["parameters"]["estimated_bytes"] == 4 * n_params
    assert all(c["measured_bytes"] is None for c in comps.values())
    assert {"saved.lstm_encoder", "saved.other", "training_peak", "inference_peak"} <= set(comps)
    for name, limit in BUDGETS.items():
        b = report["budgets"][name]
        assert b["limit"] == limit and b["pass"] is True and b["source"] == "estimated"
        assert b["value"] == comps[name]["estimated_bytes"] < limit


def test_failing_budget_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    rc, report = _json(capsys, ["memory", "--preset", "tft-225", "--batch-size", "2048", "--json"])
    assert rc == 1 and report["budgets"]["training_peak"]["pass"] is False
    assert report["pass"] is False


def test_ensemble_defaults_and_overrides(capsys: pytest.CaptureFixture[str]) -> None:
    rc, report = _json(capsys, ["memory", "--preset", "tft-225", "--ensemble", "--json"])
    e = report["ensemble"]
    assert rc == 0 and e["pass"] is True and e["device_memory"] == 4 * 10**9
    assert e["members"]["DQN"] == 6 * 10**6 and e["members"]["Mamba-2"] == 164 * 10**6
    assert e["free"] == e["device_memory"] - e["total"] > e["min_free"]
    rc, report = _json(
        capsys,
        ["memory", "--preset", "tft-225", "--ensemble", "--member", "Big=3GB", "--json"],
    )
    assert rc == 1 and set(report["ensemble"]["members"]) == {"TFT (training peak)", "Big"}


def test_bad_member_and_device_size_are_input_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError, match="NAME=SIZE"):
        parse_members(["PPO"])
    assert main(["memory", "--ensemble", "--device-memory", "lots"]) == 2
    assert "not a byte size" in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU resolves auto for itself")
def test_device_cuda_estimates_without_a_gpu(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--device cuda`` estimates a CUDA run on a machine without one (auto -> fp32): the same
    activations, no CPU process terms, CUDA's library buffers as a line of their own and inside
    the peaks. Before the flag existed ``--device cuda`` was read as ``--device-memory cuda``."""
    from foxhunt.memory.cuda_libraries import CUBLAS_ENV, cuda_library_bytes

    monkeypatch.delenv(CUBLAS_ENV, raising=False)
    argv = ["memory", "--preset", "tft-225", "--batch-size", "32", "--json"]
    _, cpu = _json(capsys, argv)
    rc, cuda = _json(capsys, [*argv, "--device", "cuda"])
    assert rc == 0 and cuda["config"]["device"] == "cuda" and cuda["config"]["precision"] == "fp32"
    libs = cuda_library_bytes(tft_225().model)
    comps = {k: v["estimated_bytes"] for k, v in cuda["components"].items()}
    assert comps["cuda_libraries"] == libs == 2 * 33_554_432 + 6_488_064
    assert "cuda_libraries" not in cpu["components"] and "process_peak_rss" not in comps
    assert comps["parameters"] == cpu["components"]["parameters"]["estimated_bytes"]
    assert comps["training_peak"] > libs + comps["parameters"] + comps["optimizer"]
    assert main(["memory", "--device", "cuda", "--measure"]) == 2
    assert "--measure runs on CPU" in capsys.readouterr().err
    assert main(["memory", "--device", "cuda"]) == 0
    assert "max_memory_allocated" in capsys.readouterr().out


def test_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "--preset", "demo", "--batch-size", "8"]) == 0
    out = capsys.readouterr().out
    assert "saved: lstm_encoder" in out and "PASS" in out and "training_peak" in out


@pytest.mark.slow
@pytest.mark.subprocess
def test_measure_tiny_config_in_subprocesses() -> None:
    # fp32: saved bytes are exact there (bf16's are approximate); recompute off, the default.
    train = TrainConfig(batch_size=4, num_threads=1, precision="fp32")
    cfg = RunConfig(model=TINY, train=train, preset="tiny")
    report = build_report(cfg, measure=True, ensemble=False, device_memory="4GB", members=None)
    comps = report["components"]
    expected = estimate_saved_activations(TINY, 4, recompute=False)
    for block, value in expected.items():
        assert comps[f"saved.{block}"]["measured_bytes"] == value
        assert comps[f"saved.{block}"]["estimated_bytes"] == value
    for name in ("parameters", "gradients", "optimizer", "batch"):
        assert comps[name]["measured_bytes"] == comps[name]["estimated_bytes"]
    assert comps["training_peak"]["measured_bytes"] > 0
    assert comps["process_peak_rss"]["measured_bytes"] > comps["training_peak"]["measured_bytes"]
    assert report["budgets"]["training_peak"]["source"] == "measured"
    assert all("foxhunt.commands.measure" in c for c in report["measurement"]["commands"])
