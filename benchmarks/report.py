"""Render benchmark results: machine facts, console tables, ``summary.md`` and the table plot.

Reads what ``run_all.py`` wrote into a results folder (``meta.json``, ``table.json``,
``accuracy.json``, ``scaling.json``) and writes ``summary.md`` and ``table.png`` beside them.
Re-render without re-running: ``.venv/bin/python benchmarks/report.py [RESULTS_DIR]``.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

GIB = 2**30
MIB = 2**20
CPU_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16")
LABELS = {
    "foxhunt": "foxhunt, glibc allocator, fp32 (recompute on)",
    "foxhunt-lean": "foxhunt, lean allocator, fp32 (recompute on)",
    "foxhunt-bf16": "foxhunt, glibc + bf16 (recompute on)",
    "pf-hcs16": "pytorch-forecasting, hcs 16",
    "pf-hcs256": "pytorch-forecasting, hcs 256",
}


# --- machine and versions --------------------------------------------------------------------


def _versions(python: Path, names: tuple[str, ...]) -> dict[str, str]:
    code = (
        "import importlib.metadata as m, json\n"
        "out = {}\n"
        f"for n in {list(names)!r}:\n"
        "    try: out[n] = m.version(n)\n"
        "    except m.PackageNotFoundError: pass\n"
        "print(json.dumps(out))\n"
    )
    try:
        proc = subprocess.run(
            [str(python), "-c", code], capture_output=True, text=True, timeout=60, check=True
        )
        return json.loads(proc.stdout)
    except (OSError, subprocess.SubprocessError, json.JSONDecodeError):
        return {}


def collect_meta(main_python: Path, bench_python: Path | None) -> dict[str, Any]:
    """Machine, versions and load at the start of a run."""
    cpu, flags = platform.processor(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and not cpu:
                cpu = line.split(":", 1)[1].strip()
            elif line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    try:
        mem_kib = int(Path("/proc/meminfo").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        mem_kib = 0
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).parent,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    meta: dict[str, Any] = {
        "date_utc": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "git_commit": commit,
        "cpu": cpu,
        "cpu_flags": [f for f in CPU_FLAGS if f in flags],
        "logical_cpus": os.cpu_count(),
        "memory_gib": round(mem_kib / 2**20, 1),
        "loadavg_start": os.getloadavg()[0],
        "python": platform.python_version(),
        "main_venv": _versions(main_python, ("torch", "foxhunt", "numpy", "polars")),
    }
    if bench_python is not None:
        meta["bench_venv"] = _versions(
            bench_python, ("torch", "pytorch-forecasting", "lightning", "numpy", "pandas", "arch")
        )
    return meta


def load_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, or None when the file does not exist."""
    return json.loads(path.read_text()) if path.exists() else None


# --- formatting --------------------------------------------------------------------------------


def _gib(b: float | None) -> str:
    return "—" if b is None else f"{b / GIB:.2f} GiB"


def _mib(b: float | None) -> str:
    return "—" if b is None else f"{b / MIB:.0f} MiB"


def _fraction(f: float) -> str:
    return f"{f:.3f} (1/{1 / f:.1f})" if 0 < f < 1 else f"{f:.2f} (more than theirs)"


def table_rows(out: Path) -> tuple[list[list[str]], list[list[str]], dict[str, Any] | None]:
    """(main-table rows, ratio rows, gemm record) as display strings."""
    data = load_json(out / "table.json")
    if not data:
        return [], [], None
    gemm = data.get("gemm")
    peak = gemm["fp32_peak_flops_per_s"] if gemm else None
    rows = []
    for r in data["rows"]:
        if "median_s" not in r:
            rows.append(
                [LABELS.get(r["variant"], r["variant"]), r["mode"], str(r["batch_size"])]
                + ["failed: " + "; ".join(r["errors"])[:80]]
                + [""] * 5
            )
            continue
        flops = "—"
        if r.get("flops_per_s"):
            flops = f"{r['flops_per_s'] / 1e9:.0f}"
            if peak:
                flops += f" ({100 * r['flops_per_s'] / peak:.0f} %)"
        rows.append(
            [
                LABELS.get(r["variant"], r["variant"]),
                r["mode"],
                str(r["batch_size"]),
                f"{r['params'] / 1e6:.2f} M",
                f"{r['median_s']:.3f}",
                f"{r['samples_per_s']:.1f}",
                _gib(r["peak_rss_over_baseline_bytes"]),
                _mib(r.get("saved_activation_bytes")),
                flops,
            ]
        )
    ratios = [
        [
            r["mode"],
            str(r["batch_size"]),
            LABELS.get(r.get("foxhunt", "foxhunt"), "foxhunt"),
            LABELS.get(r["against"], r["against"]),
            f"{r['speedup']:.1f}×",
            _fraction(r["memory_fraction"]),
        ]
        for r in data["ratios"]
    ]
    return rows, ratios, gemm


TABLE_HEAD = [
    "library",
    "mode",
    "batch",
    "params",
    "s/step (median)",
    "samples/s",
    "peak RSS over baseline",
    "saved activations",
    "matmul GFLOP/s (% of fp32 GEMM peak)",
]
RATIO_HEAD = ["mode", "batch", "foxhunt", "against", "foxhunt speed-up", "foxhunt memory / theirs"]
ACC_HEAD = [
    "dataset",
    "model",
    "params",
    "epochs (best)",
    "test pinball (bp)",
    "vs foxhunt",
    "P50 risk",
    "P90 risk",
    "coverage 10–90",
    "train time",
]


def accuracy_rows(out: Path) -> list[list[str]]:
    """Accuracy table rows (models, then baselines) as display strings."""
    data = load_json(out / "accuracy.json")
    if not data:
        return []
    rows = []
    fox = {
        r["dataset"]: r["test"]["pinball"]
        for r in data["rows"]
        if r["model"] == "foxhunt (default)" and not r.get("error")
    }
    for r in data["rows"]:
        if r.get("error"):
            rows.append([r["dataset"], r["model"], "failed: " + r["error"][:80]] + [""] * 7)
            continue
        t = r["test"]
        ref = fox.get(r["dataset"])
        versus = "—" if ref is None else f"{100 * (t['pinball'] / ref - 1):+.1f} %"
        sd = f" ± {1e4 * t['pinball_sd']:.3f}" if "pinball_sd" in t else ""
        rows.append(
            [
                r["dataset"],
                r["model"],
                f"{r['params'] / 1e3:.0f} k" if r.get("params") else "—",
                f"{r['epochs']} ({r['best_epoch']})" if r.get("epochs") else "—",
                f"{1e4 * t['pinball']:.3f}{sd}",
                versus,
                f"{t['p50_risk']:.4f}",
                f"{t['p90_risk']:.4f}",
                f"{t['coverage_10_90']:.3f}",
                f"{r['train_s']:.0f} s" if r.get("train_s") else "—",
            ]
        )
    return rows


def _markdown(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _rich(title: str, head: list[str], rows: list[list[str]]) -> Table:
    t = Table(title=title, show_lines=False)
    for h in head:
        t.add_column(h)
    for r in rows:
        t.add_row(*r)
    return t


def print_table(console: Console, out: Path) -> None:
    """The main table and the ratios, on the console."""
    rows, ratios, _ = table_rows(out)
    if rows:
        console.print(_rich("TFT-225 on this machine", TABLE_HEAD, rows))
    if ratios:
        console.print(_rich("foxhunt against pytorch-forecasting", RATIO_HEAD, ratios))


def print_accuracy(console: Console, out: Path) -> None:
    """The accuracy table on the console."""
    rows = accuracy_rows(out)
    if rows:
        console.print(
            _rich("Test-split accuracy (lower is better; coverage ideal 0.80)", ACC_HEAD, rows)
        )


# --- plot and summary ----------------------------------------------------------------------------


def plot_table(out: Path) -> Path | None:
    """Bars: training/inference samples/s and peak memory per library, batch 8 and 32."""
    data = load_json(out / "table.json")
    if not data or not any("median_s" in r for r in data["rows"]):
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in data["rows"] if "median_s" in r]
    variants = [v for v in LABELS if any(r["variant"] == v for r in ok)]
    groups = sorted(
        {(r["mode"], r["batch_size"]) for r in ok}, key=lambda g: (g[0] != "train", g[1])
    )
    colors = {
        "foxhunt": "tab:blue",
        "foxhunt-lean": "tab:cyan",
        "foxhunt-bf16": "tab:green",
        "pf-hcs16": "tab:red",
        "pf-hcs256": "tab:orange",
    }
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    width = 0.8 / max(len(variants), 1)
    for ax, key, ylabel in (
        (axes[0], "samples_per_s", "samples / s (higher is better)"),
        (axes[1], "peak_rss_over_baseline_bytes", "peak RSS over baseline, GiB (lower is better)"),
    ):
        for i, v in enumerate(variants):
            ys = []
            for g in groups:
                row = next(
                    (r for r in ok if r["variant"] == v and (r["mode"], r["batch_size"]) == g), None
                )
                val = row[key] if row else 0.0
                ys.append(val / GIB if key.endswith("bytes") else val)
            xs = [j + (i - (len(variants) - 1) / 2) * width for j in range(len(groups))]
            ax.bar(xs, ys, width, label=LABELS[v], color=colors.get(v, "gray"))
        ax.set_xticks(range(len(groups)), [f"{m}\nbatch {b}" for m, b in groups])
        ax.set_yscale("log")
        ax.set_ylabel(ylabel)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    title = "TFT-225 (5/210/10 inputs, d=256, 8 heads, encoder 50, horizon 10), 2 threads"
    loads = [r.get("loadavg_after", 0.0) for r in data["records"] if "error" not in r]
    if loads and max(loads) > 2.75:
        title += (
            f"\nmachine shared (load average up to {max(loads):.1f}): speeds are not meaningful"
        )
    fig.suptitle(title)
    fig.tight_layout()
    path = out / "table.png"
    tmp = path.with_name(path.name + ".tmp")
    fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    tmp.replace(path)
    return path


def scaling_markdown(out: Path) -> str:
    """One markdown table per sweep: GiB and s/step per series at every point."""
    data = load_json(out / "scaling.json")
    if not data:
        return ""
    parts = []
    for sweep, by_series in data["curves"].items():
        labels = sorted(by_series)
        xs = sorted({p["x"] for pts in by_series.values() for p in pts})
        head = [sweep] + [f"{s} (GiB · s)" for s in labels]
        rows = []
        for x in xs:
            row = [str(x)]
            for s in labels:
                p = next((p for p in by_series[s] if p["x"] == x), None)
                if p is None:
                    row.append("—")
                elif p.get("error"):
                    row.append("failed")
                else:
                    row.append(
                        f"{p['peak_rss_over_baseline_bytes'] / GIB:.2f} · {p['median_s']:.3f}"
                    )
            rows.append(row)
        parts.append(_markdown(head, rows))
    return "\n\n".join(parts)


def load_note(out: Path, section: str, threads: int) -> str:
    """Load average seen by the section's jobs, flagged when other work shared the machine."""
    data = load_json(out / f"{section}.json")
    loads = [
        x
        for r in (data or {}).get("records", [])
        for x in (r.get("loadavg_before"), r.get("loadavg_after"))
        if x is not None
    ]
    if not loads:
        return "load average not recorded"
    text = f"1-min load average during its jobs {min(loads):.1f}–{max(loads):.1f}"
    if max(loads) > threads + 0.75:
        text += " (**taken while the machine was shared with other work: treat as noisy**)"
    return text


def write_summary(out: Path) -> Path:
    """Write ``summary.md`` (machine, versions, every table present) and ``table.png``."""
    meta = load_json(out / "meta.json") or {}
    threads = meta.get("threads", 2)
    lines = ["# Benchmark results", ""]
    if meta:
        lines += [
            f"- machine: {meta.get('cpu')}, {meta.get('logical_cpus')} logical CPUs, "
            f"{meta.get('memory_gib')} GiB; CPU flags: {', '.join(meta.get('cpu_flags', []))}",
            f"- threads per worker: {threads}; commit {meta.get('git_commit')}",
            f"- main venv: {meta.get('main_venv')}",
            f"- bench venv: {meta.get('bench_venv')}",
        ]
        for section, info in meta.get("sections", {}).items():
            lines.append(
                f"- `{section}`: {info['date_utc']} UTC, "
                f"`benchmarks/run_all.py {' '.join(info['argv'])}`, {load_note(out, section, threads)}"
            )
        lines.append("")
    rows, ratios, gemm = table_rows(out)
    if rows:
        plot_table(out)
        lines += ["## TFT-225: training and inference", "", _markdown(TABLE_HEAD, rows), ""]
        if gemm:
            lines += [
                f"fp32 GEMM peak on this machine (best square `torch.mm`, 2 threads): "
                f"{gemm['fp32_peak_flops_per_s'] / 1e9:.0f} GFLOP/s; bf16: "
                f"{gemm['bf16_peak_flops_per_s'] / 1e9:.0f} GFLOP/s.",
                "",
            ]
        lines += [_markdown(RATIO_HEAD, ratios), "", "![table](table.png)", ""]
    acc = accuracy_rows(out)
    if acc:
        lines += ["## Accuracy (test split)", "", _markdown(ACC_HEAD, acc), ""]
    sc = scaling_markdown(out)
    if sc:
        lines += [
            "## Scaling (training, batch 32 unless swept)",
            "",
            sc,
            "",
            "![scaling](scaling.png)",
            "",
        ]
    path = out / "summary.md"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(lines))
    tmp.replace(path)
    return path


if __name__ == "__main__":
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "results"
    print(write_summary(folder))
