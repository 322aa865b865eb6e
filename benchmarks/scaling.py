"""Scaling curves: training memory and step time against batch, encoder length and variables.

Three sweeps around TFT-225 (each point one fresh training process, all other sizes fixed at
TFT-225 and batch 32):

- batch size 1 .. 128;
- encoder length 25 .. 400;
- observed (historical) variables 50 .. 1,000.

foxhunt runs every point at fp32 and bf16, with activation checkpointing off and on.
pytorch-forecasting (hidden_continuous_size 16, fp32 — it has no checkpointing switch) runs the
points that fit a budget on this 2-core, 24 GiB machine: batch <= 32, encoder <= 100,
variables <= 420 (its step at batch 32 is already ~6 s and ~5 GiB; the larger points would take
minutes per step and more memory than the machine can spare next to anything else).

Run alone: ``.venv/bin/python benchmarks/scaling.py`` (= ``run_all.py --only scaling``; add
``--quick`` for a plumbing check). Results: ``results/scaling.json`` and ``results/scaling.png``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from runner import BENCH_DIR, BENCH_PYTHON, MAIN_PYTHON, Job
from table import QUICK, TFT_225

SWEEPS: dict[str, tuple[str, tuple[int, ...]]] = {
    "batch_size": ("--batch-size", (1, 2, 4, 8, 16, 32, 64, 128)),
    "encoder_length": ("--encoder-length", (25, 50, 100, 200, 400)),
    "n_historical": ("--n-historical", (50, 105, 210, 420, 1000)),
}
#: Largest point pytorch-forecasting runs, per sweep (see the module docstring).
PF_LIMITS = {"batch_size": 32, "encoder_length": 100, "n_historical": 420}
FOXHUNT_MODES: tuple[tuple[str, bool], ...] = (
    ("fp32", False),
    ("fp32", True),
    ("bf16", False),
    ("bf16", True),
)
QUICK_SWEEPS = {"batch_size": (1, 4), "encoder_length": (25,), "n_historical": (20,)}


def jobs(quick: bool = False, with_pf: bool = True, step_budget_s: float = 20.0) -> list[Job]:
    """All scaling jobs; foxhunt and pytorch-forecasting points interleaved per point."""
    base = QUICK if quick else TFT_225
    out: list[Job] = []
    for sweep, (flag, points) in SWEEPS.items():
        for value in QUICK_SWEEPS[sweep] if quick else points:
            args = {**base, "--batch-size": "4" if quick else "32", flag: str(value)}
            steps = {"--warmup": "1", "--steps": "2" if quick else "5"}
            tags = {"section": "scaling", "sweep": sweep, "x": value, "quick": quick}
            for precision, ckpt in FOXHUNT_MODES:
                fox = {
                    **args,
                    **steps,
                    "--precision": precision,
                    "--max-seconds": str(step_budget_s),
                }
                flags = [x for kv in fox.items() for x in kv] + ["--no-flops"]
                if ckpt:
                    flags.append("--checkpointing")
                label = f"foxhunt-{precision}{'-ckpt' if ckpt else ''}"
                out.append(
                    Job(
                        name=f"scaling-{sweep}-{value}-{label}",
                        python=MAIN_PYTHON,
                        script=BENCH_DIR / "foxhunt_step.py",
                        args=tuple(flags),
                        tags={**tags, "series": label},
                        timeout_s=120 + 10 * step_budget_s,
                    )
                )
            if with_pf and value <= PF_LIMITS[sweep]:
                pf = {
                    **args,
                    "--warmup": "1",
                    "--steps": "2" if quick else "3",
                    "--hidden-continuous-size": "4" if quick else "16",
                    "--max-seconds": str(step_budget_s),
                }
                out.append(
                    Job(
                        name=f"scaling-{sweep}-{value}-pf-hcs16",
                        python=BENCH_PYTHON,
                        script=BENCH_DIR / "pf_step.py",
                        args=tuple(x for kv in pf.items() for x in kv),
                        tags={**tags, "series": "pf-hcs16-fp32"},
                        timeout_s=180 + 10 * step_budget_s,
                    )
                )
    return out


def series(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """sweep -> series label -> points sorted by x (failed points keep their ``error``)."""
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for r in records:
        if r.get("section") != "scaling":
            continue
        point = {"x": r["x"], "error": r.get("error")}
        if "error" not in r:
            point.update(
                median_s=r["median_s"],
                samples_per_s=r["samples_per_s"],
                peak_rss_over_baseline_bytes=r["peak_rss_over_baseline_bytes"],
                saved_activation_bytes=r.get("saved_activation_bytes"),
            )
        out.setdefault(r["sweep"], {}).setdefault(r["series"], []).append(point)
    for by_series in out.values():
        for points in by_series.values():
            points.sort(key=lambda p: p["x"])
    return out


def plot(curves: dict[str, dict[str, list[dict[str, Any]]]], path: Path) -> None:
    """Two rows (training memory, step time) by three sweeps, log-log, one line per series."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    titles = {
        "batch_size": "batch size",
        "encoder_length": "encoder length (bars)",
        "n_historical": "observed variables",
    }
    styles = {
        "foxhunt-fp32": ("tab:blue", "-"),
        "foxhunt-fp32-ckpt": ("tab:blue", "--"),
        "foxhunt-bf16": ("tab:green", "-"),
        "foxhunt-bf16-ckpt": ("tab:green", "--"),
        "pf-hcs16-fp32": ("tab:red", "-"),
    }
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5), squeeze=False)
    for col, sweep in enumerate(SWEEPS):
        for label, points in sorted(curves.get(sweep, {}).items()):
            ok = [p for p in points if p.get("error") is None]
            if not ok:
                continue
            color, ls = styles.get(label, ("gray", ":"))
            xs = [p["x"] for p in ok]
            mem = [p["peak_rss_over_baseline_bytes"] / 2**30 for p in ok]
            sec = [p["median_s"] for p in ok]
            axes[0][col].plot(xs, mem, ls, color=color, marker="o", ms=3, label=label)
            axes[1][col].plot(xs, sec, ls, color=color, marker="o", ms=3, label=label)
        for row, ylabel in enumerate(
            ("training peak RSS over baseline (GiB)", "s / training step")
        ):
            ax = axes[row][col]
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel(titles[sweep] + ("" if sweep == "batch_size" else " (batch 32)"))
            ax.set_ylabel(ylabel)
            ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle("Training memory and step time, TFT-225 elsewhere; 2 threads", fontsize=11)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    tmp.replace(path)


if __name__ == "__main__":
    import sys

    from run_all import main

    raise SystemExit(main(["--only", "scaling", *sys.argv[1:]]))
