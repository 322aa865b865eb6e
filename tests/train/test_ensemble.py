"""``foxhunt train --ensemble N`` end to end: the members, the one model they load as, the
commands that take it and the ones that refuse it, resume, and N = 1.

A tiny config (hidden 16, encoder 16, horizon 4, 3 steps per member) on 1,200 demo bars.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.ensemble import EnsembleTFT
from foxhunt.artifacts.rundir import RunDir, load_model_dir
from foxhunt.cli import main
from foxhunt.config import demo
from foxhunt.data.pipeline import evaluation_data
from foxhunt.infer.quantiles import quantile_map, tft_quantiles
from foxhunt.quantize.model import load_inference_model
from foxhunt.train.reporting.report import write_report
from hand_weights import input_dependent_head

CPU = torch.device("cpu")


def _tiny_config(path: Path) -> Path:
    cfg = demo().replace(
        model={
            "hidden": 16,
            "n_heads": 2,
            "encoder_length": 16,
            "horizon": 4,
            "quantiles": (0.02, 0.1, 0.5, 0.9, 0.98),
            "variable_width": 4,
        },
        train={
            "batch_size": 64,
            "validation_batch_size": 128,
            "epochs": 1,
            "max_steps": 3,
            "warmup_steps": 2,
            "num_threads": 1,
        },
        data={"stride": 4},
    )
    cfg.save(path)
    return path


@pytest.fixture(scope="module")
def ens(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("ensemble")
    bars = root / "ES.parquet"
    assert main(["data", "demo", "--bars", "1200", "--seed", "3", "--out", str(bars)]) == 0
    cfg = _tiny_config(root / "tiny.json")
    run = root / "ens"
    argv = ["train", "--config", str(cfg), "--bars", str(bars), "--out", str(run)]
    import foxhunt.train.run as run_module

    children: list[Path] = []

    def counted(bars: Path, *args: Any, **kwargs: Any) -> Any:
        children.append(bars)
        return prepare_in_child(bars, *args, **kwargs)

    prepare_in_child = run_module.prepare_in_child
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(run_module, "prepare_in_child", counted)
        assert main([*argv, "--ensemble", "2"]) == 0
    return {"root": root, "bars": bars, "cfg": cfg, "run": run, "children": children}


def _final(run: Path) -> dict[str, torch.Tensor]:
    path = ckpt.final_weights(run / "checkpoints")
    assert path is not None
    return ckpt.load_weights(path)[0]


@pytest.mark.slow
@pytest.mark.subprocess
def test_members_are_runs_with_consecutive_seeds_and_run_json_reports_them(ens) -> None:
    run = ens["run"]
    info = json.loads((run / "run.json").read_text())
    assert info["stop_reason"] == "finished"
    assert [m["seed"] for m in info["members"]] == [0, 1]
    assert [m["dir"] for m in info["members"]] == ["members/0", "members/1"]
    assert all(m["seconds"] > 0 and m["peak_rss_bytes"] > 0 for m in info["members"])
    assert info["peak_rss_bytes"] == max(m["peak_rss_bytes"] for m in info["members"])
    for k in (0, 1):
        cfg = json.loads((run / "members" / str(k) / "config.json").read_text())
        assert cfg["train"]["seed"] == k
        assert (run / "members" / str(k) / "calibration.json").is_file()
    assert not (run / "calibration.json").exists()  # each member applies its own
    w0, w1 = _final(run / "members/0"), _final(run / "members/1")
    assert any(not torch.equal(w0[k], w1[k]) for k in w0)
    md = write_report(RunDir(run)).read_text()  # what evaluate refreshes
    assert "| ensemble | 2 members (seeds 0, 1), stopped: finished" in md
    assert "run incomplete" not in md


@pytest.mark.slow
@pytest.mark.subprocess
def test_ensemble_quantiles_are_the_mean_of_the_members(ens, tmp_path: Path) -> None:
    run = tmp_path / "ens"
    shutil.copytree(ens["run"], run)
    for k in (0, 1):  # 3 steps may serve each member's start: a head by hand that differs
        input_dependent_head(run / "members" / str(k), seed=k)
    loaded = load_inference_model(run, CPU)
    assert isinstance(loaded.model, EnsembleTFT)
    windows, _, _ = evaluation_data(
        ens["bars"], loaded.config, loaded.spec, loaded.scaler, loaded.fingerprint,
        loaded.instruments,
    )  # fmt: skip
    batch = windows.batch(list(range(min(64, len(windows)))))
    got = tft_quantiles(loaded.model, batch, quantile_map(loaded), device=CPU)
    each = []
    for k in (0, 1):
        member = load_model_dir(run / "members" / str(k), CPU)
        qmap = quantile_map(member)
        assert qmap.calibration is not None
        each.append(tft_quantiles(member.model, batch, qmap, device=CPU))
    assert not torch.allclose(each[0], each[1])  # the mean is not one member's
    torch.testing.assert_close(got, (each[0] + each[1]) / 2, rtol=1e-12, atol=1e-15)


@pytest.mark.slow
@pytest.mark.subprocess
def test_predict_and_evaluate_take_the_ensemble(ens, tmp_path: Path) -> None:
    frames = []
    for name, model in (
        ("e", ens["run"]),
        *((f"m{k}", ens["run"] / f"members/{k}") for k in (0, 1)),
    ):
        out = tmp_path / f"{name}.parquet"
        argv = ["predict", "--model", str(model), "--bars", str(ens["bars"]), "--out", str(out)]
        assert main(argv) == 0
        frames.append(pl.read_parquet(out))
    cols = [c for c in frames[0].columns if c.startswith("return_q")]
    assert len(cols) == 5
    e, m0, m1 = (f.select(cols).to_numpy() for f in frames)
    np.testing.assert_allclose(e, (m0 + m1) / 2, rtol=1e-9, atol=1e-12)

    out = tmp_path / "evaluation.json"
    argv = ["evaluate", "--model", str(ens["run"]), "--bars", str(ens["bars"]), "--out", str(out)]
    assert main([*argv, "--json"]) == 0
    result = json.loads(out.read_text())
    assert result["n_windows"] > 0 and result["split"].startswith("test split")
    assert np.isfinite(result["scores"]["tft"]["mean_pinball"])
    # where the training bars end travels to the ensemble (evaluate --windows new of other bars)
    member_0 = ens["run"] / "members/0"
    info, member = (json.loads((d / "run.json").read_text()) for d in (ens["run"], member_0))
    assert info["data_end"] == member["data_end"] and list(member["data_end"]) == ["ES"]
    assert info["data_start"] == member["data_start"]
    assert member["data_start"]["ES"] < member["data_end"]["ES"]


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("command", ["export", "quantize"])
def test_single_model_commands_refuse_an_ensemble(ens, command, tmp_path, capsys) -> None:
    capsys.readouterr()
    out = tmp_path / ("model.onnx" if command == "export" else "int8")
    argv = [command, "--model", str(ens["run"]), "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "seed ensemble" in err and "members/0" in err


@pytest.mark.slow
@pytest.mark.subprocess
def test_resume_trains_only_the_unfinished_member(ens, tmp_path: Path, capsys) -> None:
    run = tmp_path / "ens"
    shutil.copytree(ens["run"], run, ignore=shutil.ignore_patterns(".lock"))
    shutil.rmtree(run / "members" / "1")  # as if killed before member 1's first epoch
    info = json.loads((run / "run.json").read_text())
    info.update(stop_reason="running", members=info["members"][:1])
    (run / "run.json").write_text(json.dumps(info))
    before = (run / "members/0/checkpoints").stat().st_mtime_ns, _final(run / "members/0")

    argv = ["evaluate", "--model", str(run), "--bars", str(ens["bars"]), "--out", "x.json"]
    assert main(argv) == 2  # an unfinished ensemble is not a model
    assert "has not finished" in capsys.readouterr().err

    assert main(["train", "--resume", str(run)]) == 0
    assert (run / "members/0/checkpoints").stat().st_mtime_ns == before[0]
    w1, want = _final(run / "members/1"), _final(ens["run"] / "members/1")
    assert all(torch.equal(w1[k], want[k]) for k in want)  # the same seed, the same member
    info = json.loads((run / "run.json").read_text())
    assert info["stop_reason"] == "finished" and [m["seed"] for m in info["members"]] == [0, 1]


@pytest.mark.slow
@pytest.mark.subprocess
def test_each_member_prepares_its_data_in_a_child(ens) -> None:
    # as one run does: the training process never holds the preparation's arenas, which the
    # next member would otherwise start on top of (peak RSS 2.17 GB, then 2.68 GB, on the daily
    # futures before; docs/memory.md)
    assert ens["children"] == [ens["bars"], ens["bars"]]


@pytest.mark.slow
@pytest.mark.subprocess
def test_ensemble_of_one_is_a_plain_run(ens, tmp_path: Path) -> None:
    run = tmp_path / "one"
    argv = ["train", "--config", str(ens["cfg"]), "--bars", str(ens["bars"]), "--out", str(run)]
    assert main([*argv, "--ensemble", "1"]) == 0
    assert not (run / "ensemble.json").exists() and not (run / "members").exists()
    w, member0 = _final(run), _final(ens["run"] / "members/0")  # same config, seed 0
    assert all(torch.equal(w[k], member0[k]) for k in member0)


@pytest.mark.slow
@pytest.mark.subprocess
def test_api_fits_and_streams_an_ensemble_as_the_mean_of_its_members(ens, tmp_path) -> None:
    from foxhunt.api import TFTForecaster
    from foxhunt.config import RunConfig

    model = TFTForecaster(RunConfig.load(ens["cfg"]), run_dir=tmp_path / "api")
    model.fit(ens["bars"], ensemble=2)
    for k in (0, 1):  # the API trains the members the CLI trains
        got, want = _final(tmp_path / f"api/members/{k}"), _final(ens["run"] / f"members/{k}")
        assert all(torch.equal(got[n], want[n]) for n in want)
    bars = pl.read_parquet(ens["bars"])
    members = (TFTForecaster.load(ens["run"] / f"members/{k}") for k in (0, 1))
    e, m0, m1 = (m.stream().update(bars) for m in (model, *members))
    cols = [c for c in e.columns if c.startswith("return_q")]
    assert e.height == 4 and len(cols) == 5
    got, a, b = (f.select(cols).to_numpy() for f in (e, m0, m1))
    np.testing.assert_allclose(got, (a + b) / 2, rtol=1e-9, atol=1e-12)
