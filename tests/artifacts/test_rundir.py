from __future__ import annotations

import json

import pytest
import torch

from foxhunt import runtime
from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.rundir import (
    RunDir,
    features_record,
    load_model_dir,
    model_weights,
    trained_symbols,
)
from foxhunt.config import demo
from foxhunt.data.features.table import feature_spec
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.errors import ModelDirError
from foxhunt.model.tft import TFT
from foxhunt.runtime import truncate_jsonl


def _model_dir(tmp_path, *, final: bool = True) -> tuple[RunDir, TFT]:
    cfg = demo().replace(
        model={"hidden": 8, "n_heads": 2, "encoder_length": 4, "horizon": 2, "variable_width": 2}
    )
    run = RunDir(tmp_path / "run")
    run.create()
    cfg.save(run.config)
    spec = feature_spec(2)
    scaler = ScalerParams(
        spec.inputs, (0.0,) * len(spec.inputs), (1.0,) * len(spec.inputs), (1e-3, 2e-3)
    )
    runtime.atomic_write_json(run.features, features_record(spec, scaler, "abc"))
    torch.manual_seed(0)
    model = TFT(cfg.model)
    ckpt.save_weights(ckpt.epoch_weights_path(run.checkpoints, 1), model.state_dict(), {"epoch": 1})
    if final:
        ckpt.save_weights(
            ckpt.final_weights_path(run.checkpoints, 1), model.state_dict(), {"epoch": 1}
        )
    return run, model


def test_load_model_dir_reads_weights_without_code(tmp_path) -> None:
    run, model = _model_dir(tmp_path)
    loaded = load_model_dir(run.root)
    assert not loaded.model.training and loaded.fingerprint == "abc"
    assert loaded.weights.name == "tft_final_epoch1.safetensors"
    assert loaded.scaler.target_std == (1e-3, 2e-3) and loaded.spec == feature_spec(2)
    for k, v in model.state_dict().items():
        assert torch.equal(loaded.model.state_dict()[k], v)


def test_weights_choice_final_then_best_then_latest(tmp_path) -> None:
    run, model = _model_dir(tmp_path, final=False)
    assert model_weights(run).name == "tft_epoch_1.safetensors"
    ckpt.save_weights(ckpt.epoch_weights_path(run.checkpoints, 2), model.state_dict(), {"epoch": 2})
    assert model_weights(run).name == "tft_epoch_2.safetensors"
    ckpt.mark_best(run.checkpoints, 1, 0.5)
    assert model_weights(run).name == "tft_epoch_1.safetensors"
    ckpt.save_weights(ckpt.final_weights_path(run.checkpoints, 2), model.state_dict(), {"epoch": 2})
    assert model_weights(run).name == "tft_final_epoch2.safetensors"


def test_weights_that_do_not_fit_the_config(tmp_path) -> None:
    run, _ = _model_dir(tmp_path)
    cfg = json.loads(run.config.read_text())
    cfg["model"]["hidden"] = 12
    run.config.write_text(json.dumps(cfg))
    with pytest.raises(ModelDirError, match="do not fit config.json"):
        load_model_dir(run.root)


def test_feature_count_that_does_not_fit_the_config(tmp_path) -> None:
    run, _ = _model_dir(tmp_path)
    cfg = json.loads(run.config.read_text())
    cfg["model"]["n_historical"] = 7
    run.config.write_text(json.dumps(cfg))
    with pytest.raises(ModelDirError, match="config.json says"):
        load_model_dir(run.root)


def test_missing_or_broken_description_files(tmp_path) -> None:
    run, _ = _model_dir(tmp_path)
    run.features.write_text("[1, 2")
    with pytest.raises(ModelDirError, match="features.json is corrupt"):
        load_model_dir(run.root)
    run.config.write_text('{"model": {"hiden": 3}}')
    with pytest.raises(ModelDirError, match="invalid config"):
        load_model_dir(run.root)
    run.config.unlink()
    with pytest.raises(ModelDirError, match="not a run directory"):
        load_model_dir(run.root)


def test_truncate_jsonl_drops_discarded_and_torn_lines(tmp_path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1}\n{"step": 5}\n{"kind": "warning"}\n{"step": 3}\n{"step": 9, "lo')
    dropped = truncate_jsonl(path, lambda r: r.get("step") is None or r["step"] <= 3)
    assert dropped == 2
    assert [json.loads(x) for x in path.read_text().splitlines()] == [
        {"step": 1},
        {"kind": "warning"},
        {"step": 3},
    ]


def test_create_removes_stale_tmp(tmp_path) -> None:
    run = RunDir(tmp_path / "r")
    run.checkpoints.mkdir(parents=True)
    (run.checkpoints / "tft_epoch_2.safetensors.tmp").write_bytes(b"half")
    run.create()
    assert not list(run.checkpoints.glob("*.tmp"))


def test_evaluations_go_beside_never_over(tmp_path) -> None:
    run = RunDir(tmp_path)
    assert run.evaluations() == [] and run.next_evaluation() == run.evaluation
    run.evaluation.write_text("{}")
    assert run.next_evaluation() == tmp_path / "evaluation-2.json"
    for n in (2, 10):
        (tmp_path / f"evaluation-{n}.json").write_text("{}")
    (tmp_path / "evaluation-old.json").write_text("{}")  # not ours: neither listed nor counted
    (tmp_path / "evaluation-1.json").write_text("{}")  # evaluation.json is number 1
    assert [p.name for p in run.evaluations()] == [
        "evaluation.json",
        "evaluation-2.json",
        "evaluation-10.json",
    ]
    assert run.next_evaluation() == tmp_path / "evaluation-11.json"


def test_clear_deletes_the_run_and_nothing_else(tmp_path) -> None:
    run, _ = _model_dir(tmp_path)
    for name in ("metrics.jsonl", "memory.jsonl", "memory.rank1.jsonl", "report.md"):
        (run.root / name).write_text("x")
    run.png("loss_curves").write_bytes(b"png")
    (run.root / "evaluation-2.json").write_text("{}")
    (run.root / "bars.parquet").write_bytes(b"the user's")
    (run.root / "notes.png").write_bytes(b"the user's")
    (run.root / ".lock").write_text("")
    assert run.config in run.model_files() and ckpt.final_weights(run.checkpoints) in (
        run.model_files()
    )
    run.clear()
    assert sorted(p.name for p in run.root.iterdir()) == [".lock", "bars.parquet", "notes.png"]
    assert run.model_files() == []


def test_trained_symbols_from_run_json_then_instruments(tmp_path) -> None:
    run = RunDir(tmp_path)
    assert trained_symbols(run) is None
    runtime.atomic_write_json(run.instruments, {"NQ": {}, "ES": {}})
    assert trained_symbols(run) == ["ES", "NQ"]
    runtime.atomic_write_json(run.run_info, {"symbols": ["ES"]})
    assert trained_symbols(run) == ["ES"]


def test_create_removes_the_window_files_a_killed_run_left(tmp_path) -> None:  # noqa: ANN001
    import subprocess

    from foxhunt.data.windows.row_files import host_tag

    p = subprocess.Popen(["true"])
    p.wait()
    left = tmp_path / "run" / f".rows.{host_tag()}.{p.pid}"
    left.mkdir(parents=True)
    (left / "train.historical.f32").write_bytes(b"x" * 100)
    RunDir(tmp_path / "run").create()
    assert not left.exists()
