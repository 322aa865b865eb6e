"""The report's evaluation section: scores, the verdict against every baseline, a reliability
diagram and a PIT histogram, all from a recorded ``evaluation.json``.

* **Reliability diagram**: for every quantile level ``q`` (x), the share of outcomes at or below
  the forecast quantile (y), for the TFT and every baseline; calibrated forecasts lie on the
  diagonal.
* **PIT histogram** of the TFT: the Q forecast quantiles cut the line into Q + 1 bins of nominal
  probability ``q_k - q_{k-1}`` (with ``q_0 = 0``, ``q_{Q+1} = 1``); each bar is the share of
  outcomes in its bin divided by that probability, so a calibrated forecast is flat at 1, a
  U shape means too narrow, a hump too wide.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from foxhunt.artifacts.baselines import BASELINE_LABELS

EVALUATION_PLOTS = ("reliability", "pit_histogram")
"""PNG names (without suffix) of the evaluation section."""


def _label(key: str) -> str:
    return "TFT" if key == "tft" else BASELINE_LABELS.get(key, key)


def cell(x: float | None, spec: str, scale: float = 1.0, unit: str = "") -> str:
    """A number for a table, ``—`` where it is undefined (JSON ``null``, NaN, missing): a
    relative difference against a baseline whose loss is 0, a p-value with too few windows."""
    if x is None or math.isnan(x):
        return "—"
    return f"{x * scale:{spec}}{unit}"


def reliability_figure(ev: dict[str, Any]) -> Figure | None:
    """Nominal vs observed level of every quantile, one line per model; None without data."""
    scores = {k: v for k, v in ev.get("scores", {}).items() if v.get("observed_levels")}
    if not scores:
        return None
    fig = Figure(figsize=(6, 6))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", label="calibrated")
    for key, s in scores.items():
        levels = [float(q) for q in s["observed_levels"]]
        ax.plot(levels, list(s["observed_levels"].values()), marker="o", label=_label(key))
    ax.set_xlabel("nominal level")
    ax.set_ylabel("observed share of outcomes ≤ quantile")
    ax.set_title("Reliability")
    ax.legend(fontsize="small")
    return fig


def pit_figure(ev: dict[str, Any]) -> Figure | None:
    """The TFT's PIT histogram over its quantile bins (see the module docstring); None
    without data."""
    s = ev.get("scores", {}).get("tft", {})
    pit, levels = s.get("pit"), ev.get("quantiles")
    if not pit or not levels or len(pit) != len(levels) + 1:
        return None
    edges = [0.0, *map(float, levels), 1.0]
    widths = [b - a for a, b in zip(edges[:-1], edges[1:], strict=True)]
    heights = [share / w for share, w in zip(pit, widths, strict=True)]
    fig = Figure(figsize=(7, 4))
    ax = fig.add_subplot()
    ax.bar(edges[:-1], heights, width=widths, align="edge", edgecolor="black", label="TFT")
    ax.axhline(1.0, color="grey", linestyle="--", label="calibrated")
    ax.set_xlabel("PIT (bins between forecast quantiles)")
    ax.set_ylabel("observed share / nominal share")
    ax.set_title("PIT histogram (TFT)")
    ax.legend(fontsize="small")
    return fig


def write_evaluation_plots(ev: dict[str, Any], png: dict[str, Path]) -> dict[str, bool]:
    """Save the evaluation plots to ``png[name]``; name -> whether it was made."""
    made = {}
    for name, fig in (("reliability", reliability_figure(ev)), ("pit_histogram", pit_figure(ev))):
        if fig is not None:
            fig.tight_layout()
            fig.savefig(png[name], dpi=100)
        made[name] = fig is not None
    return made


def evaluation_md(ev: dict[str, Any], made: dict[str, bool]) -> list[str]:
    """The report's evaluation section (markdown lines)."""
    lines = [
        "## Evaluation",
        "",
        f"`foxhunt evaluate` on `{ev.get('bars')}` ({ev.get('split')}, "
        f"{ev.get('n_windows')} windows). Pinball loss in basis points of log return; q-risk as "
        "in the TFT paper (2·Σ pinball / Σ|y|); coverage nominal 80 % (10–90) and 96 % (2–98). "
        "Baselines and tests: docs/evaluation.md.",
        "",
        "| model | mean pinball (bp) | P50 q-risk | P90 q-risk | 10–90 coverage | 2–98 coverage |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in ev.get("scores", {}).items():
        cov = s.get("coverage") or {}
        risk = s.get("q_risk") or {}
        lines.append(
            f"| {_label(name)} | {cell(s.get('mean_pinball'), '.3f', 1e4)} | "
            f"{cell(risk.get('P50'), '.4f')} | {cell(risk.get('P90'), '.4f')} | "
            f"{cell(cov.get('10-90'), '.1f', 100, ' %')} | "
            f"{cell(cov.get('2-98'), '.1f', 100, ' %')} |"
        )
    comparisons = ev.get("comparisons")
    if comparisons:
        lines += [
            "",
            "TFT vs each baseline: Diebold–Mariano test on the per-window pinball losses with a "
            "Newey–West variance; a win or a loss only when p < 0.05. Per horizon: W win, "
            "L lose, · no significant difference.",
            "",
            "| baseline | TFT − baseline | DM | p | verdict | per horizon |",
            "|---|---|---|---|---|---|",
        ]
        marks = {"win": "W", "lose": "L"}
        for name, c in comparisons.items():
            p = c["pooled"]
            per_h = "".join(marks.get(x["verdict"], "·") for x in c["per_horizon"])
            lines.append(
                f"| {_label(name)} | {cell(p.get('relative'), '+.2f', 100, ' %')} | "
                f"{cell(p.get('dm_statistic'), '+.2f')} | {cell(p.get('p_value'), '.3g')} | "
                f"{p['verdict']} | `{per_h}` |"
            )
    elif ev.get("tft_beats"):  # an evaluation from before the significance test
        verdict = ", ".join(f"{k}: {'yes' if v else 'no'}" for k, v in ev["tft_beats"].items())
        lines += ["", f"TFT beats the baseline on mean pinball loss — {verdict}."]
    if made.get("reliability"):
        lines += ["", "![reliability diagram](reliability.png)"]
    if made.get("pit_histogram"):
        lines += ["", "![PIT histogram](pit_histogram.png)"]
    return [*lines, ""]
