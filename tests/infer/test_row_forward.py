"""evaluate's row-sharing forward equals the plain forward, and steps aside where it cannot."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import polars as pl
import pytest
import torch
from torch import nn

from foxhunt.config import TFTConfig
from foxhunt.data.features.table import compute_features, feature_spec
from foxhunt.data.sources.demo import demo_bars
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.infer.quantiles import plain_forward
from foxhunt.infer.row_forward import row_forward
from foxhunt.model.batch import TFTBatch
from foxhunt.model.tft import TFT

L, H = 16, 10
SPEC = feature_spec(H)


@pytest.fixture(scope="module")
def windows() -> WindowDataset:
    bars = pl.concat([demo_bars(400, seed=1, symbol="CLZ4"), demo_bars(450, seed=2, symbol="ES")])
    feats = compute_features(bars.with_columns(pl.col("volume").cast(pl.Float64)), H)
    return WindowDataset(feats, SPEC, L, H)


def _model(origin_inputs: bool) -> TFT:
    torch.manual_seed(0)
    config = TFTConfig(
        n_static=len(SPEC.static),
        n_historical=len(SPEC.historical),
        n_known=len(SPEC.known),
        hidden=16,
        n_heads=4,
        encoder_length=L,
        horizon=H,
        quantiles=(0.1, 0.5, 0.9),
        dropout=0.0,
        variable_width=4,
        decoder_origin_inputs=origin_inputs,
    )
    return TFT(config).eval()


def _origins(windows: WindowDataset, idx: list[int]) -> torch.Tensor:
    return torch.from_numpy(windows.origin_rows()[idx])


@pytest.mark.parametrize("origin_inputs", [False, True])
@torch.inference_mode()
def test_equals_the_plain_forward_across_a_symbol_boundary(
    windows: WindowDataset, origin_inputs: bool
) -> None:
    symbols = windows.origins()["symbol"].to_list()
    edge = symbols.index("ES")  # the batch spans the end of CLZ4 and the start of ES
    idx = list(range(edge - 40, edge + 60))
    batch = windows.batch(idx)
    model = _model(origin_inputs)
    forward = row_forward(windows, _origins(windows, idx))
    assert forward is not None
    got, want = forward(model, batch), plain_forward(model, batch)
    assert got.shape == want.shape == (100, H, 3)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    assert float(want[:, 0].std(dim=0).min()) > 1e-4  # the output depends on the inputs


def test_windows_too_far_apart_share_nothing(windows: WindowDataset) -> None:
    idx = [0, 100, 200, 300]
    assert row_forward(windows, _origins(windows, idx)) is None
    assert row_forward(windows, _origins(windows, [])) is None


def test_a_static_input_that_changes_inside_a_window_is_not_shared(
    windows: WindowDataset,
) -> None:
    idx = list(range(0, 64))
    rows = _origins(windows, idx)
    assert row_forward(windows, rows) is not None
    changed = copy.copy(windows)
    changed.static = windows.static.clone()
    changed.static[int(rows[10]) - 3, 0] += 1.0  # inside the encoders of windows 7..10
    assert row_forward(changed, rows) is None


class _NotTFT(nn.Module):
    def forward(self, batch: TFTBatch) -> SimpleNamespace:
        return SimpleNamespace(quantiles=batch.static[:, None, :1].expand(-1, H, 3))


def test_a_model_that_is_not_a_tft_gets_the_plain_forward(windows: WindowDataset) -> None:
    idx = list(range(0, 64))
    batch = windows.batch(idx)
    forward = row_forward(windows, _origins(windows, idx))
    assert forward is not None
    assert torch.equal(forward(_NotTFT(), batch), plain_forward(_NotTFT(), batch))


def test_sharing_is_judged_by_the_span_of_rows_not_their_position(
    windows: WindowDataset,
) -> None:
    n = len(windows)
    late = list(range(n - 20, n))  # 20 overlapping windows at the arrays' end: 35 rows
    assert row_forward(windows, _origins(windows, late)) is not None
    # at exactly half of B x L rows nothing is shared: the same window twice spans L rows
    assert row_forward(windows, _origins(windows, [30, 30])) is None
    assert row_forward(windows, _origins(windows, [30, 30, 31])) is not None  # L + 1 < 1.5 L
