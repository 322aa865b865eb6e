"""What the loop's observer writes for each event, value by value: the step record's windowed
loss and throughput (on a clock set by hand), the memory shown in the progress bar (CUDA's
allocated bytes where there are some, else the resident set), the epoch record and its line
(to the progress display, else the log), OOM notes, the leak warnings, the interrupt warning,
and what ``for_fit`` takes from the config."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from foxhunt.config import TrainConfig
from foxhunt.train import observer as observer_module
from foxhunt.train.observer import LoopObserver


class Clock:
    """``time.perf_counter`` set by hand."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Memory:
    """A memory log: snapshots are the point, the fields and fixed byte counts."""

    def __init__(self, *, cuda: bool = False, leaks: tuple[str, ...] = ()) -> None:
        self.bytes = {"rss_bytes": 700, **({"cuda_allocated_bytes": 900} if cuda else {})}
        self.leaks = list(leaks)
        self.points: list[tuple[str, dict[str, Any]]] = []

    def snapshot(self, point: str, **fields: Any) -> dict[str, Any]:
        self.points.append((point, fields))
        return {"point": point, **fields, **self.bytes}

    def check_leaks(self) -> list[str]:
        return self.leaks


class Bars:
    """A progress display that records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def start_epoch(self, epoch: int, n_batches: int) -> None:
        self.calls.append(("start_epoch", (epoch, n_batches)))

    def step(self, *, loss: float, samples_per_s: float, memory_bytes: int | None) -> None:
        self.calls.append(("step", (loss, samples_per_s, memory_bytes)))

    def start_validation(self, n_batches: int) -> None:
        self.calls.append(("start_validation", n_batches))

    def validation_step(self) -> None:
        self.calls.append(("validation_step", None))

    def end_epoch(self, line: str) -> None:
        self.calls.append(("end_epoch", line))

    def note(self, line: str) -> None:
        self.calls.append(("note", line))


def _make(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    progress: Bars | None,
    memory: Memory,
    log_every: int = 2,
) -> tuple[LoopObserver, Clock, list[dict[str, Any]]]:
    clock = Clock(100.0)
    monkeypatch.setattr(observer_module.time, "perf_counter", clock)
    heard: list[dict[str, Any]] = []
    obs = LoopObserver(
        tmp_path / "metrics.jsonl",
        memory,  # type: ignore[arg-type]
        progress,
        log_every=log_every,
        epochs=3,
        listeners=[heard.append],
    )
    return obs, clock, heard


def _written(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]


def _step(obs: LoopObserver, step: int, samples: int, loss: float) -> None:
    obs.step(2, step, samples, loss, lr=0.01 * step, grad_norm=1.5 * step, micro_batch=4,
             accumulation=2)  # fmt: skip


@pytest.mark.parametrize("cuda", [False, True])
def test_step_records_the_windows_mean_loss_and_the_epochs_throughput(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cuda: bool
) -> None:
    bars, memory = Bars(), Memory(cuda=cuda)
    obs, clock, heard = _make(tmp_path, monkeypatch, progress=bars, memory=memory)
    clock.now = 200.0
    obs.epoch_start(2, 10, 5)  # the epoch's clock starts here, not at construction
    shown = 900 if cuda else 700
    for step, (now, samples, loss) in enumerate(
        [(202.0, 8, 1.0), (204.0, 8, 2.0), (205.0, 4, 4.0), (210.0, 16, 8.0)], start=11
    ):
        clock.now = now
        _step(obs, step, samples, loss)
    # log_every 2: records at steps 12 and 14, each the mean loss of the steps since the last
    assert _written(tmp_path) == [
        {"kind": "step", "epoch": 2, "step": 12, "lr": 0.12, "loss": 1.5, "grad_norm": 18.0,
         "samples_per_s": 16 / 4, "micro_batch": 4, "accumulation": 2},
        {"kind": "step", "epoch": 2, "step": 14, "lr": 0.14, "loss": 6.0, "grad_norm": 21.0,
         "samples_per_s": 36 / 10, "micro_batch": 4, "accumulation": 2},
    ]  # fmt: skip
    assert memory.points == [
        ("epoch_start", {"epoch": 2, "step": 10}),
        ("train_step", {"epoch": 2, "step": 12}),
        ("train_step", {"epoch": 2, "step": 14}),
    ]
    assert bars.calls == [
        ("start_epoch", (2, 5)),
        ("step", (1.0, 8 / 2, None)),  # no snapshot yet: no memory shown
        ("step", (2.0, 16 / 4, shown)),
        ("step", (4.0, 20 / 5, shown)),
        ("step", (8.0, 36 / 10, shown)),
    ]
    memory_heard = [r for r in heard if r["kind"] == "memory"]
    assert [r["point"] for r in memory_heard] == ["epoch_start", "train_step", "train_step"]
    assert [r for r in heard if r["kind"] != "memory"] == _written(tmp_path)


def test_a_new_epoch_restarts_the_loss_window_and_the_throughput(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bars = Bars()
    obs, clock, _ = _make(tmp_path, monkeypatch, progress=bars, memory=Memory(), log_every=3)
    clock.now = 101.0
    _step(obs, 1, 100, 9.0)  # before any epoch_start: the clock of construction
    assert bars.calls == [("step", (9.0, 100.0, None))]
    clock.now = 300.0
    obs.epoch_start(2, 1, 4)
    clock.now = 302.0
    _step(obs, 2, 8, 1.0)
    clock.now = 304.0
    _step(obs, 3, 8, 3.0)
    (record,) = _written(tmp_path)
    assert record["step"] == 3 and record["loss"] == 2.0  # step 1's 9.0 was dropped
    assert record["samples_per_s"] == 16 / 4


def test_a_step_at_the_epochs_first_instant_divides_by_a_nanosecond_not_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bars = Bars()
    obs, clock, _ = _make(tmp_path, monkeypatch, progress=bars, memory=Memory(), log_every=5)
    _step(obs, 1, 3, 1.0)  # no time has passed
    assert bars.calls == [("step", (1.0, 3 / 1e-9, None))]


def test_epoch_end_records_the_epoch_and_draws_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bars, memory = Bars(), Memory()
    obs, clock, heard = _make(tmp_path, monkeypatch, progress=bars, memory=memory)
    clock.now = 150.0
    obs.epoch_start(2, 0, 1)
    clock.now = 162.25
    obs.epoch_end(2, 40, {"train_loss": 0.123456, "val_loss": 0.5}, True, 320)
    assert _written(tmp_path) == [
        {"kind": "epoch", "epoch": 2, "step": 40, "train_loss": 0.123456, "val_loss": 0.5,
         "best": True, "samples_seen": 320, "seconds": 12.25},
    ]  # fmt: skip
    line = "epoch 2/3: train 0.1235 · val 0.5000 (best) · 40 steps · 12.2 s"
    assert bars.calls[-1] == ("end_epoch", line)
    assert memory.points[-2:] == [
        ("after_checkpoint", {"epoch": 2, "step": 40}),
        ("epoch_end", {"epoch": 2, "step": 40}),
    ]
    assert [r["point"] for r in heard if r["kind"] == "memory"][-2:] == [
        "after_checkpoint",
        "epoch_end",
    ]


def test_without_progress_the_epoch_line_goes_to_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    obs, clock, _ = _make(tmp_path, monkeypatch, progress=None, memory=Memory())
    with caplog.at_level(logging.INFO, logger="foxhunt.train.observer"):
        obs.epoch_start(1, 0, 1)
        clock.now = 103.0
        _step(obs, 1, 8, 1.0)  # no progress display: nothing drawn, nothing raised
        obs.epoch_end(1, 1, {"train_loss": 1.0, "val_loss": 2.0}, False, 8)
    assert [r.getMessage() for r in caplog.records] == [
        "epoch 1/3: train 1.0000 · val 2.0000 · 1 steps · 3.0 s"
    ]


def test_oom_messages_are_records_and_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bars = Bars()
    obs, _, heard = _make(tmp_path, monkeypatch, progress=bars, memory=Memory())
    obs.oom(3, 17, ["first", "second"])
    want = [
        {"kind": "oom", "epoch": 3, "step": 17, "message": "first"},
        {"kind": "oom", "epoch": 3, "step": 17, "message": "second"},
    ]
    assert _written(tmp_path) == want and heard == want
    assert bars.calls == [("note", "first"), ("note", "second")]
    quiet, _, _ = _make(tmp_path / "q", monkeypatch, progress=None, memory=Memory())
    (tmp_path / "q").mkdir()
    quiet.oom(1, 1, ["only"])
    assert _written(tmp_path / "q") == [{"kind": "oom", "epoch": 1, "step": 1, "message": "only"}]


def test_run_end_writes_each_leak_then_the_last_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = Memory(leaks=("rss grew 40 MB", "cuda grew 9 MB"))
    obs, _, heard = _make(tmp_path, monkeypatch, progress=None, memory=memory)
    obs.run_end(4, 99)
    want = [
        {"kind": "memory_warning", "message": "rss grew 40 MB"},
        {"kind": "memory_warning", "message": "cuda grew 9 MB"},
    ]
    assert _written(tmp_path) == want
    assert memory.points == [("run_end", {"epoch": 4, "step": 99})]
    assert heard[:2] == want and heard[2]["point"] == "run_end" and heard[2]["kind"] == "memory"


@pytest.mark.parametrize(
    ("kept_epoch", "kept"), [(0, "no complete epoch yet"), (2, "epoch 2 kept")]
)
def test_interrupted_says_what_was_kept_and_how_to_go_on(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    kept_epoch: int,
    kept: str,
) -> None:
    obs, _, _ = _make(tmp_path, monkeypatch, progress=None, memory=Memory())
    with caplog.at_level(logging.WARNING, logger="foxhunt.train.observer"):
        obs.interrupted(3, 57, kept_epoch, Path("runs/x"))
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        f"interrupted at step 57: epoch 3 discarded, {kept}; continue with: "
        "foxhunt train --resume runs/x"
    )


@pytest.mark.parametrize("is_main", [True, False])
def test_for_fit_takes_the_configs_cadence_and_epochs(tmp_path: Path, is_main: bool) -> None:
    memory, bars = Memory(), Bars()
    listener = [].append
    obs = LoopObserver.for_fit(
        tmp_path / "m.jsonl",
        is_main,
        memory,  # type: ignore[arg-type]
        bars,
        TrainConfig(log_every=7, epochs=11),
        [listener],
    )
    assert (obs.log_every, obs.epochs) == (7, 11)
    assert obs.memory is memory and obs.progress is bars
    assert obs.metrics == (tmp_path / "m.jsonl" if is_main else None)
    assert obs.listeners == ((listener,) if is_main else ())


def test_the_first_window_starts_empty_without_an_epoch_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resumed ``fit`` may log before its first ``epoch_start``: the window is empty."""
    obs, clock, _ = _make(tmp_path, monkeypatch, progress=None, memory=Memory())
    clock.now = 104.0
    _step(obs, 1, 8, 1.0)
    _step(obs, 2, 8, 2.0)
    (record,) = _written(tmp_path)
    assert (record["loss"], record["samples_per_s"]) == (1.5, 16 / 4)
