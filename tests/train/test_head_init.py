"""The monotone head starts at the scale-only forecast: the starting quantiles are the pooled
empirical quantiles of the standardised training targets, and a fresh TFT outputs them for any
input until it trains."""

from __future__ import annotations

import pytest
import torch

from foxhunt.config import TFTConfig
from foxhunt.model import TFT
from foxhunt.model.batch import TFTBatch
from foxhunt.train.head_init import (
    init_monotone_head,
    standardised_target_quantiles,
    start_head,
)

LEVELS = (0.02, 0.1, 0.5, 0.9, 0.98)


class _Windows:
    """The two things standardised_target_quantiles reads of a WindowDataset."""

    def __init__(self, target: torch.Tensor) -> None:
        self.target = target

    def __len__(self) -> int:
        return self.target.shape[0]

    def batch(self, idx: range) -> TFTBatch:
        t = self.target[list(idx)]
        z = torch.zeros(t.shape[0], 1)
        return TFTBatch(static=z, historical=z[:, None], known=z[:, None], target=t)


def test_start_is_the_pooled_empirical_quantiles_of_the_targets() -> None:
    g = torch.Generator().manual_seed(0)
    target = torch.randn(2500, 4, generator=g) * 1.5 + 0.2
    got = standardised_target_quantiles(_Windows(target), LEVELS, batch_size=700)  # type: ignore[arg-type]
    want = torch.quantile(target.double().reshape(-1), torch.tensor(LEVELS, dtype=torch.float64))
    torch.testing.assert_close(got, want)


@pytest.mark.slow
def test_more_targets_than_torch_quantile_takes() -> None:
    """A year of 1-minute bars gives ~1.8 M training windows x H 10 targets, over the 2**24
    values torch.quantile accepts ("input tensor is too large"); the start is still computed,
    and is the quantiles of those values."""
    n = 2**22 + 1  # x H 4 = 2**24 + 4 values
    target = torch.arange(n * 4, dtype=torch.float32).reshape(n, 4) / (n * 4 - 1)  # 0..1 even
    got = standardised_target_quantiles(_Windows(target), LEVELS, batch_size=2**21)  # type: ignore[arg-type]
    torch.testing.assert_close(got, torch.tensor(LEVELS, dtype=torch.float64), atol=1e-6, rtol=0)


def test_fresh_monotone_tft_outputs_the_start_for_any_input() -> None:
    cfg = TFTConfig(
        n_static=3, n_historical=5, n_known=2, hidden=8, n_heads=2, lstm_layers=1,
        encoder_length=4, horizon=3, quantiles=LEVELS, dropout=0.0, variable_width=4,
        monotone_quantiles=True,
    )  # fmt: skip
    torch.manual_seed(0)
    model = TFT(cfg).eval()
    start = torch.tensor([-2.1, -1.3, 0.0, 1.25, 2.0], dtype=torch.float64)
    init_monotone_head(model.output, start)
    b = 5
    batch = TFTBatch(
        static=torch.randn(b, 3), historical=torch.randn(b, 4, 5), known=torch.randn(b, 7, 2)
    )
    q = model(batch).quantiles  # (B, H, Q)
    torch.testing.assert_close(q, start.float().expand(b, 3, -1), atol=1e-5, rtol=0)
    # training moves it: the zeroed weight gets a gradient
    model.train()
    model(batch).quantiles.sum().backward()
    assert model.output.weight.grad is not None and model.output.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("location", ["conditional", "fixed"])
def test_start_head_pins_a_fixed_median_at_the_starts(location: str) -> None:
    cfg = TFTConfig(
        n_static=3, n_historical=5, n_known=2, hidden=8, n_heads=2, lstm_layers=1,
        encoder_length=4, horizon=3, quantiles=LEVELS, dropout=0.0, variable_width=4,
        monotone_quantiles=True, location=location,  # type: ignore[arg-type]
    )  # fmt: skip
    torch.manual_seed(0)
    model = TFT(cfg).eval()
    start = torch.tensor([-2.1, -1.3, 0.07, 1.25, 2.0], dtype=torch.float64)
    start_head(model, start)
    assert float(model.median) == (pytest.approx(0.07) if location == "fixed" else 0.0)
    batch = TFTBatch(
        static=torch.randn(4, 3), historical=torch.randn(4, 4, 5), known=torch.randn(4, 7, 2)
    )
    with torch.no_grad():
        q = model(batch).quantiles
    torch.testing.assert_close(q, start.float().expand(4, 3, -1), atol=1e-5, rtol=0)
