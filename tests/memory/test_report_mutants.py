"""Report contracts that `make mutate` found unguarded (mutation/mutate.py, memory.report).

The breakdown table as text, exactly; the memory timeline as the matplotlib figure it draws
(captured at ``savefig``): each counter's points in MiB, the shaded epochs and their labels, red
dotted lines at the snapshots with errors, the title, the legend, the size, the atomic write.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import matplotlib
import pytest
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.legend import Legend

import foxhunt.runtime
from foxhunt.config import RunConfig, TrainConfig
from foxhunt.errors import InputError
from foxhunt.memory.estimate import estimate_for_run
from foxhunt.memory.report import breakdown_table_markdown, plot_memory_timeline
from foxhunt.memory.units import format_bytes
from memory_helpers import TINY

MiB = 2**20

# --- breakdown_table_markdown -------------------------------------------------------------


@pytest.mark.parametrize(
    ("train", "header"),
    [
        (
            # auto resolved for the run's device (a CPU with native bf16 here)
            TrainConfig(
                batch_size=16,
                micro_batch_size=4,
                checkpointing=True,
                recompute=False,
                precision="auto",
                device="cpu",
            ),
            "Estimated memory per training step (micro-batch 4, bf16, checkpointing on, "
            "recompute off, cpu; live tensor bytes):",
        ),
        (
            TrainConfig(
                batch_size=8,
                checkpointing=False,
                recompute=True,
                precision="fp16",
                device="cuda:1",
            ),
            "Estimated memory per training step (micro-batch 8, fp16, checkpointing off, "
            "recompute on, cuda; live tensor bytes):",
        ),
    ],
)
def test_breakdown_table_is_exactly_header_separator_rows_and_one_newline(
    train: TrainConfig,
    header: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(foxhunt.runtime.FORCE_FP32_ENV, raising=False)
    monkeypatch.setattr(foxhunt.runtime, "_cpu_has_native_bf16", lambda: True)
    cfg = RunConfig(model=TINY, train=train)
    md = breakdown_table_markdown(cfg)

    comps = estimate_for_run(cfg).components()
    assert len(comps) >= 5
    rows = [f"| {name} | {value:,} | {format_bytes(value)} |" for name, value in comps.items()]
    want = "\n".join([header, "", "| component | bytes | size |", "|---|---:|---:|", *rows])
    assert md == want + "\n"
    lines = md.split("\n")
    assert lines[0] == header
    assert lines[1:4] == ["", "| component | bytes | size |", "|---|---:|---:|"]
    assert lines[-1] == "" and lines[-2].startswith("| ") and lines[-2].endswith(" |")
    params = comps["parameters"]
    assert f"| parameters | {params:,} | {format_bytes(params)} |" in lines


# --- plot_memory_timeline -----------------------------------------------------------------

# Snapshots as MemoryLog writes them, plus the gaps the plot must bear: a record without
# elapsed_s (x = 0), counters missing or null in some records, an empty errors list.
RECORDS: list[dict[str, Any]] = [
    {
        "point": "run_start",
        "rss_bytes": 100 * MiB,
        "peak_rss_bytes": 100 * MiB,
        "errors": ["cuda: no device"],
    },
    {
        "point": "epoch_start",
        "elapsed_s": 1.5,
        "epoch": 0,
        "rss_bytes": 120 * MiB,
        "peak_rss_bytes": 130 * MiB,
        "cuda_allocated_bytes": 10 * MiB + 512 * 1024,
        "cuda_reserved_bytes": 2**30,
    },
    {
        "point": "train_step",
        "elapsed_s": 2.5,
        "epoch": 0,
        "rss_bytes": 150 * MiB,
        "peak_rss_bytes": 160 * MiB,
        "cuda_allocated_bytes": None,
    },
    {
        "point": "epoch_start",
        "elapsed_s": 4.0,
        "epoch": 1,
        "rss_bytes": 140 * MiB,
        "peak_rss_bytes": 160 * MiB,
        "cuda_allocated_bytes": 20 * MiB,
        "errors": ["rss: unreadable"],
    },
    {
        "point": "epoch_end",
        "elapsed_s": 5.0,
        "epoch": 1,
        "rss_bytes": 145 * MiB,
        "peak_rss_bytes": 165 * MiB,
        "errors": [],
    },
    {
        "point": "epoch_start",
        "elapsed_s": 6.0,
        "epoch": 2,
        "rss_bytes": 130 * MiB,
        "peak_rss_bytes": 165 * MiB,
    },
    {"point": "run_end", "elapsed_s": 7.0, "rss_bytes": 90 * MiB, "peak_rss_bytes": 165 * MiB},
]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _plot(tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch):
    """Run plot_memory_timeline; return (figure, its axes, savefig's path, the PNG written)."""
    saved: list[tuple[Figure, Path]] = []
    original = Figure.savefig

    def capture(self: Figure, fname: Any, *args: Any, **kwargs: Any) -> Any:
        saved.append((self, Path(fname)))
        return original(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", capture)
    out = tmp_path / "memory.png"
    # another default dpi (a user's matplotlibrc) must not change the PNG's 900 x 400 pixels
    rc = {"figure.dpi": 72, "savefig.dpi": "figure", "savefig.bbox": None}
    with matplotlib.rc_context(rc):
        plot_memory_timeline(_write(tmp_path / "memory.jsonl", records), out)
    assert len(saved) == 1
    fig, written = saved[0]
    (ax,) = fig.axes
    return fig, ax, written, out


def _data_lines(ax: Any) -> list[Any]:
    return [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]


def _error_lines(ax: Any) -> list[Any]:
    return [ln for ln in ax.get_lines() if ln.get_label().startswith("_")]


def test_timeline_plots_each_present_counter_in_mib_at_its_snapshots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, ax, _, _ = _plot(tmp_path, RECORDS, monkeypatch)
    got = {
        ln.get_label(): (list(ln.get_xdata()), list(ln.get_ydata()), ln.get_marker())
        for ln in _data_lines(ax)
    }
    assert [ln.get_label() for ln in _data_lines(ax)] == [
        "process RSS",
        "peak RSS",
        "CUDA allocated",
        "CUDA reserved",
    ]  # CUDA max allocated: in no record, so no line
    xs = [0.0, 1.5, 2.5, 4.0, 5.0, 6.0, 7.0]
    assert got["process RSS"] == (xs, [100.0, 120.0, 150.0, 140.0, 145.0, 130.0, 90.0], ".")
    assert got["peak RSS"] == (xs, [100.0, 130.0, 160.0, 160.0, 165.0, 165.0, 165.0], ".")
    assert got["CUDA allocated"] == ([1.5, 4.0], [10.5, 20.0], ".")  # null / absent: skipped
    assert got["CUDA reserved"] == ([1.5], [1024.0], ".")
    assert ax.get_xlabel() == "seconds since run start" and ax.get_ylabel() == "MiB"


def test_timeline_shades_every_other_epoch_and_labels_each_at_the_top(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, ax, _, _ = _plot(tmp_path, RECORDS, monkeypatch)
    spans = [(p.get_x(), p.get_x() + p.get_width()) for p in ax.patches]
    assert spans == [(1.5, 2.5), (6.0, 6.0)]  # epochs 0 and 2: [first, last snapshot]
    for p in ax.patches:
        assert to_rgba(p.get_facecolor()) == to_rgba("0.92")
    texts = [(t.get_text(), t.get_position()) for t in ax.texts]
    assert texts == [("epoch 0", (1.5, 1.0)), ("epoch 1", (4.0, 1.0)), ("epoch 2", (6.0, 1.0))]
    top = ax.get_xaxis_transform()  # x in data, y in axes: 1.0 is the top of the axes
    for t in ax.texts:
        x, y = t.get_position()
        assert tuple(t.get_transform().transform((x, y))) == tuple(top.transform((x, y)))
        assert t.get_verticalalignment() == "top"  # hangs inside the axes


def test_timeline_marks_error_snapshots_with_red_dotted_lines_and_counts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, ax, _, _ = _plot(tmp_path, RECORDS, monkeypatch)
    errs = _error_lines(ax)
    assert [list(ln.get_xdata()) for ln in errs] == [[0.0, 0.0], [4.0, 4.0]]  # not [] errors
    for ln in errs:
        assert to_rgba(ln.get_color()) == to_rgba("red")
        assert ln.get_linestyle() == ":"
        assert list(ln.get_ydata()) == [0, 1]  # the axes' full height
    assert ax.get_title() == "memory timeline (2 snapshots with errors, red lines)"


def test_timeline_without_errors_has_no_red_lines_and_a_plain_title(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [{k: v for k, v in r.items() if k != "errors"} for r in RECORDS]
    _, ax, _, _ = _plot(tmp_path, records, monkeypatch)
    assert _error_lines(ax) == []
    assert ax.get_title() == "memory timeline"


def test_timeline_legend_figure_size_and_atomic_png(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fig, ax, written, out = _plot(tmp_path, RECORDS, monkeypatch)
    legend = ax.get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == [
        "process RSS",
        "peak RSS",
        "CUDA allocated",
        "CUDA reserved",
    ]
    assert legend._loc == Legend.codes["lower right"]
    assert tuple(fig.get_size_inches()) == (9.0, 4.0) and fig.dpi == 100
    assert written == tmp_path / "memory.png.tmp"  # written aside, then renamed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.jsonl", "memory.png"]
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (900, 400)


def test_timeline_refuses_a_missing_log_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "memory.png"
    with pytest.raises(InputError, match=r"memory\.jsonl: cannot read \(no such file\)"):
        plot_memory_timeline(tmp_path / "memory.jsonl", out)
    assert list(tmp_path.iterdir()) == []
