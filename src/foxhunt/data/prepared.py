"""What training gets from the data side: spec, scaler and the three window datasets."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.market.instrument import Instrument
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.windows.dataset import WindowDataset


@dataclass
class PreparedData:
    """Everything training needs from the data side.

    Attributes:
        spec: feature names and warm-up (saved with the model).
        scaler: fitted on the training split (saved with the model).
        train: training windows (stride ``cfg.data.stride``).
        val: validation windows (stride 1).
        test: test windows (stride 1).
        fingerprint: sha256 of the bars' content (symbols, times, OHLCV).
        closes: ``symbol``, ``ts``, ``close`` of the bars (the report's fan chart), so
            nothing reads the bars again after training.
        instruments: each symbol's resolved instrument (stored in the run for inference);
            None from a feature store (its features follow the ``globex`` calendar).
    """

    spec: FeatureSpec
    scaler: ScalerParams
    train: WindowDataset
    val: WindowDataset
    test: WindowDataset
    fingerprint: str
    closes: pl.DataFrame
    instruments: dict[str, Instrument] | None = None
