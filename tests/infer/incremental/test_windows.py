"""The per-step feature block of the incremental engine (infer/incremental/windows.py)."""

from __future__ import annotations

import numpy as np

from foxhunt.infer.incremental.engine import feature_names
from foxhunt.infer.incremental.windows import Out, put


def test_out_writes_blocks_at_the_pipelines_columns_and_leaves_the_rest_nan() -> None:
    """A block lands at its names' columns of the pipeline's order, whatever order the names
    come in; one name at a time likewise; a column never written stays NaN."""
    names = feature_names()
    f = Out(2)
    picked = [names[7], names[3], names[150]]
    put(f, picked, np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    f[names[0]] = np.array([9.0, 8.0])
    assert f.array.shape == (2, len(names))
    np.testing.assert_array_equal(f.array[:, [7, 3, 150, 0]], [[1, 2, 3, 9], [4, 5, 6, 8]])
    rest = np.ones(len(names), bool)
    rest[[0, 3, 7, 150]] = False
    assert np.isnan(f.array[:, rest]).all()
