"""Fixtures for the model tests."""

from __future__ import annotations

import pytest
import torch

from foxhunt.config import TFTConfig


@pytest.fixture
def tiny_config() -> TFTConfig:
    """A TFT small enough for exact parity tests (dropout off)."""
    return TFTConfig(
        n_static=3,
        n_historical=7,
        n_known=4,
        hidden=16,
        n_heads=4,
        lstm_layers=2,
        encoder_length=6,
        horizon=3,
        quantiles=(0.1, 0.5, 0.9),
        dropout=0.0,
        variable_width=4,
        vsn_chunk=3,
    )


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)
