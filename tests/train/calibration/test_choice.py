"""The calibration's shrinkage is chosen out of sample within the validation windows: blocks cut
per symbol with an embargo, a persistent miscalibration keeps the full correction, one that
flips between blocks gets none, and the score is the return-unit pinball of sorted quantiles."""

from __future__ import annotations

import torch

from foxhunt.model.quantile import quantile_loss_table
from foxhunt.train.calibration.calibrate import conformal_offsets
from foxhunt.train.calibration.choice import (
    SHRINKAGES,
    choose_shrinkage,
    crossfit_blocks,
    mean_quantile_loss,
)

LEVELS = (0.02, 0.1, 0.5, 0.9, 0.98)
N, H = 2000, 3


def test_blocks_are_cut_per_symbol_in_order_with_the_embargo_dropped() -> None:
    symbols = ["A"] * 10 + ["B"] * 6
    first, second = crossfit_blocks(symbols, embargo=2)
    assert first.tolist() == [0, 1, 2, 3, 4, 10, 11, 12]  # A 0..4, B 0..2
    assert second.tolist() == [7, 8, 9, 15]  # A 5, 6 and B 3, 4 dropped (embargo)
    three = crossfit_blocks(["A"] * 9, embargo=1, k=3)
    assert [b.tolist() for b in three] == [[0, 1, 2], [4, 5], [7, 8]]


def test_a_symbol_too_short_leaves_a_block_empty() -> None:
    first, second = crossfit_blocks(["A"] * 4, embargo=2)
    assert first.tolist() == [0, 1] and second.tolist() == []


def test_mean_pinball_is_the_return_unit_pinball_of_the_sorted_quantiles() -> None:
    g = torch.Generator().manual_seed(1)
    z = torch.randn(50, H, len(LEVELS), generator=g, dtype=torch.float64)  # crossing quantiles
    y = torch.randn(50, H, generator=g, dtype=torch.float64)
    scale = torch.rand(50, H, generator=g, dtype=torch.float64) + 0.5
    sorted_returns = torch.sort(z, dim=-1).values * scale[:, :, None]
    want = quantile_loss_table(sorted_returns, y * scale, torch.tensor(LEVELS)).mean()
    got = mean_quantile_loss(z, y, scale, LEVELS)
    torch.testing.assert_close(got, want.double(), rtol=1e-6, atol=0)
    assert got.dtype == torch.float64


def _forecast(shift: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """N(0, 1) quantiles for every window; targets N(shift_i, 1): residuals off by ``shift``."""
    g = torch.Generator().manual_seed(0)
    normal = torch.distributions.Normal(0.0, 1.0)
    z = normal.icdf(torch.tensor(LEVELS, dtype=torch.float64)).expand(N, H, -1).clone()
    y = torch.randn(N, H, generator=g, dtype=torch.float64) + shift[:, None]
    scale = torch.ones(N, H, dtype=torch.float64)
    return z, y, scale


def test_a_shift_that_persists_is_corrected_in_full() -> None:
    z, y, scale = _forecast(torch.full((N,), 0.8, dtype=torch.float64))
    blocks = crossfit_blocks(["A"] * N, embargo=H)
    lam, choice = choose_shrinkage(z, y, scale, LEVELS, blocks, conformal_offsets, embargo=H)
    assert lam == 1.0
    assert choice.candidates == SHRINKAGES and choice.embargo == H
    assert choice.block_windows == (N // 2, N // 2 - H)
    scores = list(choice.pinball)  # falls with every step towards the full correction
    assert scores == sorted(scores, reverse=True)


def test_a_shift_that_flips_between_blocks_is_not_corrected() -> None:
    flip = torch.where(torch.arange(N) < N // 2, 0.8, -0.8).double()
    z, y, scale = _forecast(flip)
    blocks = crossfit_blocks(["A"] * N, embargo=H)
    lam, choice = choose_shrinkage(z, y, scale, LEVELS, blocks, conformal_offsets, embargo=H)
    assert lam == 0.0
    scores = list(choice.pinball)  # every step of the correction costs out of sample
    assert scores == sorted(scores)


def test_the_score_is_each_held_block_served_with_offsets_fitted_on_the_rest() -> None:
    g = torch.Generator().manual_seed(2)
    z = torch.randn(40, H, len(LEVELS), generator=g, dtype=torch.float64)
    y = torch.randn(40, H, generator=g, dtype=torch.float64)
    scale = torch.rand(40, H, generator=g, dtype=torch.float64) + 0.5
    a, b = crossfit_blocks(["A"] * 40, embargo=H)
    _, choice = choose_shrinkage(z, y, scale, LEVELS, [a, b], conformal_offsets, embargo=H)
    off_a, off_b = conformal_offsets(z[a], y[a], LEVELS), conformal_offsets(z[b], y[b], LEVELS)
    for lam, got in zip(SHRINKAGES, choice.pinball, strict=True):
        on_b = mean_quantile_loss(z[b] + lam * off_a, y[b], scale[b], LEVELS) * len(b)
        on_a = mean_quantile_loss(z[a] + lam * off_b, y[a], scale[a], LEVELS) * len(a)
        assert abs(got - float((on_a + on_b) / (len(a) + len(b)))) < 1e-15


class _Windows:
    """What fit_calibration reads of a validation set besides the forward pass (patched)."""

    target_scale = None

    def __init__(self, symbols: list[str]) -> None:
        self.symbols, self.horizon = symbols, H

    def __len__(self) -> int:
        return len(self.symbols)

    def origins(self):  # noqa: ANN201
        import polars as pl

        return pl.DataFrame({"symbol": self.symbols})


def _fit_with(monkeypatch, shift: torch.Tensor, symbols: list[str]):  # noqa: ANN001, ANN202
    import foxhunt.train.calibration.calibrate as calibrate

    z, y, _ = _forecast(shift)
    n = len(symbols)
    monkeypatch.setattr(calibrate, "standardised_predictions", lambda *a, **k: (z[:n], y[:n]))
    return calibrate.fit_calibration(
        torch.nn.Identity(), _Windows(symbols), LEVELS, batch_size=64, device=torch.device("cpu")
    )


def test_too_few_windows_to_cross_fit_serve_no_correction(monkeypatch) -> None:  # noqa: ANN001
    # 4 windows, embargo H = 3: the second block is empty, so nothing is chosen and nothing served
    cal = _fit_with(monkeypatch, torch.full((N,), 0.8, dtype=torch.float64), ["A"] * 4)
    assert cal is not None and cal.shrinkage == 0.0 and cal.choice is None
    assert cal.fitted_offsets is not None and any(x for row in cal.fitted_offsets for x in row)
    assert all(x == 0.0 for row in cal.offsets for x in row)


def test_a_run_serves_the_fitted_offsets_times_the_chosen_shrinkage(monkeypatch) -> None:  # noqa: ANN001
    flip = torch.where(torch.arange(N) < N // 2, 0.8, -0.8).double()
    cal = _fit_with(monkeypatch, flip, ["A"] * N)
    assert cal is not None and cal.shrinkage == 0.0 and cal.choice is not None
    assert cal.fitted_offsets is not None
    assert any(abs(x) > 0.01 for row in cal.fitted_offsets for x in row)
    assert all(x == 0.0 for row in cal.offsets for x in row)
