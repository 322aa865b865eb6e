from __future__ import annotations

import json

import pytest
import torch

from foxhunt import runtime
from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.rundir import RunDir
from foxhunt.config import demo
from foxhunt.memory.log import MemoryLog
from foxhunt.train.reporting.report import write_report


def _run(tmp_path) -> RunDir:
    run = RunDir(tmp_path / "run")
    run.create()
    cfg = demo()
    cfg.save(run.config)
    runtime.atomic_write_json(
        run.run_info,
        {
            "bars": "b.parquet",
            "fingerprint": "f" * 64,
            "windows": {"train": 10, "val": 5, "test": 5},
            "parameters": 1234,
            "stop_reason": "epochs",
            "seconds": 12.0,
        },
    )
    lines = [
        {"kind": "step", "epoch": 1, "step": s, "loss": 1.0 / s, "lr": 1e-3} for s in range(1, 6)
    ]
    lines += [
        {
            "kind": "epoch",
            "epoch": 1,
            "step": 5,
            "train_loss": 0.5,
            "val_loss": 0.4,
            "best": True,
            "seconds": 3.0,
        }
    ]
    lines += [{"kind": "oom", "epoch": 1, "step": 2, "message": "out of memory at step 2 ..."}]
    run.metrics.write_text("".join(json.dumps(x) + "\n" for x in lines))
    mem = MemoryLog(run.memory, torch.device("cpu"))
    for point in ("run_start", "epoch_start", "train_step", "epoch_end", "run_end"):
        mem.snapshot(point, epoch=1, step=1)
    q = list(cfg.model.quantiles)
    fan = {
        "symbol": "ES",
        "origin": "2024-01-02T10:00:00+00:00",
        "encoder_length": 3,
        "quantiles": q,
        "times": [f"2024-01-02T10:0{i}:00+00:00" for i in range(5)],
        "close": [100.0, 101.0, 100.5, 100.7, 100.2],
        "price_quantiles": [
            [100 + (k - 4) * 0.1 * (h + 1) for k in range(len(q))] for h in range(2)
        ],
    }
    importance = {
        "historical": {"obs__a": 0.7, "obs__b": 0.3},
        "known": {"known__c": 1.0},
        "static": {"static__d": 1.0},
        "n_windows": 5,
    }
    runtime.atomic_write_json(
        run.interpretation, {"fan_chart": fan, "variable_importance": importance}
    )
    ckpt.mark_best(run.checkpoints, 1, 0.4)
    return run


@pytest.mark.slow
def test_report_has_every_section_and_plot(tmp_path) -> None:
    run = _run(tmp_path)
    text = write_report(run).read_text()
    for png in ("loss_curves", "fan_chart", "variable_importance", "memory_timeline"):
        assert run.png(png).stat().st_size > 1000, png
        assert f"({png}.png)" in text
    assert "epoch 1, validation loss 0.4000" in text and "1,234 parameters" in text
    assert "out of memory at step 2" in text
    assert "Not run yet" in text and "Estimated memory per training step" in text
    assert not list(run.root.glob("*.tmp"))


@pytest.mark.slow
def test_report_shows_the_evaluation(tmp_path) -> None:
    run = _run(tmp_path)
    scores = {
        "mean_pinball": 2e-4,
        "q_risk": {"P50": 0.9, "P90": 0.5},
        "coverage": {"10-90": 0.8, "2-98": 0.95},
    }
    runtime.atomic_write_json(
        run.evaluation,
        {
            "bars": "t.parquet",
            "split": "all windows",
            "n_windows": 7,
            "scores": {"tft": scores, "zero": scores, "empirical": scores},
            "tft_beats": {"empirical": False, "zero": True},
        },
    )
    text = write_report(run).read_text()
    assert "| TFT | 2.000 | 0.9000 | 0.5000 | 80.0 % | 95.0 % |" in text
    assert "zero: yes" in text


def test_report_of_a_run_that_has_barely_started(tmp_path) -> None:
    run = RunDir(tmp_path / "run")
    run.create()
    demo().save(run.config)
    text = write_report(run).read_text()
    assert "none yet" in text and "none (run incomplete)" in text


@pytest.mark.slow
def test_a_second_report_draws_again_only_the_plots_whose_source_changed(tmp_path) -> None:
    import os

    run = _run(tmp_path)
    write_report(run)
    pngs = ("loss_curves", "fan_chart", "variable_importance", "memory_timeline")
    for name in pngs:  # as if drawn a minute ago
        os.utime(run.png(name), ns=(0, run.png(name).stat().st_mtime_ns - 60 * 10**9))
    # the metrics change after their plot was drawn; the other sources are older than theirs
    for src in (run.interpretation, run.memory):
        os.utime(src, ns=(0, src.stat().st_mtime_ns - 120 * 10**9))
    before = {name: run.png(name).stat().st_mtime_ns for name in pngs}
    text = write_report(run).read_text()
    after = {name: run.png(name).stat().st_mtime_ns for name in pngs}
    assert after["loss_curves"] > before["loss_curves"]  # drawn again
    for name in ("fan_chart", "variable_importance", "memory_timeline"):
        assert after[name] == before[name], name  # kept
        assert f"({name}.png)" in text  # and still shown
    run.png("fan_chart").unlink()  # a missing picture is drawn again
    write_report(run)
    assert run.png("fan_chart").stat().st_size > 1000
