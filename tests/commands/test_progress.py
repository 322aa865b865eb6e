"""``TrainProgress``: the bars' totals, positions and status text, the epoch lines on the console
or in the log, the notes."""

from __future__ import annotations

import io
import logging
import re

import pytest
from rich.console import Console

from foxhunt.commands.progress import TrainProgress


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=150, color_system=None), out


def _tasks(p: TrainProgress) -> list[tuple[str, float | None, float, str]]:
    return [
        (t.description, t.total, t.completed, t.fields.get("status", "")) for t in p._progress.tasks
    ]


def test_the_bars_follow_epochs_batches_and_validation() -> None:
    console, out = _console()
    with TrainProgress(3, first_epoch=2, console=console) as p:
        assert p.enabled and p.console is console
        assert _tasks(p) == [("epochs", 3, 1, "")]  # resuming at epoch 2: one done
        p.start_epoch(2, 5)
        p.step(loss=0.123456, samples_per_s=1234.5, memory_bytes=3 * 2**20)
        p.step(loss=0.1, samples_per_s=10.0, memory_bytes=None)
        assert _tasks(p)[1] == ("epoch 2", 5, 2, "loss 0.1000 · 10 samples/s")
        p.start_validation(4)
        p.validation_step()
        assert _tasks(p) == [("epochs", 3, 1, ""), ("validation", 4, 1, "")]  # one batch bar
        p.end_epoch("epoch 2: train 0.1 val 0.2")
        p.note("out of memory: batch 16")
        assert _tasks(p)[0] == ("epochs", 3, 2, "")
    text = out.getvalue()
    assert "epoch 2: train 0.1 val 0.2" in text and "out of memory: batch 16" in text


def test_a_step_shows_loss_speed_and_memory() -> None:
    console, _ = _console()
    p = TrainProgress(1, console=console)
    p.start_epoch(1, 3)
    p.step(loss=0.123456, samples_per_s=12345.6, memory_bytes=3 * 2**20)
    assert _tasks(p)[1][3] == "loss 0.1235 · 12,346 samples/s · mem 3.15 MB"


def test_before_any_epoch_steps_change_nothing() -> None:
    console, _ = _console()
    p = TrainProgress(2, console=console)
    p.step(loss=1.0, samples_per_s=1.0, memory_bytes=None)
    p.validation_step()
    assert _tasks(p) == [("epochs", 2, 0, "")]


def test_disabled_it_draws_nothing_and_logs_the_epoch_lines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    console, out = _console()
    with caplog.at_level(logging.INFO, logger="foxhunt.commands.progress"):
        with TrainProgress(2, enabled=False, console=console) as p:
            p.start_epoch(1, 2)
            p.step(loss=0.5, samples_per_s=3.0, memory_bytes=None)
            p.end_epoch("epoch 1: train 0.5")
            p.note("a note nobody sees")
    assert out.getvalue() == ""
    assert [r.getMessage() for r in caplog.records] == ["epoch 1: train 0.5"]
    assert _tasks(p)[0][2] == 1


def test_the_default_console_is_stderr() -> None:
    p = TrainProgress(1, enabled=False)
    assert p.console.stderr


def test_the_bars_stay_on_screen_with_their_columns() -> None:
    console, out = _console()
    with TrainProgress(3, first_epoch=2, console=console) as p:
        p.start_epoch(2, 5)
        p.step(loss=0.1, samples_per_s=10.0, memory_bytes=None)
        p.end_epoch("epoch 2 done")
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    assert lines[0] == "epoch 2 done"
    # the final frame is kept (not transient): description, bar, n/total, times, status
    assert re.fullmatch(r"epochs +━+╸? +2/3 \d:\d\d:\d\d [-\d:]+", lines[1]), lines[1]
    assert re.fullmatch(
        r"epoch 2 +━+ +1/5 \d:\d\d:\d\d [-\d:]+ loss 0\.1000 · 10 samples/s", lines[2]
    ), lines[2]
    assert len(lines) == 3
