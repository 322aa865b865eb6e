"""Memory sections of the run report: a timeline plot from ``memory.jsonl`` and a breakdown table."""

from __future__ import annotations

from pathlib import Path

import torch

from foxhunt.config import RunConfig
from foxhunt.errors import InputError
from foxhunt.memory.estimate import estimate_for_run, run_device_type
from foxhunt.memory.units import format_bytes
from foxhunt.runtime import atomic_path, read_jsonl, resolve_precision

_SERIES: tuple[tuple[str, str], ...] = (
    ("rss_bytes", "process RSS"),
    ("peak_rss_bytes", "peak RSS"),
    ("cuda_allocated_bytes", "CUDA allocated"),
    ("cuda_max_allocated_bytes", "CUDA max allocated"),
    ("cuda_reserved_bytes", "CUDA reserved"),
)


def plot_memory_timeline(memory_jsonl: Path, out_png: Path) -> None:
    """Plot memory over the run: RSS (and CUDA counters) per snapshot, epochs shaded.

    Args:
        memory_jsonl: the run's ``memory.jsonl``.
        out_png: where to write the PNG (written to ``<name>.tmp`` first, then renamed).

    Raises:
        InputError: the log is missing, unreadable or empty.
    """
    from matplotlib.figure import Figure  # no pyplot: no process-wide backend change

    records = read_jsonl(memory_jsonl, missing_ok=False)
    if not records:
        raise InputError(f"{memory_jsonl}: memory log is empty")
    t = [float(r.get("elapsed_s", 0.0)) for r in records]
    fig = Figure(figsize=(9, 4), dpi=100)
    ax = fig.subplots()
    for key, label in _SERIES:
        ys = [r.get(key) for r in records]
        if any(isinstance(y, int | float) for y in ys):
            pts = [(x, y / 2**20) for x, y in zip(t, ys, strict=True) if isinstance(y, int | float)]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=label)
    epochs: dict[int, list[float]] = {}
    for x, r in zip(t, records, strict=True):
        if r.get("epoch") is not None:
            epochs.setdefault(int(r["epoch"]), []).append(x)
    for i, (epoch, xs) in enumerate(sorted(epochs.items())):
        if i % 2 == 0:
            ax.axvspan(min(xs), max(xs), color="0.92", zorder=0)
        ax.text(
            min(xs), 1.0, f"epoch {epoch}", transform=ax.get_xaxis_transform(), fontsize=7, va="top"
        )
    errors = [r for r in records if r.get("errors")]
    for r in errors:
        ax.axvline(float(r.get("elapsed_s", 0.0)), color="red", lw=0.8, ls=":")
    ax.set_xlabel("seconds since run start")
    ax.set_ylabel("MiB")
    title = "memory timeline"
    if errors:
        title += f" ({len(errors)} snapshots with errors, red lines)"
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    with atomic_path(Path(out_png)) as tmp:
        fig.savefig(tmp, format="png")


def breakdown_table_markdown(cfg: RunConfig) -> str:
    """Markdown table of the estimated memory of one training step at ``cfg``'s settings.

    Args:
        cfg: the run (model, micro-batch, precision, checkpointing, device).

    Returns:
        A markdown table (component, bytes, human-readable) with a one-line heading.
    """
    t = cfg.train
    device = run_device_type(cfg)
    est = estimate_for_run(cfg)
    precision = resolve_precision(t.precision, torch.device(device))
    lines = [
        f"Estimated memory per training step (micro-batch {t.micro_batch}, {precision}, "
        f"checkpointing {'on' if t.checkpointing else 'off'}, "
        f"recompute {'on' if t.recompute else 'off'}, {device}; live tensor bytes):",
        "",
        "| component | bytes | size |",
        "|---|---:|---:|",
    ]
    for name, value in est.components().items():
        lines.append(f"| {name} | {value:,} | {format_bytes(value)} |")
    return "\n".join(lines) + "\n"
