"""Variable importance from the selection weights, accumulated batch by batch during the
calibration pass (train/reporting/interpret.py:SelectionWeights)."""

from __future__ import annotations

import pytest
import torch

from foxhunt.data.features.table import FeatureSpec
from foxhunt.model.batch import TFTOutput
from foxhunt.train.reporting.interpret import SelectionWeights

SPEC = FeatureSpec(
    historical=("h0", "h1", "h2"), known=("k0", "k1"), static=("s0", "s1"),
    targets=("target__h1",), warmup=0,
)  # fmt: skip


def _outputs(n: int, t_enc: int = 4, t: int = 6) -> TFTOutput:
    g = torch.Generator().manual_seed(0)
    return TFTOutput(
        quantiles=torch.zeros(n, 2, 3),
        static_weights=torch.softmax(torch.randn(n, 2, generator=g), -1),
        historical_weights=torch.softmax(torch.randn(n, t_enc, 3, generator=g), -1),
        known_weights=torch.softmax(torch.randn(n, t, 2, generator=g), -1),
    )


def _rows(out: TFTOutput, rows: slice) -> TFTOutput:
    return TFTOutput(
        quantiles=out.quantiles[rows], static_weights=out.static_weights[rows],
        historical_weights=out.historical_weights[rows], known_weights=out.known_weights[rows],
    )  # fmt: skip


def test_mean_weights_of_the_last_max_windows_over_batches() -> None:
    n, last = 7, 5
    out = _outputs(n)
    acc = SelectionWeights(SPEC, n, max_windows=last)
    for a in range(0, n, 3):  # batches of 3, 3, 1: the cut at window 2 falls inside the first
        acc.add(_rows(out, slice(a, min(a + 3, n))), range(a, min(a + 3, n)))
    got = acc.result()
    assert got["n_windows"] == last
    want_hist = out.historical_weights[n - last :].double().mean(1).mean(0)
    assert list(got["historical"].values()) == pytest.approx(want_hist.tolist(), rel=1e-12)
    want_static = out.static_weights[n - last :].double().mean(0)
    assert list(got["static"].values()) == pytest.approx(want_static.tolist(), rel=1e-12)
    assert list(got["known"]) == ["k0", "k1"]
    for group in ("historical", "known", "static"):
        assert sum(got[group].values()) == pytest.approx(1.0, abs=1e-6)  # float32 softmax


def test_every_window_counts_below_max_windows() -> None:
    out = _outputs(4)
    acc = SelectionWeights(SPEC, 4)
    acc.add(out, range(0, 4))
    want = out.known_weights.double().mean(1).mean(0)
    assert list(acc.result()["known"].values()) == pytest.approx(want.tolist(), rel=1e-12)
