"""fit_calibration's wiring, on a stand-in model and windows: every window's prediction and
target in order, batch by batch; the offsets of all of them, served times the shrinkage that
cross-fitting over the windows' symbols chose with the horizon as embargo; too few windows:
shrinkage 0, with a warning; none: no calibration. The window scales come from the windows' target scale."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import polars as pl
import pytest
import torch

from foxhunt.artifacts.calibration import Calibration
from foxhunt.model.batch import TFTBatch
from foxhunt.train.calibration.calibrate import (
    conformal_offsets,
    fit_calibration,
    standardised_predictions,
    window_scales,
)
from foxhunt.train.calibration.choice import choose_shrinkage, crossfit_blocks

LEVELS = (0.1, 0.5, 0.9)
CPU = torch.device("cpu")


class _Scale:
    """A target scale of 1 + the window's first observed input, per horizon."""

    def __init__(self, horizon: int) -> None:
        self.horizon = horizon
        self.calls: list[tuple[int, int]] = []

    def scale(self, historical: torch.Tensor, known: torch.Tensor) -> torch.Tensor:
        self.calls.append((historical.shape[0], known.shape[0]))
        return (1.0 + historical[:, 0, :1]).float().expand(-1, self.horizon)


class _Windows:
    """n windows: window i carries i as its only observed input and its target row."""

    def __init__(self, z_y: torch.Tensor, symbols: list[str], scaled: bool = True) -> None:
        self.z_y, self.symbols = z_y, symbols
        self.horizon = z_y.shape[1]
        self.target_scale = _Scale(self.horizon) if scaled else None

    def __len__(self) -> int:
        return self.z_y.shape[0]

    def batch(self, rows: range) -> TFTBatch:
        idx = torch.tensor(list(rows), dtype=torch.float32)
        return TFTBatch(
            static=torch.zeros(len(rows), 1),
            historical=idx[:, None, None].expand(-1, 2, 1).clone(),
            known=torch.zeros(len(rows), 2 + self.horizon, 1),
            target=self.z_y[list(rows)].float(),
        )

    def origins(self) -> pl.DataFrame:
        return pl.DataFrame({"symbol": self.symbols})


class _Model(torch.nn.Module):
    """Returns row i's quantiles of ``z_pred`` for window i; records what it was asked."""

    def __init__(self, z_pred: torch.Tensor) -> None:
        super().__init__()
        self.z_pred = z_pred
        self.modes: list[bool] = []

    def forward(self, batch: TFTBatch) -> SimpleNamespace:
        self.modes.append(self.training)
        rows = batch.historical[:, 0, 0].long()
        return SimpleNamespace(quantiles=self.z_pred[rows].float())


def _data(n: int, h: int = 2, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    base = torch.tensor([-1.0, 0.0, 1.0])
    z_pred = (base + 0.1 * torch.randn(n, h, 3, generator=g)).sort(-1).values
    z_y = 2.0 * torch.randn(n, h, generator=g)
    return z_pred.float().double(), z_y.float().double()  # exact in fp32


def test_predictions_and_targets_of_every_window_in_order_batch_by_batch() -> None:
    z_pred, z_y = _data(7)
    model, seen = _Model(z_pred), []
    model.train()
    got_pred, got_y = standardised_predictions(
        model,
        _Windows(z_y, ["ES"] * 7),  # type: ignore[arg-type]
        batch_size=3,
        device=CPU,
        on_output=lambda out, rows: seen.append(rows),
    )
    assert got_pred.dtype == got_y.dtype == torch.float64
    assert torch.equal(got_pred, z_pred) and torch.equal(got_y, z_y)
    assert seen == [range(0, 3), range(3, 6), range(6, 7)]
    assert model.modes == [False] * 3 and model.training  # eval for the pass, then as it was


def test_window_scales_per_batch_or_ones_without_a_target_scale() -> None:
    _, z_y = _data(5, h=3)
    windows = _Windows(z_y, ["ES"] * 5)
    scales = window_scales(windows, batch_size=2)  # type: ignore[arg-type]
    assert scales.dtype == torch.float64 and scales.shape == (5, 3)
    assert torch.equal(scales, (1.0 + torch.arange(5.0, dtype=torch.float64))[:, None].expand(5, 3))
    assert windows.target_scale.calls == [(2, 2), (2, 2), (1, 1)]
    ones = window_scales(_Windows(z_y, ["ES"] * 5, scaled=False), batch_size=2)  # type: ignore[arg-type]
    assert ones.dtype == torch.float64 and torch.equal(ones, torch.ones(5, 3, dtype=torch.float64))


def test_the_served_offsets_are_the_fitted_ones_times_the_cross_fitted_shrinkage() -> None:
    n, h = 60, 2
    z_pred, z_y = _data(n, h, seed=1)
    symbols = ["ES"] * 30 + ["NQ"] * 30
    windows = _Windows(z_y, symbols)
    outputs: list[range] = []
    cal = fit_calibration(
        _Model(z_pred),
        windows,  # type: ignore[arg-type]
        LEVELS,
        batch_size=16,
        device=CPU,
        on_output=lambda out, rows: outputs.append(rows),
    )
    fitted = tuple(tuple(r) for r in conformal_offsets(z_pred, z_y, LEVELS).tolist())
    scale = (1.0 + torch.arange(float(n), dtype=torch.float64))[:, None].expand(n, h)
    blocks = crossfit_blocks(symbols, embargo=h)
    lam, choice = choose_shrinkage(z_pred, z_y, scale, LEVELS, blocks, conformal_offsets, embargo=h)
    assert cal == Calibration.shrunk(LEVELS, fitted, n, lam, choice)
    assert cal is not None and cal.choice is not None and cal.choice.embargo == h
    assert outputs[0] == range(0, 16) and outputs[-1] == range(48, 60)


def test_too_few_windows_to_cross_fit_serve_no_offsets_and_none_serve_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A handful of windows' offsets are noise: recorded, served times 0, and said so."""
    z_pred, z_y = _data(3)
    with caplog.at_level(logging.WARNING, logger="foxhunt.train.calibration.calibrate"):
        cal = fit_calibration(
            _Model(z_pred),
            _Windows(z_y, ["ES"] * 3),
            LEVELS,
            batch_size=8,
            device=CPU,  # type: ignore[arg-type]
        )
    fitted = tuple(tuple(r) for r in conformal_offsets(z_pred, z_y, LEVELS).tolist())
    zeros = tuple(tuple(0.0 for _ in row) for row in fitted)
    assert cal == Calibration(LEVELS, zeros, 3, 0.0, fitted, None)
    assert "3 validation windows, too few to choose a shrinkage" in caplog.text
    assert "served uncalibrated (shrinkage 0)" in caplog.text
    empty = _Windows(z_y[:0], [])
    assert fit_calibration(_Model(z_pred), empty, LEVELS, batch_size=8, device=CPU) is None  # type: ignore[arg-type]


def test_a_level_below_one_over_n_plus_1_takes_the_smallest_residual() -> None:
    """ceil((N + 1) q) is 1 for q <= 1 / (N + 1): the first order statistic, not the second."""
    y = torch.tensor([[3.0], [1.0], [2.0], [5.0], [4.0]], dtype=torch.float64)
    pred = torch.zeros(5, 1, 2, dtype=torch.float64)
    off = conformal_offsets(pred, y, (0.1, 0.99))
    assert off.tolist() == [[1.0, 5.0]]
