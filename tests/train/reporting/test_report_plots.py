"""The report's plots show the right data: series, bands, bars and labels, read off the figure.

Each plot function builds a matplotlib ``Figure`` and saves it; ``Figure.savefig`` is wrapped
to keep the figure, so the test inspects what was drawn (not the PNG's byte size).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from foxhunt.memory.log import MemoryLog
from foxhunt.memory.report import plot_memory_timeline
from foxhunt.train.reporting.report import (
    plot_fan_chart,
    plot_losses,
    plot_memory,
    plot_variable_importance,
)


@pytest.fixture
def saved(monkeypatch: pytest.MonkeyPatch) -> list[Figure]:
    figures: list[Figure] = []
    original = Figure.savefig

    def keep(self: Figure, *args: Any, **kwargs: Any) -> None:
        figures.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    return figures


def _lines(ax: Any) -> dict[str, tuple[list[float], list[float]]]:
    return {
        line.get_label(): (list(line.get_xdata()), list(line.get_ydata()))
        for line in ax.get_lines()
    }


def test_loss_curves_plot_the_logged_steps_and_epoch_losses(
    tmp_path: Path, saved: list[Figure]
) -> None:
    metrics = [{"kind": "step", "step": s, "loss": 1.0 / s} for s in (1, 2, 4)]
    metrics += [
        {"kind": "epoch", "epoch": 1, "step": 4, "train_loss": 0.6, "val_loss": 0.5},
        {"kind": "epoch", "epoch": 2, "step": 8, "train_loss": 0.3, "val_loss": 0.45, "best": True},
        {"kind": "oom", "step": 3},
    ]
    assert plot_losses(metrics, tmp_path / "loss.png") is True
    (ax,) = saved[0].axes
    assert _lines(ax) == {
        "train (logged steps)": ([1, 2, 4], [1.0, 0.5, 0.25]),
        "train (epoch mean)": ([4, 8], [0.6, 0.3]),
        "validation": ([4, 8], [0.5, 0.45]),
    }
    assert ax.get_xlabel() == "optimizer step"
    assert ax.get_ylabel() == "quantile loss (scaled target)"
    # the best epoch is marked at its validation loss
    assert [(t.get_text(), tuple(t.xy)) for t in ax.texts] == [("e2", (8, 0.45))]
    assert plot_losses([{"kind": "oom"}], tmp_path / "none.png") is False


def test_loss_curves_of_a_first_epoch_not_yet_done_are_drawn(
    tmp_path: Path, saved: list[Figure]
) -> None:
    """Logged steps and no epoch yet (a run stopped in its first epoch): drawn, not skipped."""
    steps = [{"kind": "step", "step": s, "loss": 1.0 / s} for s in (1, 2)]
    assert plot_losses(steps, tmp_path / "loss.png") is True
    (ax,) = saved[0].axes
    assert _lines(ax) == {"train (logged steps)": ([1, 2], [1.0, 0.5])}


def _fan() -> dict[str, Any]:
    """A 5-step window: 3 encoder closes, 2 forecast steps of 5 quantiles each."""
    return {
        "symbol": "ES",
        "origin": "2024-01-02T10:02:00+00:00",
        "encoder_length": 3,
        "quantiles": [0.1, 0.25, 0.5, 0.75, 0.9],
        "times": [f"2024-01-02T10:0{i}:00+00:00" for i in range(5)],
        "close": [1.0, 2.0, 3.0, 4.0, 5.0],
        "price_quantiles": [[10.0, 11.0, 12.0, 13.0, 14.0], [20.0, 21.0, 22.0, 23.0, 24.0]],
    }


def test_fan_chart_draws_bands_between_mirrored_quantiles(
    tmp_path: Path, saved: list[Figure]
) -> None:
    fan = _fan()
    bands = fan["price_quantiles"]
    assert plot_fan_chart(fan, tmp_path / "fan.png") is True
    (ax,) = saved[0].axes
    lines = _lines(ax)
    assert lines["actual (encoder)"] == ([0, 1, 2], [1.0, 2.0, 3.0])
    assert lines["actual (future)"] == ([2, 3, 4], [3.0, 4.0, 5.0])
    assert lines["q0.5"] == ([3, 4], [12.0, 22.0])  # the median column, over the decoder steps
    polys = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert [p.get_label() for p in polys] == ["0.1–0.9", "0.25–0.75"]
    for poly, (lo, hi) in zip(polys, [(0, 4), (1, 3)], strict=True):
        ys = poly.get_paths()[0].vertices[:, 1]
        assert ys.min() == bands[0][lo] and ys.max() == bands[1][hi]
    assert "ES from 2024-01-02 10:02" in ax.get_title()
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "2024-01-02 10:00",
        "2024-01-02 10:02",
        "2024-01-02 10:04",
    ]
    assert ax.get_ylabel() == "price"
    # the one unlabelled line is the vertical rule at the last encoder step (x = enc - 1)
    (rule,) = [line for line in ax.get_lines() if line.get_label().startswith("_")]
    assert list(rule.get_xdata()) == [2, 2]


def test_fan_chart_without_symbol_and_origin_leaves_them_blank_in_the_title(
    tmp_path: Path, saved: list[Figure]
) -> None:
    fan = _fan()
    del fan["symbol"], fan["origin"]
    assert plot_fan_chart(fan, tmp_path / "fan.png") is True
    (ax,) = saved[0].axes
    assert ax.get_title() == "Forecast for  from  (last validation window)"


def test_fan_chart_needs_both_closes_and_bands(tmp_path: Path, saved: list[Figure]) -> None:
    # a window without its closes or without its forecast bands draws nothing
    assert plot_fan_chart({**_fan(), "price_quantiles": []}, tmp_path / "a.png") is False
    assert plot_fan_chart({**_fan(), "close": []}, tmp_path / "b.png") is False
    assert plot_fan_chart({}, tmp_path / "c.png") is False
    assert saved == []


def test_variable_importance_draws_every_group_side_by_side_top_15_by_default(
    tmp_path: Path, saved: list[Figure]
) -> None:
    historical = {f"obs__v{i:02d}": (i + 1) / 100 for i in range(16)}  # v00 is the smallest
    importance = {
        "historical": historical,
        "known": {"known__hour": 0.6, "known__dow": 0.4},
        "static": {"static__symbol": 1.0},
    }
    assert plot_variable_importance(importance, tmp_path / "vi.png") is True
    axes = saved[0].axes
    assert [ax.get_title() for ax in axes] == [
        "historical (16 inputs), top 15",
        "known (2 inputs)",
        "static (1 inputs)",
    ]
    # one row of three panels, in group order
    assert [ax.get_subplotspec().get_geometry() for ax in axes] == [
        (1, 3, 0, 0),
        (1, 3, 1, 1),
        (1, 3, 2, 2),
    ]
    hist, known, static = axes
    names = [t.get_text() for t in hist.get_yticklabels()]
    assert names == [f"v{i:02d}" for i in range(1, 16)]  # the 16th largest (v00) is cut
    assert [t.get_text() for t in known.get_yticklabels()] == ["dow", "hour"]
    assert [t.get_text() for t in static.get_yticklabels()] == ["symbol"]
    assert [bar.get_width() for bar in static.patches] == [1.0]


def test_variable_importance_bars_are_the_weights_largest_on_top(
    tmp_path: Path, saved: list[Figure]
) -> None:
    importance = {
        "historical": {"obs__a": 0.2, "obs__b": 0.5, "obs__c": 0.3},
        "known": {"known__hour": 1.0},
        "static": {},
    }
    assert plot_variable_importance(importance, tmp_path / "vi.png", top=2) is True
    historical, known = saved[0].axes  # the empty static group gets no panel
    widths = [bar.get_width() for bar in historical.patches]
    names = [t.get_text() for t in historical.get_yticklabels()]
    assert names == ["c", "b"] and widths == [0.3, 0.5]  # top 2, the largest drawn last (top)
    assert historical.get_title() == "historical (3 inputs), top 2"
    assert [bar.get_width() for bar in known.patches] == [1.0]
    assert historical.get_xlabel() == "mean selection weight"
    assert plot_variable_importance({}, tmp_path / "none.png") is False


def test_memory_timeline_plots_rss_in_mib_and_shades_epochs(
    tmp_path: Path, saved: list[Figure]
) -> None:
    path = tmp_path / "memory.jsonl"
    log = MemoryLog(path, torch.device("cpu"))
    for epoch in range(3):
        log.snapshot("epoch_start", epoch=epoch)
        log.snapshot("epoch_end", epoch=epoch)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    plot_memory_timeline(path, tmp_path / "memory.png")
    (ax,) = saved[0].axes
    lines = _lines(ax)
    xs, ys = lines["process RSS"]
    np.testing.assert_allclose(xs, [r["elapsed_s"] for r in records])
    np.testing.assert_allclose(ys, [r["rss_bytes"] / 2**20 for r in records])
    assert "CUDA allocated" not in lines  # no CUDA counters on a CPU run
    assert [t.get_text() for t in ax.texts] == ["epoch 0", "epoch 1", "epoch 2"]
    assert len(ax.patches) == 2  # epochs 0 and 2 shaded, alternating
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("seconds since run start", "MiB")


def test_memory_plot_is_false_without_a_log_and_quiet_for_an_empty_one(
    tmp_path: Path, saved: list[Figure], caplog: pytest.LogCaptureFixture
) -> None:
    empty = tmp_path / "memory.jsonl"
    empty.write_text("")
    with caplog.at_level(logging.WARNING):
        assert plot_memory(tmp_path / "absent.jsonl", tmp_path / "a.png") is False
        assert plot_memory(empty, tmp_path / "b.png") is False
    assert caplog.records == []  # no log is not an unreadable log: nothing to warn about
    assert saved == [] and not (tmp_path / "a.png").exists() and not (tmp_path / "b.png").exists()


def test_memory_plot_of_an_unreadable_log_is_false_with_a_warning(
    tmp_path: Path, saved: list[Figure], caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text('not json\n{"elapsed_s": 0.0, "rss_bytes": 1048576}\n')  # corrupt mid-file
    with caplog.at_level(logging.WARNING):
        assert plot_memory(path, tmp_path / "memory.png") is False
    (warned,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned.startswith("memory timeline: ")
    assert not (tmp_path / "memory.png").exists()


def test_memory_plot_of_a_log_is_true(tmp_path: Path, saved: list[Figure]) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text('{"elapsed_s": 0.0, "rss_bytes": 1048576}\n')
    assert plot_memory(path, tmp_path / "memory.png") is True
    (ax,) = saved[0].axes
    assert _lines(ax)["process RSS"] == ([0.0], [1.0])
