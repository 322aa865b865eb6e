"""``report.md`` and its PNG plots, rendered from the files of a run directory.

The report is a pure function of what the run wrote (``config.json``, ``run.json``,
``metrics.jsonl``, ``memory.jsonl``, ``interpretation.json`` and, once ``foxhunt evaluate`` has
run, the latest of ``evaluation.json``, ``evaluation-N.json``), so it can be rebuilt at any time with :func:`write_report`.

Plots use matplotlib's object API (``Figure``), never pyplot, so no global backend state is
touched.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from foxhunt import runtime
from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.rundir import RunDir
from foxhunt.artifacts.served import served_line, served_weights
from foxhunt.config import ConfigError, RunConfig
from foxhunt.errors import InputError
from foxhunt.memory.report import breakdown_table_markdown, plot_memory_timeline
from foxhunt.memory.units import format_bytes
from foxhunt.runtime import read_jsonl
from foxhunt.train.reporting.evaluation import (
    EVALUATION_PLOTS,
    evaluation_md,
    write_evaluation_plots,
)

log = logging.getLogger(__name__)

PLOTS = (
    "loss_curves",
    "fan_chart",
    "variable_importance",
    "memory_timeline",
    *EVALUATION_PLOTS,
)
"""PNG names (without suffix) the report may embed."""


def _json(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        return None


# --- plots -----------------------------------------------------------------------------------


def plot_losses(metrics: Sequence[dict[str, Any]], png: Path) -> bool:
    """Training loss per logged step and train/validation loss per epoch. False if no data."""
    steps = [r for r in metrics if r.get("kind") == "step"]
    epochs = [r for r in metrics if r.get("kind") == "epoch"]
    if not steps and not epochs:
        return False
    fig = Figure(figsize=(8, 4.5), layout="constrained")
    ax = fig.add_subplot()
    if steps:
        ax.plot(
            [r["step"] for r in steps],
            [r["loss"] for r in steps],
            lw=1,
            alpha=0.6,
            label="train (logged steps)",
        )
    if epochs:
        x = [r["step"] for r in epochs]
        ax.plot(x, [r["train_loss"] for r in epochs], "o-", label="train (epoch mean)")
        ax.plot(x, [r["val_loss"] for r in epochs], "s-", label="validation")
        for r in epochs:
            if r.get("best"):
                ax.annotate(
                    f"e{r['epoch']}",
                    (r["step"], r["val_loss"]),
                    textcoords="offset points",
                    xytext=(0, 6),
                    ha="center",
                    fontsize=8,
                )
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("quantile loss (scaled target)")
    ax.set_title("Training and validation loss")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.savefig(png, dpi=110)
    return True


def plot_fan_chart(fan: dict[str, Any], png: Path) -> bool:
    """Quantile bands of the forecast price over the actual closes of one window."""
    closes = fan.get("close") or []
    bands = fan.get("price_quantiles") or []
    if not closes or not bands:
        return False
    levels: list[float] = fan["quantiles"]
    enc = int(fan["encoder_length"])
    horizon = len(bands)
    fig = Figure(figsize=(9, 4.5), layout="constrained")
    ax = fig.add_subplot()
    x_all = list(range(len(closes)))
    ax.plot(x_all[:enc], closes[:enc], color="black", lw=1.2, label="actual (encoder)")
    ax.plot(
        x_all[enc - 1 :], closes[enc - 1 :], color="black", lw=1.2, ls="--", label="actual (future)"
    )
    x_dec = list(range(enc, enc + horizon))
    q = len(levels)
    for i in range(q // 2):  # outer bands first, lighter
        lo = [row[i] for row in bands]
        hi = [row[q - 1 - i] for row in bands]
        ax.fill_between(
            x_dec,
            lo,
            hi,
            color="tab:blue",
            alpha=0.12 + 0.5 * i / max(q, 1),
            lw=0,
            label=f"{levels[i]:g}–{levels[q - 1 - i]:g}",
        )
    mid = min(range(q), key=lambda j: abs(levels[j] - 0.5))
    ax.plot(x_dec, [row[mid] for row in bands], color="tab:blue", lw=1.5, label=f"q{levels[mid]:g}")
    ax.axvline(enc - 1, color="grey", lw=0.8)
    times = fan.get("times") or []
    if times:
        ticks = sorted({0, enc - 1, len(closes) - 1})
        ax.set_xticks(ticks, [str(times[t])[:16].replace("T", " ") for t in ticks], fontsize=8)
    ax.set_ylabel("price")
    ax.set_title(
        f"Forecast for {fan.get('symbol', '')} from {str(fan.get('origin', ''))[:16].replace('T', ' ')} (last validation window)"
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="upper left")
    fig.savefig(png, dpi=110)
    return True


def plot_variable_importance(
    importance: dict[str, dict[str, float]], png: Path, top: int = 15
) -> bool:
    """Mean selection weights: top historical inputs, every known and static input."""
    groups = [(g, importance.get(g) or {}) for g in ("historical", "known", "static")]
    groups = [(g, w) for g, w in groups if w]
    if not groups:
        return False
    fig = Figure(figsize=(12, 5), layout="constrained")
    for k, (group, weights) in enumerate(groups):
        ax = fig.add_subplot(1, len(groups), k + 1)
        items = sorted(weights.items(), key=lambda kv: kv[1], reverse=True)[:top][::-1]
        names = [n.split("__", 1)[-1] for n, _ in items]
        ax.barh(names, [v for _, v in items], color="tab:green")
        ax.set_title(
            f"{group} ({len(weights)} inputs)" + (f", top {top}" if len(weights) > top else "")
        )
        ax.tick_params(axis="y", labelsize=7)
        ax.set_xlabel("mean selection weight")
    fig.suptitle("Variable importance (validation windows)")
    fig.savefig(png, dpi=110)
    return True


def plot_memory(memory_jsonl: Path, png: Path) -> bool:
    """Memory timeline (``foxhunt.memory.report.plot_memory_timeline``). False if no log."""
    if not memory_jsonl.is_file() or memory_jsonl.stat().st_size == 0:
        return False
    try:
        plot_memory_timeline(memory_jsonl, png)
    except InputError as e:  # unreadable log: say so in the report instead of failing it
        log.warning("memory timeline: %s", e)
        return False
    return png.is_file()


def _estimate_md(cfg: dict[str, Any]) -> str | None:
    try:
        return breakdown_table_markdown(RunConfig.from_dict(cfg))
    except (ConfigError, TypeError, ValueError) as e:
        log.warning("memory estimate for the report: %s", e)
        return None


# --- markdown --------------------------------------------------------------------------------


def _summary_rows(
    cfg: dict[str, Any],
    info: dict[str, Any],
    epochs: Sequence[dict[str, Any]],
    best: dict[str, Any] | None,
    final: Path | None,
) -> list[tuple[str, str]]:
    """The key/value rows at the top of the report."""
    m, t = cfg.get("model", {}), cfg.get("train", {})
    windows = info.get("windows", {})
    params = info.get("parameters")
    micro = info.get("micro_batch") or t.get("micro_batch_size") or t.get("batch_size")
    seconds = info.get("seconds")
    model = (
        f"hidden {m.get('hidden')} · {m.get('n_heads')} heads · {m.get('lstm_layers')} LSTM "
        f"layers · encoder {m.get('encoder_length')} · horizon {m.get('horizon')} · "
        f"{len(m.get('quantiles', []))} quantiles"
    )
    if isinstance(params, int):
        model += f" · {params:,} parameters"
    training = (
        f"batch {t.get('batch_size')} (micro {micro}) · validation batch "
        f"{t.get('validation_batch_size')} · {t.get('precision')} · lr {t.get('lr')} · "
        f"checkpointing {t.get('checkpointing')} · seed {t.get('seed')} · {t.get('device')}"
    )
    steps = epochs[-1]["step"] if epochs else 0
    rows = [
        ("preset", str(cfg.get("preset"))),
        ("bars", f"`{info.get('bars')}` (fingerprint `{str(info.get('fingerprint'))[:16]}`)"),
        (
            "windows",
            f"train {windows.get('train')} · validation {windows.get('val')} · test {windows.get('test')}",
        ),
        ("model", model),
        ("training", training),
        (
            "progress",
            f"{len(epochs)} epochs · {steps} steps · stopped: {info.get('stop_reason', 'running')}",
        ),
        (
            "best",
            f"epoch {best['epoch']}, validation loss {best['val_loss']:.4f}"
            if best
            else "none yet",
        ),
        ("final weights", f"`checkpoints/{final.name}`" if final else "none (run incomplete)"),
        ("served", _served(final)),
        ("wall time", f"{seconds:.0f} s" if isinstance(seconds, int | float) else "?"),
    ]
    if isinstance(info.get("ensemble"), dict):  # foxhunt train --ensemble N (docs/training.md)
        seeds = ", ".join(str(m.get("seed")) for m in info.get("members", []))
        rows[-5:-1] = [
            ("ensemble", f"{len(info.get('members', []))} members (seeds {seeds}), stopped: "
             f"{info.get('stop_reason', 'running')}; each a run in `members/K` with its own "
             "report; their calibrated quantiles are averaged"),
        ]  # fmt: skip
    return rows


def _served(final: Path | None) -> str:
    """Which weights the run serves (the start or an epoch) and how training moved its
    validation loss."""
    if final is None:
        return "nothing yet"
    try:
        return served_line(served_weights(final.parent, final))
    except InputError:  # a run from before the sidecars said (ModelDirError)
        return "not recorded"


def _drawn(png: Path, source: Path) -> bool:
    """``png`` exists and was written after ``source`` (which exists): already drawn from it."""
    try:
        return source.stat().st_mtime_ns < png.stat().st_mtime_ns
    except FileNotFoundError:
        return False


def write_report(run: RunDir) -> Path:
    """Render the plots and ``report.md`` from the run directory's files.

    Args:
        run: A run directory (at least ``config.json``).

    Returns:
        The path of ``report.md``.
    """
    cfg = _json(run.config) or {}
    info = _json(run.run_info) or {}
    metrics = read_jsonl(run.metrics)
    memory = read_jsonl(run.memory)
    interp = _json(run.interpretation) or {}
    evaluation = _json((run.evaluations() or [run.evaluation])[-1])

    # The training plots are drawn again only where their source changed since (``evaluate``
    # rewrites the report: 1.5 s of matplotlib for the same four pictures otherwise).
    made = {
        "loss_curves": _drawn(run.png("loss_curves"), run.metrics)
        or plot_losses(metrics, run.png("loss_curves")),
        "fan_chart": _drawn(run.png("fan_chart"), run.interpretation)
        or plot_fan_chart(interp.get("fan_chart") or {}, run.png("fan_chart")),
        "variable_importance": _drawn(run.png("variable_importance"), run.interpretation)
        or plot_variable_importance(
            interp.get("variable_importance") or {}, run.png("variable_importance")
        ),
        "memory_timeline": _drawn(run.png("memory_timeline"), run.memory)
        or plot_memory(run.memory, run.png("memory_timeline")),
    }

    epochs = [r for r in metrics if r.get("kind") == "epoch"]
    best = ckpt.read_best(run.checkpoints) if run.checkpoints.is_dir() else None
    final = ckpt.final_weights(run.checkpoints)
    name = run.root.resolve().name
    rows = _summary_rows(cfg, info, epochs, best, final)
    md = [
        f"# foxhunt run `{name}`",
        "",
        "| | |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in rows],
        "",
    ]

    md += ["## Loss", ""]
    if made["loss_curves"]:
        md += ["![loss curves](loss_curves.png)", ""]
    if epochs:
        md += [
            "| epoch | step | train loss | validation loss | best | seconds |",
            "|---|---|---|---|---|---|",
        ]
        md += [
            f"| {r['epoch']} | {r['step']} | {r['train_loss']:.4f} | {r['val_loss']:.4f} | {'★' if r.get('best') else ''} | {r.get('seconds', 0):.1f} |"
            for r in epochs
        ]
        md.append("")
    ooms = [r for r in metrics if r.get("kind") == "oom"]
    if ooms:
        md += ["Out-of-memory back-offs:", "", *[f"- {r['message']}" for r in ooms], ""]

    if evaluation:
        pngs = {name: run.png(name) for name in EVALUATION_PLOTS}
        md += evaluation_md(evaluation, write_evaluation_plots(evaluation, pngs))
    else:
        md += [
            "## Evaluation",
            "",
            f"Not run yet: `foxhunt evaluate --model {run.root} --bars BARS`.",
            "",
        ]

    md += ["## Forecast", ""]
    if made["fan_chart"]:
        md += [
            "Quantile bands of the implied price over the actual closes, for the last validation window.",
            "",
            "![fan chart](fan_chart.png)",
            "",
        ]
    md += ["## Variable importance", ""]
    if made["variable_importance"]:
        md += [
            "Mean variable-selection weights over the validation windows (each group sums to 1).",
            "",
            "![variable importance](variable_importance.png)",
            "",
        ]

    md += ["## Memory", ""]
    if made["memory_timeline"]:
        md += ["![memory timeline](memory_timeline.png)", ""]
    if memory:
        peak_rss = max((r.get("peak_rss_bytes", 0) for r in memory), default=0)
        md.append(
            f"- peak RSS: {format_bytes(peak_rss)} ({len(memory)} snapshots in `memory.jsonl`)"
        )
        cuda_peak = max((r.get("cuda_max_allocated_bytes", 0) for r in memory), default=0)
        if cuda_peak:
            md.append(f"- peak CUDA allocated: {format_bytes(cuda_peak)}")
        errors = [r for r in memory if r.get("errors")]
        if errors:
            md.append(f"- **{len(errors)} snapshots failed to read a source** (see `memory.jsonl`)")

        # Under torchrun each rank logs its own memory; rank 0's is above.
        def rank(path: Path) -> str:
            return path.stem.removeprefix("memory.rank")  # memory.rank3.jsonl -> "3"

        ranks = sorted(run.root.glob("memory.rank*.jsonl"), key=lambda f: int(rank(f) or 0))
        for path in ranks:
            peak = max((r.get("peak_rss_bytes", 0) for r in read_jsonl(path)), default=0)
            md.append(f"- rank{rank(path)} peak RSS: {format_bytes(peak)} (`{path.name}`)")
    leaks = [r["message"] for r in metrics if r.get("kind") == "memory_warning"]
    md += [f"- {m}" for m in leaks] or ["- no growth between epochs beyond the leak threshold"]
    estimate = _estimate_md(cfg) if cfg else None
    if estimate:
        md += ["", estimate]
    md.append("")

    md += [
        "## Files",
        "",
        "`config.json` (resolved config) · `features.json` (features, scaler, fingerprint) · "
        "`checkpoints/` (safetensors + JSON sidecars; `optimizer_epoch_N.pt` for `--resume`) · "
        "`metrics.jsonl` · `memory.jsonl` · `baselines.json` · `interpretation.json`",
        "",
    ]
    runtime.atomic_write_text(run.report, "\n".join(md))
    return run.report
