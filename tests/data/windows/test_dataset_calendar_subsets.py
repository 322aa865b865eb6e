"""A subset or thinned WindowDataset keeps its windows' calendar decoder rows (the known
inputs of decoder bars the calendar schedules, for windows whose next H rows are not them)."""

from __future__ import annotations

import numpy as np
import polars as pl
import torch

from foxhunt.data.features.table import compute_features, feature_spec
from foxhunt.data.sources.demo import demo_bars
from foxhunt.data.windows.dataset import WindowDataset

L, H = 16, 10
SPEC = feature_spec(H)


def _windows() -> WindowDataset:
    bars = demo_bars(800, seed=2, symbol="ES").with_columns(pl.col("volume").cast(pl.Float64))
    feats = compute_features(bars, H, instruments={})
    return WindowDataset(feats, SPEC, L, H, calendars={"ES": "24x7"})  # decoders run on


def test_subset_and_thinned_keep_the_calendar_decoder_rows() -> None:
    ds = _windows()
    assert ds.calendar_windows > 0
    keep = np.zeros(len(ds), dtype=bool)
    keep[1::3] = True
    kept = np.flatnonzero(keep).tolist()
    sub = ds.subset(keep)
    assert torch.equal(sub.batch(list(range(len(sub)))).known, ds.batch(kept).known)
    thin = ds.thinned(len(ds) // 4)
    k = -(-len(ds) // (len(ds) // 4))
    every_kth = list(range(0, len(ds), k))
    assert len(thin) == len(every_kth)
    assert torch.equal(thin.batch(list(range(len(thin)))).known, ds.batch(every_kth).known)


def test_a_mask_of_ints_is_read_as_true_or_false() -> None:
    ds = _windows()
    ones = np.zeros(len(ds), dtype=np.int64)
    ones[:5] = 1
    sub = ds.subset(ones)
    assert len(sub) == 5
    assert sub.origins().equals(ds.origins().head(5))
