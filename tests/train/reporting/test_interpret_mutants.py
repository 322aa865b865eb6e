"""What interpretation.json holds (train/reporting/interpret.py): the selection weights' means
at the edges (one window, none, the default cut at 4096 windows) and what
``write_interpretation`` hands the fan chart and writes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from foxhunt.data.features.table import FeatureSpec
from foxhunt.train.reporting import interpret
from foxhunt.train.reporting.interpret import SelectionWeights

SPEC = FeatureSpec(
    historical=("h0", "h1", "h2"), known=("k0", "k1"), static=("s0", "s1"),
    targets=("target__h1",), warmup=0,
)  # fmt: skip


def _outputs(static: Any, historical: Any, known: Any) -> Any:
    import torch

    from foxhunt.model.batch import TFTOutput

    static = torch.as_tensor(static, dtype=torch.float32)
    return TFTOutput(
        quantiles=torch.zeros(len(static), 1, 3),
        static_weights=static,
        historical_weights=torch.as_tensor(historical, dtype=torch.float32),
        known_weights=torch.as_tensor(known, dtype=torch.float32),
    )


def test_one_window_gives_its_own_weights_averaged_over_time() -> None:
    acc = SelectionWeights(SPEC, 1)
    acc.add(
        _outputs(
            [[0.25, 0.75]],
            [[[0.5, 0.25, 0.25], [0.0, 0.5, 0.5]]],  # 2 encoder steps
            [[[1.0, 0.0], [1.0, 0.0], [0.5, 0.5], [0.5, 0.5]]],  # 4 steps
        ),
        range(0, 1),
    )
    assert acc.result() == {
        "static": {"s0": 0.25, "s1": 0.75},
        "historical": {"h0": 0.25, "h1": 0.375, "h2": 0.375},
        "known": {"k0": 0.75, "k1": 0.25},
        "n_windows": 1,
    }


def test_no_window_gives_zero_weights() -> None:
    assert SelectionWeights(SPEC, 0).result() == {
        "static": {"s0": 0.0, "s1": 0.0},
        "historical": {"h0": 0.0, "h1": 0.0, "h2": 0.0},
        "known": {"k0": 0.0, "k1": 0.0},
        "n_windows": 0,
    }


def test_by_default_only_the_last_4096_windows_count() -> None:
    import torch

    n = 4097
    static = torch.zeros(n, 2)
    static[0, 0] = 1.0  # the first window, the only one left out, is all s0
    static[1:, 1] = 1.0
    historical = torch.full((n, 1, 3), 1 / 4)
    historical[:, :, 2] = 1 / 2
    known = torch.full((n, 1, 2), 1 / 2)
    acc = SelectionWeights(SPEC, n)
    assert (acc.start, acc.count) == (1, 4096)
    for a in range(0, n, 1024):  # batches of 1024, the last of 1
        rows = range(a, min(a + 1024, n))
        acc.add(
            _outputs(static[a : rows.stop], historical[a : rows.stop], known[a : rows.stop]), rows
        )
    assert acc.result() == {
        "static": {"s0": 0.0, "s1": 1.0},
        "historical": {"h0": 0.25, "h1": 0.25, "h2": 0.5},
        "known": {"k0": 0.5, "k1": 0.5},
        "n_windows": 4096,
    }
    assert SelectionWeights(SPEC, 4096).start == 0


# --- write_interpretation -------------------------------------------------------------------


def test_write_interpretation_records_the_fan_chart_and_the_importance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fan chart comes from the model on the validation windows and the bars' closes, with
    the run's target scale and quantiles, on its device; both go to interpretation.json."""
    from foxhunt.artifacts.rundir import RunDir
    from foxhunt.config import RunConfig
    from foxhunt.data.scale.scaler import ScalerParams
    from foxhunt.data.scale.target import RETURN_FEATURE, TargetScale

    spec = dataclasses.replace(SPEC, historical=("h0", RETURN_FEATURE))
    scaler = ScalerParams(
        columns=("h0", RETURN_FEATURE), mean=(0.0, 1e-4), std=(1.0, 2e-3), target_std=(3e-3,)
    )
    base = RunConfig()
    cfg = dataclasses.replace(
        base,
        data=dataclasses.replace(base.data, target_scale="window", target_scale_decay=0.9),
        model=dataclasses.replace(base.model, quantiles=(0.1, 0.5, 0.9)),
    )
    model, val, closes, device = object(), object(), object(), object()
    data = SimpleNamespace(spec=spec, scaler=scaler, val=val, closes=closes)
    fan = {"symbol": "ES", "price_quantiles": [[99.0, 100.0, 101.0]]}
    calls: list[tuple[Any, ...]] = []

    def fake_forecast(
        model: Any, windows: Any, bars: Any, scale: Any, quantiles: Any, *, device: Any
    ) -> dict[str, Any]:
        calls.append((model, windows, bars, scale, quantiles, device))
        return fan

    monkeypatch.setattr(interpret, "last_window_forecast", fake_forecast)
    run = RunDir(tmp_path)
    importance = {"static": {"s0": 1.0}, "historical": {}, "known": {}, "n_windows": 3}

    assert interpret.write_interpretation(run, model, data, cfg, device, importance) is None

    ((m, w, b, scale, q, d),) = calls
    assert (m, w, b, d) == (model, val, closes, device)
    assert q == (0.1, 0.5, 0.9)
    assert isinstance(scale, TargetScale)
    assert (scale.mode, scale.target_std, scale.decay) == ("window", (3e-3,), 0.9)
    assert (scale.ret_index, scale.ret_mean, scale.ret_std) == (1, 1e-4, 2e-3)
    assert [p.name for p in tmp_path.iterdir()] == ["interpretation.json"]
    assert json.loads(run.interpretation.read_text()) == {
        "fan_chart": fan,
        "variable_importance": importance,
    }
