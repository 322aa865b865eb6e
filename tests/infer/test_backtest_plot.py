"""``backtest.png``: one line per model over the folds, the TFT drawn thicker, each line named
as the backtest table names it."""

from __future__ import annotations

from typing import Any

import matplotlib
import numpy as np
from matplotlib.font_manager import FontProperties
from PIL import Image

from foxhunt.infer.backtest_plot import backtest_figure, model_label, plot_backtest


def _result(ensemble: dict[str, Any] | None = None) -> dict[str, Any]:
    scores = [
        {"tft": 0.0010, "garch": 0.0012, "zero": 0.0020, "m0": 0.0011},
        {"tft": 0.0014, "garch": 0.0013, "zero": 0.0021, "m0": 0.0015},
        {"tft": 0.0009, "garch": 0.0010, "zero": 0.0019, "m0": 0.0008},
    ]
    folds = [
        {"fold": k + 1, "scores": {key: {"mean_pinball": v} for key, v in s.items()}}
        for k, s in enumerate(scores)
    ]
    result: dict[str, Any] = {"folds": folds, "refit": "once", "bars": "ES.parquet"}
    if ensemble is not None:
        result["ensemble"] = ensemble
    return result


def test_labels_name_the_tft_its_ensemble_member_and_the_baselines() -> None:
    plain, ens = _result(), _result({"members": 3, "member0": "m0"})
    assert model_label("tft", plain) == "TFT"
    assert model_label("tft", ens) == "TFT (ensemble of 3)"
    assert model_label("m0", ens) == "TFT member 0 alone"
    assert model_label("m0", plain) == "m0"  # not an ensemble: a key without a label as is
    assert model_label("garch", ens) == "GARCH(1,1)"
    assert model_label("zero", plain) == "zero return"


def test_one_line_per_model_in_basis_points_over_the_fold_numbers() -> None:
    result = _result({"members": 3, "member0": "m0"})
    ax = backtest_figure(result).axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert list(lines) == ["TFT (ensemble of 3)", "GARCH(1,1)", "zero return", "TFT member 0 alone"]
    for key, label in [("tft", "TFT (ensemble of 3)"), ("zero", "zero return")]:
        want = [f["scores"][key]["mean_pinball"] * 1e4 for f in result["folds"]]
        np.testing.assert_allclose(lines[label].get_ydata(), want)
        np.testing.assert_array_equal(lines[label].get_xdata(), [1, 2, 3])
        assert lines[label].get_marker() == "o"
    widths = {label: line.get_linewidth() for label, line in lines.items()}
    assert widths["TFT (ensemble of 3)"] == 2.5
    assert widths["GARCH(1,1)"] == widths["zero return"] == widths["TFT member 0 alone"] == 1.2
    assert list(ax.get_xticks()) == [1, 2, 3]
    assert ax.get_xlabel() == "fold"
    assert ax.get_ylabel() == "mean pinball loss (bp of log return)"
    assert ax.get_title() == "Rolling-origin backtest (once refit), ES.parquet"
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == list(lines)
    small = FontProperties(size="small").get_size_in_points()
    assert all(t.get_fontsize() == small for t in legend.get_texts())
    assert small < FontProperties().get_size_in_points()


def test_the_png_is_written_at_100_dpi(tmp_path) -> None:
    png = tmp_path / "backtest.png"
    with matplotlib.rc_context({"figure.dpi": 72, "savefig.dpi": "figure"}):
        plot_backtest(_result(), png)  # 100 dpi whatever the user's matplotlib settings
    with Image.open(png) as image:
        assert image.format == "PNG"
        assert image.size == (800, 450)  # 8 x 4.5 inches at 100 dpi
