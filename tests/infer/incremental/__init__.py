"""Tests of the live feature engine. ``KERNELS``: its two steps as pytest params (the numpy
step, and the numba-compiled kernel where numba is installed)."""

import importlib.util

import pytest

HAS_NUMBA = importlib.util.find_spec("numba") is not None

KERNELS = [
    pytest.param(False, id="numpy"),
    pytest.param(True, id="compiled", marks=pytest.mark.skipif(not HAS_NUMBA, reason="no numba")),
]


def batch_features(bars, symbols):  # noqa: ANN001, ANN201 - polars frame -> {symbol: array}
    """symbol -> (rows kept, 210) the batch pipeline's observed features of ``bars``, in the
    engine's order, as float64."""
    import numpy as np
    import polars as pl

    from foxhunt.data.features.table import compute_features
    from foxhunt.infer.incremental.engine import feature_names

    table = compute_features(bars, 10, with_targets=False, instruments={})
    names = feature_names()
    return {
        s: table.filter(pl.col("symbol") == s).select(names).to_numpy().astype(np.float64)
        for s in symbols
    }
