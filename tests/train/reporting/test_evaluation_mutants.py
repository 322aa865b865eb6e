"""The report's evaluation section, exactly (train/reporting/evaluation.py): the Markdown of
hand-made evaluation records (current and pre-significance-test formats, missing and NaN
numbers, baselines without a display name), the reliability diagram and PIT histogram read off
their matplotlib objects, and the PNGs ``write_evaluation_plots`` saves.

docs/evaluation.md: the report shows every model's row, the verdict table, the reliability
diagram (``reliability.png``, every model) and the TFT's PIT histogram (``pit_histogram.png``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from foxhunt.train.reporting.evaluation import (
    EVALUATION_PLOTS,
    evaluation_md,
    pit_figure,
    reliability_figure,
    write_evaluation_plots,
)

NSD = "no significant difference"  # foxhunt.infer.significance.NO_DIFFERENCE

HEADER = [
    "| model | mean pinball (bp) | P50 q-risk | P90 q-risk | 10–90 coverage | 2–98 coverage |",
    "|---|---|---|---|---|---|",
]
INTRO_TAIL = (
    " Pinball loss in basis points of log return; q-risk as in the TFT paper "
    "(2·Σ pinball / Σ|y|); coverage nominal 80 % (10–90) and 96 % (2–98). "
    "Baselines and tests: docs/evaluation.md."
)


def _pooled(relative: float, dm: float, p: float, verdict: str) -> dict[str, Any]:
    return {"relative": relative, "dm_statistic": dm, "p_value": p, "verdict": verdict}


def _horizons(*verdicts: str) -> list[dict[str, Any]]:
    return [_pooled(0.0, 0.0, 1.0, v) for v in verdicts]


def _current() -> dict[str, Any]:
    """An evaluation with the significance test: a TFT with every number, GARCH with a q-risk
    written without a decimal point, a NaN one and no 2–98 coverage, and a baseline this
    version has no display name for and no q-risk or coverage at all."""
    return {
        "bars": "es_test.parquet",
        "split": "test",
        "n_windows": 12,
        "quantiles": [0.1, 0.5, 0.9],
        "scores": {
            "tft": {
                "mean_pinball": 0.00123456,
                "q_risk": {"P50": 0.91234, "P90": 0.5},
                "coverage": {"10-90": 0.8137, "2-98": 0.9583},
            },
            "garch": {
                "mean_pinball": 0.0025,
                "q_risk": {"P50": 1, "P90": math.nan},
                "coverage": {"10-90": 0.75},
            },
            "mystery": {"mean_pinball": 0.0001},
        },
        "comparisons": {
            "garch": {
                "pooled": _pooled(-0.0312, -2.5, 0.0123456, "win"),
                "per_horizon": _horizons("win", "lose", NSD),
            },
            "mystery": {
                "pooled": _pooled(0.015, 1.0, 0.3, NSD),
                "per_horizon": _horizons(NSD, NSD),
            },
        },
        # written beside the comparisons since; the table above replaces this plain verdict
        "tft_beats": {"garch": True, "mystery": False},
    }


def test_markdown_of_an_evaluation_with_the_significance_test_and_both_plots() -> None:
    got = evaluation_md(_current(), {"reliability": True, "pit_histogram": True})
    assert got == [
        "## Evaluation",
        "",
        "`foxhunt evaluate` on `es_test.parquet` (test, 12 windows)." + INTRO_TAIL,
        "",
        *HEADER,
        # 0.00123456 * 1e4 = 12.3456 bp; q-risk 4 decimals; coverage in % with 1 decimal
        "| TFT | 12.346 | 0.9123 | 0.5000 | 81.4 % | 95.8 % |",
        # an int q-risk prints as written, NaN and a missing coverage as a dash
        "| GARCH(1,1) | 25.000 | 1.0000 | — | 75.0 % | — |",  # a JSON integer: a number
        # no display name: its key; no q_risk, no coverage: dashes
        "| mystery | 1.000 | — | — | — | — |",
        "",
        "TFT vs each baseline: Diebold–Mariano test on the per-window pinball losses with a "
        "Newey–West variance; a win or a loss only when p < 0.05. Per horizon: W win, "
        "L lose, · no significant difference.",
        "",
        "| baseline | TFT − baseline | DM | p | verdict | per horizon |",
        "|---|---|---|---|---|---|",
        # relative -0.0312 -> -3.12 %, signed; p to 3 significant digits; W, L, then ·
        "| GARCH(1,1) | -3.12 % | -2.50 | 0.0123 | win | `WL·` |",
        "| mystery | +1.50 % | +1.00 | 0.3 | no significant difference | `··` |",
        "",
        "![reliability diagram](reliability.png)",
        "",
        "![PIT histogram](pit_histogram.png)",
        "",
    ]


def test_markdown_links_only_the_plots_that_were_made() -> None:
    base = evaluation_md(_current(), {})
    # ends on the verdict table
    assert base[-2:] == [
        "| mystery | +1.50 % | +1.00 | 0.3 | no significant difference | `··` |",
        "",
    ]
    only_pit = evaluation_md(_current(), {"reliability": False, "pit_histogram": True})
    assert only_pit == [*base[:-1], "", "![PIT histogram](pit_histogram.png)", ""]
    only_rel = evaluation_md(_current(), {"reliability": True, "pit_histogram": False})
    assert only_rel == [*base[:-1], "", "![reliability diagram](reliability.png)", ""]


def test_markdown_of_an_evaluation_from_before_the_significance_test() -> None:
    ev = {
        "bars": "old.parquet",
        "split": "val",
        "n_windows": 3,
        "scores": {
            "tft": {"mean_pinball": 0.0003, "coverage": {"10-90": 0.8}},
            "zero": {"mean_pinball": 0.0004, "coverage": {"10-90": 0.5}},
            "ewma": {"mean_pinball": 0.00035},
        },
        "tft_beats": {"zero": True, "ewma": False},
    }
    assert evaluation_md(ev, {}) == [
        "## Evaluation",
        "",
        "`foxhunt evaluate` on `old.parquet` (val, 3 windows)." + INTRO_TAIL,
        "",
        *HEADER,
        "| TFT | 3.000 | — | — | 80.0 % | — |",
        "| zero return | 4.000 | — | — | 50.0 % | — |",
        "| EWMA (RiskMetrics) | 3.500 | — | — | — | — |",
        "",
        "TFT beats the baseline on mean pinball loss — zero: yes, ewma: no.",
        "",
    ]


def test_markdown_of_an_empty_record_is_the_bare_table() -> None:
    assert evaluation_md({"comparisons": {}, "tft_beats": {}}, {}) == [
        "## Evaluation",
        "",
        "`foxhunt evaluate` on `None` (None, None windows)." + INTRO_TAIL,
        "",
        *HEADER,
        "",
    ]
    assert evaluation_md({}, {}) == evaluation_md({"comparisons": {}, "tft_beats": {}}, {})


# --- figures --------------------------------------------------------------------------------


def _small_points() -> float:
    from matplotlib.font_manager import FontProperties

    return FontProperties(size="small").get_size_in_points()


def _rgba(color: Any) -> tuple[float, ...]:
    from matplotlib.colors import to_rgba

    return to_rgba(color)


def _reliability_ev() -> dict[str, Any]:
    return {
        "scores": {
            "tft": {"observed_levels": {"0.1": 0.2, "0.5": 0.5, "0.9": 0.7}},
            "old": {"mean_pinball": 1e-4},  # recorded before the reliability: not drawn
            "empirical": {"observed_levels": {"0.1": 0.05, "0.5": 0.45, "0.9": 0.95}},
            "zero": {"observed_levels": {}},  # nothing to draw
            "custom": {"observed_levels": {"0.25": 0.3, "0.75": 0.6}},
        }
    }


def test_reliability_diagram_draws_the_diagonal_and_one_marked_line_per_model() -> None:
    fig = reliability_figure(_reliability_ev())
    assert fig is not None
    assert tuple(fig.get_size_inches()) == (6.0, 6.0)
    (ax,) = fig.axes
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == [
        "calibrated",
        "TFT",
        "empirical quantiles",
        "custom",
    ]
    diag, tft, emp, custom = lines
    assert list(diag.get_xdata()) == [0, 1] and list(diag.get_ydata()) == [0, 1]
    assert _rgba(diag.get_color()) == _rgba("grey")
    assert diag.get_linestyle() == "--" and diag.get_marker() in ("None", None, "")
    assert list(tft.get_xdata()) == [0.1, 0.5, 0.9]
    assert list(tft.get_ydata()) == [0.2, 0.5, 0.7]
    assert list(emp.get_xdata()) == [0.1, 0.5, 0.9]
    assert list(emp.get_ydata()) == [0.05, 0.45, 0.95]
    assert list(custom.get_xdata()) == [0.25, 0.75]
    assert list(custom.get_ydata()) == [0.3, 0.6]
    for line in (tft, emp, custom):
        assert line.get_marker() == "o" and line.get_linestyle() == "-"
        assert _rgba(line.get_color()) != _rgba("grey")
    assert ax.get_title() == "Reliability"
    assert ax.get_xlabel() == "nominal level"
    assert ax.get_ylabel() == "observed share of outcomes ≤ quantile"
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [
        "calibrated",
        "TFT",
        "empirical quantiles",
        "custom",
    ]
    assert all(t.get_fontsize() == pytest.approx(_small_points()) for t in legend.get_texts())


@pytest.mark.parametrize(
    "ev",
    [
        {},
        {"scores": {}},
        {"scores": {"tft": {"mean_pinball": 1e-4}, "zero": {"observed_levels": {}}}},
    ],
)
def test_no_reliability_diagram_without_observed_levels(ev: dict[str, Any]) -> None:
    assert reliability_figure(ev) is None


def _pit_ev() -> dict[str, Any]:
    # bins [0, .2) [.2, .5) [.5, .9) [.9, 1]: nominal shares .2 .3 .4 .1
    return {"quantiles": [0.2, 0.5, 0.9], "scores": {"tft": {"pit": [0.1, 0.3, 0.5, 0.1]}}}


def test_pit_histogram_bars_are_observed_over_nominal_share_with_the_flat_line_at_one() -> None:
    fig = pit_figure(_pit_ev())
    assert fig is not None
    assert tuple(fig.get_size_inches()) == (7.0, 4.0)
    (ax,) = fig.axes
    bars = ax.patches
    assert [b.get_x() for b in bars] == pytest.approx([0.0, 0.2, 0.5, 0.9], abs=1e-12)
    assert [b.get_width() for b in bars] == pytest.approx([0.2, 0.3, 0.4, 0.1], abs=1e-12)
    # 0.1/0.2, 0.3/0.3, 0.5/0.4, 0.1/0.1
    assert [b.get_height() for b in bars] == pytest.approx([0.5, 1.0, 1.25, 1.0], abs=1e-12)
    assert all(b.get_y() == 0 for b in bars)
    assert all(b.get_edgecolor() == _rgba("black") for b in bars)
    (flat,) = ax.get_lines()
    assert list(flat.get_ydata()) == [1.0, 1.0] and list(flat.get_xdata()) == [0, 1]
    assert _rgba(flat.get_color()) == _rgba("grey") and flat.get_linestyle() == "--"
    assert flat.get_label() == "calibrated"
    assert [c.get_label() for c in ax.containers] == ["TFT"]
    assert ax.get_title() == "PIT histogram (TFT)"
    assert ax.get_xlabel() == "PIT (bins between forecast quantiles)"
    assert ax.get_ylabel() == "observed share / nominal share"
    legend = ax.get_legend()
    assert sorted(t.get_text() for t in legend.get_texts()) == ["TFT", "calibrated"]
    assert all(t.get_fontsize() == pytest.approx(_small_points()) for t in legend.get_texts())


@pytest.mark.parametrize(
    "ev",
    [
        {},  # no scores
        {"quantiles": [0.5], "scores": {"zero": {"pit": [0.5, 0.5]}}},  # no TFT
        {"scores": {"tft": {"pit": [0.5, 0.5]}}},  # no quantiles
        {"quantiles": [], "scores": {"tft": {"pit": [1.0]}}},
        {"quantiles": [0.5], "scores": {"tft": {"pit": []}}},
        {"quantiles": [0.5], "scores": {"tft": {"pit": [0.2, 0.3, 0.5]}}},  # Q + 2 shares
        {"quantiles": [0.2, 0.5, 0.9], "scores": {"tft": {"pit": [0.5, 0.5]}}},  # Q - 1
    ],
)
def test_no_pit_histogram_without_one_share_per_bin(ev: dict[str, Any]) -> None:
    assert pit_figure(ev) is None


# --- write_evaluation_plots -----------------------------------------------------------------


def _pngs(tmp_path: Path) -> dict[str, Path]:
    return {name: tmp_path / f"{name}.png" for name in EVALUATION_PLOTS}


def _pixels(path: Path) -> tuple[int, int]:
    from PIL import Image

    with Image.open(path) as im:
        assert im.format == "PNG"
        return im.size


def test_write_evaluation_plots_saves_both_at_100_dpi(tmp_path: Path) -> None:
    import matplotlib

    ev = _reliability_ev() | {"quantiles": _pit_ev()["quantiles"]}
    ev["scores"]["tft"]["pit"] = _pit_ev()["scores"]["tft"]["pit"]
    png = _pngs(tmp_path)
    # 100 dpi whatever the figure's own dpi: 6 x 6 and 7 x 4 inches
    with matplotlib.rc_context({"figure.dpi": 50, "savefig.dpi": "figure"}):
        made = write_evaluation_plots(ev, png)
    assert made == {"reliability": True, "pit_histogram": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pit_histogram.png", "reliability.png"]
    assert _pixels(png["reliability"]) == (600, 600)
    assert _pixels(png["pit_histogram"]) == (700, 400)


def test_write_evaluation_plots_saves_only_what_the_record_has(tmp_path: Path) -> None:
    png = _pngs(tmp_path)
    assert write_evaluation_plots(_reliability_ev(), png) == {
        "reliability": True,
        "pit_histogram": False,
    }
    assert [p.name for p in tmp_path.iterdir()] == ["reliability.png"]
    png["reliability"].unlink()
    assert write_evaluation_plots(_pit_ev(), png) == {
        "reliability": False,
        "pit_histogram": True,
    }
    assert [p.name for p in tmp_path.iterdir()] == ["pit_histogram.png"]
    png["pit_histogram"].unlink()
    # an evaluation from before the plots: nothing saved, no path needed
    assert write_evaluation_plots({"scores": {"tft": {"mean_pinball": 1e-4}}}, {}) == {
        "reliability": False,
        "pit_histogram": False,
    }
    assert list(tmp_path.iterdir()) == []
