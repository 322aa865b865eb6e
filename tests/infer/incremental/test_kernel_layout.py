"""The compiled kernel's layout constants: the helpers that build them at import (which no
other test calls: mutmut's trampolines cannot reach code that runs at import) and the
constants they built, checked against the step's column names."""

from __future__ import annotations

import numpy as np

from foxhunt.data.features import observed as o
from foxhunt.infer.incremental import kernel_layout as k
from foxhunt.infer.incremental import windows as w


def test_ints_are_int64_whatever_they_were_given() -> None:
    for given in ((3, 5), [True, False, True]):
        got = k._ints(given)  # type: ignore[arg-type]
        assert got.dtype == np.int64
        assert got.tolist() == [int(v) for v in given]


def test_columns_by_format_and_by_name_are_the_steps_positions() -> None:
    names = [f"obs__ret_{h}" for h in o.RET_HORIZONS]
    by_format, by_name = k._cols("obs__ret_{}", o.RET_HORIZONS), k._named(names)
    assert by_format.dtype == by_name.dtype == np.int64
    assert by_format.tolist() == by_name.tolist() == w._columns(tuple(names)).tolist()
    assert len(set(by_format.tolist())) == len(names)
    assert k._named(["obs__vwap_dist_session"])[0] == k.COL_VWAP_SESSION


def test_the_packed_state_holds_every_recursive_array_side_by_side() -> None:
    assert k.WIDTH == sum(k.WIDTHS.values())
    assert (k.O_GAIN, k.O_LOSS) == (0, len(o.RSI_PERIODS))
    assert k.O_VWAP == k.WIDTH - 2
    assert k.COL_RSI.tolist() == w._columns(k.NAMES["rsi"]).tolist()
