"""Data preparation in a child process (train/prepare.py): the same data as in-process, errors
and log records carried back, and a training process that never imports what preparing does."""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import torch

from foxhunt.artifacts.data_end import data_end
from foxhunt.config import RunConfig, demo
from foxhunt.data.sources.demo import write_demo_bars
from foxhunt.errors import DataError
from foxhunt.train.prepare import (
    exit_with_parent,
    prepare,
    prepare_in_child,
    rows_folder,
    spill_folder,
)


def _tiny() -> RunConfig:
    return demo().replace(
        model={"hidden": 8, "n_heads": 2, "encoder_length": 16, "horizon": 4,
               "variable_width": 4, "quantiles": (0.1, 0.5, 0.9)},
        train={"batch_size": 32, "validation_batch_size": 64, "epochs": 1, "warmup_steps": 1,
               "num_threads": 1},
    )  # fmt: skip


@pytest.mark.slow
def test_the_child_prepares_what_this_process_would(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bars = tmp_path / "ES.parquet"
    write_demo_bars(bars, n_bars=900, seed=1)
    cfg = _tiny()
    here = prepare(bars, cfg, choose_scale=True, baselines=True)
    caplog.set_level(logging.WARNING)  # as the CLI sets them: libraries WARNING, foxhunt INFO
    caplog.set_level(logging.INFO, logger="foxhunt")
    child = prepare_in_child(bars, cfg, choose_scale=True, baselines=True, scratch=tmp_path)
    assert child.cfg == here.cfg  # the same target scale chosen
    assert json.dumps(child.baselines, sort_keys=True) == json.dumps(here.baselines, sort_keys=True)
    for split in ("train", "val", "test"):
        a, b = getattr(here.data, split), getattr(child.data, split)
        assert len(a) == len(b) > 0
        rows = list(range(0, len(a), 7))
        x, y = a.batch(rows), b.batch(rows)
        for name in ("historical", "known", "static", "target"):
            assert torch.equal(getattr(x, name), getattr(y, name)), (split, name)
    assert child.data.fingerprint == here.data.fingerprint
    assert child.data.scaler == here.data.scaler
    assert child.ends == here.ends == data_end(here.data.closes)
    assert "closes" not in vars(child.data)  # decoded on first use, not when unpickled
    assert child.data.closes.equals(here.data.closes)
    assert not list(tmp_path.glob(".prepared*")), "the child's files are left behind"
    # the windows came back as the child's files, read from them (row_files.py), not as rows
    assert child.data.train.mapped_arrays == ("historical", "known", "static", "target")
    assert here.data.train.mapped_arrays == ()  # no folder given: held in memory
    # the child's log records reach this process's handlers, foxhunt's INFO lines included
    assert any(r.name == "foxhunt.data.scale.choice" for r in caplog.records)
    assert any(r.getMessage().startswith("data preparation: ") for r in caplog.records)


@pytest.mark.slow
def test_an_error_in_the_child_is_raised_here_with_its_message(tmp_path: Path) -> None:
    bars = tmp_path / "ES.parquet"
    write_demo_bars(bars, n_bars=60, seed=1)  # too few bars for warm-up + encoder + horizon
    with pytest.raises(DataError) as here:
        prepare(bars, _tiny(), choose_scale=True, baselines=True)
    with pytest.raises(DataError) as child:
        prepare_in_child(bars, _tiny(), choose_scale=True, baselines=True, scratch=tmp_path)
    assert str(child.value) == str(here.value)
    assert not list(tmp_path.glob(".prepared*"))


# Runs `foxhunt train` in a fresh interpreter and records what the training process has
# imported, and which polars readers and group-bys it has run, when training starts.
CLI = """
import json, sys
import polars as pl
import foxhunt.train.run as run
seen = {}
polars_calls = []
for owner, name in ((pl, "read_ipc"), (pl.DataFrame, "group_by")):
    def wrapped(*a, _f=getattr(owner, name), _n=name, **k):
        polars_calls.append(_n)
        return _f(*a, **k)
    setattr(owner, name, wrapped)
original = run.fit
def fit(*args, **kwargs):
    seen["modules"] = sorted(m for m in ("pandas", "scipy", "arch", "pandas_market_calendars")
                             if m in sys.modules)
    seen["polars"] = sorted(set(polars_calls))
    return original(*args, **kwargs)
run.fit = fit
from foxhunt.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "seen": seen, "dynamo": "torch._dynamo" in sys.modules}))
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_training_process_never_imports_data_preparation_or_the_compiler(
    tmp_path: Path,
) -> None:
    bars = tmp_path / "ES.parquet"
    write_demo_bars(bars, n_bars=900, seed=1)
    cfg = tmp_path / "tiny.toml"
    cfg.write_text(
        'preset = "demo"\n[model]\nhidden = 8\nn_heads = 2\nencoder_length = 16\nhorizon = 4\n'
        "variable_width = 4\n[train]\nbatch_size = 32\nepochs = 1\nwarmup_steps = 1\n"
    )
    argv = ["train", "--config", str(cfg), "--bars", str(bars), "--out", str(tmp_path / "run"),
            "--max-steps", "2"]  # fmt: skip
    r = subprocess.run([sys.executable, "-c", CLI, *argv], capture_output=True, text=True,
                       timeout=300, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["seen"]["modules"] == [], out
    # nor runs polars' IPC reader or group-by (their code pages: ~28 MB of RSS, docs/memory.md)
    assert out["seen"]["polars"] == [], out
    # nor, without checkpointing or recomputation (the defaults), torch's compiler: the
    # optimizer is foxhunt's AdamW (train/optimizer/adamw.py), not torch.optim's
    assert out["dynamo"] is False, out
    assert (tmp_path / "run" / "baselines.json").is_file()
    assert not list((tmp_path / "run").glob(".prepared*"))


def test_the_watchdog_deletes_the_childs_files_and_exits_once_the_parent_is_gone(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".prepared.1.pt"
    for p in (path, path.with_name(path.name + ".tmp")):
        p.write_bytes(b"x")
    rows_folder(path).mkdir()
    (rows_folder(path) / "train.historical.f32").write_bytes(b"x")
    codes: list[int] = []
    exit_with_parent(_pid_of_exited(), path, poll_s=0.0, exit=codes.append)
    assert codes == [1] and not list(tmp_path.iterdir())


def _pid_of_exited() -> int:
    """The pid of a process that has exited and been reaped."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


# A parent that prepares 20,000 demo bars in its child; the test kills it mid-preparation.
PARENT = """
import sys
from pathlib import Path
from foxhunt.config import demo
import foxhunt.train.prepare
from foxhunt.train.prepare import prepare_in_child
if __name__ == "__main__":
    foxhunt.train.prepare.START_METHOD = sys.argv[3]
    prepare_in_child(Path(sys.argv[1]), demo(), choose_scale=True, baselines=True,
                     scratch=Path(sys.argv[2]))
"""


def _preparing_child(parent: int, method: str) -> psutil.Process | None:
    """The child that prepares: spawned by ``parent``, or forked by the forkserver that
    ``parent`` started (a grandchild)."""
    for c in psutil.Process(parent).children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if method == "spawn" and "spawn_main" in " ".join(c.cmdline()):
                return c
            if method == "forkserver" and c.ppid() != parent:
                return c
    return None


def _running(p: psutil.Process) -> bool:
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_a_killed_parent_leaves_no_child_running_and_no_file(tmp_path: Path, method: str) -> None:
    bars = tmp_path / "ES.parquet"
    write_demo_bars(bars, n_bars=20_000, seed=1)
    scratch = tmp_path / "run"
    scratch.mkdir()
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    parent = subprocess.Popen([sys.executable, str(script), str(bars), str(scratch), method])
    try:
        deadline = time.monotonic() + 120
        while (child := _preparing_child(parent.pid, method)) is None:
            assert parent.poll() is None and time.monotonic() < deadline, "no child started"
            time.sleep(0.05)
    finally:
        parent.kill()  # SIGKILL: no handler, no finally block runs in the parent
        parent.wait()
    # the child notices and exits instead of finishing its work (a zombie counts as exited:
    # whoever adopted it may not reap it)
    deadline = time.monotonic() + 60
    while _running(child):
        assert time.monotonic() < deadline, "the orphaned child is still running"
        time.sleep(0.1)
    assert not list(scratch.iterdir()), list(scratch.iterdir())


def test_a_spill_folder_is_gone_on_leaving_and_what_was_mapped_from_it_stays_readable(
    tmp_path: Path,
) -> None:
    from foxhunt.data.windows.row_files import RowWriter

    with spill_folder(tmp_path) as folder:
        assert folder.parent == tmp_path and folder.is_dir() and not list(folder.iterdir())
        w = RowWriter(folder / "a.f32", "float32", 3)
        w.append(torch.arange(12, dtype=torch.float32).reshape(4, 3).numpy())
        mapped = w.close()
    assert not list(tmp_path.iterdir())
    assert mapped.tensor[3, 2] == 11 and mapped.windows(torch.tensor([1]).numpy(), 2)[0, 1, 0] == 6
    with pytest.raises(RuntimeError), spill_folder(tmp_path) as folder:
        (folder / "x").write_bytes(b"x")
        raise RuntimeError
    assert not list(tmp_path.iterdir())
