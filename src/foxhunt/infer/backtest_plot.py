"""``backtest.png``: mean pinball loss per fold for the TFT and every baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from foxhunt.artifacts.baselines import BASELINE_LABELS


def model_label(key: str, result: dict[str, Any]) -> str:
    """A model's name in the table and the plot: the TFT (an ensemble's size, when it is one),
    an ensemble's member 0 alone, or a baseline's label."""
    members = result.get("ensemble", {}).get("members")
    if key == "tft":
        return f"TFT (ensemble of {members})" if members else "TFT"
    if key == result.get("ensemble", {}).get("member0"):
        return "TFT member 0 alone"
    return BASELINE_LABELS.get(key, key)


def backtest_figure(result: dict[str, Any]) -> Figure:
    """One line per model: mean pinball loss (bp) on each fold (x: fold number)."""
    fig = Figure(figsize=(8, 4.5))
    ax = fig.add_subplot()
    folds = result["folds"]
    x = [f["fold"] for f in folds]
    for key in folds[0]["scores"]:
        y = [f["scores"][key]["mean_pinball"] * 1e4 for f in folds]
        label = model_label(key, result)
        ax.plot(x, y, marker="o", linewidth=2.5 if key == "tft" else 1.2, label=label)
    ax.set_xticks(x)
    ax.set_xlabel("fold")
    ax.set_ylabel("mean pinball loss (bp of log return)")
    ax.set_title(f"Rolling-origin backtest ({result['refit']} refit), {result['bars']}")
    ax.legend(fontsize="small")
    return fig


def plot_backtest(result: dict[str, Any], png: Path) -> None:
    """Save :func:`backtest_figure` to ``png``."""
    fig = backtest_figure(result)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
