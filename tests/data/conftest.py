"""Shared bars for the data tests: small demo series, made once per session."""

from __future__ import annotations

import polars as pl
import pytest

from foxhunt.data.features.table import compute_features
from foxhunt.data.sources.demo import demo_bars


@pytest.fixture(scope="session")
def es_bars() -> pl.DataFrame:
    """900 ES 5-minute bars (seed 0)."""
    return demo_bars(900, seed=0, symbol="ES")


@pytest.fixture(scope="session")
def panel_bars() -> pl.DataFrame:
    """Two symbols of different lengths, sorted by (symbol, ts)."""
    return pl.concat(
        [demo_bars(700, seed=1, symbol="CLZ4"), demo_bars(800, seed=2, symbol="ES")]
    ).with_columns(pl.col("volume").cast(pl.Float64))


@pytest.fixture(scope="session")
def es_features(es_bars: pl.DataFrame) -> pl.DataFrame:
    """Features and targets (H=10) of ``es_bars``."""
    return compute_features(es_bars.with_columns(pl.col("volume").cast(pl.Float64)), 10)
