"""Tests of the live feature engine. ``KERNELS``: its two steps as pytest params (the numpy
step, and the numba-compiled kernel where numba is installed)."""

import importlib.util

import pytest

HAS_NUMBA = importlib.util.find_spec("numba") is not None

KERNELS = [
    pytest.param(False, id="numpy"),
    pytest.param(True, id="compiled", marks=pytest.mark.skipif(not HAS_NUMBA, reason="no numba")),
]
