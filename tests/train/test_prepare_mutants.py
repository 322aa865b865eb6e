"""The preparing child's own functions run in this process (train/prepare.py): what ``_child``
saves, how ``_child_setup`` routes log records and starts the watchdog, the relay, and the
watchdog's clean-up when a file or folder is missing or a rename fails.

``prepare_in_child`` runs these in a spawned child, where mutation testing cannot see them
(``make mutate``: 240 of ``train.prepare``'s 279 mutants had no test); here they are called
directly. Bars are written on first use, never at import (docs/testing.md: no polars work at a
test module's import).
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

import foxhunt.train.prepare as prep
from foxhunt.config import RunConfig, demo
from foxhunt.data.sources.demo import write_demo_bars
from foxhunt.errors import DataError
from foxhunt.train.prepare import exit_with_parent, prepare, rows_folder

from .test_prepare import _pid_of_exited


def _tiny(**train: Any) -> RunConfig:
    return demo().replace(
        model={"hidden": 8, "n_heads": 2, "encoder_length": 16, "horizon": 4,
               "variable_width": 4, "quantiles": (0.1, 0.5, 0.9)},
        train={"batch_size": 32, "validation_batch_size": 64, "epochs": 1, "warmup_steps": 1,
               "num_threads": 1, **train},
    )  # fmt: skip


@pytest.fixture
def bars(tmp_path: Path) -> Path:
    path = tmp_path / "ES.parquet"
    write_demo_bars(path, n_bars=900, seed=1)
    return path


def test_rows_folder_is_the_files_name_with_rows_for_its_suffix() -> None:
    assert rows_folder(Path("run/.prepared.7.pt")) == Path("run/.prepared.7.rows")


def test_the_child_saves_what_prepare_returns_and_leaves_no_temporary_file(
    tmp_path: Path, bars: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warned: list[tuple[RunConfig, Path]] = []
    monkeypatch.setattr(
        "foxhunt.train.resources.plan.warn_large_preparation",
        lambda cfg, b: warned.append((cfg, b)) or 0,
    )
    path = tmp_path / ".prepared.9.pt"
    rows_folder(path).mkdir()  # made by _child_setup in the child
    cfg = _tiny()
    prep._child(bars, cfg, False, False, path)
    assert warned == [(cfg, bars)]  # on a CPU the child checks the bars' size first
    assert path.is_file() and not path.with_name(path.name + ".tmp").exists()
    saved = torch.load(path, weights_only=False)
    assert sorted(saved) == ["baselines", "cfg", "data", "ends", "peak_rss", "starts"]
    assert saved["cfg"] == cfg and saved["baselines"] is None and saved["ends"] is None
    assert saved["starts"] is None  # with the baselines only, as the ends
    assert saved["peak_rss"] > 0
    here = prepare(bars, cfg, choose_scale=False, baselines=False)
    assert len(saved["data"].train) == len(here.data.train) > 0
    assert saved["data"].fingerprint == here.data.fingerprint
    # the windows were written to the rows folder and are read from it
    assert saved["data"].train.mapped_arrays == ("historical", "known", "static", "target")
    assert sorted(p.name for p in rows_folder(path).iterdir())


@pytest.mark.slow  # the GARCH fit: about 2.5 s
def test_the_child_chooses_the_scale_and_fits_the_baselines_when_asked(
    tmp_path: Path, bars: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("foxhunt.train.resources.plan.warn_large_preparation", lambda c, b: 0)
    path = tmp_path / ".prepared.3.pt"
    rows_folder(path).mkdir()
    prep._child(bars, _tiny(), True, True, path)
    saved = torch.load(path, weights_only=False)
    here = prepare(bars, _tiny(), choose_scale=True, baselines=True)
    assert saved["cfg"] == here.cfg
    assert saved["baselines"] is not None and sorted(saved["baselines"]) == sorted(here.baselines)
    assert saved["ends"] == here.ends == {"ES": "2024-01-05T04:55:00+00:00"}


def test_the_child_checks_the_bars_size_only_on_a_cpu(
    tmp_path: Path, bars: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warned: list[Path] = []
    monkeypatch.setattr(
        "foxhunt.train.resources.plan.warn_large_preparation", lambda c, b: warned.append(b) or 0
    )
    path = tmp_path / ".prepared.4.pt"
    rows_folder(path).mkdir()
    prep._child(bars, _tiny(device="cuda"), False, False, path)  # prepared on the CPU anyway
    assert warned == [] and path.is_file()


def test_prepare_without_baselines_or_scale_keeps_the_config_and_ends_nothing(
    bars: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="foxhunt")
    cfg = _tiny()
    run = prepare(bars, cfg, choose_scale=False, baselines=False)
    assert run.cfg is cfg and run.baselines is None and run.ends is None
    assert run.peak_rss > 0
    lines = [r.getMessage() for r in caplog.records if r.name == "foxhunt.train.prepare"]
    assert len(lines) == 1, lines
    bars_count = run.data.closes.height
    assert lines[0].startswith(f"data preparation: {bars_count} bars, peak RSS ")
    assert "(estimated " in lines[0] and lines[0].endswith("; docs/memory.md)")


def test_prepare_fits_the_classical_baselines_only_for_a_close_target(bars: Path) -> None:
    close = prepare(bars, _tiny(), choose_scale=False, baselines=True)
    assert close.baselines is not None and sorted(close.baselines["classical"]) == [
        "ewma",
        "garch",
        "tow_ewma",
    ]
    assert close.ends == {"ES": "2024-01-05T04:55:00+00:00"}
    other_cfg = _tiny().replace(data={"target": "open"})
    other = prepare(bars, other_cfg, choose_scale=False, baselines=True)
    assert other.baselines is not None and "classical" not in other.baselines
    assert other.baselines["horizon"] == close.baselines["horizon"] == 4


@pytest.mark.parametrize(("train", "val", "name"), [(0, 5, "training"), (5, 0, "validation")])
def test_prepare_names_the_bars_and_the_split_without_windows(
    monkeypatch: pytest.MonkeyPatch, train: int, val: int, name: str
) -> None:
    # the pipeline refuses too few bars first (it names the symbol); this guard catches any
    # other way to an empty split (a feature store cut short, say)
    made = SimpleNamespace(train=[0] * train, val=[0] * val, test=[])
    monkeypatch.setattr(prep, "prepare_training_data", lambda *a, **k: made)
    with pytest.raises(DataError) as e:
        prepare(Path("bars.csv"), _tiny(), choose_scale=False, baselines=False)
    assert str(e.value) == (
        f"bars.csv: no {name} windows (too few bars for the encoder length and horizon)"
    )


def test_prepare_passes_the_coordinator_and_the_spill_folder_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under torchrun the rank's world, and the child's window-file folder, reach the
    pipeline."""
    seen: list[tuple[Any, ...]] = []

    class Stop(Exception):
        pass

    def record(bars: Path, cfg: RunConfig, **kw: Any) -> None:
        seen.append((bars, cfg, kw))
        raise Stop

    monkeypatch.setattr(prep, "prepare_training_data", record)
    cfg, world = _tiny(), object()
    with pytest.raises(Stop):
        prepare(Path("b.csv"), cfg, choose_scale=False, baselines=False, coordinator=world,
                spill=Path("rows"))  # fmt: skip
    assert seen == [(Path("b.csv"), cfg, {"coordinator": world, "spill": Path("rows")})]


def test_child_setup_routes_records_at_the_parents_levels_and_starts_the_watchdog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watched: list[tuple[int, Path, str]] = []
    monkeypatch.setattr(
        prep,
        "exit_with_parent",
        lambda parent, path: watched.append((parent, path, threading.current_thread().name)),
    )
    root, foxhunt = logging.getLogger(), logging.getLogger("foxhunt")
    saved = (root.handlers[:], root.level, foxhunt.level)
    records: queue.Queue[logging.LogRecord] = queue.Queue()
    path = tmp_path / ".prepared.5.pt"
    try:
        prep._child_setup(records, (logging.ERROR, logging.DEBUG), 4242, path)
        handlers = root.handlers[:]
        levels = (root.level, foxhunt.level)
        logging.getLogger("foxhunt.data").debug("from the child")
        logging.getLogger("polars").warning("not at the parent's level")
    finally:
        root.handlers[:], _, _ = saved
        root.setLevel(saved[1])
        foxhunt.setLevel(saved[2])
    assert len(handlers) == 1 and isinstance(handlers[0], logging.handlers.QueueHandler)
    assert levels == (logging.ERROR, logging.DEBUG)
    got = records.get_nowait()
    assert (got.name, got.getMessage()) == ("foxhunt.data", "from the child")
    assert records.empty()
    assert rows_folder(path).is_dir()
    deadline = time.monotonic() + 10
    while not watched and time.monotonic() < deadline:
        time.sleep(0.01)
    assert watched == [(4242, path, "parent-watch")]


def test_child_setup_accepts_a_rows_folder_that_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prep, "exit_with_parent", lambda parent, path: None)
    root, foxhunt = logging.getLogger(), logging.getLogger("foxhunt")
    saved = (root.handlers[:], root.level, foxhunt.level)
    path = tmp_path / ".prepared.6.pt"
    rows_folder(path).mkdir()
    try:
        prep._child_setup(queue.Queue(), (logging.WARNING, logging.INFO), 1, path)
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        foxhunt.setLevel(saved[2])
    assert rows_folder(path).is_dir()


def test_the_relay_hands_each_record_to_its_logger_until_none(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    records: queue.Queue[logging.LogRecord | None] = queue.Queue()
    for name, message in (("foxhunt.a", "first"), ("foxhunt.b", "second")):
        records.put(logging.LogRecord(name, logging.INFO, __file__, 1, message, None, None))
    records.put(None)
    records.put(logging.LogRecord("foxhunt.c", logging.INFO, __file__, 1, "late", None, None))
    prep._relay(records)
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        ("foxhunt.a", "first"), ("foxhunt.b", "second"),
    ]  # fmt: skip
    assert records.qsize() == 1  # what came after None is not read


def test_running_tells_a_live_process_from_a_zombie_and_a_gone_one() -> None:
    assert prep._running(os.getpid())
    p = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while prep._running(p.pid):  # exited, not yet reaped: a zombie
        assert time.monotonic() < deadline
        time.sleep(0.01)
    p.wait()
    assert not prep._running(p.pid)


def test_the_watchdog_waits_while_the_parent_runs(tmp_path: Path) -> None:
    parent = subprocess.Popen(["sleep", "30"])
    path = tmp_path / ".prepared.2.pt"
    path.write_bytes(b"x")
    codes: list[int] = []
    watch = threading.Thread(
        target=exit_with_parent,
        args=(parent.pid, path),
        kwargs={"poll_s": 0.01, "exit": codes.append},
    )
    watch.start()
    try:
        time.sleep(0.3)
        assert codes == [] and path.exists()  # the parent is alive: nothing deleted
    finally:
        parent.kill()
        parent.wait()
    watch.join(10)
    assert codes == [1] and not path.exists()


def test_the_watchdog_cleans_up_when_nothing_was_written_yet(tmp_path: Path) -> None:
    codes: list[int] = []
    exit_with_parent(_pid_of_exited(), tmp_path / ".prepared.1.pt", poll_s=0.0, exit=codes.append)
    assert codes == [1] and not list(tmp_path.iterdir())


def test_the_watchdog_renames_the_rows_folder_beside_it_before_deleting_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / ".prepared.1.pt"
    rows_folder(path).mkdir()
    (rows_folder(path) / "train.target.f32").write_bytes(b"x")
    removed: list[tuple[Path, dict[str, Any]]] = []
    real = shutil.rmtree

    def rmtree(p: Path, **kw: Any) -> None:
        removed.append((Path(p), kw))
        real(p, **kw)

    monkeypatch.setattr(shutil, "rmtree", rmtree)
    codes: list[int] = []
    exit_with_parent(_pid_of_exited(), path, poll_s=0.0, exit=codes.append)
    assert codes == [1] and not list(tmp_path.iterdir())
    (gone, kw), (rows, kw2) = removed
    assert gone.parent == tmp_path and gone.name.startswith(".prepared.1.gone.")
    assert rows == rows_folder(path)
    assert kw == kw2 == {"ignore_errors": True}


def test_the_watchdog_deletes_the_rows_folder_when_the_rename_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / ".prepared.1.pt"
    rows_folder(path).mkdir()
    (rows_folder(path) / "train.target.f32").write_bytes(b"x")

    def refuse(self: Path, target: Path) -> None:
        raise OSError("busy")

    monkeypatch.setattr(Path, "rename", refuse)
    codes: list[int] = []
    exit_with_parent(_pid_of_exited(), path, poll_s=0.0, exit=codes.append)
    assert codes == [1] and not list(tmp_path.iterdir())
