"""Hostile and careless use of run directories (issue 17): racing writers, --overwrite, Ctrl-C
twice, evaluate beside a training run. Real ``foxhunt`` processes where processes matter.

Kill -9 mid-epoch and one Ctrl-C, each followed by ``--resume``, are in test_cli_smoke.py
(``test_signal_mid_epoch_then_resume``, which also checks the killed run's lock is not stale);
truncated safetensors and a malicious optimizer pickle in tests/artifacts/test_checkpoints.py.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from demo_run import DemoRun
from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.lock import run_lock
from foxhunt.cli import main
from foxhunt.data.sources.demo import write_demo_bars

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


def _foxhunt(*argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "foxhunt", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )


@pytest.fixture(scope="module")
def bars(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "ES.parquet"
    write_demo_bars(path, n_bars=1500, seed=0)
    return path


def _records(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_two_trainings_on_one_out_one_runs_the_other_exits_2(bars: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    argv = ("train", "--preset", "demo", "--epochs", "2", "--max-steps", "3", "--num-threads", "1")
    procs = [_foxhunt(*argv, "--bars", str(bars), "--out", str(run)) for _ in range(2)]
    errs = [p.communicate(timeout=300)[1] for p in procs]
    codes = [p.returncode for p in procs]
    print(*errs, sep="\n---\n")  # whole, under "Captured stdout" when this fails
    assert sorted(codes) == [0, 2], (codes, errs)
    winner, loser = (0, 1) if codes[0] == 0 else (1, 0)
    err = errs[loser].strip()
    assert err.startswith("foxhunt: error:") and len(err.splitlines()) == 1, err
    assert f"pid {procs[winner].pid} " in err and "foxhunt train --out" in err, err

    # The finished run is the winner's alone, whole and consistent.
    info = json.loads((run / "run.json").read_text())
    assert info["stop_reason"] == "max_steps" and info["steps"] == 3 and info["epochs"] == 1
    epochs = [r for r in _records(run) if r.get("kind") == "epoch"]
    assert [r["epoch"] for r in epochs] == [1] and epochs[0]["step"] == 3
    steps = [r["step"] for r in _records(run) if r.get("step") is not None]
    assert steps == sorted(set(steps)) and max(steps) == 3
    final = ckpt.final_weights(run / "checkpoints")
    assert final is not None and final.name == "tft_final_epoch1.safetensors"
    ckpt.load_weights(final)  # whole: the checksum matches
    assert ckpt.complete_epochs(run / "checkpoints") == [1]
    assert "| progress | 1 epochs · 3 steps · stopped: max_steps |" in (
        (run / "report.md").read_text()
    )
    assert not list(run.rglob("*.tmp"))


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_locked_run_is_refused_before_anything_is_touched(
    demo_run: DemoRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(demo_run.run, run)
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file() and p.name != ".lock"}
    out = tmp_path / "forecast.parquet"
    with run_lock(run, f"foxhunt train --resume {run}"):
        capsys.readouterr()
        for argv in (
            ["train", "--resume", str(run)],
            ["train", "--bars", str(demo_run.bars), "--out", str(run), "--overwrite"],
            ["evaluate", "--model", str(run), "--bars", str(demo_run.bars)],
        ):
            assert main(argv) == 2, argv
            err = capsys.readouterr().err.strip()
            assert len(err.splitlines()) == 1 and f"pid {os.getpid()} " in err, err
            assert f"foxhunt train --resume {run}" in err
        # Readers work alongside a writer.
        assert (
            main(["predict", "--model", str(run), "--bars", str(demo_run.bars), "--out", str(out)])
            == 0
        )
        ev = tmp_path / "ev.json"
        assert (
            main(["evaluate", "--model", str(run), "--bars", str(demo_run.bars), "--out", str(ev)])
            == 0
        )
    assert out.is_file() and json.loads(ev.read_text())["n_windows"] > 0
    after = {p: p.read_bytes() for p in run.rglob("*") if p.is_file() and p.name != ".lock"}
    assert after == before  # not one byte of the run changed, no evaluation added


@pytest.mark.slow
@pytest.mark.subprocess
def test_overwrite_replaces_a_finished_run(
    demo_run: DemoRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(demo_run.run, run)
    (run / "evaluation-2.json").write_text("{}")
    (run / "my_notes.txt").write_text("mine")
    old = json.loads((run / "run.json").read_text())
    cfg = str(run / "config.json")
    train = ["train", "--config", cfg, "--bars", str(demo_run.bars), "--out", str(run)]
    capsys.readouterr()
    assert main(train) == 2
    err = capsys.readouterr().err
    assert "already holds a finished run" in err and "--overwrite" in err
    assert main([*train, "--overwrite", "--resume", str(run)]) == 2
    assert "cannot be used with --resume" in capsys.readouterr().err

    short = tmp_path / "short.parquet"  # bad data: the old run must survive the refusal
    write_demo_bars(short, n_bars=215)
    bad = ["train", "--config", cfg, "--bars", str(short), "--out", str(run), "--overwrite"]
    assert main(bad) == 2
    assert json.loads((run / "run.json").read_text()) == old

    assert main([*train, "--overwrite", "--max-steps", "2"]) == 0
    info = json.loads((run / "run.json").read_text())
    assert info["steps"] == 2 and info["epochs"] == 1 and info["stop_reason"] == "max_steps"
    assert ckpt.complete_epochs(run / "checkpoints") == [1]
    assert ckpt.final_weights(run / "checkpoints").name == "tft_final_epoch1.safetensors"
    assert [r["epoch"] for r in _records(run) if r.get("kind") == "epoch"] == [1]
    assert not list(run.glob("evaluation*.json"))
    assert (run / "my_notes.txt").read_text() == "mine"  # only the run's own files went


@pytest.mark.slow
@pytest.mark.subprocess
def test_unfinished_run_says_resume(
    demo_run: DemoRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(demo_run.run, run)
    for p in (run / "checkpoints").glob("tft_final_*"):
        p.unlink()
    capsys.readouterr()
    argv = ["train", "--preset", "demo", "--bars", str(demo_run.bars), "--out", str(run)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"--resume {run}" in err and "--overwrite" in err


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_failed_fresh_run_leaves_no_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    short = tmp_path / "short.parquet"
    write_demo_bars(short, n_bars=215)
    run = tmp_path / "new" / "run"
    assert main(["train", "--preset", "demo", "--bars", str(short), "--out", str(run)]) == 2
    assert not run.exists()


@pytest.mark.slow
@pytest.mark.subprocess
def test_ctrl_c_twice_aborts_at_once_and_resumes(bars: Path, tmp_path: Path) -> None:
    """Two SIGINTs in a row (the second aborts wherever training is, a write included, if the
    first has not stopped it yet): exit 130, complete epochs intact, no temp file, and
    --resume finishes the run."""
    run = tmp_path / "run"
    proc = _foxhunt(
        "train", "--preset", "demo", "--batch-size", "8", "--epochs", "3",
        "--num-threads", "1", "--bars", str(bars), "--out", str(run),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not (run / "checkpoints" / "tft_epoch_1.json").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
            time.sleep(0.05)
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, err
    assert "foxhunt: interrupted" in err
    done = ckpt.complete_epochs(run / "checkpoints")
    assert done and done[-1] < 3 and not list(run.rglob("*.tmp"))
    assert main(["train", "--resume", str(run)]) == 0
    assert ckpt.complete_epochs(run / "checkpoints") == [1, 2, 3]
    steps = [r["step"] for r in _records(run) if r.get("kind") == "step"]
    assert steps == sorted(set(steps))
