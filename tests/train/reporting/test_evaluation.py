"""The report's evaluation section: verdict table, reliability diagram and PIT histogram data."""

from __future__ import annotations

import numpy as np
import pytest

from foxhunt.train.reporting.evaluation import evaluation_md, pit_figure, reliability_figure

LEVELS = [0.1, 0.5, 0.9]


def _scores(observed: list[float], pit: list[float]) -> dict:
    return {
        "mean_pinball": 2e-4,
        "q_risk": {"P50": 0.9, "P90": 0.5},
        "coverage": {"10-90": 0.8},
        "observed_levels": {f"{q:g}": v for q, v in zip(LEVELS, observed, strict=True)},
        "pit": pit,
    }


def _comparison(verdict: str, relative: float) -> dict:
    one = {
        "tft": 1.0,
        "baseline": 1.0,
        "difference": 0.0,
        "relative": relative,
        "dm_statistic": -2.5,
        "p_value": 0.012,
        "verdict": verdict,
    }
    return {"lag": 1, "pooled": one, "per_horizon": [one, one | {"verdict": "lose"}]}


EV = {
    "bars": "b.parquet",
    "split": "all windows",
    "n_windows": 9,
    "quantiles": LEVELS,
    "scores": {
        "tft": _scores([0.2, 0.5, 0.7], [0.2, 0.3, 0.2, 0.3]),
        "garch": _scores([0.1, 0.5, 0.9], [0.1, 0.4, 0.4, 0.1]),
    },
    "comparisons": {"garch": _comparison("win", -0.0312)},
}


def test_reliability_plots_nominal_against_observed_for_every_model() -> None:
    fig = reliability_figure(EV)
    assert fig is not None
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"calibrated", "TFT", "GARCH(1,1)"}
    np.testing.assert_allclose(lines["TFT"].get_xdata(), LEVELS)
    np.testing.assert_allclose(lines["TFT"].get_ydata(), [0.2, 0.5, 0.7])
    np.testing.assert_allclose(lines["GARCH(1,1)"].get_ydata(), [0.1, 0.5, 0.9])
    assert ax.get_xlabel() == "nominal level"


def test_pit_bars_are_share_over_nominal_bin_width() -> None:
    fig = pit_figure(EV)
    assert fig is not None
    bars = fig.axes[0].patches
    # bins [0, .1), [.1, .5), [.5, .9), [.9, 1]: widths .1 .4 .4 .1
    np.testing.assert_allclose([b.get_x() for b in bars], [0.0, 0.1, 0.5, 0.9])
    np.testing.assert_allclose([b.get_width() for b in bars], [0.1, 0.4, 0.4, 0.1])
    np.testing.assert_allclose([b.get_height() for b in bars], [2.0, 0.75, 0.5, 3.0])


def test_no_plots_for_an_evaluation_from_before_them() -> None:
    old = {"scores": {"tft": {"mean_pinball": 1e-4}}, "quantiles": LEVELS}
    assert reliability_figure(old) is None and pit_figure(old) is None


def test_markdown_has_every_model_and_the_verdict() -> None:
    text = "\n".join(evaluation_md(EV, {"reliability": True, "pit_histogram": False}))
    assert "| GARCH(1,1) | 2.000 |" in text and "| TFT | 2.000 |" in text
    assert "| GARCH(1,1) | -3.12 % | -2.50 | 0.012 | win | `WL` |" in text
    assert "(reliability.png)" in text and "pit_histogram.png" not in text


@pytest.mark.parametrize("beats", [True, False])
def test_markdown_of_an_old_evaluation_keeps_its_plain_verdict(beats: bool) -> None:
    ev = {"scores": {}, "tft_beats": {"zero": beats}}
    assert f"zero: {'yes' if beats else 'no'}" in "\n".join(evaluation_md(ev, {}))


def test_markdown_of_json_nulls_writes_a_dash_not_a_type_error() -> None:
    """``null`` in evaluation.json (ours, where a number is undefined; a hand-edited one):
    a dash in the table."""
    nulls = {"mean_pinball": None, "q_risk": {"P50": None}, "coverage": {"10-90": None}}
    pooled = _comparison("none", 0.0)["pooled"] | {
        "relative": None,
        "dm_statistic": None,
        "p_value": None,
    }
    ev = EV | {
        "scores": {"tft": nulls, "garch": {"mean_pinball": 1e-4, "coverage": None}},
        "comparisons": {"garch": {"lag": 1, "pooled": pooled, "per_horizon": []}},
    }
    text = "\n".join(evaluation_md(ev, {}))
    assert "| TFT | — | — | — | — | — |" in text
    assert "| GARCH(1,1) | 1.000 | — | — | — | — |" in text
    assert "| GARCH(1,1) | — | — | — | none | `` |" in text
