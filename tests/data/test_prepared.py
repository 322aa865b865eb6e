"""PreparedData (data/prepared.py): pickled with its closes as Arrow IPC bytes, counted as held."""

from __future__ import annotations

import pickle

import polars as pl
import pytest

from foxhunt.data.features.table import feature_spec
from foxhunt.data.prepared import PreparedData
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.sources.demo import demo_bars
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.train.resources.plan import data_bytes


def test_closes_are_counted_as_ipc_bytes_until_decoded_then_as_the_frame() -> None:
    spec = feature_spec(2)
    empty = WindowDataset(
        pl.DataFrame({"symbol": [], "ts": []})
        .with_columns(pl.col("symbol").cast(pl.String), pl.col("ts").cast(pl.Datetime("us", "UTC")))
        .with_columns([pl.lit(0.0).alias(c) for c in (*spec.inputs, *spec.targets)]),
        spec,
        4,
        2,
    )
    closes = demo_bars(500, seed=0).select("symbol", "ts", "close")
    scaler = ScalerParams((), (), (), (1.0, 1.0))
    data = PreparedData(spec, scaler, empty, empty, empty, "f", closes)
    assert data.closes_nbytes == closes.estimated_size() > 0
    back = pickle.loads(pickle.dumps(data))
    ipc = back.__dict__["_closes_ipc"]
    assert back.closes_nbytes == len(ipc) > 0
    assert data_bytes(back) == 3 * empty.nbytes + len(ipc)
    assert back.closes.equals(closes)  # decoded on first use
    assert back.closes_nbytes == closes.estimated_size()


def test_an_unpickled_object_without_an_attribute_says_so_and_keeps_its_closes() -> None:
    """Only ``closes`` is decoded on demand; any other missing name is an AttributeError that
    names the class and the attribute (what ``getattr(obj, name, default)`` and ``hasattr``
    rely on), and leaves the IPC bytes in place."""
    spec = feature_spec(2)
    frame = (
        pl.DataFrame({"symbol": [], "ts": []})
        .with_columns(pl.col("symbol").cast(pl.String), pl.col("ts").cast(pl.Datetime("us", "UTC")))
        .with_columns([pl.lit(0.0).alias(c) for c in (*spec.inputs, *spec.targets)])
    )
    empty = WindowDataset(frame, spec, 4, 2)
    closes = demo_bars(50, seed=1).select("symbol", "ts", "close")
    data = PreparedData(
        spec, ScalerParams((), (), (), (1.0, 1.0)), empty, empty, empty, "f", closes
    )
    back = pickle.loads(pickle.dumps(data))
    with pytest.raises(AttributeError, match=r"^'PreparedData' object has no attribute 'nope'$"):
        back.nope  # noqa: B018
    assert not hasattr(back, "nope")
    assert "_closes_ipc" in back.__dict__ and "closes" not in back.__dict__
    assert back.closes.equals(closes)
